"""Structured logging through stdlib ``logging``, with reasoning and secrets redacted.

agentlab never logs reasoning text or opaque payloads on purpose (and never logs per-delta: that
path must stay cheap). ``RedactionFilter`` is the second line of defence, on every ``agentlab.*``
logger and on the loggers of the provider stack, whose DEBUG output can include request bodies.
That stack is not a fixed list of names: besides the HTTP stack (``SDK_LOGGERS``) and each
provider's SDK loggers (its registry entry, covered once the provider is known), each adapter
registers the packages its SDK client is actually built on (``stack_loggers``: the SDK, its HTTP
client, that client's transport and connection pool; e.g. ``httpx2`` and ``httpcore2``). On them:

* API-key-looking strings (``sk-...``, ``sk-ant-...``, ``Bearer ...``) become ``[REDACTED]``;
* arguments that *are* reasoning (``ReasoningDeltaEvent``, ``ProviderReasoningItem``, a
  ``Continuation``, a ``ModelResponse``) are replaced by a type placeholder;
* in dict/list arguments, values under reasoning/secret keys (``encrypted_content``, ``signature``,
  ``thinking``, ``reasoning``, ``summary``, ``data`` of redacted thinking, ``api_key``,
  ``authorization``, ``x-api-key``) are replaced;
* the text of an attached exception (``exc_info``) is formatted once and redacted.

The same applies to ``asyncio`` (the loop a run runs on reports failed tasks with their exceptions).
Records of every other logger (a user's own, say) get the first two rules only: a key or a reasoning
object is never wanted in any log, while key-based rewriting of a user's own dicts would surprise.

Records keep structured fields under ``record.agentlab`` (a dict) when passed as
``extra={"agentlab": {...}}``; those are sanitized the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agentlab.neutral.redaction import REDACTED, redact_secrets

__all__ = [
    "SDK_LOGGERS",
    "RedactionFilter",
    "get_logger",
    "install_redaction",
    "redact",
    "redact_secrets",
    "stack_loggers",
]

SDK_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2")
"""The HTTP-stack loggers every provider SDK may log through. Each provider's own SDK loggers come
from its registry entry (``ProviderSpec.sdk_loggers``, added when the provider is first routed), and
adapters add what their client is really built on (``stack_loggers``)."""

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
        # AWS (botocore logs the Converse params dict and header dicts at DEBUG):
        "reasoningcontent",
        "reasoningtext",
        "redactedcontent",
        "x-amz-security-token",
        "aws_secret_access_key",
        "aws_session_token",
    }
)
_MAX_DEPTH = 24
"""How deep :func:`redact` reads; deeper containers are replaced whole. A batch request body nests
the live body two levels down (``json_data.requests[i].params.messages[j].content[k]``: a thinking
block at depth 8), which the former cap of 6 returned unread, signatures and all."""
_TOO_DEEP = "<nested too deep to check: redacted>"
_HOPS = ("_client", "_transport", "_pool")
"""The private attributes from an SDK client down to its connection pool (see ``stack_loggers``)."""
_OPAQUE_TYPES = (
    "ReasoningDeltaEvent",
    "ProviderReasoningItem",
    "Continuation",
    "ModelResponse",
    "ResponseCompletedEvent",
)


def redact(value: Any, _depth: int = 0, *, wire: bool = True) -> Any:
    """A log-safe version of ``value`` (see the module docstring for what is replaced).

    ``wire=False``: keys and reasoning objects only, no rewriting of dict values by key name.
    """
    if isinstance(value, str):
        return redact_secrets(value)
    if type(value).__name__ in _OPAQUE_TYPES:
        return f"<{type(value).__name__} redacted>"
    if _depth > _MAX_DEPTH and isinstance(value, dict | list | tuple):
        return _TOO_DEEP  # fail closed: an unread container may hold anything
    if not wire:
        if isinstance(value, dict):
            return {k: redact(v, _depth + 1, wire=False) for k, v in value.items()}
        if isinstance(value, list | tuple):
            items = [redact(v, _depth + 1, wire=False) for v in value]
            return type(value)(items) if isinstance(value, tuple) else items
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


def _arg(value: Any, wire: bool) -> Any:
    """One ``%`` argument of an SDK record, log-safe.

    Raw bytes are a request or response body (botocore logs ``Response body: %r``): their size only.
    A mapping that is not a dict (botocore's ``HeadersDict``) is read as a dict. Other objects whose
    repr is a whole request (botocore's ``AWSPreparedRequest``: headers with the session token, the
    body with reasoning blocks) are named by type only.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes redacted>" if wire else value
    if isinstance(value, Mapping) and not isinstance(value, dict):
        return redact(dict(value), wire=wire)
    if wire and type(value).__name__ in _WHOLE_REQUEST_TYPES:
        return f"<{type(value).__name__} redacted>"
    return redact(value, wire=wire)


_WHOLE_REQUEST_TYPES = frozenset({"AWSPreparedRequest", "AWSRequest", "AWSResponse", "PreparedRequest"})


class RedactionFilter(logging.Filter):
    """Sanitizes a record's message, arguments, exception text and ``agentlab`` extra in place.

    It never drops records. ``wire=False`` applies the key and reasoning-object rules only.
    """

    def __init__(self, name: str = "", *, wire: bool = True) -> None:
        super().__init__(name)
        self.wire = wire

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place and keep it: a dropped record would hide that something was logged."""
        wire = self.wire
        if isinstance(record.msg, str):
            record.msg = redact_secrets(record.msg)
        else:
            record.msg = redact(record.msg, wire=wire)
        if record.args:
            if isinstance(record.args, Mapping):
                record.args = redact(dict(record.args), wire=wire)
            else:
                record.args = tuple(_arg(a, wire) for a in record.args)
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            # Formatters reuse ``exc_text`` when it is set: format it once, redacted.
            record.exc_text = redact_secrets(logging.Formatter().formatException(record.exc_info))
        extra = getattr(record, "agentlab", None)
        if extra is not None:
            record.agentlab = redact(extra, wire=wire)
        return True


_FILTER = RedactionFilter()
_OTHERS = RedactionFilter(wire=False)


def _ensure(logger: logging.Logger) -> logging.Logger:
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


# ``asyncio``: the event loop that runs every run logs its failed tasks (with their exceptions).
_PREFIXES: tuple[str, ...] = ("agentlab", "asyncio", *SDK_LOGGERS)
_factory_installed = False


def _install_factory() -> None:
    """Wrap the log-record factory so records are redacted however handlers are set up.

    Records from agentlab and SDK loggers (children included: ``openai._base_client`` logs request
    bodies at DEBUG) get every rule; every other record gets the key and reasoning-object rules. The
    factory runs only for records that pass the level check, so disabled DEBUG costs nothing.
    """
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        name = record.name
        if name.startswith(_PREFIXES) and any(name == p or name.startswith(p + ".") for p in _PREFIXES):
            _FILTER.filter(record)
        else:
            _OTHERS.filter(record)
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
    for name in _PREFIXES:
        _ensure(logging.getLogger(name))
    _install_factory()


def get_logger(name: str) -> logging.Logger:
    """A logger under ``agentlab`` with the redaction filter attached."""
    install_redaction()
    return _ensure(logging.getLogger(name))


def _next_hop(obj: object, start: int) -> tuple[object | None, int]:
    """The object one level down (the first of ``_HOPS[start:]`` that ``obj`` has), and where to go on."""
    for i in range(start, len(_HOPS)):
        found = getattr(obj, _HOPS[i], None)
        if found is not None:
            return found, i + 1
    return None, len(_HOPS)


def stack_loggers(client: object) -> tuple[str, ...]:
    """The logger names (top-level packages) of an SDK client and the HTTP objects under it.

    Follows the SDK client to its HTTP client (``_client``), that client's transport (``_transport``)
    and the transport's connection pool (``_pool``), whatever libraries those are, starting from any
    of them (the Gemini adapter passes the ``httpx2`` client itself): a request sent through this
    client can only be logged by them. Adapters pass the result to ``install_redaction``, so a
    renamed or swapped HTTP library is covered without a list to update.

    Those three attributes are private (the SDKs and httpx2 have no public accessor for the objects
    under a client); ``tests/records/test_stack_loggers.py`` walks real clients of the installed SDKs, so
    a release that renames one fails there. Whatever the walk misses, ``SDK_LOGGERS`` still covers.
    """
    names: list[str] = []
    obj: object | None = client
    start = 0
    while obj is not None:
        top = type(obj).__module__.partition(".")[0]
        if top and top != "builtins":
            names.append(top)
        obj, start = _next_hop(obj, start)
    return tuple(dict.fromkeys(names))
