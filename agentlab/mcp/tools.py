"""An MCP server's tool as an agentlab ``Tool``: the schema the model sees, the result it reads.

**Schema.** The server's ``inputSchema`` is sent as given, with two changes made once at listing:
pydantic-style ``title`` keys are dropped (tokens the model pays for, nothing it needs) and every
object schema that does not say otherwise gets ``additionalProperties: false`` (the model cannot
invent arguments the server does not declare). The tool is sent **strict** where the result
qualifies (every property required, objects closed: ``strict_schema_problem``), else non-strict;
adapters that cannot take strict mode send it without. A schema that is not a valid JSON Schema
object is a fault of the server: that tool is left out, with a warning naming it (named in
``allow=``, it is an error).

**Results.** Text blocks are joined (one per line); a result with structured content and no text
gives the structured content as JSON; ``isError`` makes an error result. Images, audio and binary
resources are **not** sent to the model (tool results are text in agentlab's history): each is
replaced by a marker saying its type and size, so the model knows something was there. The output is
cut at ``max_output_chars`` like a Python tool's. An MCP error (unknown tool, invalid params), a
crash, a time-out: an error result the model reads, never a failed run.

**Untrusted text.** Names, descriptions and outputs come from the server. Tool names must match
agentlab's rule (other characters become ``_``); everything a view shows goes through the same
escaping as any tool output.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

import agentlab.mcp._loop as _loop
from agentlab.errors import ToolDefinitionError
from agentlab.loop.tools import DEFAULT_MAX_OUTPUT_CHARS, Tool, ToolOutcome, ToolSource, model_schema
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from agentlab.neutral.request import ToolSpec, strict_schema_problem

if TYPE_CHECKING:
    from mcp_types import CallToolResult
    from mcp_types import Tool as WireTool

    from agentlab.mcp.server import CallReply, McpServer, ServerInfo

__all__ = ["McpTool", "build_tools", "result_text", "tool_schema"]

log = logging.getLogger("agentlab.mcp")

_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


class McpTool(Tool):
    """One tool of an MCP server, called through the server's shared connection.

    ``remote_name`` is the server's name for it (``name`` may be renamed or prefixed); ``server``
    the :class:`~agentlab.mcp.McpServer`; ``source`` what records keep (server, version, tool).
    """

    __slots__ = ("_parameters", "remote_name", "server")

    def __init__(
        self,
        server: McpServer,
        remote_name: str,
        name: str,
        description: str,
        parameters: dict[str, Any],
        *,
        timeout: float | None = None,
        max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
    ) -> None:
        self.server = server
        self.remote_name = remote_name
        self.name = name
        self.description = description
        self._parameters = parameters
        self.timeout = timeout
        self.max_output_chars = max_output_chars
        self.strict = None if strict_schema_problem(parameters) is None else False
        self.additional_properties = parameters.get("additionalProperties", False) is not False
        self.is_async = True
        self.fn = self._call_blocking
        self.__doc__ = description

    @property
    def source(self) -> ToolSource:
        """Where the tool comes from: the MCP server, its version (once started), the tool's own name."""
        info: ServerInfo | None = self.server.info
        return ToolSource(
            kind="mcp",
            server=self.server.name,
            server_name=info.server_name if info else None,
            server_version=info.version if info else None,
            tool=self.remote_name,
        )

    @property
    def parameters(self) -> dict[str, Any]:
        """The input schema as the model gets it (see the module docstring)."""
        return self._parameters

    @property
    def spec(self) -> ToolSpec:
        """Strict where the schema qualifies (``None`` lets each adapter send it strict), else off."""
        return ToolSpec(
            name=self.name, description=self.description, parameters=self._parameters, strict=self.strict
        )

    def __reduce__(self) -> Any:
        return (
            McpTool,
            (self.server, self.remote_name, self.name, self.description, self._parameters),
            {"timeout": self.timeout, "max_output_chars": self.max_output_chars},
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.timeout = state["timeout"]
        self.max_output_chars = state["max_output_chars"]

    def _signature(self) -> str:
        return super()._signature().replace("async ", "", 1)

    def __repr__(self) -> str:
        """Like a Python tool's, with the server's name: ``<McpTool time:get_current_time(...)>``."""
        desc = self.description or ""
        short = desc if len(desc) <= 120 else desc[:119] + "…"
        head = f"<McpTool {self.server.name}:{self._signature()}"
        return f"{head} {short!r}>" if desc else f"{head}>"

    def _repr_html_(self) -> str:
        import html

        return f"<div><b>MCP server</b> {html.escape(self.server.name)}</div>" + super()._repr_html_()

    def validate(self, arguments: str | dict[str, Any]) -> BaseModel:
        """Arguments as a model (checked by the server, not here; JSON object only)."""
        return _Args.model_validate(_arguments(arguments))

    def _call_blocking(self, **kwargs: Any) -> Any:
        """``tool(**kwargs)`` outside a run: the call, blocking; errors raise ``ToolExecutionError``."""
        reply = _loop.run_sync(self.server.call(self.remote_name, kwargs))
        return self._reply_outcome(reply).value()

    async def run(
        self,
        arguments: str | dict[str, Any],
        *,
        timeout: float | None = None,
        on_abandon: Any = None,
    ) -> ToolOutcome:
        """Call the server's tool within ``timeout`` (``self.timeout`` wins); never raises for faults.

        A time-out or a cancellation cancels the request on the server (the SDK sends
        ``notifications/cancelled``); the connection stays up for the next call.
        """
        try:
            args = _arguments(arguments)
        except ValueError as e:
            return ToolOutcome(output=f"Error: invalid arguments for tool {self.name!r}: {e}", is_error=True)
        limit = self.timeout if self.timeout is not None else timeout
        fut = asyncio.wrap_future(_loop.submit(self.server.call(self.remote_name, args)))
        try:
            done, _ = await asyncio.wait({fut}, timeout=None if limit is None or math.isinf(limit) else limit)
        except asyncio.CancelledError:
            fut.cancel()
            raise
        if not done:
            fut.cancel()
            return ToolOutcome(
                output=(
                    f"Error: tool {self.name!r} (MCP server {self.server.name!r}) timed out: no result "
                    f"within {limit:g} s, the call was cancelled. Try again with a smaller request, or "
                    "do without this tool."
                ),
                is_error=True,
                timed_out=True,
            )
        reply = fut.result()
        duration = None if reply.ended is None or reply.started is None else reply.ended - reply.started
        return self._reply_outcome(reply).model_copy(
            update={"started": reply.started, "duration_s": duration}
        )

    def _reply_outcome(self, reply: CallReply) -> ToolOutcome:
        who = f"tool {self.name!r} (MCP server {self.server.name!r})"
        if reply.kind == "refused":
            return ToolOutcome(output=f"Error: {who} refused the call: {reply.message}", is_error=True)
        if reply.kind in ("crashed", "unavailable") or reply.result is None:
            note = f"{who}: {reply.message}{reply.diagnostic}" if reply.kind == "crashed" else None
            return ToolOutcome(
                output=f"Error: {who} could not run: {reply.message}", is_error=True, server_failure=note
            )
        text = result_text(reply.result)
        out, truncated = _truncate(text, self.max_output_chars)
        if reply.result.is_error:
            return ToolOutcome(output=f"Error: {who} failed: {out}", is_error=True, truncated=truncated)
        return ToolOutcome(output=out, truncated=truncated)

    async def run_call(self, call: ToolCallItem) -> ToolResultItem:
        """Run a model's tool call and package the result for history."""
        outcome = await self.run(call.arguments)
        return ToolResultItem(
            call_id=call.call_id, name=self.name, output=outcome.output, is_error=outcome.is_error
        )


class _Args(BaseModel):
    model_config = ConfigDict(extra="allow")


def _arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    """The model's arguments as a JSON object (an MCP call takes an object, nothing else)."""
    value = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
    if not isinstance(value, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def _truncate(text: str, limit: int | None) -> tuple[str, bool]:
    if limit is None or len(text) <= limit:
        return text, False
    return f"{text[:limit]}\n…[truncated {len(text) - limit} of {len(text)} characters]", True


def result_text(result: CallToolResult) -> str:
    """What the model reads of a ``CallToolResult`` (see the module docstring for the rules)."""
    parts = [_block_text(b) for b in result.content]
    if not any(p for p in parts) and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True)]
    return "\n".join(parts)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        return f"[{kind} {block.mime_type}, about {size} bytes: not shown to the model]"
    if kind == "resource":
        res = block.resource
        if hasattr(res, "text"):
            return str(res.text)
        return f"[binary resource {res.uri} ({res.mime_type or 'unknown type'}): not shown to the model]"
    if kind == "resource_link":
        return f"[resource link {block.uri} ({block.name})]"
    return f"[{kind or 'unknown'} content: not shown to the model]"


