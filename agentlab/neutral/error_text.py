"""Value-free error texts: what a message about bad wire input, or about an arbitrary exception, may say.

Why this module exists: an error's text travels further than the error. It becomes
``RunResult.error``, an ``ErrorEvent`` in the event log, a row of a sweep's results file and a cell
output in a saved notebook. The exceptions raised while reading provider JSON embed the offending
value in their text (pydantic's ``input_value=...``, ``JSONDecodeError.doc``, ``int('...')``'s
``invalid literal``), and that value can be reasoning text, a signature or ``encrypted_content``.

The rule, enforced here once: a text built by this module names **types, field paths, positions and
protocol names only**, never a value that came from the wire or from a model. Concretely:

* pydantic ``ValidationError``: each error's ``loc`` (field path), its error ``type`` (what was
  expected, e.g. ``string_type``) and the Python type of the input; never ``input_value`` or ``msg``
  (custom validators put the input in ``msg``).
* ``json.JSONDecodeError``: its ``msg`` (a fixed phrase such as ``Expecting value``) and position;
  never ``doc`` (the payload).
* ``KeyError``: the missing key when it looks like a protocol field name (see :func:`safe_name`).
* ``UnicodeError``: the codec and position, never the object.
* :class:`WireFieldError` (raised by the adapters' own shape checks): its path, expected and got type.
* Anything else (``TypeError``, ``ValueError``, ``AttributeError``, ...): the class name only, since
  builtin messages such as ``invalid literal for int() with base 10: '...'`` quote their input.

A provider's own error message is kept (it names the rule broken and the fix), but through
:func:`provider_text`, the one scrubber every adapter's error translation uses: providers quote the
value they rejected (Google's protobuf parser: ``Base64 decoding failed for "<the signature>"``;
OpenAI: ``The encrypted content gAAA... could not be verified``; vLLM: pydantic's ``'input': ...``),
and that value can be a signature, ``encrypted_content``, reasoning text or a tool argument.

Callers must also raise the agentlab error *outside* the ``except`` block that caught the original
(or with ``from None`` and a cleared ``__context__``): the original, which holds the value, must not
stay reachable through ``__cause__``/``__context__``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentlab.errors import AgentlabError
from agentlab.neutral.redaction import redact_secrets

__all__ = [
    "WireFieldError",
    "durable_error_text",
    "provider_text",
    "safe_name",
    "type_name",
    "wire_error_text",
]

# A quoted run: "..." (JSON escapes inside), '...' (not an apostrophe: no word character outside the
# quotes), `...`. One line at most: a quote left open is not allowed to swallow the rest.
_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"|(?<!\w)\'([^\'\n]*)\'(?!\w)|`([^`\n]*)`')
# A parameter path, field, enum value or model name: words and numbers joined by . - : / [ ] @
# (``reasoning.effort``, ``contents[1].parts[0].thought_signature``, ``TYPE_BYTES``, ``gpt-5.1``,
# ``default_api:read_files``). A word may end in a short number (``Qwen3``), a number in a short unit
# (``8B``); a run mixing letters and digits otherwise (``rs_0de71...``, ``EsYBCt...``) is data.
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-:/\[\]@]{1,64}")
_NAME_SEP = re.compile(r"[.\-:/\[\]@]+")
_NAME_PART = re.compile(r"[A-Za-z_]+\d{0,3}|\d{1,8}[A-Za-z]{0,2}")
# Outside quotes: a base64-ish run of 20+ characters mixing upper case, lower case and digits (a
# signature, an encrypted_content token, a key) is data; words, URLs and hex ids are not.
_RUN = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_REMOVED = re.compile(r"<\d+ chars>")
# An object id the provider made (a response, item, call, batch, file): it names what was refused,
# carries nothing of the request's content, and is what a user looks up.
_PROVIDER_ID = re.compile(
    r"(?:(?:rs|msg|fc|call|resp|toolu|srvtoolu|req|batch|msgbatch|file)_|cachedContents/|batches/|files/)"
    r"[A-Za-z0-9]{6,64}"
)

# Protocol names (event types, block types, field keys) are lowercase snake/dotted tokens. A value
# that does not look like one is described by its type and length instead.
_NAME = re.compile(r"[a-z][a-z0-9_.]{0,63}")
_MAX_ERRORS = 3


def type_name(value: object) -> str:
    """The JSON-ish type name of ``value`` (``string``, ``int``, ``dict``, ``null`` ...)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def safe_name(value: object) -> str:
    """``value`` itself when it is a protocol-looking name, else ``<string of N chars>`` / ``<int>``.

    Used for event, block and delta types and for missing keys: a real protocol name is shown so the
    message stays useful; anything else (a model's text in the wrong place) is shown by shape only.
    """
    if isinstance(value, str):
        if _NAME.fullmatch(value):
            return value
        return f"<string of {len(value)} chars>"
    return f"<{type_name(value)}>"


