"""The attacker's kit: canaries, a hostile provider, every sink a session can reach, and the scanner.

Why our own provider and not the simulator: the simulator authenticates what goes back (HMAC
signatures, encrypted content), so its payloads cannot be chosen. Here a ``httpx2`` transport serves
crafted SSE streams (the real wire formats of OpenAI Responses and Anthropic Messages, and of the
Chat Completions dialects DeepSeek, OpenRouter and vLLM: :mod:`tests.adversarial.chat_wire`) to the
real adapters on the real SDK clients, with a distinct random canary in each place a model's reasoning or
a secret can reach:

* reasoning delta text (OpenAI ``reasoning_summary_text.delta``, Anthropic ``thinking_delta``);
* opaque payloads (OpenAI ``encrypted_content``, Anthropic ``signature`` and ``redacted_thinking``
  ``data``);
* the API key given to the SDK client (``sk-canary-...``), which travels in the auth header.

Answer text and tool arguments are portable (they may be written anywhere), so they carry no canary.

A scenario (provider x fault) runs one two-step tool loop and collects every sink as text: durable
files, logs, serializations, reprs, the raised error with its chain and object graph, formatted
tracebacks (with locals), and widget state. :func:`scan` finds canaries in a sink and reports each
hit with a short excerpt in which every canary is masked.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import html
import io
import json
import logging
import os
import pickle
import secrets
import tempfile
import traceback
import types
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

import agentlab as al
from tests.adversarial import chat_wire

PROVIDERS = ("openai", "anthropic", *chat_wire.CHAT)
MODELS = {"openai": "sim-reasoner", "anthropic": "sim-thinker", **chat_wire.MODELS}
TASK = "Is it warmer in Paris or Rome?"
ANSWER = "Rome is warmer."


# ---------------------------------------------------------------------------------------- canaries


def _token() -> str:
    return secrets.token_hex(6)


def _letters() -> str:
    return "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(12))


@dataclass(frozen=True)
class Canaries:
    """One random string per place. Only reasoning, opaque and key canaries are ever looked for."""

    reasoning: dict[str, str]
    opaque: dict[str, str]
    keys: dict[str, str]
    html: str = field(default_factory=lambda: f"<img src=x onerror=cnyHTML{_letters()}>")
    """Markup a provider error may echo (a model name, say): must reach HTML outputs escaped. Its tail
    is letters only, as a model name is: a provider error keeps names (only quoted values and
    base64-ish runs are removed from it)."""
    echoed: list[str] = field(default_factory=list)
    """Control of the ``http400echo`` fault: the request values the hostile provider quoted back."""

    @classmethod
    def fresh(cls) -> Canaries:
        return cls(
            reasoning={
                "openai reasoning summary": f"cnyOAsum{_token()}",
                "anthropic thinking text": f"cnyANthk{_token()}",
                **{name: f"cnyCH{p[:2].upper()}rsn{_token()}" for p, name in chat_wire.REASONING.items()},
            },
            opaque={
                "openai encrypted_content": f"cnyOAenc{_token()}",
                "anthropic signature": f"cnyANsig{_token()}",
                "anthropic redacted_thinking data": f"cnyANred{_token()}",
                **{name: f"cnyOR{name.split()[1][:3]}{_token()}" for name in chat_wire.OPAQUE},
            },
            keys={
                "openai api key": f"sk-canary-oa-{_token()}{_token()}",
                "anthropic api key": f"sk-ant-canary-{_token()}{_token()}",
                **{f"{p} api key": f"{pre}{_token()}{_token()}" for p, pre in chat_wire.KEY_PREFIX.items()},
            },
        )

    @property
    def all(self) -> dict[str, str]:
        return {**self.reasoning, **self.opaque, **self.keys}

    @property
    def payload(self) -> dict[str, str]:
        """Reasoning and opaque canaries (not the keys)."""
        return {**self.reasoning, **self.opaque}

    def key_for(self, provider: str) -> str:
        return self.keys[f"{provider} api key"]


@dataclass
class Hit:
    sink: str
    canary: str
    count: int
    excerpt: str

    def __str__(self) -> str:
        return f"{self.sink}: {self.canary} canary x{self.count}: ...{self.excerpt}..."


def _forms(needle: str) -> list[str]:
    """The needle as it may appear: plain, and its key core (a key's hex tail, printed masked)."""
    out = [needle]
    if needle.startswith("sk-"):
        out.append(needle.rsplit("-", 1)[-1])  # the random tail alone: a partly masked key still leaks
    return out


def mask(text: str, needles: dict[str, str]) -> str:
    for name, needle in needles.items():
        for f in _forms(needle):
            text = text.replace(f, f"<{name.upper().replace(' ', '_')}>")
    return text


def scan(
    sink: str, text: str, needles: dict[str, str], *, everything: dict[str, str] | None = None
) -> list[Hit]:
    """Every canary of ``needles`` found in ``text``, with a masked excerpt around its first hit."""
    hits: list[Hit] = []
    for name, needle in needles.items():
        for f in _forms(needle):
            n = text.count(f)
            if n:
                i = text.index(f)
                raw = text[max(0, i - 90) : i + len(f) + 90]
                excerpt = mask(raw, everything or needles).replace("\n", "\\n")
                hits.append(Hit(sink, name, n, excerpt))
                break
    return hits


def report(hits: list[Hit], limit: int = 8) -> str:
    lines = [str(h) for h in hits[:limit]]
    if len(hits) > limit:
        lines.append(f"... and {len(hits) - limit} more")
    return "\n  ".join(["canaries escaped:", *lines])


# ------------------------------------------------------------------------------- the hostile wire


def sse(events: list[dict[str, Any]], provider: str | None = None) -> bytes:
    if provider in chat_wire.CHAT or any("type" not in ev for ev in events):
        return chat_wire.frame(events, provider)  # Chat Completions: data lines only, then [DONE]
    out = []
    for ev in events:
        out.append(f"event: {ev['type']}\ndata: {json.dumps(ev, separators=(',', ':'))}\n\n")
    return "".join(out).encode()


def openai_step(c: Canaries, step: int, *, final: bool) -> list[dict[str, Any]]:
    """A valid Responses stream: one reasoning item, then a tool call or the answer.

    The reasoning item has a summary and encrypted_content; the tool call comes with ``final=False``.
    """
    rsn = c.reasoning["openai reasoning summary"]
    enc = c.opaque["openai encrypted_content"]
    rid, rs = f"resp_{step:04d}", f"rs_{step:04d}"
    summary = f"{rsn} step {step}: weigh the cities. {rsn} again."
    reasoning_done = {
        "id": rs,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": f"{enc}-{step}",
    }
    evs: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress", "output": []}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": rs, "type": "reasoning", "summary": [], "encrypted_content": f"{enc}-{step}"},
        },
    ]
    for piece in (f"{rsn} step {step}: weigh", " the cities.", f" {rsn} again."):
        evs.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": rs,
                "output_index": 0,
                "summary_index": 0,
                "delta": piece,
            }
        )
    evs.append({"type": "response.output_item.done", "output_index": 0, "item": reasoning_done})
    second: dict[str, Any]
    if not final:
        call = {
            "id": "fc_0001",
            "type": "function_call",
            "call_id": "call_0001",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "status": "completed",
        }
        evs += [
            {"type": "response.output_item.added", "output_index": 1, "item": {**call, "arguments": ""}},
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_0001",
                "output_index": 1,
                "delta": '{"city":"Paris"}',
            },
            {"type": "response.output_item.done", "output_index": 1, "item": call},
        ]
        second = call
    else:
        msg = {
            "id": "msg_0002",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
        }
        evs += [
            {"type": "response.output_item.added", "output_index": 1, "item": {**msg, "content": []}},
            {"type": "response.output_text.delta", "item_id": "msg_0002", "output_index": 1, "delta": ANSWER},
            {"type": "response.output_item.done", "output_index": 1, "item": msg},
        ]
        second = msg
    usage = {
        "input_tokens": 50,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 30},
        "total_tokens": 90,
    }
    evs.append(
        {
            "type": "response.completed",
            "response": {
                "id": rid,
                "status": "completed",
                "output": [reasoning_done, second],
                "usage": usage,
            },
        }
    )
    return evs