def tool_schema(schema: Any) -> dict[str, Any]:
    """The input schema as the model gets it (titles dropped, objects closed).

    Raises ``ValueError`` when it is not a valid JSON Schema for an arguments object.
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("the input schema is not an object schema")
    from jsonschema import SchemaError, validators  # type: ignore[import-untyped]

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as e:
        raise ValueError(f"invalid JSON Schema: {e.message}") from None
    out = model_schema(schema)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out  # type: ignore[no-any-return]


def _local_name(remote: str, rename: Mapping[str, str], prefix: str | None) -> str:
    name = rename.get(remote, remote)
    if prefix:
        name = f"{prefix}_{name}"
    name = _BAD_CHARS.sub("_", name)[:64]
    return name or "tool"


def build_tools(
    server: McpServer,
    listing: Iterable[WireTool],
    *,
    allow: tuple[str, ...] | None,
    rename: Mapping[str, str],
    prefix: str | bool | None,
    taken: frozenset[str],
) -> list[McpTool]:
    """The listed tools kept by ``allow``, named by ``rename``/``prefix``, as :class:`McpTool`."""
    listed = {t.name: t for t in listing}
    if allow is not None:
        missing = [n for n in allow if n not in listed]
        if missing:
            raise ToolDefinitionError(
                f"MCP server {server.name!r} has no tool {missing[0]!r}; it has: {', '.join(sorted(listed))}"
            )
    fixed = server.name if prefix is True else (prefix or None)
    out: list[McpTool] = []
    for remote, wire in listed.items():
        if allow is not None and remote not in allow:
            continue
        try:
            params = tool_schema(wire.input_schema)
        except ValueError as e:
            if allow is not None:
                raise ToolDefinitionError(f"MCP server {server.name!r}: tool {remote!r}: {e}") from None
            log.warning("MCP server %r: tool %r left out: %s", server.name, remote, e)
            continue
        name = _local_name(remote, rename, fixed)
        if prefix is None and name in taken:
            name = _local_name(remote, rename, server.name)
        out.append(
            McpTool(
                server,
                remote,
                name,
                wire.description or "",
                params,
                timeout=server.timeout,
                max_output_chars=server.max_output_chars or DEFAULT_MAX_OUTPUT_CHARS,
            )
        )
    return out
