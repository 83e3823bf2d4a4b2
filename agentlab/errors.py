"""agentlab's one error tree.

Every exception agentlab raises on purpose is an ``AgentlabError``. Adapters translate SDK
exceptions into this tree at exactly one place, so user code never needs to import a provider SDK
to catch an error::

    AgentlabError
    ├── UserError                      the caller can fix it; the message says how
    │   ├── ConfigError                misconfiguration (settings, pricing, paths)
    │   │   ├── MissingApiKeyError     names the environment variable to set
    │   │   ├── MissingExtraError      an optional package is missing; names the extra to install
    │   │   ├── UnknownModelError      model string not routable (``provider:model``)
    │   │   └── InvalidSettingsError   reasoning/cache/limit settings a provider would reject
    │   └── ToolDefinitionError        a @tool that cannot be described as a JSON schema
    ├── ProviderError                  the provider (or the network to it) failed
    │   ├── ProviderAPIError           an HTTP error answer: status, provider error type, request id
    │   │   ├── RateLimitError         429 (``retry_after`` seconds when given)
    │   │   ├── OverloadedError        529 / 503 overloaded
    │   │   └── ProviderServerError    other 5xx
    │   ├── ProviderConnectionError    connection refused / reset, timeouts
    │   └── StreamInterruptedError     a stream that broke mid-way (cut, malformed event, in-stream error)
    ├── ModelBehaviorError             the model answered something agentlab cannot use
    │   └── OutputValidationError      the final answer does not match ``output_type``
    ├── LimitError                     a limit agentlab enforces
    │   ├── StepLimitError             the tool loop hit ``max_steps``
    │   └── BudgetExceededError        a cost or token budget was reached
    ├── ContinuityError                opaque reasoning state used outside the loop/provider that owns it
    │   └── ContinuityViolation        the next request would lose, reorder or change an opaque item
    ├── PrivacyError                   something tried to persist transient or opaque data
    └── StorageError                   a durable file could not take a record (disk full, I/O error)

Tool failures are not exceptions of the loop: a tool that raises becomes an error *result* the model
sees (``ToolResultItem(is_error=True)``). ``ToolExecutionError`` exists for callers who run a tool
directly.
"""

from __future__ import annotations

import contextlib
import errno as errno_codes
import os
import re

__all__ = [
    "AgentlabError",
    "BudgetExceededError",
    "ConfigError",
    "ContinuityError",
    "ContinuityViolation",
    "InvalidSettingsError",
    "LimitError",
    "MissingApiKeyError",
    "MissingExtraError",
    "ModelBehaviorError",
    "OutputValidationError",
    "OverloadedError",
    "PrivacyError",
    "ProviderAPIError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderServerError",
    "RateLimitError",
    "StepLimitError",
    "StorageError",
    "StreamInterruptedError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "UnknownModelError",
    "UserError",
]


_LINE_BREAKS = re.compile(r"\s*(?:\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])\s*")


def one_line(text: str) -> str:
    """``text`` with every line break (and the indentation around it) folded into one space.

    Why: an error's text travels as one line (a log line, ``RunResult.error``, an event-log record, a
    results-file cell, a span status), and providers answer with multi-line texts (OpenRouter relays
    an upstream's pretty-printed JSON in ``metadata.raw``): folded where the error is built, every
    provider's error is one line whatever its adapter kept.
    """
    return _LINE_BREAKS.sub(" ", text).strip()