def anthropic_step(c: Canaries, step: int, *, final: bool) -> list[dict[str, Any]]:
    """A valid Messages stream: thinking (text + signature), redacted_thinking, then tool_use or text."""
    thk = c.reasoning["anthropic thinking text"]
    sig = c.opaque["anthropic signature"]
    red = c.opaque["anthropic redacted_thinking data"]
    usage = {
        "input_tokens": 50,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }
    evs: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{step:04d}",
                "type": "message",
                "role": "assistant",
                "model": MODELS["anthropic"],
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    ]
    for piece in (f"{thk} step {step}: weigh", " the cities.", f" {thk} again."):
        evs.append(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
        )
    evs += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": f"{sig}-{step}"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": f"{red}-{step}"},
        },
        {"type": "content_block_stop", "index": 1},
    ]
    if not final:
        evs += [
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "toolu_0001", "name": "get_weather", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": '{"city":"Paris"}'},
            },
            {"type": "content_block_stop", "index": 2},
        ]
        stop = "tool_use"
    else:
        evs += [
            {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": ANSWER}},
            {"type": "content_block_stop", "index": 2},
        ]
        stop = "end_turn"
    evs += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 40},
        },
        {"type": "message_stop"},
    ]
    return evs


def valid_stream(provider: str, c: Canaries, step: int, *, final: bool) -> list[dict[str, Any]]:
    if provider in chat_wire.CHAT:
        return chat_wire.chat_step(provider, c.reasoning, c.opaque, step, final=final)
    return (openai_step if provider == "openai" else anthropic_step)(c, step, final=final)


