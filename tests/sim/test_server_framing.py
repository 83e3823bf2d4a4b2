"""The loopback server answers every request, as a real host does, and bounds slow clients in time.

Driven by a raw socket on loopback that sends the exact malformed bytes (no HTTP client would), with
every read bounded: a server that drops the connection, or never answers, fails here instead of
hanging. The server runs in this process (its own loop on a thread), with short time limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentlab.sim.protocols import protocols, register_protocol
from agentlab.sim.server import MAX_BODY, Limits, serve

FAST = Limits(head_s=0.5, body_s=0.5)
READ_DEADLINE_S = 5.0


@contextlib.contextmanager
def running(limits: Limits | None = None) -> Iterator[int]:
    """The server on a free loopback port for the ``with`` block."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    port: list[int] = []
    stop: list[asyncio.Event] = []

    def on_ready(bound: int) -> None:
        port.append(bound)
        ready.set()

    async def main() -> None:
        stop.append(asyncio.Event())
        kw: dict[str, Any] = {} if limits is None else {"limits": limits}
        await serve(0, stop=stop[0], on_ready=on_ready, **kw)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10), "the server did not start"
    try:
        yield port[0]
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(10)
        loop.close()


@dataclasses.dataclass
class Reply:
    raw: bytes
    closed: bool
    elapsed: float

    @property
    def status(self) -> int | None:
        line = self.raw.split(b"\r\n", 1)[0].split(b" ")
        return int(line[1]) if len(line) > 1 and line[0].startswith(b"HTTP/1.") else None

    @property
    def headers(self) -> dict[str, str]:
        head = self.raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
        return {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head)}

    def json(self) -> Any:
        return json.loads(self.raw.split(b"\r\n\r\n", 1)[1])


def _read_all(sock: socket.socket, t0: float) -> Reply:
    """Everything the server sends until it closes, or until the deadline (bounded loop)."""
    data = b""
    deadline = t0 + READ_DEADLINE_S
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return Reply(data, True, time.monotonic() - t0)
        if not chunk:
            return Reply(data, True, time.monotonic() - t0)
        data += chunk
    return Reply(data, False, time.monotonic() - t0)


def exchange(port: int, *pieces: bytes, pause: float = 0.0) -> Reply:
    """Send ``pieces`` (``pause`` seconds apart), then read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_DEADLINE_S) as sock:
        t0 = time.monotonic()
        for i, piece in enumerate(pieces):
            if i and pause and select.select([sock], [], [], pause)[0]:
                break  # the server answered (or closed) already
            with contextlib.suppress(OSError):  # the server may have answered and closed already
                sock.sendall(piece)
        return _read_all(sock, t0)


def post(path: str, body: bytes, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(body)}"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# ------------------------------------------------------------------------------- malformed framing


MALFORMED = {
    "content-length abc": (b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n", 400),
    "content-length -1": (b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n{}", 400),
    "content-length +2": (b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: +2\r\n\r\n{}", 400),
    "two content-lengths": (
        b"POST /v1/responses HTTP/1.1\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}",
        400,
    ),
    "empty request line": (b"\r\n\r\n", 400),
    "no version": (b"GET /v1/models\r\n\r\n", 400),
    "header without colon": (b"GET /v1/models HTTP/1.1\r\nauthorization Bearer sk-x\r\n\r\n", 400),
    "100 KB header line": (b"GET /v1/models HTTP/1.1\r\nx-big: " + b"a" * 100_000 + b"\r\n\r\n", 431),
    "chunked body": (
        b"POST /v1/responses HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        411,
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_framing_gets_the_front_ends_answer_and_the_connection_closes(case: str) -> None:
    data, status = MALFORMED[case]
    with running(FAST) as port:
        reply = exchange(port, data)
    assert reply.status == status, reply.raw[:200]
    assert reply.closed and reply.headers["connection"] == "close"
    assert reply.headers["content-type"] == "text/html"
    assert b"sk-x" not in reply.raw, "a refusal never echoes the request"


@pytest.mark.parametrize(
    ("path", "headers", "status", "shape"),
    [
        ("/v1/responses", {"authorization": "Bearer k"}, 413, "html"),
        ("/v1/messages", {"x_api_key": "k", "anthropic_version": "2023-06-01"}, 413, "anthropic"),
        ("/v1beta/models/sim-gemini:generateContent", {"x_goog_api_key": "k"}, 400, "gemini"),
    ],
)
def test_a_body_over_32_mib_is_refused_before_it_is_read(
    path: str, headers: dict[str, str], status: int, shape: str
) -> None:
    """A 33 MiB declared body: refused at once in the host's words (no byte of the body is sent)."""
    head = post(path, b"", **headers).replace(b"content-length: 0", f"content-length: {33 * 2**20}".encode())
    with running(FAST) as port:
        reply = exchange(port, head)
    assert reply.status == status and reply.closed, reply.raw[:300]
    if shape == "html":
        assert b"413 Request Entity Too Large" in reply.raw
    elif shape == "anthropic":
        body = reply.json()
        assert body["type"] == "error" and body["error"]["type"] == "request_too_large", body
        assert reply.headers["request-id"].startswith("req_")
    else:
        err = reply.json()["error"]
        assert err["status"] == "INVALID_ARGUMENT" and err["code"] == 400
        assert err["message"] == f"Request payload size exceeds the limit: {MAX_BODY} bytes."


