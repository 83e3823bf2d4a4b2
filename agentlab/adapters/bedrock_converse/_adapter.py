"""The Bedrock Converse adapter, on botocore (through boto3): AWS's official SDK for Python.

Why botocore and not aiobotocore: botocore is AWS's own code path for credentials (the whole
standard chain: environment, ``AWS_PROFILE``/SSO, instance roles, ``AWS_BEARER_TOKEN_BEDROCK``),
SigV4, retries and error parsing; aiobotocore re-implements its HTTP layer on aiohttp and pins an
exact botocore version, a second dependency tree to keep in step. Its client is synchronous, so each
call runs in a worker thread (``asyncio.to_thread``) and a streamed body is read there too, handed to
the event loop chunk by chunk (:class:`_Pump`: a deque and one wake-up per idle wait, never a thread
hop per event), so a notebook's loop and parallel runs keep going. Connections are reused through
botocore's urllib3 pool (one client per adapter, ``max_pool_connections`` of its ``Config``).
Import cost: ``import boto3`` took 0.92-1.13 s cumulative under ``python -X importtime`` (three runs
on the shared 2-core development machine under load), and the first client another 0.2 s (it loads
the service model from JSON); both happen only when a ``bedrock:`` adapter is built (the registry
imports this module lazily; ``import agentlab`` loads neither, ``tests/test_lazy.py``).

The stream is read raw: botocore's ``EventStream`` parses each event against the service model,
which costs more than the mapping itself, so the binary framing is cut by :mod:`._framing` (CRCs
checked) and mapped by :mod:`._stream`. Batch inference (``CreateModelInvocationJob``) is not
supported: it needs S3 buckets and an IAM role, which ``sweep(backend="batch")`` does not create.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import threading
from collections import deque
from functools import partial
from typing import Any

from agentlab.adapters._simulated import is_simulated
from agentlab.adapters.bedrock_converse._errors import NO_CREDENTIALS, PROVIDER, translate
from agentlab.adapters.bedrock_converse._framing import EventStreamFraming, FramingError
from agentlab.adapters.bedrock_converse._request import build_request
from agentlab.adapters.bedrock_converse._stream import API, ConverseAssembler
from agentlab.adapters.built_request import BuiltRequest, check_request
from agentlab.adapters.http_errors import broken_stream
from agentlab.adapters.sdk_adapter import SDKAdapter
from agentlab.assembly.assembler import WireCall
from agentlab.errors import (
    AgentlabError,
    ConfigError,
    ProviderAPIError,
    StreamInterruptedError,
)
from agentlab.neutral.continuity import ContinuityLayout, OpaqueSite
from agentlab.neutral.request import ModelRequest

__all__ = ["BedrockConverseAdapter"]

_BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
_SIM_ACCESS_KEY = "AKIASIMULATED0000000"
_SIM_SECRET = "sim-secret-access-key"


def _client_class() -> type[Any]:
    from botocore.client import BaseClient  # type: ignore[import-untyped]

    return BaseClient  # type: ignore[no-any-return]


def _blob(value: object) -> str:
    """JSON for a parsed ``converse`` answer: blobs (``redactedContent``) back to the wire's base64."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    raise TypeError(type(value).__name__)