def malformed_event(provider: str, c: Canaries) -> dict[str, Any]:
    """A reasoning delta whose text field has the wrong type (and holds the reasoning canary)."""
    if provider in chat_wire.CHAT:
        return chat_wire.malformed(provider, c.reasoning)
    if provider == "openai":
        rsn = c.reasoning["openai reasoning summary"]
        return {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_0002",
            "output_index": 0,
            "summary_index": 0,
            "delta": {"text": f"{rsn} wrong-typed"},
        }
    thk = c.reasoning["anthropic thinking text"]
    return {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": [f"{thk} wrong-typed"]},
    }


Chunk = bytes | Exception | float  # bytes to send, an error to raise mid-body, seconds to sleep


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[Chunk]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Chunks are dropped as they are sent: like a socket, the server side keeps no copy that an
        # object-graph walk from agentlab's frames could find.
        while self._chunks:
            ch = self._chunks.pop(0)
            if isinstance(ch, Exception):
                raise ch
            if isinstance(ch, float):
                await asyncio.sleep(ch)
                continue
            yield ch

    async def aclose(self) -> None:
        pass


Responder = Callable[[int, httpx2.Request, bytes], tuple[int, dict[str, str], list[Chunk]]]


class HostileTransport(httpx2.AsyncBaseTransport):
    """Serves crafted answers; the step is read from the request (step 2 carries a tool result)."""

    def __init__(self, provider: str, responder: Responder) -> None:
        self.provider = provider
        self.responder = responder
        self.requests = 0
        self.auth_headers: list[bytes] = []  # positive control: what the auth headers carried

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        self.requests += 1
        self.auth_headers.append(
            b" ".join(v for k, v in request.headers.raw if k.lower() in (b"authorization", b"x-api-key"))
        )
        markers = (b"function_call_output", b"tool_result", b'"role":"tool"', b'"role": "tool"')
        step = 2 if any(m in body for m in markers) else 1
        status, headers, chunks = self.responder(step, request, body)
        return httpx2.Response(status, headers=headers, stream=_Body(chunks), request=request)


def sse_headers(provider: str) -> dict[str, str]:
    rid = "req_canarytest0001"
    h = {"content-type": "text/event-stream"}
    h["request-id" if provider == "anthropic" else "x-request-id"] = rid
    return h


def adapter_on(provider: str, transport: HostileTransport, key: str, *, max_retries: int = 0) -> Any:
    """The real adapter for ``provider`` on the real SDK client, keyed with ``key``."""
    import anthropic
    import openai

    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    http = httpx2.AsyncClient(transport=transport)
    if provider in chat_wire.CHAT:
        return chat_wire.adapter_for(provider, http, key, max_retries)
    if provider == "openai":
        oc = openai.AsyncOpenAI(
            api_key=key, base_url="http://hostile.invalid/v1", max_retries=max_retries, http_client=http
        )
        return OpenAIResponsesAdapter(MODELS[provider], client=oc, max_retries=max_retries)
    ac = anthropic.AsyncAnthropic(
        api_key=key, base_url="http://hostile.invalid", max_retries=max_retries, http_client=http
    )
    return AnthropicMessagesAdapter(MODELS[provider], client=ac)


# ---------------------------------------------------------------------------------------- faults

FAULTS = ("none", "cut", "malformed", "http500", "http401", "http400echo", "tool_raises", "cancel", "enospc")
"""``http400echo``: step 2 gets a 400 whose text quotes back the request values it refused -- the
reasoning and opaque payloads the loop sent back -- in each provider's own way (issue 29 item 5)."""


def _quoted_back(body: bytes, c: Canaries) -> list[str]:
    """Every JSON string of the request holding a reasoning or opaque canary (what a provider may quote)."""
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str) and any(m in v for m in c.payload.values()):
            found.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(json.loads(body or b"{}"))
    return found


def echo_400(provider: str, values: list[str]) -> dict[str, Any]:
    """A 400 quoting ``values`` back as each provider does (wordings from real reports and recordings)."""
    first = values[0] if values else '{"city":"Paris"}'
    if provider == "openai":  # the real text quotes the token unquoted (``../shared/fixtures/errors``)
        rest = "".join(f" Invalid value: '{v}'." for v in values[1:])
        message = f"The encrypted content {first} could not be verified.{rest}"
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "code": "invalid_encrypted_content",
            }
        }
    if provider == "anthropic":
        lines = [
            f'messages.1.content.{i}: Invalid `signature` in `thinking` block: "{v}"'
            for i, v in enumerate(values)
        ]
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "; ".join(lines or [first])},
        }
    if provider == "openrouter":  # the upstream (Google) quotes the bytes it could not decode
        upstream = "\n".join(
            f"Invalid value at 'contents[1].parts[{i}].thought_signature' (TYPE_BYTES), "
            f'Base64 decoding failed for "{v}"'
            for i, v in enumerate(values or [first])
        )
        raw = json.dumps(
            {"error": {"code": 400, "message": upstream, "status": "INVALID_ARGUMENT"}}, indent=2
        )
        return {"error": {"message": "Provider returned error", "code": 400,
                          "metadata": {"raw": raw, "provider_name": "Google"}}}  # fmt: skip
    # DeepSeek, vLLM: a pydantic validation error, whose text holds the input it refused
    errors = [
        {"type": "string_type", "loc": ("body", "messages", 2, "reasoning_content"), "input": v}
        for v in values or [first]
    ]
    return {"error": {"message": f"{len(errors)} validation error: {errors!r}", "type": "BadRequestError",
                      "param": None, "code": 400}}  # fmt: skip