# ------------------------------------------------------------------------------- slow clients


def test_a_client_trickling_its_headers_gets_a_408_within_the_header_deadline() -> None:
    pieces = [b"POST /v1/responses HTTP/1.1\r\n"] + [b"x-slow: 1\r\n"] * 30
    with running(FAST) as port:
        reply = exchange(port, *pieces, pause=0.1)
    assert reply.status == 408 and reply.closed, reply.raw[:200]
    assert reply.elapsed < 2.0


def test_a_client_stalling_its_body_gets_a_408_within_the_body_deadline() -> None:
    head = b"POST /v1/responses HTTP/1.1\r\nauthorization: Bearer k\r\ncontent-length: 100\r\n\r\n"
    with running(FAST) as port:
        reply = exchange(port, head + b'{"model": ')
    assert reply.status == 408 and reply.closed, reply.raw[:200]
    assert reply.elapsed < 2.0


def test_an_idle_connection_is_closed_without_an_answer() -> None:
    with running(FAST) as port:
        reply = exchange(port)
    assert reply.closed and reply.raw == b"" and reply.elapsed < 2.0


def test_keep_alive_still_serves_several_requests_on_one_connection() -> None:
    one = b"GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\n\r\n"
    with running(FAST) as port:
        reply = exchange(port, one, one + one[:-2] + b"connection: close\r\n\r\n")
    assert reply.raw.count(b"HTTP/1.1 200 OK") == 3 and reply.closed


def test_default_limits_close_a_slow_client_well_before_25_seconds() -> None:
    limits = Limits()
    assert limits.head_s + limits.body_s <= 20 and limits.max_body == 32 * 2**20


# ------------------------------------------------------------------------------- handler failures


GEMINI = "/v1beta/models/{model}:generateContent"


@pytest.mark.parametrize(
    ("model", "config", "field", "shown"),
    [
        (
            "sim-gemini-legacy",
            {"thinkingConfig": {"thinkingBudget": "abc"}},
            "thinking_config.thinking_budget",
            '"abc"',
        ),
        ("sim-gemini", {"thinkingConfig": {"thinkingBudget": 1.5}}, "thinking_config.thinking_budget", "1.5"),
        ("sim-gemini", {"maxOutputTokens": "many"}, "max_output_tokens", '"many"'),
        ("sim-gemini", {"maxOutputTokens": True}, "max_output_tokens", "true"),
        ("sim-gemini", {"maxOutputTokens": {"n": 5}}, "max_output_tokens", '{"n":5}'),
        ("sim-gemini", {"temperature": "hot"}, "temperature", '"hot"'),
    ],
)
def test_wrong_typed_gemini_numbers_are_googles_invalid_argument(
    model: str, config: dict[str, Any], field: str, shown: str
) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}], "generationConfig": config}
    with running(FAST) as port:
        reply = exchange(
            port, post(GEMINI.format(model=model), json.dumps(body).encode(), x_goog_api_key="k")
        )
    assert reply.status == 400, reply.raw[:400]
    err = reply.json()["error"]
    path = f"generation_config.{field}"
    kind = "TYPE_FLOAT" if field == "temperature" else "TYPE_INT32"
    assert err["status"] == "INVALID_ARGUMENT" and err["code"] == 400
    assert err["message"] == f"Invalid value at '{path}' ({kind}), {shown}"
    violation = err["details"][0]
    assert violation["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert violation["fieldViolations"] == [{"field": path, "description": err["message"]}]


def test_numbers_protobuf_reads_from_strings_are_accepted() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "What is 2 + 3?"}]}],
        "generationConfig": {"maxOutputTokens": "2000", "thinkingConfig": {"thinkingBudget": 1024.0}},
    }
    with running(FAST) as port:
        path = GEMINI.format(model="sim-gemini-legacy")
        reply = exchange(port, post(path, json.dumps(body).encode(), x_goog_api_key="k", connection="close"))
    assert reply.status == 200, reply.raw[:400]


