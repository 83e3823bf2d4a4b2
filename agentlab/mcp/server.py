"""An MCP server whose tools a run may use: how to reach it, and the one live connection to it.

A :class:`McpServer` is a description (a stdio command, a Streamable HTTP URL, or an SDK server
object in this process) plus at most one live connection, opened on first need:

* **Lazily.** Nothing starts when the server is described; the first ``tools()`` (a run built with
  the server in ``tools=[...]``) or the first call starts it and lists its tools.
* **Shared.** Every run holding its tools calls through the same connection (a compare's columns, a
  sweep's concurrent runs), at most ``max_concurrency`` calls at a time.
* **Stopped** when a ``with``/``async with server:`` block exits; at the end of the notebook cell
  that started it (outside a ``with`` block, in Jupyter: Kernel › Interrupt ends the cell too); at
  interpreter exit otherwise. A stopped server starts again on its next call. A kernel restart or a
  ``kill -9`` of the process leaves nothing behind: every stdio server runs under a launcher that
  kills it when its parent dies (``_launch.py``).
* **Crashes** become an error result the model reads and a warning (logger ``agentlab.mcp``) with
  the server's last stderr lines for the user; the next call starts a new server, up to
  ``restarts`` times, then fails clearly.

The connection lives on agentlab's MCP loop (``_loop.py``), so a run on any event loop can use it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

import agentlab.mcp._loop as _loop
from agentlab.errors import ConfigError, MissingExtraError, ToolDefinitionError
from agentlab.frontend import at_cell_end, current
from agentlab.loop.tools import check_timeout
from agentlab.mcp._env import server_env
from agentlab.neutral._inputs import int_at_least

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult
    from mcp_types import Tool as WireTool

    from agentlab.mcp.tools import McpTool

__all__ = ["CallReply", "McpServer", "McpServerError", "ServerInfo", "http", "in_process", "stdio"]

log = logging.getLogger("agentlab.mcp")

_LAUNCHER = Path(__file__).with_name("_launch.py")
_STDERR_TAIL = 1500
_STOP_WAIT_S = 10.0


class McpServerError(ToolDefinitionError):
    """An MCP server could not be started or listed: its tools cannot be described to a model."""


class ServerInfo(BaseModel):
    """Who answered: the server's own name and version (from its handshake), and how it was reached.

    Recorded with every tool of the server (``McpTool.source``) so a study says which server and
    version its runs used. ``version`` is None when the server did not say.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    """The name given to ``stdio()``/``http()`` (what views show), not necessarily the server's."""
    server_name: str | None = None
    version: str | None = None
    transport: Literal["stdio", "http", "in_process"]
    protocol_version: str | None = None


@dataclass
class CallReply:
    """One call's answer, made on the MCP loop: a result, a refusal (an MCP error), or a failure."""

    kind: Literal["result", "refused", "crashed", "unavailable"]
    result: CallToolResult | None = None
    message: str = ""
    started: float | None = None
    ended: float | None = None
    diagnostic: str = ""
    """For the user, not the model: what happens next and the server's last stderr lines."""