def responder_for(provider: str, fault: str, c: Canaries) -> Responder:
    key = c.key_for(provider)

    def respond(step: int, request: httpx2.Request, body: bytes) -> tuple[int, dict[str, str], list[Chunk]]:
        ok = sse(valid_stream(provider, c, step, final=step >= 2), provider)
        if step < 2 or fault in ("none", "tool_raises", "enospc"):
            return 200, sse_headers(provider), [ok]
        events = valid_stream(provider, c, step, final=True)
        head = sse(events[:4], provider)  # started, reasoning started, a first reasoning delta
        if fault == "cut":
            # the connection ends inside an event that carries reasoning text
            whole = sse([events[4]], provider)
            at = max(whole.find(r.encode()) for r in c.reasoning.values())
            partial = whole[: at + 12]  # ends inside the reasoning text of a delta event
            return 200, sse_headers(provider), [head, partial]
        if fault == "malformed":
            return 200, sse_headers(provider), [head, sse([malformed_event(provider, c)], provider), ok]
        if fault == "cancel":
            return 200, sse_headers(provider), [head, 3600.0]
        if fault == "http500":
            hdr = {"content-type": "application/json", "retry-after-ms": "1"}
            err: dict[str, Any]
            if provider in chat_wire.CHAT:
                err = chat_wire.error_500(provider)
            elif provider == "openai":
                err = {
                    "error": {
                        "message": "The server had an error while processing your request.",
                        "type": "server_error",
                    }
                }
            else:
                err = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
            return 500, hdr, [json.dumps(err).encode()]
        if fault == "http400echo":
            values = _quoted_back(body, c)
            c.echoed.extend(values)
            return (
                400,
                {"content-type": "application/json"},
                [json.dumps(echo_400(provider, values)).encode()],
            )
        if fault == "http401":
            hdr = {"content-type": "application/json"}
            if provider in chat_wire.CHAT:
                err = chat_wire.error_401(provider, key, c.html)
            elif provider == "openai":  # a proxy that echoes the key it was given
                err = {
                    "error": {
                        "message": f"Incorrect API key provided: {key}. Model: {c.html}",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                }
            else:
                err = {
                    "type": "error",
                    "error": {
                        "type": "authentication_error",
                        "message": f"invalid x-api-key {key} for model {c.html}",
                    },
                }
            return 401, hdr, [json.dumps(err).encode()]
        raise AssertionError(fault)

    return respond


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return {"Paris": "18 C", "Rome": "24 C"}.get(city, "no data")


@al.tool(name="get_weather")
def broken_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    raise RuntimeError(f"weather service down for {city}")


@contextlib.contextmanager
def enospc_on(path: Path, after: int) -> Iterator[list[int]]:
    """``os.write`` to ``path`` fails with ENOSPC once ``after`` writes to it succeeded.

    Yields a one-element list counting the failures injected (the positive control: a writer that
    stopped using ``os.write`` would not be faulted, and the test says so).
    """
    real = os.write
    state = {"ok": 0}
    failed = [0]
    target = str(path.resolve())

    def write(fd: int, data: Any) -> int:
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if name == target:
            if state["ok"] >= after:
                failed[0] += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            state["ok"] += 1
        return real(fd, data)

    os.write = write
    try:
        yield failed
    finally:
        os.write = real


# ---------------------------------------------------------------------------------------- logging


_STD_ATTRS = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


class Everything(logging.Handler):
    """Formats each record completely: message, args, extras (as a JSON log handler would), traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self._fmt = logging.Formatter("%(name)s %(levelname)s %(message)s")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            parts = [self._fmt.format(record), repr(record.args)]
            parts += [f"{k}={v!r}" for k, v in vars(record).items() if k not in _STD_ATTRS]
            self.lines.append(" | ".join(parts))
        except Exception as e:  # a record that cannot be formatted is itself worth seeing
            self.lines.append(f"<unformattable record {record.name}: {type(e).__name__}>")


@contextlib.contextmanager
def debug_logging() -> Iterator[Everything]:
    """Root handler at DEBUG; every existing logger set to DEBUG (restored after)."""
    h = Everything()
    root = logging.getLogger()
    loggers = [
        root,
        *(lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger)),
    ]
    old = {lg: lg.level for lg in loggers}
    root.addHandler(h)
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
    try:
        yield h
    finally:
        root.removeHandler(h)
        for lg, lvl in old.items():
            lg.setLevel(lvl)


# ------------------------------------------------------------------------------- error formatters


def chain(exc: BaseException) -> list[BaseException]:
    """The exception, its ``__cause__``s and ``__context__``s (suppressed or not), group members."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop()
        if any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
        if isinstance(e, BaseExceptionGroup):
            todo += list(e.exceptions)
    return seen


_SKIP_TYPES = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.CodeType,
    types.MethodType,
)


