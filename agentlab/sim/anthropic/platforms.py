"""Claude on AWS Bedrock and on Google Vertex AI: the Messages body on the platforms' routes and rules.

Why a module of its own: both platforms answer with Anthropic's Messages model behind other paths,
other credentials, other body rules and (Bedrock) another stream framing and error shape. The model
itself is :func:`agentlab.sim.anthropic.messages.handle`, called with the platform's name, which keys
the thinking signatures: a block signed on one platform is an invalid signature on the others and
on Anthropic's API, as on the real services.

* **Bedrock** (``bedrock-runtime``, what the anthropic SDK's ``AnthropicBedrock`` client sends):
  ``POST /model/{model}/invoke`` and ``/model/{model}/invoke-with-response-stream``; the model is in
  the path only. Body rules, in Bedrock's schema-validation words (400 ``ValidationException``):
  ``model`` or ``stream`` in the body is "Malformed input request: #: extraneous key [model] is not
  permitted, please reformat your input and try again."; a missing ``anthropic_version`` is
  "#: required key [anthropic_version] not found"; another value than ``bedrock-2023-05-31`` is
  "#/anthropic_version: X is not a valid enum value" (that last wording is the simulator's, in the
  same form). Beta flags travel as the body's ``anthropic_beta`` list. The stream is AWS's binary
  event stream (:mod:`agentlab.sim.aws.eventstream`): one ``chunk`` event per Messages SSE event,
  its payload ``{"bytes": base64(event JSON), "p": padding}``, the last one carrying
  ``amazon-bedrock-invocationMetrics``; the ``error_chunk`` fault sends a
  ``modelStreamErrorException`` frame inside the 200 stream. Errors are AWS JSON errors: body
  ``{"message": ...}``, type in ``x-amzn-ErrorType``, id in ``x-amzn-RequestId``. Credentials: an
  ``Authorization`` header that is a bearer token (a Bedrock API key) or a SigV4 signature of the
  right shape (``AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/bedrock/aws4_request,
  SignedHeaders=..., Signature=<64 hex>`` with ``x-amz-date``); the signature itself is not checked.
* **Vertex** (``aiplatform``, what ``AnthropicVertex`` sends): ``POST /v1/projects/{project}/locations/
  {region}/publishers/anthropic/models/{model}:rawPredict`` and ``:streamRawPredict`` (SSE, as
  Anthropic's API); ``anthropic_version`` must be ``vertex-2023-10-16`` (a 400
  ``invalid_request_error``); a bearer token is required. Errors keep Anthropic's shape (rawPredict
  relays the model's own error bodies); Google's own front-end errors (quota, auth) are not modelled.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import agentlab.sim.errors as E
from agentlab.sim.anthropic import messages
from agentlab.sim.aws.eventstream import encode_event, encode_exception
from agentlab.sim.core import ANTHROPIC_MODELS, SimReply, Simulator, SSEEvent
from agentlab.sim.protocols import SimProtocol

BEDROCK_VERSION = "bedrock-2023-05-31"
VERTEX_VERSION = "vertex-2023-10-16"
_STREAM_PATH = "/invoke-with-response-stream"
_PATH = ":path"  # the request's path, among the headers (agentlab.sim.app.PATH_HEADER)
_MALFORMED = "Malformed input request: {}, please reformat your input and try again."
_CORAL = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
#: Anthropic error types -> the AWS exception Bedrock answers with (other names pass through).
_AWS_TYPES = {
    "invalid_request_error": "ValidationException",
    "request_too_large": "ValidationException",
    "not_found_error": "ResourceNotFoundException",
    "rate_limit_error": "ThrottlingException",
    "api_error": "InternalServerException",
    "overloaded_error": "ServiceUnavailableException",
    "authentication_error": "UnrecognizedClientException",
    "permission_error": "AccessDeniedException",
}
_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _validation(message: str) -> E.SimError:
    return E.SimError(400, "ValidationException", message)


def bedrock_request_id(seed: bytes) -> str:
    """A UUID-shaped ``x-amzn-RequestId`` derived from the request (deterministic replies)."""
    h = hashlib.sha256(b"bedrock-req" + seed).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class BedrockErrors(E.ErrorDialect):
    """AWS JSON errors: ``{"message"}``, the exception name in ``x-amzn-ErrorType``.

    The anthropic SDK's Bedrock client reads the status (retries 408/409/429/5xx) and the body; the
    exception name is in the header only. Overload is a 503 (Bedrock has no 529).
    """

    not_found_type = "UnknownOperationException"

    def render(self, err: E.SimError, seed: bytes) -> tuple[int, dict[str, str], bytes]:
        """Status (529 -> 503), AWS headers, then the error's own headers (``retry-after``)."""
        aws_type = _AWS_TYPES.get(err.type, err.type)
        status = 503 if err.status == 529 else err.status
        headers = {
            "content-type": "application/json",
            "x-amzn-requestid": bedrock_request_id(seed),
            "x-amzn-errortype": aws_type + _CORAL,
        }
        headers.update(err.headers)
        return status, headers, json.dumps({"message": err.message}, separators=(",", ":")).encode()

    def unknown_url(self, method: str, path: str) -> E.SimError:
        """A path ``bedrock-runtime`` does not serve (a ``base_url`` with a stray prefix)."""
        return E.SimError(404, "UnknownOperationException", "UnknownOperationException")

    def model_not_found(self, model: str) -> E.SimError:
        """Bedrock's 400 for a model id it does not know; the simulator adds the id it was given."""
        return _validation(f"The provided model identifier is invalid (simulated: no model {model}).")

    def bad_request(self, message: str, param: str | None = None, code: str | None = None) -> E.SimError:
        """A 400 ``ValidationException``: AWS errors name no parameter."""
        return _validation(message)

    def rate_limited(self, retry_after_ms: int) -> E.SimError:
        """429 ``ThrottlingException`` (the simulated one also says how long to wait, in headers)."""
        message = "Too many requests, please wait before trying again. (simulated)"
        return E.throttled("ThrottlingException", message, retry_after_ms)

    def server_error(self) -> E.SimError:
        """500 ``InternalServerException``."""
        return E.SimError(
            500, "InternalServerException", "The system encountered an unexpected error. (simulated)"
        )

    def overloaded(self) -> E.SimError:
        """503 ``ServiceUnavailableException``: Bedrock's overload answer."""
        return E.SimError(
            503, "ServiceUnavailableException", "Bedrock is unable to process your request. (simulated)"
        )