def _set(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _Pump:
    """A streamed body read in a worker thread and handed to the event loop as it arrives."""

    def __init__(self, raw: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._raw = raw
        self._loop = loop
        self._items: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._done = False
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name="agentlab-bedrock-stream", daemon=True).start()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None:
            self._waiter = None
            self._loop.call_soon_threadsafe(_set, w)

    def _run(self) -> None:
        try:
            for chunk in self._raw.stream():
                self._items.append(chunk)
                self._wake()
        except BaseException as exc:  # handed to the reader, translated there
            self._error = exc
        finally:
            self._done = True
            self._wake()

    async def chunks(self) -> Any:
        items = self._items
        while True:
            while items:
                yield items.popleft()
            if self._done and not items:
                if self._error is not None:
                    raise self._error
                return
            fut = self._loop.create_future()
            self._waiter = fut
            if items or self._done:  # arrived between the check and the wait
                self._waiter = None
                continue
            await fut

    async def close(self) -> None:
        self._raw.close()


def _stream_failure(exc: BaseException, request_id: str | None) -> AgentlabError:
    if isinstance(exc, FramingError):
        return StreamInterruptedError(
            f"the {PROVIDER} event stream was corrupt ({exc}); nothing of this call was kept",
            provider=PROVIDER,
            request_id=request_id,
            retryable=True,
        )
    if isinstance(exc, AgentlabError):
        return exc
    return broken_stream(exc, request_id, provider=PROVIDER)


async def _nothing() -> None:
    """A non-streaming answer holds no open stream (botocore read it whole)."""


class BedrockConverseAdapter(SDKAdapter[Any]):
    """Maps ``ModelRequest`` onto Converse/ConverseStream and the answer back onto agentlab events.

    ``region_name``: the AWS region (else ``AWS_REGION``/``AWS_DEFAULT_REGION``/the profile's);
    ``max_retries``/``timeout`` become the botocore client's ``Config`` (standard retry mode). A
    reasoning block is tagged with the endpoint it came from (``base_url`` names the region), so it
    never goes to another region's endpoint nor to Anthropic's own API.
    """

    provider = PROVIDER
    api = API
    assembler_class = ConverseAssembler
    continuity_layout = ContinuityLayout(
        sites=(OpaqueSite(("messages", "*", "content", "*"), keys=frozenset({"reasoningContent"})),),
        follower="later",
    )
    """Reasoning blocks sit in the messages' content lists, before the part they precede in their turn."""

    def __init__(self, model: str, *, region_name: str | None = None, **options: Any) -> None:
        self.region_name = region_name
        type(self).client_type = _client_class()
        super().__init__(model, **options)

    def _config(self) -> Any:
        from botocore.config import Config  # type: ignore[import-untyped]

        kw: dict[str, Any] = {
            "retries": {"total_max_attempts": self.max_retries + 1, "mode": "standard"},
            "user_agent_extra": "agentlab",
        }
        if self.timeout is not None:
            kw["read_timeout"] = self.timeout
            kw["connect_timeout"] = min(self.timeout, 60)
        return Config(**kw)

    def _simulator_options(self, api_key: str | None) -> dict[str, Any]:
        return {"config": self._config()}

    def _real_client(self, api_key: str | None, base_url: str | None) -> Any:
        """A botocore client on the standard AWS chain, or on ``api_key`` (a Bedrock API key).

        ``api_key=`` is sent as ``Authorization: Bearer`` by this adapter (requests unsigned), since
        botocore takes a Bedrock API key only from ``AWS_BEARER_TOKEN_BEDROCK``. A ``sim-*`` model at
        ``base_url`` (a served simulator) signs with placeholder keys when no ``api_key`` is given,
        never with the environment's.
        """
        import boto3  # type: ignore[import-untyped]
        from botocore import UNSIGNED  # type: ignore[import-untyped]
        from botocore.config import Config

        kw: dict[str, Any] = {"config": self._config()}
        if base_url is not None:
            kw["endpoint_url"] = base_url
        if is_simulated(self.model) and api_key is None:
            kw["config"] = Config(signature_version="v4").merge(kw["config"])
            kw.update(aws_access_key_id=_SIM_ACCESS_KEY, aws_secret_access_key=_SIM_SECRET)
            return boto3.client("bedrock-runtime", region_name=self.region_name or "us-east-1", **kw)
        session = boto3.session.Session(region_name=self.region_name)
        if session.region_name is None and not is_simulated(self.model):
            raise ConfigError("bedrock: no AWS region; set AWS_REGION (e.g. us-east-1) or pass region_name=")
        region = session.region_name or "us-east-1"
        if api_key is not None:
            kw["config"] = Config(signature_version=UNSIGNED).merge(kw["config"])
            client = session.client("bedrock-runtime", region_name=region, **kw)
            client.meta.events.register("before-send.bedrock-runtime", partial(_bearer, api_key))
            return client
        if not (os.environ.get(_BEARER_ENV) or session.get_credentials() is not None):
            raise ConfigError(NO_CREDENTIALS)
        return session.client("bedrock-runtime", **kw)

    def _connect(self) -> str | None:
        from agentlab.records.logs import install_redaction

        install_redaction("botocore", "boto3", "urllib3")
        retries = (getattr(self._client.meta.config, "retries", None) or {}).get("total_max_attempts")
        if isinstance(retries, int):
            self.max_retries = max(0, retries - 1)
        return str(self._client.meta.endpoint_url).rstrip("/") or None

    def build(self, request: ModelRequest) -> BuiltRequest[dict[str, Any]]:
        """The ``converse`` keyword arguments for ``request`` (no I/O); raises ``InvalidSettingsError``."""
        check_request(PROVIDER, self.model, request)
        return build_request(request, base_url=self.base_url)

    async def _open(self, built: BuiltRequest[dict[str, Any]], request: ModelRequest) -> WireCall:
        """Send through botocore in a worker thread; the raw answer back (errors translated, unchained)."""
        failure: AgentlabError | None = None
        try:
            if request.stream:
                answer = await asyncio.to_thread(self._client.converse_stream, **built.body)
                raw = answer["stream"]._raw_stream  # the urllib3 body botocore's EventStream would parse
                pump = _Pump(raw, asyncio.get_running_loop())
                return WireCall(
                    request_id=answer["ResponseMetadata"].get("RequestId"),
                    chunks=pump.chunks(),
                    read=_no_body,
                    close=pump.close,
                    errors=(Exception,),
                    translate=_stream_failure,
                    framing=EventStreamFraming,
                )
            answer = await asyncio.to_thread(self._client.converse, **built.body)
            body = json.dumps(answer, default=_blob).encode()
            return WireCall(
                request_id=answer["ResponseMetadata"].get("RequestId"),
                chunks=None,
                read=partial(_value, body),
                close=_nothing,
                errors=(Exception,),
                translate=lambda exc, _rid: translate(exc),
            )
        except Exception as exc:
            failure = self._named(translate(exc))
        raise failure

    def _named(self, err: AgentlabError) -> AgentlabError:
        """Bedrock's "invalid model identifier" does not say which: the error names the model asked for."""
        if isinstance(err, ProviderAPIError) and "model identifier is invalid" in err.message:
            err.message = f"{err.message} (model {self.model})"
            err.args = (err.message,)
        return err

    async def _close_client(self) -> None:
        close = getattr(self._client, "close", None)
        if close is not None:
            await asyncio.to_thread(close)


def _bearer(key: str, request: Any, **_: Any) -> None:
    """``Authorization: Bearer <Bedrock API key>`` on an unsigned request (the key stays in this closure)."""
    request.headers["Authorization"] = f"Bearer {key}"


async def _value(body: bytes) -> bytes:
    return body


async def _no_body() -> bytes:
    return b""