def _is_namespace(d: dict[Any, Any]) -> bool:
    return "__builtins__" in d or ("__name__" in d and "__loader__" in d)


def reachable_text(root: object, *, frames: bool, depth: int = 8, limit: int = 60_000) -> str:  # noqa: C901 - one branch per kind of object the reachability walk opens
    """Text (str/bytes) reachable from ``root`` by ``gc.get_referents``, breadth first, bounded.

    ``frames=False``: the error's own attributes (its ``__dict__``, args, chained errors and what
    they hold), not its traceback. ``frames=True``: also the traceback's frames and their locals
    (what keeps payloads alive and what a locals-printing formatter could show).
    """
    out: list[str] = []
    seen: set[int] = {id(out)}
    level = [root]
    n = 0
    for _ in range(depth):
        nxt: list[Any] = []
        for obj in level:
            if id(obj) in seen or n > limit:
                continue
            seen.add(id(obj))
            n += 1
            if isinstance(obj, str):
                out.append(obj)
                continue
            if isinstance(obj, bytes | bytearray | memoryview):
                out.append(bytes(obj).decode("utf-8", "replace"))
                continue
            if isinstance(obj, _SKIP_TYPES) or (isinstance(obj, dict) and _is_namespace(obj)):
                continue
            if isinstance(obj, types.TracebackType):
                if frames:
                    nxt += [obj.tb_frame, obj.tb_next]
                continue
            if isinstance(obj, types.FrameType):
                if frames:
                    nxt.append(obj.f_locals)
                continue
            if isinstance(obj, BaseException):
                nxt += [obj.args, obj.__cause__, obj.__context__, getattr(obj, "__dict__", None)]
                nxt.append(getattr(obj, "__notes__", None))
                if frames:
                    nxt.append(obj.__traceback__)
                continue
            if isinstance(obj, types.CoroutineType | types.GeneratorType | types.AsyncGeneratorType):
                if frames:
                    fr = (
                        getattr(obj, "cr_frame", None)
                        or getattr(obj, "gi_frame", None)
                        or getattr(obj, "ag_frame", None)
                    )
                    if fr is not None:
                        nxt.append(fr.f_locals)
                continue
            nxt += [r for r in gc.get_referents(obj) if r is not None]
        level = nxt
    return "\n".join(out)


def _harness(tb: types.TracebackType) -> bool:
    name = tb.tb_frame.f_code.co_filename
    return "/tests/adversarial/" in name or (name.endswith(("asyncio/tasks.py", "asyncio/futures.py")))


def strip_harness(exc: BaseException) -> None:
    """Drop this suite's own frames from the tracebacks of the error and its chain.

    The test driver's and the hostile server's locals hold the canaries by design; agentlab's must not.
    """
    for e in chain(exc):
        entries = []
        tb = e.__traceback__
        while tb is not None:
            if not _harness(tb):
                entries.append(tb)
            tb = tb.tb_next
        new: types.TracebackType | None = None
        for t in reversed(entries):
            new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
        e.__traceback__ = new


def format_exception_sinks(exc: BaseException) -> dict[str, str]:
    """The raised error through every formatter a user may meet."""
    strip_harness(exc)
    sinks: dict[str, str] = {}
    sinks["exception str/repr (whole chain)"] = "\n".join(
        f"{type(e).__name__}: {e!s} | {e!r}" for e in chain(exc)
    )
    sinks["traceback.format_exception"] = "".join(traceback.format_exception(exc))
    try:
        te = traceback.TracebackException.from_exception(exc, capture_locals=True)
        sinks["traceback capture_locals=True"] = "".join(te.format())
    except Exception as e:  # a repr that raises while formatting locals is a finding of its own
        sinks["traceback capture_locals=True"] = f"<formatter failed: {type(e).__name__}: {e}>"
    sinks["IPython %xmode Verbose"] = _ipython_verbose(exc)
    sinks["rich.traceback show_locals"] = _rich(exc)
    sinks["object graph: error attributes"] = reachable_text(exc, frames=False)
    sinks["object graph: traceback frames"] = reachable_text(exc, frames=True)
    return sinks