BEDROCK_ERRORS = BedrockErrors()


def _bearer(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _sigv4_problem(headers: Mapping[str, str]) -> str | None:
    """What is wrong with a SigV4 ``Authorization`` header's shape (``None``: well formed).

    The fields AWS requires (``Credential`` scoped to ``bedrock``, ``SignedHeaders`` with ``host``,
    a 64-hex ``Signature``) and the ``x-amz-date`` it signs; the signature itself is not verified.
    """
    auth = headers.get("authorization", "").strip()
    scheme, _, rest = auth.partition(" ")
    if scheme != "AWS4-HMAC-SHA256":
        return "Missing Authentication Token"
    fields = dict(p.strip().partition("=")[::2] for p in rest.split(","))
    scope = fields.get("Credential", "").split("/")
    if len(scope) != 5 or scope[3] != "bedrock" or scope[4] != "aws4_request":
        return "Credential should be scoped to correct service: 'bedrock'."
    if "host" not in fields.get("SignedHeaders", "").split(";"):
        return "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."
    sig = fields.get("Signature", "")
    if len(sig) != 64 or any(c not in "0123456789abcdef" for c in sig):
        return "Authorization header requires 'Signature' parameter."
    if not headers.get("x-amz-date"):
        return "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
    return None


def bedrock_headers(headers: Mapping[str, str]) -> None:
    """A bearer token (Bedrock API key), else a well-formed SigV4 signature (403 otherwise)."""
    if _bearer(headers):
        return
    problem = _sigv4_problem(headers)
    if problem is not None:
        kind = (
            "MissingAuthenticationTokenException"
            if problem.startswith("Missing")
            else "IncompleteSignatureException"
        )
        raise E.SimError(403, kind, problem)


def vertex_headers(headers: Mapping[str, str]) -> None:
    """An OAuth bearer token is required (401 otherwise)."""
    if not _bearer(headers):
        raise E.SimError(
            401,
            "authentication_error",
            "Request is missing required authentication credential. Expected OAuth 2 access token.",
        )


def check_bedrock_body(req: Mapping[str, Any]) -> None:
    """Bedrock's body rules: no ``model``/``stream`` (they are the path), the platform's version."""
    for key in ("model", "stream"):
        if key in req:
            raise _validation(_MALFORMED.format(f"#: extraneous key [{key}] is not permitted"))
    _check_version(req, BEDROCK_VERSION, lambda m: _validation(_MALFORMED.format(m)))


def check_vertex_body(req: Mapping[str, Any]) -> None:
    """Vertex's body rule: ``anthropic_version`` is ``vertex-2023-10-16``."""
    _check_version(req, VERTEX_VERSION, lambda m: E.SimError(400, "invalid_request_error", m))


def _check_version(req: Mapping[str, Any], want: str, error: Any) -> None:
    version = req.get("anthropic_version")
    if version is None:
        raise error("#: required key [anthropic_version] not found")
    if version != want:
        raise error(f"#/anthropic_version: {version} is not a valid enum value")


def _messages_request(req: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers as Anthropic's API takes them: the version dropped, betas as the header."""
    body = {k: v for k, v in req.items() if k not in ("anthropic_version", "anthropic_beta")}
    betas = req.get("anthropic_beta")
    h = dict(headers)
    if isinstance(betas, list) and betas:
        h["anthropic-beta"] = ",".join(str(b) for b in betas)
    return body, h


def _bedrock(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """``InvokeModel`` / ``InvokeModelWithResponseStream`` for a Claude model (body checked before)."""
    body, h = _messages_request(req, headers)
    stream = headers.get(_PATH, "").endswith(_STREAM_PATH)
    reply = messages.handle(sim, {**body, "stream": stream}, h, model, platform="bedrock")
    seed = hashlib.sha256(json.dumps(req, sort_keys=True).encode()).digest()
    rh = {"x-amzn-requestid": bedrock_request_id(seed)}
    if reply.events is None:
        return SimReply(reply.status, {**rh, "content-type": "application/json"}, body=reply.body)
    rh["content-type"] = "application/vnd.amazon.eventstream"
    return SimReply(reply.status, rh, events=bedrock_frames(reply.events))


def _sse_data(raw: bytes) -> bytes:
    """The ``data`` line of one framed SSE event (``event:`` and ``data:`` lines, a blank line)."""
    for line in raw.split(b"\n"):
        if line.startswith(b"data: "):
            return line[6:]
    raise ValueError("an SSE event without data")


def _chunk(data: bytes, n: int) -> bytes:
    """One ``chunk`` event: the Messages event's JSON in base64, and Bedrock's random-length padding."""
    payload = {"bytes": base64.b64encode(data).decode(), "p": _PADDING[: 1 + (n * 7) % len(_PADDING)]}
    return encode_event("chunk", json.dumps(payload, separators=(",", ":")).encode())


def _with_metrics(data: bytes, msg_start: dict[str, Any] | None, last_usage: dict[str, Any]) -> bytes:
    """``message_stop`` with the ``amazon-bedrock-invocationMetrics`` Bedrock adds to it."""
    ev = json.loads(data)
    usage = (msg_start or {}).get("usage") or {}
    ev["amazon-bedrock-invocationMetrics"] = {
        "inputTokenCount": usage.get("input_tokens", 0),
        "outputTokenCount": last_usage.get("output_tokens", 0),
        "invocationLatency": 0,
        "firstByteLatency": 0,
    }
    return json.dumps(ev, separators=(",", ":")).encode()


_STREAM_ERROR = encode_exception(
    "modelStreamErrorException",
    json.dumps({"message": "The model stream failed mid-response. (simulated)"}).encode(),
)


def bedrock_frames(events: list[SSEEvent]) -> list[SSEEvent]:
    """The Messages SSE events as Bedrock's event stream (``error_chunk``: a stream exception)."""
    out: list[SSEEvent] = []
    start: dict[str, Any] | None = None
    usage: dict[str, Any] = {}
    mid = len(events) // 2
    for n, ev in enumerate(events):
        data = _sse_data(ev.raw)
        kind = json.loads(data).get("type")
        if kind == "message_start":
            start = json.loads(data).get("message")
        elif kind == "message_delta":
            usage = json.loads(data).get("usage") or {}
        elif kind == "message_stop":
            data = _with_metrics(data, start, usage)
        out.append(SSEEvent(_chunk(data, n), ev.delta, _STREAM_ERROR if n == mid else None))
    return out


def _vertex(sim: Simulator, req: dict[str, Any], headers: dict[str, str], model: str) -> SimReply:
    """``rawPredict`` / ``streamRawPredict`` for a Claude model (body checked before)."""
    body, h = _messages_request(req, headers)
    stream = headers.get(_PATH, "").endswith(":streamRawPredict") or bool(body.get("stream"))
    return messages.handle(sim, {**body, "stream": stream}, h, model, platform="vertex")


_UNKNOWN = {"type": "sim_unknown_event", "note": "an event type this client has never seen"}

#: Claude on Bedrock (``bedrock-runtime``'s InvokeModel routes).
BEDROCK = SimProtocol(
    name="anthropic_bedrock",
    endpoints=("/model/{model}/invoke", "/model/{model}" + _STREAM_PATH),
    handle=_bedrock,
    models=ANTHROPIC_MODELS,
    models_page=messages.models_page,
    model_card=messages.model_card,
    errors=BEDROCK_ERRORS,
    unknown_event=SSEEvent(_chunk(json.dumps(_UNKNOWN).encode(), 0)),
    check_headers=bedrock_headers,
    check_body=check_bedrock_body,
)

_VERTEX_MODEL = "/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}"

#: Claude on Vertex AI (``aiplatform``'s rawPredict routes).
VERTEX = SimProtocol(
    name="anthropic_vertex",
    endpoints=(_VERTEX_MODEL + ":rawPredict", _VERTEX_MODEL + ":streamRawPredict"),
    handle=_vertex,
    models=ANTHROPIC_MODELS,
    models_page=messages.models_page,
    model_card=messages.model_card,
    errors=E.ANTHROPIC,
    unknown_event=messages.PROTOCOL.unknown_event,
    check_headers=vertex_headers,
    check_body=check_vertex_body,
)
