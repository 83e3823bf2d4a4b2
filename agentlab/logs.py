"""Structured logging through stdlib ``logging``, with reasoning and secrets redacted.

agentlab never logs reasoning text or opaque payloads on purpose (and never logs per-delta: that
path must stay cheap). ``RedactionFilter`` is the second line of defence, on every ``agentlab.*``
logger and on the provider SDK loggers (``openai``, ``anthropic``, ``httpx``, ``httpx2``), whose
DEBUG output can include request bodies:

* API-key-looking strings (``sk-...``, ``sk-ant-...``, ``Bearer ...``) become ``[REDACTED]``;
* arguments that *are* reasoning (``ReasoningDeltaEvent``, ``ProviderReasoningItem``, a
  ``Continuation``, a ``ModelResponse``) are replaced by a type placeholder;
* in dict/list arguments, values under reasoning/secret keys (``encrypted_content``, ``signature``,
  ``thinking``, ``reasoning``, ``summary``, ``data`` of redacted thinking, ``api_key``,
  ``authorization``, ``x-api-key``) are replaced.

Records keep structured fields under ``record.agentlab`` (a dict) when passed as
``extra={"agentlab": {...}}``; those are sanitized the same way.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["SDK_LOGGERS", "RedactionFilter", "get_logger", "install_redaction", "redact", "redact_secrets"]

REDACTED = "[REDACTED]"
SDK_LOGGERS = ("openai", "anthropic", "httpx", "httpx2", "httpcore")

_SECRET_RE = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._\-]{12,}|(?i:x-api-key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{12,})"
)
_SENSITIVE_KEYS = frozenset(
    {
        "encrypted_content",
        "signature",
        "thinking",
        "reasoning",
        "reasoning_text",
        "summary",
        "redacted_thinking",
        "api_key",
        "authorization",
        "x-api-key",
        "continuation",
        "provider_continuation",
    }
)
_OPAQUE_TYPES = (
    "ReasoningDeltaEvent",
    "ProviderReasoningItem",
    "Continuation",
    "ModelResponse",
    "ResponseCompletedEvent",
)


def redact_secrets(text: str) -> str:
    """Replace API-key-looking substrings with ``[REDACTED]``."""
    return _SECRET_RE.sub(REDACTED, text) if text else text


def redact(value: Any, _depth: int = 0) -> Any:
    """A log-safe version of ``value`` (see the module docstring for what is replaced)."""
    if isinstance(value, str):
        return redact_secrets(value)
    if type(value).__name__ in _OPAQUE_TYPES:
        return f"<{type(value).__name__} redacted>"
    if _depth > 6:
        return value
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and k.lower() in _SENSITIVE_KEYS:
                out[k] = REDACTED
            elif isinstance(v, dict) and v.get("type") in ("thinking", "redacted_thinking", "reasoning"):
                out[k] = f"<{v.get('type')} block redacted>"
            else:
                out[k] = redact(v, _depth + 1)
        return out
    if isinstance(value, list | tuple):
        items = [
            f"<{v.get('type')} block redacted>"
            if isinstance(v, dict) and v.get("type") in ("thinking", "redacted_thinking", "reasoning")
            else redact(v, _depth + 1)
            for v in value
        ]
        return type(value)(items) if isinstance(value, tuple) else items
    return value


class RedactionFilter(logging.Filter):
    """Sanitizes a record's message, arguments and ``agentlab`` extra in place; never drops records."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_secrets(record.msg)
        else:
            record.msg = redact(record.msg)
        if record.args:
            if isinstance(record.args, dict):
                record.args = redact(record.args)
            else:
                record.args = tuple(redact(a) for a in record.args)
        extra = getattr(record, "agentlab", None)
        if extra is not None:
            record.agentlab = redact(extra)
        return True


_FILTER = RedactionFilter()


def _ensure(logger: logging.Logger) -> logging.Logger:
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


_PREFIXES: tuple[str, ...] = ("agentlab", *SDK_LOGGERS)
_factory_installed = False


def _install_factory() -> None:
    """Wrap the log-record factory so records from agentlab and SDK loggers (children included:
    ``openai._base_client`` logs request bodies at DEBUG) are redacted however handlers are set up.
    The factory runs only for records that pass the level check, so disabled DEBUG costs nothing."""
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        name = record.name
        if name.startswith(_PREFIXES) and any(name == p or name.startswith(p + ".") for p in _PREFIXES):
            _FILTER.filter(record)
        return record

    logging.setLogRecordFactory(factory)
    _factory_installed = True


def install_redaction(*extra_loggers: str) -> None:
    """Redact records of agentlab's loggers, the SDK loggers (and children) and any given names.

    Logger filters apply only to records logged *on that logger*, so besides attaching the filter
    the log-record factory is wrapped once (see ``_install_factory``).
    """
    global _PREFIXES
    if extra_loggers:
        _PREFIXES = tuple(dict.fromkeys((*_PREFIXES, *extra_loggers)))
    for name in ("agentlab", *SDK_LOGGERS, *extra_loggers):
        _ensure(logging.getLogger(name))
    _install_factory()


def get_logger(name: str) -> logging.Logger:
    """A logger under ``agentlab`` with the redaction filter attached."""
    install_redaction()
    return _ensure(logging.getLogger(name))