def test_a_non_object_generation_config_is_googles_invalid_argument() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": "fast"}
    with running(FAST) as port:
        path = GEMINI.format(model="sim-gemini")
        reply = exchange(port, post(path, json.dumps(body).encode(), x_goog_api_key="k"))
    err = reply.json()["error"]
    assert reply.status == 400 and err["status"] == "INVALID_ARGUMENT"
    assert err["message"] == (
        "Invalid value at 'generation_config' "
        '(type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig), "fast"'
    )


@contextlib.contextmanager
def failing(name: str) -> Iterator[None]:
    """The named protocol's handler raises, as a bug inside it would."""
    original = next(p for p in protocols() if p.name == name)

    def boom(*_: Any) -> Any:
        raise RuntimeError("injected failure")

    register_protocol(dataclasses.replace(original, handle=boom), replace=True)
    try:
        yield
    finally:
        register_protocol(original, replace=True)


def test_an_exception_inside_a_handler_is_a_500_in_the_providers_shape() -> None:
    ask = {"model": "sim-thinker", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    req = post("/v1/messages", json.dumps(ask).encode(), x_api_key="k", anthropic_version="2023-06-01")
    with running(FAST) as port, failing("anthropic"):
        reply = exchange(port, req, req.replace(b"host: 127.0.0.1", b"connection: close"))
    assert reply.raw.count(b"HTTP/1.1 500 ") == 2, "answered, and the connection still serves"
    body = json.loads(reply.raw.split(b"\r\n\r\n")[1].split(b"HTTP/1.1")[0])
    assert body["type"] == "error" and body["error"]["type"] == "api_error", body
    assert b"injected failure" not in reply.raw


def test_an_exception_outside_the_app_is_still_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentlab.sim import server

    def broken(*_: Any) -> Any:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(server, "handle", broken)
    with running(FAST) as port:
        reply = exchange(
            port, b"GET /v1/models HTTP/1.1\r\nauthorization: Bearer k\r\nconnection: close\r\n\r\n"
        )
    assert reply.status == 500 and reply.closed and b"injected failure" not in reply.raw


def test_an_empty_line_before_the_request_line_is_skipped() -> None:
    """RFC 9112 2.2: a server ignores at least one empty line received before the request line."""
    with running(FAST) as port:
        reply = exchange(
            port, b"\r\nGET /v1/models HTTP/1.1\r\nauthorization: Bearer k\r\nconnection: close\r\n\r\n"
        )
    assert reply.status == 200 and reply.closed


@pytest.mark.parametrize(("contents", "shown"), [([1], "1"), ("hi", '"hi"')])
def test_a_content_that_is_not_an_object_is_googles_invalid_argument(contents: Any, shown: str) -> None:
    path = "contents[0]" if isinstance(contents, list) else "contents"
    with running(FAST) as port:
        reply = exchange(
            port,
            post(
                GEMINI.format(model="sim-gemini"),
                json.dumps({"contents": contents}).encode(),
                x_goog_api_key="k",
            ),
        )
    err = reply.json()["error"]
    assert reply.status == 400 and err["status"] == "INVALID_ARGUMENT"
    content = "type.googleapis.com/google.ai.generativelanguage.v1beta.Content"
    assert err["message"] == f"Invalid value at '{path}' ({content}), {shown}"


def test_expect_100_continue_is_answered_before_the_body() -> None:
    head = (
        b"GET /v1/models HTTP/1.1\r\nauthorization: Bearer k\r\ncontent-length: 2\r\nexpect: 100-continue\r\n"
    )
    with (
        running(FAST) as port,
        socket.create_connection(("127.0.0.1", port), timeout=READ_DEADLINE_S) as sock,
    ):
        sock.sendall(head + b"connection: close\r\n\r\n")
        sock.settimeout(READ_DEADLINE_S)
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(b"{}")
        reply = _read_all(sock, time.monotonic())
    assert b"HTTP/1.1 200 OK" in reply.raw and reply.closed