def _ipython_verbose(exc: BaseException) -> str:
    from IPython.core.ultratb import VerboseTB

    try:
        vtb = VerboseTB(theme_name="nocolor", include_vars=True)
        return vtb.text(type(exc), exc, exc.__traceback__)
    except Exception as e:
        return f"<VerboseTB failed: {type(e).__name__}: {e}>"


def _rich(exc: BaseException) -> str:
    from rich.console import Console
    from rich.traceback import Traceback

    out = []
    for max_string in (80, 10_000):  # rich's default, and a user who widened it
        console = Console(record=True, width=200, file=io.StringIO(), color_system=None)
        try:
            tb = Traceback.from_exception(
                type(exc),
                exc,
                exc.__traceback__,
                show_locals=True,
                locals_max_string=max_string,
                locals_max_length=50,
            )
            console.print(tb)
            out.append(console.export_text())
        except Exception as e:
            out.append(f"<rich failed: {type(e).__name__}: {e}>")
    return "\n".join(out)


# ----------------------------------------------------------------------------------- widget state


def manager_state() -> str:
    import ipywidgets

    return json.dumps(ipywidgets.Widget.get_manager_state(drop_defaults=False), default=repr)


@contextlib.contextmanager
def offline_comms() -> Iterator[None]:
    """Widgets without a kernel: comms that accept and drop messages.

    The state stays in the kernel objects, which is what ``get_manager_state`` and so a saved notebook read.
    """
    from ipywidgets.widgets import widget

    class _Comm:
        def __init__(self, **kw: Any) -> None:
            self.comm_id = secrets.token_hex(8)
            self.kernel = object()

        def send(self, *a: Any, **kw: Any) -> None:
            pass

        def on_msg(self, cb: Any) -> None:
            pass

        def on_close(self, cb: Any) -> None:
            pass

        def close(self, *a: Any, **kw: Any) -> None:
            pass

    real = widget.comm.create_comm
    widget.comm.create_comm = lambda *a, **kw: _Comm(**kw)
    try:
        yield
    finally:
        widget.comm.create_comm = real


# -------------------------------------------------------------------------------------- scenarios


@dataclass
class Outcome:
    provider: str
    fault: str
    canaries: Canaries
    sinks: dict[str, str] = field(default_factory=dict)
    raised: BaseException | None = None
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: Any) -> None:
        if isinstance(value, bytes):
            text = value.decode("utf-8", "replace")
        elif isinstance(value, str):
            text = value
        else:
            text = repr(value)
        self.sinks[name] = self.sinks.get(name, "") + text + "\n"

    def add_call(self, name: str, fn: Callable[[], Any]) -> None:
        """Record what ``fn`` returns, or its failure (type and message: scanned too)."""
        try:
            self.add(name, fn())
        except Exception as e:
            self.add(name, f"<{name} raised {type(e).__name__}: {e}>")
            self.notes.append(f"{name} raised {type(e).__name__}")


def _obj_reprs(o: Any) -> str:
    """repr, str, IPython's pretty printer (``_repr_pretty_``) and the rich reprs a notebook shows."""
    from IPython.lib.pretty import pretty

    parts = [repr(o), str(o), pretty(o)]
    for meth in ("_repr_html_", "_repr_markdown_"):
        f = getattr(o, meth, None)
        if callable(f):
            parts.append(str(f()))
    return "\n".join(parts)


def html_outputs(o: Any) -> str:
    f = getattr(o, "_repr_html_", None)
    return str(f()) if callable(f) else ""


def _widget_ids() -> set[str]:
    from ipywidgets.widgets.widget import _instances

    return set(_instances)


def _close_widgets_since(before: set[str]) -> None:
    from ipywidgets.widgets.widget import _instances

    for wid in set(_instances) - before:
        w = _instances.get(wid)
        if w is not None:
            w.close()


