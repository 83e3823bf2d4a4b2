"""Bedrock's error answers, read where the anthropic SDK leaves them, then Anthropic's one translation.

Why a small layer of its own: on Bedrock an HTTP error is an AWS JSON error (body ``{"message"}``, the
exception name only in ``x-amzn-ErrorType``, the id in ``x-amzn-RequestId``), which the SDK raises as
its usual ``APIStatusError`` without a ``type`` or ``request_id``. The status ladder is the shared one
(:func:`agentlab.adapters.http_errors.status_error`); everything else, and every Vertex error (Vertex
relays Anthropic's own error bodies), goes through the Messages adapter's ``translate``.
"""

from __future__ import annotations

from typing import Any

import anthropic

from agentlab.adapters.anthropic_messages._errors import translate
from agentlab.adapters.http_errors import status_error
from agentlab.errors import AgentlabError
from agentlab.neutral.error_text import provider_text

__all__ = ["translate_bedrock"]

_OVERLOADED = frozenset({"ServiceUnavailableException"})


def _aws_error(exc: anthropic.APIStatusError) -> tuple[str, str | None] | None:
    """(message, exception name) of an AWS JSON error body; ``None`` for any other body."""
    body: Any = exc.body
    if not isinstance(body, dict) or "error" in body:
        return None
    message = body.get("message", body.get("Message"))
    if not isinstance(message, str):
        return None
    raw_type = exc.response.headers.get("x-amzn-errortype") or ""
    return message, raw_type.partition(":")[0] or None


def translate_bedrock(exc: BaseException, provider: str) -> AgentlabError:
    """An SDK exception from the Bedrock client as an agentlab error, tagged ``provider``."""
    if isinstance(exc, anthropic.APIStatusError):
        aws = _aws_error(exc)
        if aws is not None:
            message, error_type = aws
            return status_error(
                exc.status_code,
                provider_text(message or f"HTTP {exc.status_code}"),
                provider=provider,
                error_type=error_type,
                request_id=exc.response.headers.get("x-amzn-requestid") or exc.request_id,
                headers=exc.response.headers,
                overloaded_types=_OVERLOADED,
            )
    return translate(exc, provider)