@dataclass
class _Connection:
    """One live session: the task holding the SDK client open, and why it ended (if it did)."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    client: Client | None = None
    tools: list[WireTool] = field(default_factory=list)
    info: ServerInfo | None = None
    dead: str | None = None
    task: asyncio.Task[None] | None = None
    stderr: Any = None
    last_stderr: str = ""


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as e:
        raise MissingExtraError("agentlab.mcp (tools from MCP servers)", "mcp", "mcp") from e


_live: weakref.WeakSet[McpServer] = weakref.WeakSet()
_atexit_lock = threading.Lock()
_atexit_done = False


def _stop_all() -> None:
    """At interpreter exit: stop every live server (the launcher would kill them anyway)."""
    for server in list(_live):
        with contextlib.suppress(Exception):
            server.stop()


class McpServer:
    """An MCP server's tools as agentlab tools.

    Build one with :func:`stdio`, :func:`http` or :func:`in_process`; pass it in ``tools=[...]``
    (all its tools, after ``allow``/``rename``) or pass ``server.tools(...)``. Options:
    ``allow``/``rename``/``prefix`` (see :meth:`tools`); ``max_concurrency`` calls at a time over
    the shared connection; ``start_timeout`` (seconds) to start and list; ``timeout`` per call
    (default: the run's ``tool_timeout``); ``max_output_chars`` (default as for ``@tool``);
    ``restarts`` after crashes before calls fail.

    The object pickles as its description only (a Ray worker or a subprocess gets its own
    connection on first use); an in-process server does not pickle.
    """

    def __init__(
        self,
        name: str,
        transport: Literal["stdio", "http", "in_process"],
        target: Any,
        *,
        allow: Iterable[str] | None = None,
        rename: Mapping[str, str] | None = None,
        prefix: str | bool | None = None,
        max_concurrency: int = 8,
        start_timeout: float = 60.0,
        timeout: float | None = None,
        max_output_chars: int | None = None,
        restarts: int = 2,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"an MCP server needs a name (name='...'), got {name!r}")
        int_at_least(max_concurrency, "max_concurrency", 1)
        int_at_least(restarts, "restarts", 0)
        check_timeout(timeout, "timeout", ConfigError)
        if check_timeout(start_timeout, "start_timeout", ConfigError) is None:
            raise ConfigError("start_timeout must be a number of seconds > 0, e.g. start_timeout=60")
        if max_output_chars is not None:
            int_at_least(max_output_chars, "max_output_chars", 1, note=" (or None: the default)")
        if isinstance(allow, str):
            raise ConfigError(f"allow takes a list of tool names, e.g. allow=[{allow!r}]")
        self.name = name
        self.transport = transport
        self._target = target
        self.allow = tuple(allow) if allow is not None else None
        self.rename = dict(rename or {})
        self.prefix = prefix
        self.max_concurrency = max_concurrency
        self.start_timeout = start_timeout
        self.timeout = timeout
        self.max_output_chars = max_output_chars
        self.restarts = restarts
        self._reset()

    def _reset(self) -> None:
        self._conn: _Connection | None = None
        self._starting: asyncio.Future[_Connection] | None = None
        self._sem: asyncio.Semaphore | None = None
        self._crashes = 0
        self._depth = 0
        self._cell_scoped = False
        self._listing: list[WireTool] | None = None
        self.info: ServerInfo | None = None
        """The server's name and version, once it has started (None before)."""
        self.starts = 0
        """How many times a connection was opened (a restart after a crash or a stop counts)."""

    # ------------------------------------------------------------------ pickling (Ray, subprocesses)

    def __getstate__(self) -> dict[str, Any]:
        if self.transport == "in_process":
            raise TypeError(
                f"the in-process MCP server {self.name!r} cannot be pickled; give Ray workers a stdio "
                "or HTTP server (each worker then connects on its own)"
            )
        keep: tuple[str, ...] = ("name", "transport", "_target", "allow", "rename", "prefix")
        keep += ("max_concurrency", "start_timeout", "timeout", "max_output_chars", "restarts", "info")
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        info = state.pop("info", None)
        self.__dict__.update(state)
        self._reset()
        self.info = info

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<McpServer {self.name!r} {self.transport} {self._describe()} {state}>"

    def _describe(self) -> str:
        if self.transport == "stdio":
            return repr(self._target["shown"])
        if self.transport == "http":
            return repr(self._target["url"])
        return type(self._target).__name__

    @property
    def running(self) -> bool:
        """Whether a connection is open now."""
        conn = self._conn
        return conn is not None and conn.dead is None and not conn.closed.is_set()

    # ------------------------------------------------------------------ tools

    def tools(
        self,
        allow: Iterable[str] | None = None,
        rename: Mapping[str, str] | None = None,
        prefix: str | bool | None = None,
        *,
        taken: frozenset[str] = frozenset(),
    ) -> list[McpTool]:
        """The server's tools as agentlab tools (starts the server if needed, to list them).

        ``allow``: the server's tool names to keep (default: the server's ``allow``, else all);
        ``rename``: server name -> agentlab name; ``prefix``: ``"time"`` names every tool
        ``time_<name>``, ``True`` uses the server's name, ``None`` (default) prefixes only the
        names in ``taken`` (tools listed before this server in ``tools=[...]``).
        """
        from agentlab.mcp.tools import build_tools

        listing = self._list()
        return build_tools(
            self,
            listing,
            allow=self.allow if allow is None else tuple(allow),
            rename={**self.rename, **(rename or {})},
            prefix=self.prefix if prefix is None else prefix,
            taken=taken,
        )

    def __agentlab_tools__(self, taken: frozenset[str]) -> list[McpTool]:
        """What ``tools=[server]`` means: every allowed tool, prefixed where a name is taken."""
        return self.tools(taken=taken)

    def _list(self) -> list[WireTool]:
        _require_sdk()
        if self._listing is None:
            try:
                conn = _loop.run_sync(self._ensure(), timeout=self.start_timeout + _STOP_WAIT_S)
            except McpServerError:
                raise
            except Exception as e:
                raise McpServerError(f"MCP server {self.name!r} could not be started: {_short(e)}") from e
            self._listing = list(conn.tools)
        return self._listing

    # ------------------------------------------------------------------ lifecycle (public, sync)

    def start(self) -> McpServer:
        """Start the server now (instead of at first use) and list its tools; returns the server."""
        self._list()
        if not self.running:
            _loop.run_sync(self._ensure(), timeout=self.start_timeout + _STOP_WAIT_S)
        return self

    def stop(self) -> None:
        """Stop the server's process or session (idempotent); the next call starts it again."""
        if self._conn is None or _loop.on_loop():
            return
        _loop.run_sync(self._close(), timeout=_STOP_WAIT_S * 2)

    async def astart(self) -> McpServer:
        """``start`` from async code, without blocking the caller's loop while the server starts.

        Worth calling before building runs in async code: ``Run(tools=[server])`` lists the tools
        (starting the server if needed) synchronously.
        """
        _require_sdk()
        try:
            conn = await asyncio.wrap_future(_loop.submit(self._ensure()))
        except McpServerError:
            raise
        except Exception as e:
            raise McpServerError(f"MCP server {self.name!r} could not be started: {_short(e)}") from e
        if self._listing is None:
            self._listing = list(conn.tools)
        return self

    async def astop(self) -> None:
        """``stop`` from async code."""
        if self._conn is not None:
            await asyncio.wrap_future(_loop.submit(self._close()))

    def __enter__(self) -> McpServer:
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.stop()

    async def __aenter__(self) -> McpServer:
        self._depth += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            await self.astop()

    # ------------------------------------------------------------------ on the MCP loop

    async def _ensure(self) -> _Connection:
        """The live connection, opened (once, whoever asks first) if there is none."""
        conn = self._conn
        if conn is not None and conn.dead is None and not conn.closed.is_set():
            return conn
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._open())
        starting = self._starting
        try:
            return await asyncio.shield(starting)
        finally:
            if starting.done() and self._starting is starting:
                self._starting = None

    async def _open(self) -> _Connection:
        conn = _Connection()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        conn.task = asyncio.ensure_future(self._hold(conn, ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except TimeoutError:
            conn.stop.set()
            await _bounded(conn.closed.wait(), _STOP_WAIT_S)
            raise McpServerError(
                f"MCP server {self.name!r} did not answer within start_timeout={self.start_timeout:g} s"
                f"{_tail(conn)}"
            ) from None
        except Exception as e:
            raise McpServerError(
                f"MCP server {self.name!r} could not be started: {_short(e)}{_tail(conn)}"
            ) from e
        self._conn = conn
        self.info = conn.info
        self.starts += 1
        self._started()
        return conn

    async def _hold(self, conn: _Connection, ready: asyncio.Future[None]) -> None:
        """Open the SDK client, list the tools, then hold the session until told to stop."""
        from mcp import Client

        try:
            async with Client(self._transport(conn)) as client:
                conn.tools = await _list_all(client)
                conn.info = self._info(client)
                conn.client = client
                ready.set_result(None)
                await conn.stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            elif conn.dead is None and not conn.stop.is_set():
                conn.dead = f"the connection failed: {_short(e)}"
            if not isinstance(e, Exception):
                raise
        finally:
            if conn.stderr is not None:  # the process has ended: keep its last words, free the file
                conn.last_stderr = _tail(conn)
                conn.stderr.close()
            conn.closed.set()

    def _transport(self, conn: _Connection) -> Any:
        if self.transport == "in_process":
            return self._target
        if self.transport == "http":
            return self._target["url"]
        from mcp.client.stdio import StdioServerParameters, stdio_client

        t = self._target
        # closed by _hold once the process has ended (the SDK writes to it until then)
        conn.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=sys.executable,
            args=["-I", "-S", str(_LAUNCHER), str(os.getpid()), t["command"], *t["args"]],
            env=t["env"],
            cwd=t["cwd"],
        )
        return stdio_client(params, errlog=conn.stderr)

    def _info(self, client: Client) -> ServerInfo:
        si = client.server_info
        return ServerInfo(
            name=self.name,
            server_name=si.name if si is not None else None,
            version=si.version if si is not None and si.version else None,
            transport=self.transport,
            protocol_version=client.protocol_version,
        )

    def _started(self) -> None:
        """Register the stops: at interpreter exit always, at cell end when outside a ``with`` block."""
        global _atexit_done
        _live.add(self)
        with _atexit_lock:
            if not _atexit_done:
                atexit.register(_stop_all)
                _atexit_done = True
        if self._depth == 0 and current() is not None:
            at_cell_end(self._stop_at_cell_end)

    def _stop_at_cell_end(self) -> None:
        """The cell that started the server ended: stop it, unless a ``with`` block now holds it."""
        if self._depth == 0:
            self.stop()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        conn.stop.set()
        await _bounded(conn.closed.wait(), _STOP_WAIT_S)

    async def call(self, name: str, arguments: dict[str, Any]) -> CallReply:
        """Call the server's tool ``name`` (its own name) on the MCP loop; never raises for faults."""
        from mcp.shared.exceptions import MCPError

        try:
            conn = await self._connect_for_call()
        except McpServerError as e:
            return CallReply("unavailable", message=str(e))
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.max_concurrency)
        async with self._sem:
            client = conn.client
            assert client is not None
            started = time.perf_counter()
            try:
                result = await client.call_tool(name, arguments)
            except MCPError as e:
                if (
                    conn.dead is None and e.code != -32000 and not conn.closed.is_set()
                ):  # -32000: connection closed
                    return CallReply(
                        "refused", message=f"{e.error.message} (MCP error {e.code})", started=started
                    )
                return self._crashed(conn, _short(e), started)
            except Exception as e:
                return self._crashed(conn, _short(e), started)
            return CallReply("result", result=result, started=started, ended=time.perf_counter())

    async def _connect_for_call(self) -> _Connection:
        conn = self._conn
        if conn is not None and (conn.dead is not None or conn.closed.is_set()):
            if self._crashes > self.restarts:
                raise McpServerError(
                    f"MCP server {self.name!r} crashed {self._crashes} times; not restarted again "
                    f"(restarts={self.restarts}). Last failure: {conn.dead}"
                )
            await self._close()
        return await self._ensure()

    def _crashed(self, conn: _Connection, why: str, started: float) -> CallReply:
        first = conn.dead is None
        if first:
            conn.dead = why
            self._crashes += 1
            conn.stop.set()
        left = self.restarts - self._crashes + 1
        after = "the next call starts it again" if left > 0 else "it will not be restarted"
        note = f"; {after}{_tail(conn)}"
        if first:
            log.warning("MCP server %r stopped during a tool call (%s)%s", self.name, why, note)
        return CallReply(
            "crashed",
            message=f"the MCP server {self.name!r} stopped during the call ({conn.dead})",
            started=started,
            diagnostic=note,
        )