async def _drive_run(out: Outcome, tmp: Path, log: Any) -> Any:
    """One two-step tool loop on the hostile wire; every sink of the run itself."""
    from agentlab.notebook.panel import collapse_panels
    from agentlab.notebook.run_view import RunView

    p, fault, c = out.provider, out.fault, out.canaries
    transport = HostileTransport(p, responder_for(p, fault, c))
    adapter = adapter_on(p, transport, c.key_for(p), max_retries=1 if fault == "http500" else 0)
    before = _widget_ids()
    view = RunView(f"{p} {fault}")
    seen: list[Any] = []
    task: asyncio.Task[Any] | None = None

    def on_event(ev: Any) -> None:
        seen.append(ev)
        view.on_event(ev)
        if (
            fault == "cancel"
            and task is not None
            and getattr(ev, "step", 0) == 2
            and type(ev).__name__ == "ReasoningDeltaEvent"
        ):
            asyncio.get_running_loop().call_soon(task.cancel)

    events_path = tmp / "events.jsonl"
    tools = [broken_weather if fault == "tool_raises" else get_weather]
    run = al.Run(
        f"{p}:{MODELS[p]}", TASK, tools=tools, adapter=adapter, event_log=events_path, on_event=on_event,
        retries=0, retry_delay=0.0,
    )  # fmt: skip
    task = asyncio.ensure_future(run.arun())
    with enospc_on(events_path, after=6) if fault == "enospc" else contextlib.nullcontext([0]) as failed:
        try:
            await task
        except BaseException as e:
            out.raised = e
    if fault == "enospc":
        out.notes.append(f"ENOSPC injected {failed[0]} time(s)")
        assert failed[0] > 0, (
            "the ENOSPC fault was never injected: the event log no longer writes with os.write"
        )
    assert transport.auth_headers and all(c.key_for(p).encode() in h for h in transport.auth_headers), (
        "positive control: the key reached the wire in every request"
    )
    del transport.auth_headers[:]
    reasoning_seen = "".join(
        getattr(ev, "text", "") for ev in seen if type(ev).__name__ == "ReasoningDeltaEvent"
    )
    assert any(r in reasoning_seen for r in c.reasoning.values()), "the reasoning canary reached on_event"

    view.finish()
    out.add("event log file", events_path.read_bytes() if events_path.exists() else b"")
    out.add_call("event log read back", lambda: al.EventLog.read(events_path) if events_path.exists() else [])
    out.add("repr/str of every event (durable and live)", "\n".join(_obj_reprs(ev) for ev in seen))
    out.add(
        "repr of run, checkpoint, adapter, client",
        "\n".join(map(repr, (run, run.checkpoint, adapter, adapter._client))),
    )
    out.add_call("checkpoint JSON", run.checkpoint.to_json)
    out.add_call("checkpoint pickle", lambda: pickle.dumps(run.checkpoint))
    res = run.result
    if res is not None:
        out.add_call("RunResult model_dump_json", res.model_dump_json)
        out.add_call("RunResult pickle", lambda: pickle.dumps(res))
        out.add("RunResult.error", f"{res.error_type}: {res.error}")
        out.add_call(
            "repr/str/_repr_html_ of RunResult, usage, calls",
            lambda: "\n".join(_obj_reprs(o) for o in (res, res.usage, *res.calls)),
        )
        out.add_call("html: RunResult, usage", lambda: html_outputs(res) + html_outputs(res.usage))
        out.add_call(
            "usage frame to_csv/to_json", lambda: res.usage_frame().to_csv() + res.usage_frame().to_json()
        )
        out.add("repr/str of every event (durable and live)", "\n".join(_obj_reprs(ev) for ev in res.events))
        out.add_call("export_frames files (csv, parquet)", lambda: exported_files(res))
        out.add_call("save_report file", lambda: saved_report(res))

        def memory() -> bytes:
            store = al.MemoryStore(tmp / "memory.jsonl")
            store.extend(res.history)
            return (tmp / "memory.jsonl").read_bytes() + repr(list(store)).encode()

        out.add_call("MemoryStore file", memory)
    collapse_panels()  # the cell ended
    out.add("widget state at cell end", manager_state())
    for panel in view.panels:
        panel.show()  # the user clicks "Show reasoning"
    out.add("widget state after Show reasoning", manager_state())
    for panel in view.panels:
        panel.collapse()
    _close_widgets_since(before)
    if out.raised is not None:
        for name, text in format_exception_sinks(out.raised).items():
            out.add(name, text)
    await adapter._client.close()
    return run


async def _drive_sweep(out: Outcome, tmp: Path) -> None:
    p, fault, c = out.provider, out.fault, out.canaries
    adapters: list[Any] = []

    def factory(ref: Any) -> Any:
        a = adapter_on(p, HostileTransport(p, responder_for(p, fault, c)), c.key_for(p))
        adapters.append(a)
        return a

    results = tmp / "sweep.jsonl"
    tools = [broken_weather if fault == "tool_raises" else get_weather]
    try:
        rep = await al.asweep(
            [TASK], [f"{p}:{MODELS[p]}"], results=results, tools=tools, adapter_factory=factory, retries=0,
            retry_delay=0.0, progress=None, fsync=False,
        )  # fmt: skip
        out.add("sweep report repr", _obj_reprs(rep))
    except BaseException as e:
        out.add("sweep raised", f"{type(e).__name__}: {e}")
        for name, text in format_exception_sinks(e).items():
            out.add(f"sweep {name}", text)
    out.add("sweep results file", results.read_bytes() if results.exists() else b"")
    out.add_call("sweep load_results", lambda: al.load_results(results).to_csv())
    for a in adapters:
        await a._client.close()


