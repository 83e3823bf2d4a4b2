"""``@tool``: a Python function the model may call.

The JSON schema comes from the function's type hints (through a pydantic model built once at
decoration time) and its docstring (summary plus per-argument descriptions in Google ``Args:`` or
Sphinx ``:param x:`` style). Arguments the model sends are validated by that same model before the
function runs, so the function only ever sees well-typed values.

Inside a run nothing a tool does crashes the loop: bad arguments, an exception, a return value that
cannot be serialized, all become ``ToolResultItem(is_error=True)`` with a message the model can act
on. Huge outputs are truncated with a visible marker (models pay per token for what they read).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import html
import inspect
import json
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, TypedDict, Unpack, get_type_hints, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError, create_model, field_validator
from pydantic_core import PydanticSerializationError, to_json

from agentlab.errors import ToolDefinitionError, ToolExecutionError
from agentlab.loop.tool_loop import ToolLoopCall, start_on_tool_loop
from agentlab.loop.tool_threads import run_in_tool_thread
from agentlab.neutral._inputs import did_you_mean, int_at_least, scrub
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from agentlab.neutral.request import ToolSpec, strict_schema_problem

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_TOOL_TIMEOUT_S",
    "Tool",
    "ToolLike",
    "ToolOptions",
    "ToolOutcome",
    "ToolProvider",
    "ToolSource",
    "as_tool",
    "as_tools",
    "servers_label",
    "tool",
]

DEFAULT_MAX_OUTPUT_CHARS = 20_000
"""Tool outputs longer than this are cut (head kept) and end with a truncation marker."""

DEFAULT_TOOL_TIMEOUT_S = 120.0
"""A tool call still running after this many seconds is abandoned and becomes an error result.

The run's default (``Run(tool_timeout=...)``); ``@tool(timeout=...)`` overrides it per tool. Long
enough for a slow API or a short computation, short enough that a stuck call cannot hold a run (and
its spend) indefinitely. ``tool_timeout=None`` means no limit.
"""

CANCEL_GRACE_S = 0.5
"""How long a cancelled async tool may take to clean up before the run stops waiting for it.

Kept well under a second so that one Ctrl-C gives control back at once even when a tool ignores
its cancellation.
"""

AbandonHook = Callable[[str], None]
"""Called with a reason (``"timed out"``/``"cancelled"``) when a still-running tool call is left behind."""

_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ToolOutcome(BaseModel):
    """What running a tool produced: the text the model will read, and whether it is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    output: str
    is_error: bool = False
    truncated: bool = False
    timed_out: bool = False
    blocked_loop: bool = False
    """Timed out with its event loop blocked: an async tool making a blocking call (``time.sleep``,
    sync I/O), which no cancellation can reach. Async tools share the tool loop, so the blocking
    call may be another tool's running at the same time; worth saying, since the fix is in a tool."""
    started: float | None = None
    """When the function was called, on ``time.perf_counter``'s clock, taken where it runs (its
    thread, or the tool loop); None when it never ran (invalid arguments)."""
    duration_s: float | None = None
    """How long the function ran, measured where it runs: not how long the run's loop took to
    notice (a loop busy with other runs' events, or a slow observer, is not the tool's time).
    None when it did not finish (timed out or abandoned)."""
    server_failure: str | None = None
    """What the user should hear beside the model's error result when the server behind the tool
    failed (an MCP server that crashed mid-call); the run records it as a ``tool_server_failed``
    diagnostic. None: nothing beyond the result."""

    @field_validator("output")
    @classmethod
    def _encodable(cls, v: str) -> str:
        """Replace text UTF-8 cannot encode, and say so in the output.

        Lone surrogates (e.g. a file read with ``surrogateescape``) would make the request, the event
        log and the result unwritable.
        """
        fixed, n = scrub(v)
        return v if not n else f"{fixed}\n…[{n} unencodable character(s) replaced with U+FFFD]"

    def value(self) -> Any:
        """What a direct call of a tool returns (a Python one or an MCP server's, the same way).

        The output's JSON value, or its text when it is not JSON; an error outcome raises
        ``ToolExecutionError`` instead, since outside a run there is no model to read it.
        """
        if self.is_error:
            raise ToolExecutionError(self.output)
        try:
            return json.loads(self.output)
        except ValueError:
            return self.output


