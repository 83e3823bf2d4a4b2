"""Where each platform's credentials and location come from, checked before a client is made.

Why checked here: the anthropic SDK's platform clients find a missing region when constructed (a
``ValueError``) but a missing credential only when the first request is signed (a ``RuntimeError``
from boto3's chain, or google-auth's ``DefaultCredentialsError``), after the run has logged its
start. Each rule below is the SDK's own, asked up front, and a failure is a one-line
``ConfigError`` naming what to set. Nothing here reads a secret's value into a message or a log.

* Bedrock: a Bedrock API key (``api_key=`` or ``AWS_BEARER_TOKEN_BEDROCK``, sent as a bearer
  token), else the standard AWS chain through boto3 (environment keys, ``AWS_PROFILE`` and the
  shared files, SSO, container and instance roles); the region from ``aws_region=``,
  ``AWS_REGION``/``AWS_DEFAULT_REGION`` or the profile.
* Vertex: an OAuth access token (``api_key=``), else Google's application default credentials
  from a local source (``GOOGLE_APPLICATION_CREDENTIALS``, or the file ``gcloud auth
  application-default login`` writes; on a Google Cloud VM, ``GCE_METADATA_HOST`` set) read by
  google-auth without a network call; region from ``region=`` or ``CLOUD_ML_REGION``, project from
  ``project_id=``, ``ANTHROPIC_VERTEX_PROJECT_ID`` or the credentials.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlab.errors import ConfigError, MissingExtraError

__all__ = ["BedrockAccess", "VertexAccess", "bedrock_access", "vertex_access"]

BEDROCK = "anthropic_bedrock"
VERTEX = "anthropic_vertex"
_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class BedrockAccess:
    """What ``AsyncAnthropicBedrock`` is built with (the token, if any, stays out of ``repr``)."""

    region: str
    profile: str | None
    token: str | None = None

    def __repr__(self) -> str:
        auth = "api key" if self.token else "aws credentials chain"
        return f"BedrockAccess(region={self.region!r}, profile={self.profile!r}, {auth})"

    def client_kwargs(self) -> dict[str, Any]:
        """The client's keyword arguments for this access."""
        kw: dict[str, Any] = {"aws_region": self.region}
        if self.token:
            kw["api_key"] = self.token
        elif self.profile:
            kw["aws_profile"] = self.profile
        return kw


def _aws_session(profile: str | None, *, required: bool) -> Any:
    """boto3's session (the AWS chain); ``None`` without boto3 when only a region was looked for."""
    try:
        boto3 = importlib.import_module("boto3")  # boto3 ships no type information
    except ImportError:
        if not required:
            return None
        raise MissingExtraError(
            "anthropic_bedrock without AWS_BEARER_TOKEN_BEDROCK (AWS credentials)", "boto3", "bedrock"
        ) from None
    return boto3.Session(profile_name=profile)


def bedrock_access(token: str | None, region: str | None, profile: str | None) -> BedrockAccess:
    """The Bedrock access the environment gives, or ``ConfigError`` naming what to set."""
    profile = profile or os.environ.get("AWS_PROFILE") or None
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
    session = None if token and region else _aws_session(profile, required=not token)
    if region is None and session is not None:
        region = session.region_name
    if not region:
        raise ConfigError(
            f"{BEDROCK}: no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or a region in your AWS "
            "profile), or pass aws_region=... to the adapter"
        )
    if not token and (session is None or session.get_credentials() is None):
        raise ConfigError(
            f"{BEDROCK}: no AWS credentials: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile in ~/.aws), "
            "or pass api_key=... to the adapter"
        )
    return BedrockAccess(region=region, profile=profile, token=token)


@dataclass(frozen=True)
class VertexAccess:
    """What ``AsyncAnthropicVertex`` is built with (token and credentials stay out of ``repr``)."""

    region: str
    project_id: str
    token: str | None = None
    credentials: Any = None

    def __repr__(self) -> str:
        auth = "access token" if self.token else "application default credentials"
        return f"VertexAccess(region={self.region!r}, project_id={self.project_id!r}, {auth})"

    def client_kwargs(self) -> dict[str, Any]:
        """The client's keyword arguments for this access."""
        kw: dict[str, Any] = {"region": self.region, "project_id": self.project_id}
        if self.token:
            kw["access_token"] = self.token
        else:
            kw["credentials"] = self.credentials
        return kw


def _adc_file() -> Path:
    """Where ``gcloud auth application-default login`` writes (``CLOUDSDK_CONFIG`` moves it)."""
    base = os.environ.get("CLOUDSDK_CONFIG")
    if base:
        return Path(base) / "application_default_credentials.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA", "")) / "gcloud" / "application_default_credentials.json"
    return Path.home() / ".config" / "gcloud" / "application_default_credentials.json"


def _local_adc() -> bool:
    """Whether application default credentials can be found without probing the network."""
    return bool(
        os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
        or os.environ.get("GCE_METADATA_HOST")
        or _adc_file().is_file()
    )


def _google_default() -> tuple[Any, str | None]:
    """google-auth's application default credentials and their project (``ConfigError`` if unusable)."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:  # google-auth comes with google-genai, a core dependency
        raise ConfigError(
            f"{VERTEX}: application default credentials need google-auth (pip install google-auth); "
            "or pass api_key=<an OAuth access token> to the adapter"
        ) from None
    failure = None
    try:
        credentials, project = google.auth.default(scopes=[_SCOPE])
    except DefaultCredentialsError as exc:
        failure = type(exc).__name__
    if failure is not None:
        raise ConfigError(
            f"{VERTEX}: the Google credentials found could not be loaded ({failure}); check "
            "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`"
        )
    return credentials, project


def vertex_access(token: str | None, region: str | None, project_id: str | None) -> VertexAccess:
    """The Vertex access the environment gives, or ``ConfigError`` naming what to set."""
    region = region or os.environ.get("CLOUD_ML_REGION") or None
    if not region:
        raise ConfigError(
            f"{VERTEX}: no Vertex AI region: set CLOUD_ML_REGION (e.g. us-east5, or global), "
            "or pass region=... to the adapter"
        )
    project_id = project_id or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or None
    credentials = None
    if not token:
        if not _local_adc():
            raise ConfigError(
                f"{VERTEX}: no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS (a service-account "
                "key file) or run `gcloud auth application-default login`, or pass api_key=<an OAuth "
                "access token> to the adapter"
            )
        credentials, found = _google_default()
        project_id = project_id or found
    if not project_id:
        raise ConfigError(
            f"{VERTEX}: no Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID, or pass "
            "project_id=... to the adapter"
        )
    return VertexAccess(region=region, project_id=project_id, token=token, credentials=credentials)
