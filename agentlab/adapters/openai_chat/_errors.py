"""The one place where ``openai`` SDK exceptions, and errors inside a 200 stream, become agentlab errors.

Chat Completions servers answer errors as ``{"error": {"message", "type", "code", "param"}}``
(DeepSeek, Kimi, GLM, vLLM, llama.cpp, Ollama), as xAI's flat ``{"code", "error": <message>}``,
or, on OpenRouter, ``{"error": {"message", "code": <int>,
"metadata": {"raw", "provider_name"}}}``, where ``message`` is often just "Provider returned error"
and ``metadata.raw`` holds what the upstream said (the part that names the rule broken, e.g. "Gemini
models require OpenRouter reasoning details..."). The message kept is the API's (never model output),
key-looking substrings redacted and quoted values removed
(:func:`~agentlab.neutral.error_text.provider_text`), an upstream's JSON error body reduced to its
message, the upstream text cut to a bounded length. OpenRouter also reports failures inside a 200
stream as a chunk with a top-level ``error``: a ``StreamInterruptedError``. The SDK exception (it
holds the request, with the key header and body) is never chained.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import httpx2
import openai

from agentlab.adapters.http_errors import broken_stream, status_error
from agentlab.adapters.openai_sdk import sdk_error
from agentlab.errors import ProviderError, StreamInterruptedError
from agentlab.neutral.error_text import provider_text

__all__ = ["error_text", "in_stream_error", "translate"]

_OVERLOADED = frozenset(
    {"overloaded_error", "server_is_overloaded", "service_unavailable_error", "upstream_overloaded"}
)
_RAW_LIMIT = 400


def _error_object(body: object) -> Mapping[str, Any]:
    """The error object; xAI's flat ``{"code": <status text>, "error": <message>}`` read as one."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, str):
            code = body.get("code")
            return {"message": inner, **({"type": code} if isinstance(code, str) else {})}
        return inner if isinstance(inner, Mapping) else {}
    return {}


def _status_error_object(exc: openai.APIStatusError) -> Mapping[str, Any]:
    """The error object of a status error, with a flat body read again from the response.

    The SDK keeps only a flat body's ``error`` string; xAI's ``code`` (the status text) is beside it.
    """
    if not isinstance(exc.body, str):
        return _error_object(exc.body)
    try:
        whole = exc.response.json()
    except (ValueError, httpx2.ResponseNotRead):
        whole = None
    return _error_object(whole if isinstance(whole, Mapping) else {"error": exc.body})


def error_text(err: Mapping[str, Any], default: str) -> str:
    """The API's message, with OpenRouter's upstream text (``metadata.raw``) after it, redacted."""
    message = err.get("message") if isinstance(err.get("message"), str) else None
    found = err.get("metadata")
    meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    raw = meta.get("raw") if isinstance(meta.get("raw"), str) else None
    upstream = meta.get("provider_name") if isinstance(meta.get("provider_name"), str) else None
    text = message or default
    if upstream:
        text = f"{text} (upstream {upstream})"
    if raw:
        raw = _upstream(raw)
        cut = raw if len(raw) <= _RAW_LIMIT else raw[:_RAW_LIMIT] + "..."
        text = f"{text}: {cut}"
    return provider_text(text)


def _upstream(raw: str) -> str:
    """OpenRouter's ``metadata.raw`` with an upstream's JSON error body replaced by its message.

    The upstream's words are what name the rule broken; the JSON around them would only be scrubbed
    away (its strings are quoted) and spread the message over many lines.
    """
    i = raw.find("{")
    if i < 0:
        return raw
    try:
        found = json.loads(raw[i:])
    except ValueError:
        return raw
    message = _error_object(found).get("message")
    if not isinstance(message, str):
        return raw
    head = raw[:i].strip()
    return f"{head} {message}" if head else message


def _code(err: Mapping[str, Any]) -> str | None:
    code = err.get("code")
    return None if code is None or isinstance(code, bool) else str(code)


def _type(err: Mapping[str, Any]) -> str | None:
    """The error's ``type``; ``upstream_overloaded`` for an upstream overload OpenRouter relays.

    OpenRouter bodies have no type, and an upstream's ``overloaded_error``/529 arrives as a 502
    quoting it in ``metadata.raw``: typed so, it is an ``OverloadedError`` whatever the status.
    """
    etype = err.get("type") if isinstance(err.get("type"), str) else None
    found = err.get("metadata")
    raw = found.get("raw") if isinstance(found, Mapping) else None
    if isinstance(raw, str) and "overloaded" in raw.lower():
        return "upstream_overloaded"
    return etype


def translate(
    exc: BaseException,
    provider: str,
    request_id: str | None = None,
    *,
    model: str | None = None,
    fix: Callable[[str], str | None] | None = None,
) -> ProviderError:
    """Map an SDK (or transport) exception onto the error tree (retries were the SDK's).

    ``model``: the model asked for, added to a status error's message that does not name it
    (DeepSeek's "Model Not Exist" does not say which). ``fix``: the dialect's ``error_fix``, whose
    clause (what to do) follows the API's own words.
    """
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        err = _status_error_object(exc)
        text = error_text(err, exc.message or f"HTTP {exc.status_code}")
        if model is not None and model not in text:
            text = f"{text} (model {model!r})"
        clause = fix(text) if fix is not None else None
        if clause:
            text = f"{text}; {clause}"
        return status_error(
            exc.status_code,
            text,
            provider=provider,
            error_type=_type(err),
            code=_code(err),
            request_id=exc.request_id,
            headers=exc.response.headers,
            overloaded_types=_OVERLOADED,
        )
    if isinstance(exc, httpx2.HTTPError | httpx2.StreamError):
        return broken_stream(
            exc, request_id, provider=provider, retryable=not isinstance(exc, httpx2.StreamError)
        )
    return sdk_error(exc, provider, "the Chat Completions")


def in_stream_error(
    chunk: Mapping[str, Any], *, provider: str, request_id: str | None
) -> StreamInterruptedError:
    """A chunk with a top-level ``error`` inside a 200 stream: the call failed after it started."""
    err = _error_object(chunk)
    code = _code(err)
    etype = err.get("type") if isinstance(err.get("type"), str) else code
    failure = StreamInterruptedError(
        f"the stream reported an error: {error_text(err, 'no message')}",
        provider=provider,
        error_type=etype,
        request_id=request_id,
        retryable=code in ("429", "500", "502", "503", "504", "529"),
        code=code,
    )
    return failure