class ToolSource(BaseModel):
    """Where a tool comes from when it is not a Python function here: what views, traces and records name.

    Said as data so that core needs no special case per kind of tool (an MCP server's tools set it,
    ``agentlab.mcp``). ``server_version`` is what the server reported (None: not said, or not started).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: str
    """``"mcp"`` for an MCP server's tool."""
    server: str
    """The name the user gave the server (what views show)."""
    server_name: str | None = None
    """The server's own name, from its handshake."""
    server_version: str | None = None
    tool: str
    """The tool's name on the server (the run's name for it may be renamed or prefixed)."""


@runtime_checkable
class ToolProvider(Protocol):
    """Something that stands for several tools in ``tools=[...]`` (an MCP server, ``agentlab.mcp``)."""

    def __agentlab_tools__(self, taken: frozenset[str]) -> Iterable[Tool]:
        """Its tools; ``taken`` holds the names listed before it (so it can rename its own on a clash)."""
        ...


ToolLike = Any
"""What ``tools=[...]`` takes: a ``Tool``, a plain function, or a :class:`ToolProvider`.

``Any`` for type checkers: a union with ``Callable[..., Any]`` would refuse nothing anyway, and
``as_tools`` checks each entry at run time, with a one-line error naming it.
"""


def servers_label(sources: Mapping[str, ToolSource]) -> str | None:
    """Each server a run's tools came from, with what it said it is: ``"time=mcp-time 2026.10.19"``.

    The results file and trackers keep this label (one per run), so a study says which server and
    version it used; ``?`` where the server did not say. None: no tool came from a server.
    """
    seen = sorted({(s.server, s.server_name or "?", s.server_version or "?") for s in sources.values()})
    return "; ".join(f"{server}={name} {version}" for server, name, version in seen) or None


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into (description, {arg: description}).

    Understands Google style (``Args:``/``Arguments:``/``Parameters:`` then ``name (type): text``)
    and Sphinx style (``:param name: text``). Anything else stays in the description.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        m_sphinx = re.match(r"^:param\s+(?:[\w\[\], |.]+\s+)?(\w+)\s*:\s*(.*)$", stripped)
        if m_sphinx:
            current = m_sphinx.group(1)
            args[current] = m_sphinx.group(2).strip()
            section = "sphinx"
            continue
        if re.match(r"^:(returns?|rtype|raises?)\b", stripped):
            section, current = "skip", None
            continue
        if re.match(r"^(Args|Arguments|Parameters|Params)\s*:\s*$", stripped):
            section, current, arg_indent = "args", None, None
            continue
        if re.match(r"^(Returns?|Raises|Yields|Examples?|Notes?|Warnings?)\s*:\s*$", stripped):
            section, current = "skip", None
            continue
        if section == "args":
            if not stripped:
                continue
            indent = len(line) - len(line.lstrip())
            m = re.match(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if m and (arg_indent is None or indent <= arg_indent):
                arg_indent = indent
                current = m.group(1).lstrip("*")
                args[current] = m.group(2).strip()
            elif current is not None:
                args[current] = (args[current] + " " + stripped).strip()
            continue
        if section == "sphinx":
            if stripped and current is not None and raw.startswith((" ", "\t")):
                args[current] = (args[current] + " " + stripped).strip()
                continue
            if not stripped:
                continue
        if section == "skip":
            continue
        desc.append(line)
    return "\n".join(desc).strip(), args


def model_schema(schema: Any) -> Any:
    """The schema as the model gets it, made in one walk.

    One rule for a typed function's model here and an MCP server's input schema
    (:mod:`agentlab.mcp.tools`): the model sees the same kind of schema from both.

    Pydantic's auto ``title`` keys are dropped (noise the model pays tokens for), and every object
    schema gets ``additionalProperties: false`` (strict tool schemas need it).
    """
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for k, v in schema.items():
            if k == "title" and isinstance(v, str):
                continue
            if k == "properties" and isinstance(v, dict):  # property names are not keywords: keep "title"
                out[k] = {name: model_schema(sub) for name, sub in v.items()}
            else:
                out[k] = model_schema(v)
        if out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [model_schema(s) for s in schema]
    return schema


def _serialize(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return to_json(value).decode()


def _truncate(text: str, limit: int | None) -> tuple[str, bool]:
    if limit is None or len(text) <= limit:
        return text, False
    cut = len(text) - limit
    return f"{text[:limit]}\n…[truncated {cut} of {len(text)} characters]", True


def check_timeout(value: object, what: str, error: type[Exception]) -> float | None:
    """A timeout in seconds: a positive finite number (``inf`` allowed for "never"), or None.

    One rule for ``@tool(timeout=...)`` and ``Run(tool_timeout=...)``, so that ``0``/``-1``/``"5"``
    fail where they are written instead of silently meaning "no limit" or failing mid-run.
    """
    number = isinstance(value, int | float) and not isinstance(value, bool)
    ok = number and value > 0 and not math.isnan(value)  # type: ignore[operator, arg-type]
    if value is not None and not ok:
        raise error(
            f"{what} must be a number of seconds > 0 (or None for no limit), got {value!r}; e.g. {what}=30"
        )
    return None if value is None else float(value)  # type: ignore[arg-type]


def _start_in_thread(
    fn: Callable[..., Any], kwargs: dict[str, Any], name: str, clock: _Clock | None = None
) -> asyncio.Future[Any]:
    """Call a sync tool in a daemon tool thread; a future on the running loop gets its outcome.

    Not ``asyncio.to_thread``: a pool thread is joined when its loop shuts down (``asyncio.run``'s
    exit) and at interpreter exit, so one stuck tool would hold the caller after a timeout or a
    Ctrl-C. A daemon thread can be abandoned: nothing ever waits for it (:mod:`.tool_threads`
    reuses idle ones). Its late outcome is dropped (the future is cancelled when the call is
    abandoned; a closed loop is ignored).
    """
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if fut.done():
            return
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def target() -> Callable[[], None]:
        if clock is not None:
            clock.began()
        try:
            out: tuple[bool, Any] = (True, fn(**kwargs))
        except BaseException as e:  # delivered to the awaiting coroutine, like to_thread does
            out = (False, e)
        if clock is not None:
            clock.ended()
        return functools.partial(deliver, *out)

    def deliver(ok: bool, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, ok, value)

    ctx = contextvars.copy_context()
    run_in_tool_thread(functools.partial(ctx.run, target), f"agentlab-tool-{name}")
    return fut


class _Raised:
    """A ``KeyboardInterrupt``/``SystemExit`` from an async tool, carried out of its task as a value."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class _Clock:
    """A tool call's start and end, stamped where the tool runs (its thread, or the tool loop).

    Why there: the run's loop hears of the end only when it gets to the callback, and in a compare
    that loop also delivers the other runs' events to their observers (live views): a duration taken
    there is the tool's plus whatever the loop was busy with.
    """

    __slots__ = ("end", "start")

    def __init__(self) -> None:
        self.start: float | None = None
        self.end: float | None = None

    def began(self) -> None:
        if self.start is None:  # a sync wrapper's coroutine, awaited next, is the same call
            self.start = time.perf_counter()

    def ended(self) -> None:
        self.end = time.perf_counter()

    @property
    def duration_s(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start


async def _capture(coro: Awaitable[Any], clock: _Clock | None = None) -> Any:
    """Run an async tool's coroutine as a task of the tool loop without letting Ctrl-C escape it.

    Raised inside a task, ``KeyboardInterrupt`` and ``SystemExit`` propagate out of the event loop
    itself (ending the tool loop's thread), not to the awaiting run; carried out as a value they
    are re-raised in the run, as they were when the tool ran inline. ``clock`` is stamped around
    the await, on the tool loop.
    """
    if clock is not None:
        clock.began()
    try:
        return await coro
    except (KeyboardInterrupt, SystemExit) as e:
        return _Raised(e)
    finally:
        if clock is not None:
            clock.ended()


def _unwrap(value: Any) -> Any:
    if isinstance(value, _Raised):
        raise value.exc
    return value


Pending = asyncio.Future[Any] | ToolLoopCall
"""A call in flight: a sync tool's thread (seen as a future) or an async tool's task on the tool loop."""


async def _cancel_within(call: Pending, grace: float) -> bool:
    """Cancel a call and wait at most ``grace`` seconds for it to end; whether it ended.

    A thread cannot be stopped: its future is only marked cancelled (its late outcome is dropped),
    and it ended only if it had already. An async tool gets its ``CancelledError`` on the tool loop
    and ``grace`` to clean up; one still running after that is abandoned with its loop.
    """
    if not isinstance(call, ToolLoopCall):
        running = not call.done()
        call.cancel()
        return not running
    call.request_cancel()
    done, _ = await asyncio.wait({call.future}, timeout=grace)
    if done:
        with contextlib.suppress(BaseException):
            call.future.result()  # retrieved, so no "exception was never retrieved" at GC
        return True
    call.abandon()
    return False


async def _await_bounded(
    call: Pending, timeout: float | None, on_abandon: AbandonHook | None
) -> tuple[bool, Any]:
    """Wait for a tool call: ``(True, value)``, or ``(False, stalled)`` when it timed out.

    ``stalled``: the call was abandoned with its event loop blocked (see :func:`_stalled`).

    The wait, not the tool, receives an outer cancellation: the tool is then cancelled with a short
    grace and the ``CancelledError`` always goes on up, even when the tool swallows its own (a tool
    that returned a value instead would otherwise make the run carry on). Still-running calls are
    reported through ``on_abandon``.
    """
    fut = call.future if isinstance(call, ToolLoopCall) else call
    limit = None if timeout is None or math.isinf(timeout) else timeout
    try:
        done, _ = await asyncio.wait({fut}, timeout=limit)
    except asyncio.CancelledError:
        if not await _cancel_within(call, CANCEL_GRACE_S) and on_abandon is not None:
            on_abandon("cancelled")
        raise
    if done:
        return True, _unwrap(fut.result())
    ended = await _cancel_within(call, CANCEL_GRACE_S)
    if not ended and on_abandon is not None:
        on_abandon("timed out")
    return False, not ended and _stalled(call)


def _stalled(call: Pending) -> bool:
    """Whether an abandoned async tool held its event loop: it never even saw its cancellation."""
    return isinstance(call, ToolLoopCall) and not call.cancel_seen


def _schema_type(prop: dict[str, Any]) -> str:
    """A JSON-schema property's type in a word or two (``string``, ``array[integer]``, ``A | B``)."""
    if "type" in prop:
        t = prop["type"]
        if t == "array" and isinstance(prop.get("items"), dict):
            return f"array[{_schema_type(prop['items'])}]"
        return " | ".join(map(str, t)) if isinstance(t, list) else str(t)
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if isinstance(prop.get(key), list):
            return " | ".join(_schema_type(p) for p in prop[key] if isinstance(p, dict))
    if "enum" in prop:
        return "enum"
    return "any"


class Tool:
    """A callable the model may use: its ``ToolSpec`` plus validated execution.

    Build one with ``@tool``. Calling the ``Tool`` object directly calls the original function
    unchanged, so decorated functions stay usable (and testable) as plain Python.
    """

    __slots__ = (
        "__dict__",
        "_args_model",
        "additional_properties",
        "description",
        "fn",
        "is_async",
        "max_output_chars",
        "name",
        "strict",
        "timeout",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
        timeout: float | None = None,
        strict: bool | None = None,
        additional_properties: bool = False,
    ) -> None:
        if not callable(fn):
            raise ToolDefinitionError(f"@tool needs a function, got {type(fn).__name__}")
        _check_options(name, description, max_output_chars)
        _check_schema_options(strict, additional_properties)
        self.strict = strict
        self.additional_properties = additional_properties
        self.fn = fn
        self.name: str = str(name or getattr(fn, "__name__", ""))
        if not _NAME_RE.match(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} must match [a-zA-Z0-9_-]{{1,64}}; pass @tool(name='...')"
            )
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )
        doc_desc, arg_docs = _parse_docstring(inspect.getdoc(fn))
        self.description = description if description is not None else doc_desc
        self.max_output_chars = max_output_chars
        self.timeout = check_timeout(timeout, "timeout", ToolDefinitionError)
        self._args_model = self._build_model(fn, arg_docs)
        if strict is True and (problem := strict_schema_problem(self.parameters)) is not None:
            raise ToolDefinitionError(
                f"tool {self.name!r}: strict=True, but its schema does not qualify for strict mode "
                f"({problem}); make every parameter required (no defaults) or use strict=None"
            )
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def _build_model(self, fn: Callable[..., Any], arg_docs: dict[str, str]) -> type[BaseModel]:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError) as e:  # builtins without signatures
            raise ToolDefinitionError(f"cannot read the signature of {self.name!r}: {e}") from e
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as e:
            raise ToolDefinitionError(f"cannot resolve type hints of tool {self.name!r}: {e}") from e
        fields: dict[str, Any] = {}
        for pname, p in sig.parameters.items():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise ToolDefinitionError(
                    f"tool {self.name!r}: *args/**kwargs ({pname}) cannot be described to a model; "
                    "use named, typed parameters"
                )
            if p.kind is p.POSITIONAL_ONLY:
                raise ToolDefinitionError(f"tool {self.name!r}: positional-only parameter {pname!r}")
            if pname not in hints:
                raise ToolDefinitionError(
                    f"tool {self.name!r}: parameter {pname!r} has no type hint; add one (e.g. {pname}: str)"
                )
            from pydantic import Field

            default = ... if p.default is p.empty else p.default
            fields[pname] = (hints[pname], Field(default, description=arg_docs.get(pname) or None))
        try:
            model = create_model(
                f"{self.name}_args",
                # An open schema lets the model send more keys; the function cannot take them, so
                # they are dropped at validation instead of failing the call.
                __config__=ConfigDict(
                    extra="ignore" if self.additional_properties else "forbid", arbitrary_types_allowed=False
                ),
                **fields,
            )
            model.model_json_schema()
        except Exception as e:
            raise ToolDefinitionError(f"tool {self.name!r}: arguments cannot be a JSON schema: {e}") from e
        return model  # type: ignore[no-any-return]

    @functools.cached_property
    def _raw_schema(self) -> dict[str, Any]:
        """Pydantic's schema of the arguments model, generated (~0.5 ms) once per tool, not once per Run."""
        return self._args_model.model_json_schema()

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments object (closed, unless ``additional_properties=True``).

        Built from the cached pydantic schema by ``model_schema``, which copies it: every caller
        gets a dict of its own.
        """
        schema = model_schema(self._raw_schema)
        schema.setdefault("properties", {})
        if self.additional_properties:
            schema["additionalProperties"] = True
        return schema  # type: ignore[no-any-return]

    @property
    def spec(self) -> ToolSpec:
        """The provider-neutral description sent to the model.

        ``strict`` as given to ``@tool``; left to the adapter (``None``: strict where the schema
        qualifies) when every parameter is required and there are no ``$defs``, else off. An open
        schema (``additional_properties=True``) is never strict.
        """
        params = self.parameters
        strict = self.strict
        if strict is None:
            auto = set(params.get("required", [])) == set(params["properties"]) and "$defs" not in params
            strict = None if auto and not self.additional_properties else False
        return ToolSpec(name=self.name, description=self.description, parameters=params, strict=strict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function as written: a decorated tool stays usable (and testable) as a plain function."""
        return self.fn(*args, **kwargs)

    @property
    def source(self) -> ToolSource | None:
        """Where the tool comes from; None for a Python function of this process."""
        return None

    def _signature(self) -> str:
        """``population(city: string, year?: integer)``: the parameters as the model sees them."""
        params = self.parameters
        required = set(params.get("required", []))
        args = [
            f"{name}{'' if name in required else '?'}: {_schema_type(prop)}"
            for name, prop in params.get("properties", {}).items()
        ]
        return f"{'async ' if self.is_async else ''}{self.name}({', '.join(args)})"

    def __repr__(self) -> str:
        """Name, parameter types and description (``repr``-quoted: no control character gets out)."""
        desc = self.description or ""
        short = desc if len(desc) <= 120 else desc[:119] + "…"
        return f"<Tool {self._signature()} {short!r}>" if desc else f"<Tool {self._signature()}>"

    def _repr_html_(self) -> str:
        """What the model is told: description and parameter schema, every part escaped.

        The description and the parameters' docs come from the function's docstring, which is
        anyone's text; it is shown as text, never as markup.
        """
        from agentlab.render.html_tables import table_html

        params = self.parameters
        required = set(params.get("required", []))
        rows = [
            (name, _schema_type(prop), "yes" if name in required else "no", prop.get("description", ""))
            for name, prop in params.get("properties", {}).items()
        ]
        table = table_html(("parameter", "type", "required", "description"), rows) if rows else ""
        schema = html.escape(json.dumps(params, indent=2, ensure_ascii=False))
        return (
            f"<div class='agentlab-tool'><b>Tool</b> <code>{html.escape(self._signature())}</code>"
            f"<div style='white-space:pre-wrap;margin:4px 0'>{html.escape(self.description or '')}</div>"
            f"{table}<details><summary>JSON schema</summary><pre>{schema}</pre></details></div>"
        )

    def validate(self, arguments: str | dict[str, Any]) -> BaseModel:
        """Validate model-sent arguments (JSON text or dict); raises ``pydantic.ValidationError``."""
        if isinstance(arguments, str):
            return self._args_model.model_validate_json(arguments or "{}")
        return self._args_model.model_validate(arguments)

    async def run(
        self,
        arguments: str | dict[str, Any],
        *,
        timeout: float | None = None,
        on_abandon: AbandonHook | None = None,
    ) -> ToolOutcome:
        """Validate, call (sync tools in a daemon thread, async ones on the tool loop) and serialize.

        Never raises for tool faults.

        ``timeout`` applies when the tool has none of its own (``@tool(timeout=...)`` wins); a call
        past it is abandoned and returns an error outcome with ``timed_out=True``. ``on_abandon`` is
        told when a call is left running (timed out, or cancelled and not finished within a short
        grace): its thread or task is never waited for.
        """
        try:
            args = self.validate(arguments)
        except ValidationError as e:
            return ToolOutcome(output=_format_validation_error(self.name, e), is_error=True)
        kwargs = {k: getattr(args, k) for k in type(args).model_fields}
        limit = self.timeout if self.timeout is not None else timeout
        clock = _Clock()
        try:
            finished, value = await self._call(kwargs, limit, on_abandon, clock)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return ToolOutcome(
                output=f"Error: tool {self.name!r} raised {type(e).__name__}: {e}",
                is_error=True,
                started=clock.start,
                duration_s=clock.duration_s,
            )
        outcome = self._outcome(finished, value, limit)
        return outcome.model_copy(
            update={"started": clock.start, "duration_s": clock.duration_s if finished else None}
        )

    def _outcome(self, finished: bool, value: Any, limit: float | None) -> ToolOutcome:
        """The outcome of a call that returned ``value`` (or timed out: ``finished`` False)."""
        if not finished:
            return ToolOutcome(
                output=(
                    f"Error: tool {self.name!r} timed out: no result within {limit:g} s, the call was "
                    "abandoned. Try again with a smaller request, or do without this tool."
                ),
                is_error=True,
                timed_out=True,
                blocked_loop=bool(value),
            )
        try:
            text = _serialize(value)
        except (PydanticSerializationError, TypeError, ValueError) as e:
            return ToolOutcome(
                output=(
                    f"Error: tool {self.name!r} returned a {type(value).__name__}, which is not "
                    f"JSON-serializable ({e}). Return str, numbers, lists, dicts or pydantic models."
                ),
                is_error=True,
            )
        out, truncated = _truncate(text, self.max_output_chars)
        return ToolOutcome(output=out, truncated=truncated)

    async def _call(
        self,
        kwargs: dict[str, Any],
        timeout: float | None,
        on_abandon: AbandonHook | None,
        clock: _Clock | None = None,
    ) -> tuple[bool, Any]:
        """Call the function within ``timeout``: ``(True, value)``, or ``(False, stalled)`` if it timed out.

        Async tools run on the tool loop (:mod:`agentlab.loop.tool_loop`), sync ones in a daemon
        thread: either can be abandoned, so no tool can hold the caller's loop past its timeout.
        """
        call: Pending
        if self.is_async:
            call = start_on_tool_loop(lambda: _capture(self.fn(**kwargs), clock))
        else:
            call = _start_in_thread(self.fn, kwargs, self.name, clock)
        finished, value = await _await_bounded(call, timeout, on_abandon)
        if finished and inspect.isawaitable(value):  # a sync wrapper returning a coroutine
            awaitable = value
            finished, value = await _await_bounded(
                start_on_tool_loop(lambda: _capture(awaitable, clock)), timeout, on_abandon
            )
        return finished, value

    async def run_call(self, call: ToolCallItem) -> ToolResultItem:
        """Run a model's tool call and package the result for history."""
        outcome = await self.run(call.arguments)
        return ToolResultItem(
            call_id=call.call_id, name=self.name, output=outcome.output, is_error=outcome.is_error
        )

    async def invoke(self, **kwargs: Any) -> Any:
        """Run the tool directly, validated; raises ``ToolExecutionError`` instead of returning errors."""
        return (await self.run(kwargs)).value()