def exported_files(obj: Any) -> str:
    """What ``export_frames`` writes for ``obj``, CSV and Parquet.

    The Parquet files are read back too: their pages are compressed, so raw bytes would hide a canary.
    """
    import pandas as pd

    with tempfile.TemporaryDirectory() as d:
        csvs = al.export_frames(obj, Path(d) / "csv", format="csv").values()
        parquets = al.export_frames(obj, Path(d) / "parquet", format="parquet").values()
        assert csvs and parquets, "export_frames wrote nothing"
        text = [p.read_bytes().decode("utf-8", "replace") for p in csvs]
        text += [pd.read_parquet(p).to_csv() for p in parquets]
        text += [p.read_bytes().decode("utf-8", "replace") for p in parquets]
        return "\n".join(text)


def saved_report(obj: Any) -> bytes:
    """The HTML file ``save_report`` writes for ``obj``."""
    with tempfile.TemporaryDirectory() as d:
        return al.save_report(obj, Path(d) / "report.html").read_bytes()


async def _drive_compare(out: Outcome) -> None:
    p, fault, c = out.provider, out.fault, out.canaries
    a = adapter_on(p, HostileTransport(p, responder_for(p, fault, c)), c.key_for(p))
    tools = [broken_weather if fault == "tool_raises" else get_weather]
    try:
        cmp = await al.acompare(TASK, [f"{p}:{MODELS[p]}"], tools=tools, adapters=[a], live=False, retries=0)
        out.add("compare repr/str/_repr_html_", _obj_reprs(cmp))
        out.add_call("html: Comparison", lambda: html_outputs(cmp))
        out.add_call("compare usage/summary frames", lambda: cmp.usage.to_csv() + cmp.summary().to_csv())
        out.add_call("compare pickle", lambda: pickle.dumps(cmp))
        out.add_call("compare export_frames files (csv, parquet)", lambda: exported_files(cmp))
        out.add_call("compare save_report file", lambda: saved_report(cmp))
    except BaseException as e:
        out.add("compare raised", f"{type(e).__name__}: {e}")
        for name, text in format_exception_sinks(e).items():
            out.add(f"compare {name}", text)
    await a._client.close()


@contextlib.contextmanager
def traced_spans(out: Outcome) -> Iterator[None]:
    """Every run of the scenario traced (``agentlab.telemetry``, content on) into memory.

    The spans (names, attributes, events, status: the SDK's own JSON) become a sink.
    """
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentlab import telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(provider, include_content=True)
    try:
        yield
    finally:
        telemetry.uninstrument()
        provider.shutdown()
        out.add(
            "OpenTelemetry spans (content on)", "\n".join(s.to_json() for s in exporter.get_finished_spans())
        )


def run_scenario(provider: str, fault: str, tmp: Path) -> Outcome:
    """Run the loop (and, where it applies, a sweep and a comparison) under ``fault``; collect sinks."""
    out = Outcome(provider, fault, Canaries.fresh())

    async def main() -> None:
        with debug_logging() as logs, offline_comms(), traced_spans(out):
            await _drive_run(out, tmp, logs)
            if fault not in ("cancel", "enospc"):
                await _drive_sweep(out, tmp)
                await _drive_compare(out)
        out.add("structured logs at DEBUG (all loggers)", "\n".join(logs.lines))

    asyncio.run(main())
    return out


SINKS = (
    "event log file",
    "event log read back",
    "structured logs at DEBUG (all loggers)",
    "MemoryStore file",
    "checkpoint JSON",
    "checkpoint pickle",
    "RunResult model_dump_json",
    "RunResult pickle",
    "RunResult.error",
    "repr/str/_repr_html_ of RunResult, usage, calls",
    "repr/str of every event (durable and live)",
    "repr of run, checkpoint, adapter, client",
    "usage frame to_csv/to_json",
    "sweep results file",
    "sweep load_results",
    "sweep report repr",
    "compare repr/str/_repr_html_",
    "compare usage/summary frames",
    "compare pickle",
    "sweep raised",
    "compare raised",
    "widget state at cell end",
    "widget state after Show reasoning",
    "exception str/repr (whole chain)",
    "traceback.format_exception",
    "traceback capture_locals=True",
    "IPython %xmode Verbose",
    "rich.traceback show_locals",
    "object graph: error attributes",
    "object graph: traceback frames",
    "OpenTelemetry spans (content on)",
    "export_frames files (csv, parquet)",
    "save_report file",
)
"""Every sink a scenario fills (those that do not apply to a fault are simply empty)."""

KEY_BLIND = frozenset({"object graph: traceback frames"})
"""Sinks where the key is legitimately reachable (the SDK client in a frame's ``self``); its repr,
which the formatters above do scan, must not show it."""

__all__ = [
    "FAULTS",
    "KEY_BLIND",
    "MODELS",
    "PROVIDERS",
    "SINKS",
    "Canaries",
    "HostileTransport",
    "Outcome",
    "adapter_on",
    "chain",
    "format_exception_sinks",
    "html",
    "report",
    "run_scenario",
    "scan",
]