def _is_name(text: str) -> bool:
    if not _NAME_CHARS.fullmatch(text):
        return False
    return all(_NAME_PART.fullmatch(part) for part in _NAME_SEP.split(text) if part)


def _quoted(m: re.Match[str]) -> str:
    whole = m.group(0)
    inner = whole[1:-1]
    if not inner or _is_name(inner) or _REMOVED.fullmatch(inner) or _PROVIDER_ID.fullmatch(inner):
        return whole
    return f"{whole[0]}<{len(inner)} chars>{whole[-1]}"


def _run(m: re.Match[str]) -> str:
    run = m.group(0)
    mixed = any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run)
    return f"<{len(run)} chars>" if mixed else run


def provider_text(text: str) -> str:
    """A provider's error message with the values it quotes removed, and key-looking strings redacted.

    What stays is the provider's own words: parameter paths, field and enum names, model names
    (``Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES)``) and the ids of the
    provider's own objects (``'rs_0de7...'``: they name what was refused). What goes, replaced
    by its length (``"<412 chars>"``): any quoted string that is not such a name (a sentence, JSON, a
    signature, an id), and any unquoted base64-ish run. Idempotent, so a message may pass twice.
    """
    if not text:
        return text
    text = _QUOTED.sub(_quoted, redact_secrets(text))
    return _RUN.sub(_run, text)


class WireFieldError(TypeError):
    """A field of a provider event has the wrong type or is missing. Holds no value.

    Raised by the adapters' own cheap shape checks in the hot path, caught by the same adapter and
    turned into ``StreamInterruptedError`` via :func:`wire_error_text`.
    """

    def __init__(self, path: str, expected: str, got: object) -> None:
        self.path = path
        self.expected = expected
        self.got = type_name(got)
        super().__init__(f"field {path}: expected {expected}, got {self.got}")


def _loc(loc: tuple[int | str, ...]) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else safe_name(p) for p in loc]
    return ".".join(parts).replace(".[", "[") or "<root>"


def _validation_text(exc: Any) -> str:
    errors = exc.errors(include_url=False, include_context=False)
    bits = []
    for err in errors[:_MAX_ERRORS]:
        got = type_name(err.get("input")) if "input" in err else "?"
        bits.append(f"field {_loc(tuple(err.get('loc', ())))}: {safe_name(err.get('type'))} (got {got})")
    more = f" (+{len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
    return f"{exc.title} validation: " + "; ".join(bits) + more


def _is_validation_error(exc: BaseException) -> bool:
    # pydantic is a dependency, but keep this module import-light: test by type name and attributes.
    return type(exc).__name__ == "ValidationError" and callable(getattr(exc, "errors", None))


def wire_error_text(exc: BaseException) -> str:
    """A value-free description of ``exc`` (see the module docstring for what each kind may say)."""
    return _specific(exc) or f"wrong type or shape ({type(exc).__name__})"


def _specific(exc: BaseException) -> str | None:
    if isinstance(exc, WireFieldError):
        return str(exc)
    if _is_validation_error(exc):
        try:
            return _validation_text(exc)
        except Exception:  # pragma: no cover - a pydantic API change must not leak the value instead
            return "ValidationError"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}, char {exc.pos})"
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else None
        return f"missing field {safe_name(key)}"
    if isinstance(exc, UnicodeError):
        codec = getattr(exc, "encoding", "?")
        start = getattr(exc, "start", "?")
        verb = "encode" if isinstance(exc, UnicodeEncodeError) else "decode"
        return f"cannot {verb} ({codec}) at position {start}"
    return None


def durable_error_text(exc: BaseException) -> str:
    """The text recorded for a failed run (``RunResult.error``, ``ErrorEvent``, results rows).

    The rule: agentlab's own errors are built value-free where they are raised (adapters describe
    wire input with :func:`wire_error_text`), so their ``str()`` is recorded as is; any other
    exception (a bug, a user callback such as ``on_event`` that saw reasoning deltas, a library error)
    may embed whatever value it touched, so only its type and a value-free description are recorded.
    The exception itself still reaches the caller unchanged, with its full text, for debugging.
    """
    if isinstance(exc, AgentlabError):
        return str(exc)
    specific = _specific(exc)
    if specific is not None:
        return f"{type(exc).__name__}: {specific}"
    return f"{type(exc).__name__} (its message is not recorded: it may quote model output)"