def _check_schema_options(strict: object, additional_properties: object) -> None:
    """``strict`` is True, False or None; ``additional_properties`` a bool; an open schema is never strict."""
    if strict is not None and not isinstance(strict, bool):
        raise ToolDefinitionError(f"@tool(strict=...) takes True, False or None, got {strict!r}")
    if not isinstance(additional_properties, bool):
        raise ToolDefinitionError(
            f"@tool(additional_properties=...) takes True or False, got {additional_properties!r}"
        )
    if strict is True and additional_properties:
        raise ToolDefinitionError(
            "@tool(strict=True, additional_properties=True): strict mode needs a closed schema "
            "(additionalProperties: false); drop one of them"
        )


def _check_options(name: object, description: object, max_output_chars: object) -> None:
    """Check ``@tool`` options at decoration.

    A bad one would otherwise fail (or silently do nothing) only when the model first calls the tool.
    """
    for label, v in (("name", name), ("description", description)):
        if v is not None and not isinstance(v, str):
            raise ToolDefinitionError(f"@tool({label}=...) must be a str, got {type(v).__name__}")
    if max_output_chars is not None:
        what, note = "@tool(max_output_chars=...)", " (or None for no limit)"
        int_at_least(max_output_chars, what, 1, note=note, error=ToolDefinitionError)