async def _bounded(aw: Any, timeout: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(aw, timeout)


async def _list_all(client: Client) -> list[WireTool]:
    """Every page of ``tools/list`` (bounded: a paginator that never ends cannot hang the start)."""
    out: list[WireTool] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        out.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return out


def _short(e: BaseException) -> str:
    """An exception in one line: its type, and its message as ``repr`` (no control character gets out)."""
    if isinstance(e, BaseExceptionGroup) and e.exceptions:
        return _short(e.exceptions[0])
    text = str(e)
    return f"{type(e).__name__}: {text[:300]!r}" if text else type(e).__name__


def _tail(conn: _Connection) -> str:
    """The server's last stderr lines, quoted (the server's text is untrusted), or nothing."""
    f = conn.stderr
    if f is None or f.closed:
        return conn.last_stderr
    try:
        f.flush()
        f.seek(0)
        text = f.read()[-_STDERR_TAIL:].strip()
        f.seek(0, 2)
    except (OSError, ValueError):
        return ""
    return f"; its stderr ended with: {text!r}" if text else ""


def stdio(
    command: str,
    *args: str,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    pass_env: Sequence[str] = (),
    cwd: str | Path | None = None,
    **options: Any,
) -> McpServer:
    """An MCP server run as ``command args...``, spoken to over its stdin/stdout.

    The process gets an allow-listed environment (``agentlab.mcp.SAFE_ENV``), the variables named in
    ``pass_env`` and ``env``: never an API key it was not given. ``name`` (default: the command's
    file name) is what views, traces and records show. ``options``: see :class:`McpServer`.
    """
    if not isinstance(command, str) or not command:
        raise ConfigError(f"stdio() needs a command, got {command!r}")
    bad = [a for a in args if not isinstance(a, str)]
    if bad:
        raise ConfigError(
            f"stdio() arguments must be str, got {bad[0]!r}; e.g. stdio('cmd', '--flag', 'value')"
        )
    full_env = server_env(env, pass_env)
    # This process's PATH, then its interpreter's folder (a venv's console scripts, not on PATH
    # in a kernel started without activating the venv).
    here = os.pathsep.join([os.environ.get("PATH", ""), str(Path(sys.executable).parent)])
    found = shutil.which(command, path=full_env.get("PATH")) or shutil.which(command, path=here)
    if found is None:
        raise ConfigError(f"stdio(): command {command!r} not found (on PATH or beside {sys.executable})")
    target = {"command": found, "args": list(args), "env": full_env, "cwd": str(cwd) if cwd else None}
    target["shown"] = " ".join([command, *args])  # as written: the repr shows no resolved paths
    return McpServer(name or Path(command).name, "stdio", target, **options)


def http(url: str, *, name: str | None = None, **options: Any) -> McpServer:
    """An MCP server reached over Streamable HTTP at ``url`` (e.g. ``http://127.0.0.1:8000/mcp``)."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"http() needs an http(s):// URL, got {url!r}")
    from urllib.parse import urlsplit

    return McpServer(name or urlsplit(url).hostname or "http", "http", {"url": url}, **options)


def in_process(server: Any, *, name: str | None = None, **options: Any) -> McpServer:
    """An MCP server object of the SDK (``mcp.server.MCPServer`` or a low-level ``Server``), in process.

    For tests and for tools written as MCP servers, without a subprocess.
    """
    label = name or getattr(server, "name", None) or type(server).__name__
    return McpServer(str(label), "in_process", server, **options)