class AgentlabError(Exception):
    """Base of every error agentlab raises on purpose.

    In IPython (a notebook cell) it renders as its one line, ``OverloadedError: [anthropic 529 ...]``,
    not as a traceback through agentlab's loop: every message here names what failed and, where
    the caller can act, how to fix it, so the 90 lines of frames above it say nothing more. The
    exception itself is unchanged (``except``, ``%debug`` and ``traceback`` see all of it).
    """

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback: the message is the whole story."""
        return [f"{type(self).__name__}: {self}"]


class UserError(AgentlabError):
    """The caller can fix this; the message says how."""


class ConfigError(UserError):
    """Misconfiguration: settings, pricing data, paths."""


class MissingApiKeyError(ConfigError):
    """No API key for a real provider. Names the variable, never prints a key."""

    def __init__(self, provider: str, env_var: str) -> None:
        self.provider = provider
        self.env_var = env_var
        super().__init__(
            f"No API key for {provider}: set the environment variable {env_var} "
            f"(or pass api_key=...), or use a simulated model such as '{provider}:sim-...'."
        )


class MissingExtraError(ConfigError):
    """An optional dependency is not installed; names the package and the extra that brings it."""

    def __init__(self, feature: str, package: str, extra: str) -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs the optional package {package!r}: pip install 'agentlab[{extra}]' "
            f"(or pip install {package})."
        )


class UnknownModelError(ConfigError):
    """A model string that cannot be routed to a provider."""


class InvalidSettingsError(ConfigError):
    """Settings the chosen provider would reject; raised before anything is sent."""


class ToolDefinitionError(UserError):
    """A function that cannot be turned into a tool (e.g. an untyped parameter)."""


class ProviderError(AgentlabError):
    """The provider, or the network to it, failed. Always names the provider.

    What debugging needs is kept as plain attributes: ``status``, ``error_type`` (the provider's
    error type), ``code`` (its finer code), ``request_id``, ``retryable`` and ``retry_after`` (the
    server's hint in seconds, when it gave one). Adapters raise it with no ``__cause__`` or
    ``__context__``: the SDK exception it replaces holds the request (auth header, body with opaque
    items) and is not reachable from it.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.retry_after = retry_after
        self.code = code
        """The provider's finer error code when it gives one (OpenAI ``model_not_found``, ...)."""
        self.status = status
        self.error_type = error_type
        self.request_id = request_id
        self.retryable = retryable
        self.message = one_line(message)
        """The provider's text as kept (one line: see :func:`one_line`)."""
        self.retries: int | None = None
        """How many retries were made before giving up (set by :meth:`gave_up`); None: not retried."""
        super().__init__(one_line(self._format()))

    def gave_up(self, retries: int) -> ProviderError:
        """Say in the message that this is the last answer after ``retries`` retries; returns self.

        ``[anthropic 529 overloaded_error] gave up after 3 retries; last answer: Overloaded``: the
        count and the last status in the one line a notebook shows, for the caller who must decide
        whether to wait, lower the load or change provider.
        """
        self.retries = retries
        self.args = (one_line(self._format()),)
        return self

    def _format(self) -> str:
        bits = [self.provider]
        if self.status is not None:
            bits.append(str(self.status))
        if self.error_type:
            bits.append(self.error_type)
        head = " ".join(bits)
        tail = f" (request id {self.request_id})" if self.request_id else ""
        if self.retries is not None:
            n = self.retries
            count = f"{n} retr{'y' if n == 1 else 'ies'}"
            return f"[{head}] gave up after {count}; last answer: {self.message}{tail}"
        return f"[{head}] {self.message}{tail}"


class ProviderAPIError(ProviderError):
    """An HTTP error answer from the provider."""


class RateLimitError(ProviderAPIError):
    """429. ``retry_after`` holds the server's hint in seconds, when it gave one."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: object) -> None:
        super().__init__(message, retryable=True, retry_after=retry_after, **kw)  # type: ignore[arg-type]


class OverloadedError(ProviderAPIError):
    """529 (Anthropic ``overloaded_error``) or 503."""

    def __init__(self, message: str, **kw: object) -> None:
        super().__init__(message, retryable=True, **kw)  # type: ignore[arg-type]


class ProviderServerError(ProviderAPIError):
    """Another 5xx."""

    def __init__(self, message: str, **kw: object) -> None:
        super().__init__(message, retryable=True, **kw)  # type: ignore[arg-type]


class ProviderConnectionError(ProviderError):
    """Connection refused or reset, or a timeout, before a complete answer arrived."""

    def __init__(self, message: str, **kw: object) -> None:
        kw.setdefault("retryable", True)
        super().__init__(message, **kw)  # type: ignore[arg-type]


class StreamInterruptedError(ProviderError):
    """A stream that broke mid-way: cut, malformed event, or an in-stream error event.

    Nothing from the broken call is added to history: the checkpoint stays as it was before the call.
    """


class ModelBehaviorError(AgentlabError):
    """The model produced something agentlab cannot use (e.g. an empty response where one was needed)."""


class OutputValidationError(ModelBehaviorError):
    """The final answer is not valid JSON for the run's ``output_type``, or fails its validation.

    ``output_name`` is the output type's name and ``fields`` the paths that failed (the schema's own
    property names; a key the model invented reads ``<unexpected field>``). The message says what was
    wrong with each (``missing``, ``int_parsing``, ``invalid JSON``), never the model's values; the
    answer itself is in the run's ``history``.
    """

    def __init__(self, message: str, *, output_name: str = "", fields: tuple[str, ...] = ()) -> None:
        self.output_name = output_name
        self.fields = fields
        super().__init__(message)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (str(self),), {"output_name": self.output_name, "fields": self.fields})


class LimitError(AgentlabError):
    """A limit agentlab enforces was reached."""


class StepLimitError(LimitError):
    """The tool loop reached ``max_steps`` without a final answer."""


class BudgetExceededError(LimitError):
    """A cost or token budget was reached."""


class ContinuityError(AgentlabError):
    """Opaque reasoning state used outside the provider, endpoint or loop that owns it."""


class ContinuityViolation(ContinuityError):
    """The next request of a live loop would lose, reorder or change an opaque item of the last response.

    A bug, never the provider's doing: raised before anything is sent. It names the item by
    ``provider``, ``kind``, ``index`` (and the response, ``turn_id``) and says the ``problem``
    (``missing``, ``modified``, ``out of order``), never its payload.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        kind: str = "",
        index: int = -1,
        turn_id: str = "",
        problem: str = "",
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.kind = kind
        self.index = index
        self.turn_id = turn_id
        self.problem = problem

    def __reduce__(self) -> tuple[object, ...]:
        state = {k: getattr(self, k) for k in ("provider", "kind", "index", "turn_id", "problem")}
        return (type(self), (str(self),), state)