def _format_validation_error(name: str, e: ValidationError) -> str:
    parts = []
    for err in e.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ())) or "(arguments)"
        parts.append(f"{loc}: {err.get('msg')}")
    return f"Error: invalid arguments for tool {name!r}: " + "; ".join(parts) + ". Fix them and call again."


class ToolOptions(TypedDict, total=False):
    """The options ``@tool(...)`` takes: ``Tool``'s keywords (their defaults are there), declared once."""

    name: str | None
    description: str | None
    max_output_chars: int | None
    timeout: float | None
    strict: bool | None
    additional_properties: bool


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function (sync or ``async def``) into a ``Tool``.

    Use bare (``@tool``) or with options (``@tool(name="weather", max_output_chars=4000)``): the keys of
    :class:`ToolOptions`, with :class:`Tool`'s defaults. ``name`` and ``description`` default to the
    function's name and its docstring (less its ``Args:`` section, which describes the parameters).
    ``max_output_chars`` is an int >= 1 (outputs longer are cut, with a marker) or ``None`` for no
    limit, said explicitly: 0 or a negative number is refused rather than read as "off".
    Definition problems (untyped parameters, ``*args``, bad names, bad options) raise
    ``ToolDefinitionError`` at decoration time, not when the model first calls the tool.

    ``timeout`` (seconds) bounds each call of this tool and overrides the run's ``tool_timeout``
    (default ``DEFAULT_TOOL_TIMEOUT_S``); ``float("inf")`` means no limit for this tool. A call past
    it is abandoned (a sync tool's thread is left to finish on its own; an async tool runs on
    agentlab's tool loop, ``agentlab.loop.tool_loop``, so it is abandoned the same way even when it
    blocks or ignores its cancellation) and the model gets an error result saying so.

    ``strict``: ``None`` (default) lets the adapter send strict mode where the schema qualifies;
    ``True`` insists (a schema that does not qualify is a ``ToolDefinitionError`` now, naming the
    field; Anthropic gets ``strict: true``); ``False`` never sends it. ``additional_properties=True``
    opens the schema (``additionalProperties: true``): the model may send more keys, which are
    dropped before the function is called; an open schema is never strict.
    """
    _check_option_names(options)
    if fn is not None:
        return Tool(fn, **options)
    o = options
    _check_options(o.get("name"), o.get("description"), o.get("max_output_chars"))
    _check_schema_options(o.get("strict"), o.get("additional_properties", False))
    return functools.partial(Tool, **options)


def _check_option_names(options: Mapping[str, object]) -> None:
    """A misspelt option fails as a definition error naming it, not as a TypeError from ``Tool``."""
    known = ToolOptions.__annotations__
    for key in options:
        if key not in known:
            raise ToolDefinitionError(
                f"@tool has no option {key!r}{did_you_mean(key, known)}; it takes {', '.join(known)}"
            )


def as_tool(obj: Tool | Callable[..., Any] | Callable[..., Awaitable[Any]]) -> Tool:
    """A ``Tool`` as is; a plain function is decorated on the fly."""
    return obj if isinstance(obj, Tool) else Tool(obj)


def as_tools(objs: Iterable[ToolLike]) -> dict[str, Tool]:
    """Name -> Tool, refusing duplicate names (the model could not tell them apart).

    An object with ``__agentlab_tools__(taken)`` (an MCP server, ``agentlab.mcp``) stands for the
    tools it returns; ``taken`` holds the names listed before it, so it can prefix its own on a clash.

    ``tools=get_weather`` (one tool, not a list) is the usual slip: said in one line.
    """
    if callable(objs) or isinstance(objs, str | bytes) or not isinstance(objs, Iterable):
        label = getattr(objs, "name", None) or getattr(objs, "__name__", None) or "my_tool"
        raise ToolDefinitionError(
            f"tools must be a list of tools, e.g. tools=[{label}], got {type(objs).__name__}"
        )
    out: dict[str, Tool] = {}
    for o in objs:
        # A tool provider (an MCP server) stands for its tools; it is told the names already taken.
        provide = getattr(o, "__agentlab_tools__", None)
        given = provide(frozenset(out)) if provide is not None and not isinstance(o, Tool) else [as_tool(o)]
        for t in given:
            if t.name in out:
                raise ToolDefinitionError(
                    f"two tools are named {t.name!r}; pass @tool(name=...) to rename one"
                )
            out[t.name] = t
    return out