class PrivacyError(AgentlabError):
    """Something tried to persist transient or opaque data (reasoning text, continuations)."""


class StorageError(AgentlabError):
    """A durable file (event log, long-term memory, sweep results) could not take a record.

    Raised for an OS error while appending (``ENOSPC`` disk full, ``EDQUOT``, ``EIO``) and for a
    record that cannot be encoded as JSON. Either way the file is byte for byte as it was before the
    append, and the next append starts on a clean line. ``path`` names the file and ``errno`` the OS
    error (``None`` for an encoding failure); the message never holds the record itself.
    """

    def __init__(self, message: str, *, path: str | None = None, errno: int | None = None) -> None:
        self.path = path
        self.errno = errno
        super().__init__(message)

    @classmethod
    def from_os_error(cls, path: str | os.PathLike[str], what: str, e: OSError) -> StorageError:
        """``"<path>: could not <what>: ENOSPC No space left on device (free some space ...)"``."""
        code = errno_codes.errorcode.get(e.errno or 0, str(e.errno))
        full = e.errno in (errno_codes.ENOSPC, errno_codes.EDQUOT)
        hint = " (free some space and try again)" if full else ""
        return cls(
            f"{path}: could not {what}: {code} {e.strerror or ''}{hint}".rstrip(),
            path=str(path),
            errno=e.errno,
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (str(self),), {"path": self.path, "errno": self.errno})

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback: which file, which OS error, what to do."""
        return [f"{type(self).__name__}: {self}"]


class ToolExecutionError(AgentlabError):
    """Raised only when a caller runs a tool directly; inside a run a failing tool is an error result."""


def detach_frames(exc: BaseException) -> BaseException:
    """Let ``exc`` leave a run (or an adapter) carrying no payload in frame locals; returns ``exc``.

    Called at the one boundary where an error leaves agentlab's loop. Every frame below the boundary
    has finished (the error unwound it), yet a traceback keeps its locals alive and on show: request
    bodies, raw SSE lines, assembler state, opaque items. Formatters that print locals (IPython
    ``%xmode Verbose``, ``rich.traceback(show_locals=True)``, ``traceback`` with
    ``capture_locals``) would print them, and a held error would keep the items alive. So the locals
    of those finished frames are cleared (lines and line numbers stay, so the traceback still says
    where it failed). Chained exceptions caught inside the same frames get the same treatment, and a
    context suppressed with ``raise ... from None`` is cut: it was declared irrelevant, and its own
    frames hold the raw text that failed to parse. Exceptions chained from outside the boundary (a
    caller's) are left alone. The boundary frame itself is still running and cannot be cleared; its
    locals are the caller's handles (the run, a generator), whose reprs are safe.
    """
    inside: set[int] = set()
    tb = exc.__traceback__
    while tb is not None:
        inside.add(id(tb.tb_frame))
        tb = tb.tb_next
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        tb = e.__traceback__
        if e is not exc and (tb is None or id(tb.tb_frame) not in inside):
            continue  # chained from outside the boundary: the caller's, not ours to touch
        if e.__suppress_context__:
            e.__context__ = None
        while tb is not None:
            with contextlib.suppress(RuntimeError):  # the boundary frame (still executing)
                tb.tb_frame.clear()
            tb = tb.tb_next
        todo.extend(c for c in (e.__cause__, e.__context__) if c is not None)
    return exc
