"""``python -m bench --quick`` keeps working: every section runs and reports its figures and targets.

Structure only: timings are never asserted here (CI machines are noisy; the figures live in README's
Performance section and come from ``make bench``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_quick_writes_every_section(tmp_path: Path) -> None:
    from bench import SECTIONS

    out = tmp_path / "results.json"
    # two sections at a time (each in its own interpreter): the results keep the sections' order
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--jobs", "2", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["quick"] is True
    assert [s["name"] for s in data["sections"]] == [
        "adapter_overhead",
        "peers",
        "startup",
        "notebook",
        "compare",
        "analysis",
        "memory",
        "adapter_chat",
        "warm_start",
        "sweep_ray",
        "eval_scale",
        "live_view",
        "first_cell",
        "mcp",
        "bedrock",
    ]
    assert len(data["sections"]) == len(SECTIONS)
    for sec in data["sections"]:
        assert not sec.get("error"), (sec["name"], sec.get("traceback"))
        assert sec["rows"], sec["name"]
        for t in sec["targets"]:
            assert {"name", "value", "limit", "op", "met"} <= set(t), t
    named = {s["name"]: s for s in data["sections"]}
    assert set(named["adapter_overhead"]["figures"]) >= {"openai", "anthropic", "gemini"}
    for provider in ("openai", "anthropic", "gemini"):
        us = named["adapter_overhead"]["figures"][provider]["us_per_event"]
        assert set(us) >= {"floor", "sdk", "adapter", "run_step"}
    for provider in ("openai", "anthropic", "gemini", "chat"):
        assert "raw SDK typed stream" in named["peers"]["figures"][provider]["us_per_event"]
    deliveries = named["adapter_overhead"]["figures"]["deliveries"]
    assert set(deliveries) == {"socket", "in_process"}
    for delivery, figs in deliveries.items():
        for provider in ("openai", "anthropic", "gemini"):
            m = figs[provider]
            assert m["delivery"] == delivery
            assert set(m["us_per_event"]) >= {"floor", "sdk", "adapter", "run_step"}
            assert set(m["min_us_per_event"]) == set(m["us_per_event"])
    assert "floor_httpx" in deliveries["socket"]["openai"]["us_per_event"]
    assert "floor_httpx" in deliveries["socket"]["gemini"]["us_per_event"]
    names = [t["name"] for t in named["adapter_overhead"]["targets"]]
    # per provider: adapter/SDK, adapter/floor, run/SDK, run/adapter; the socket adds the sync httpx2 floor
    assert sum("socket" in n for n in names) == 20 and sum("in-process" in n for n in names) == 16
    assert sum(n.startswith("gemini (") for n in names) == 9
    assert sum(n.startswith("xai (") for n in names) == 9  # a Responses dialect: its own row
    assert "floor_httpx_sync" in deliveries["socket"]["anthropic"]["us_per_event"]
    assert "floor_httpx_sync" in deliveries["socket"]["xai"]["us_per_event"]
    bedrock = named["bedrock"]
    assert set(bedrock["figures"]["us_per_event"]) >= {"floor", "sdk", "adapter"}
    assert any("botocore-decoding floor" in t["name"] for t in bedrock["targets"])
    chat = named["adapter_chat"]["figures"]["deliveries"]  # measured as section 1 measures
    assert set(chat) == {"socket", "in_process"}
    for delivery, m in chat.items():
        assert m["delivery"] == delivery
        assert set(m["us_per_event"]) >= {"floor", "sdk", "adapter", "run_step"}
    assert "floor_httpx" in chat["socket"]["us_per_event"]
    chat_targets = [t["name"] for t in named["adapter_chat"]["targets"]]
    assert len(chat_targets) == 9 and sum("socket" in n for n in chat_targets) == 5
    assert "floor_httpx_sync" in chat["socket"]["us_per_event"]
    evals = named["eval_scale"]["figures"]
    assert set(evals["agentlab"]) >= {"wall_ms_per_sample", "cpu_ms_per_sample", "peak_rss_mb"}
    assert evals["agentlab"]["completed"] == evals["agentlab"]["samples"]
    assert len(evals["memory"]["at"]) == 3 and "traced_growth_kb_per_1k_runs" in evals["memory"]
    resume = evals["resume"]
    assert resume["kept"] + resume["resume_ran"] == resume["runs"] and resume["third_requests"] == 0
    assert "| target | measured | limit | met |" in proc.stdout  # the markdown table was printed


def test_bench_server_sends_one_chunk_per_event() -> None:
    """The socket delivery: chunked framing, one chunk per SSE event, the same bytes as in process."""
    from bench._server import _reply
    from bench.streams import openai_stream

    stream = openai_stream(20, 10)
    parts = _reply(stream.body, "req_x", per_event=True)
    head, _, first = parts[0].partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head and b"content-length" not in head
    chunks = [first, *parts[1:-1]]
    assert parts[-1] == b"0\r\n\r\n" and len(chunks) == stream.events
    payloads = []
    for c in chunks:
        size, _, rest = c.partition(b"\r\n")
        assert rest.endswith(b"\r\n") and len(rest) - 2 == int(size, 16)
        payloads.append(rest[:-2])
        assert payloads[-1].count(b"data: ") == 1 and payloads[-1].endswith(b"\n\n")
    assert b"".join(payloads) == stream.body
    (whole,) = _reply(stream.body, "req_x", per_event=False)
    assert whole.endswith(stream.body) and b"content-length: %d" % len(stream.body) in whole


def test_bench_server_sends_gemini_events_one_chunk_each_crlf_framed() -> None:
    """Gemini's stream as the API sends it: ``data: {...}`` + CRLF CRLF per event, no ``[DONE]``."""
    from bench._server import _reply
    from bench.streams import gemini_stream

    stream = gemini_stream(20, 10)
    assert b"[DONE]" not in stream.body and stream.body.count(b"data: ") == stream.events
    parts = _reply(stream.body, "req_x", per_event=True)
    payloads = [p.partition(b"\r\n")[2][:-2] for p in [parts[0].partition(b"\r\n\r\n")[2], *parts[1:-1]]]
    assert len(payloads) == stream.events and b"".join(payloads) == stream.body
    for payload in payloads:
        assert payload.startswith(b"data: {") and payload.endswith(b"}\r\n\r\n")
        assert json.loads(payload[6:])["candidates"][0]["content"]["role"] == "model"


def test_bench_server_routes_each_provider_and_tool_results() -> None:
    """Every consumer of one provider gets that provider's bytes: the path picks, a tool result ends."""
    import http.client

    from bench._server import serving
    from bench.adapters import GEMINI_PATH
    from bench.streams import gemini_final, gemini_stream

    with serving(30, 10, per_event=True, max_requests=2, lifetime=60) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for body, expected in ((b"{}", gemini_stream(30, 10)), (b'{"functionResponse":{}}', gemini_final())):
            conn.request("POST", GEMINI_PATH, body=body, headers={"content-type": "application/json"})
            with conn.getresponse() as resp:
                assert resp.read() == expected.body
        conn.close()


def test_bench_server_routes_chat_completions_to_the_deepseek_shaped_bodies() -> None:
    """Section 2's Chat peers get the Chat bytes.

    ``/chat/completions`` is its own protocol, and a request carrying a ``tool`` message gets the
    short answer, so a tool loop can finish.
    """
    import http.client

    from bench._server import serving
    from bench.streams import chat_final, chat_stream

    final = b'{"messages":[{"role":"tool","tool_call_id":"call_1","content":"18 C"}]}'
    with serving(30, 10, per_event=True, max_requests=2, lifetime=60) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for body, expected in ((b"{}", chat_stream(30, 10)), (final, chat_final())):
            conn.request(
                "POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"}
            )
            with conn.getresponse() as resp:
                assert resp.read() == expected.body
        conn.close()
    assert chat_final().body.endswith(b"data: [DONE]\n\n") and b'"finish_reason":"stop"' in chat_final().body


def test_bench_peers_agentlab_consumers_run_on_every_protocol() -> None:
    """Section 2's own consumers read each of the four protocols' bytes to their end over the socket.

    Floor, raw SDK, agentlab adapter and two-request ``Run``, at smoke sizes (the peers themselves
    need the bench extra).
    """
    import asyncio

    from bench._server import serving
    from bench.peers import agentlab_runners

    with serving(30, 10, per_event=True, lifetime=120) as port:

        async def each() -> None:
            opened: list[Any] = []
            groups = agentlab_runners(port, opened)
            assert set(groups) == {"openai", "anthropic", "gemini", "chat"}
            for runners in groups.values():
                assert set(runners) == {
                    "floor (httpx2 lines + json.loads)",
                    "raw SDK typed stream",
                    "agentlab adapter",
                    "agentlab Run (tool loop)",
                }
                for run in runners.values():
                    await run()  # the Run asserts it completed in two steps
            for http in opened:
                await http.aclose()

        asyncio.run(each())


def test_bench_server_is_bounded_and_floor_reads_every_event() -> None:
    """The server exits after its request budget; the sync floor sees every event over the socket."""
    import http.client
    import time

    from bench._server import serving
    from bench.adapters import _sync_floor
    from bench.streams import anthropic_stream

    with serving(30, 10, per_event=True, max_requests=2, lifetime=60) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        assert _sync_floor(conn, "/v1/messages") == anthropic_stream(30, 10).events
        _sync_floor(conn, "/v1/messages")
        conn.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # budget spent: the server stops listening
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            try:
                probe.connect()
            except OSError:
                break
            finally:
                probe.close()
            time.sleep(0.05)
        else:
            raise AssertionError("bench server still accepting after its request budget")


def test_bench_chat_server_sends_one_chunk_per_event_and_the_floor_reads_them_all() -> None:
    """The Chat Completions section's far side: one HTTP chunk per SSE event, ``[DONE]`` last.

    The sync floor (section 1's) counts every event, ``[DONE]`` included, without choking on it.
    """
    import http.client

    from bench._server import _reply
    from bench.adapter_chat import chat_stream, serving
    from bench.adapters import _sync_floor

    stream = chat_stream(30, 10)
    parts = _reply(stream.body, "req_x", per_event=True)
    assert len(parts) == stream.events + 1 and stream.body.endswith(b"data: [DONE]\n\n")
    with serving(30, 10) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        assert _sync_floor(conn, "/v1/chat/completions") == stream.events
        assert _sync_floor(conn, "/v1/chat/completions") == stream.events  # keep-alive
        conn.close()


def test_bench_chat_consumers_all_read_the_stream_in_process() -> None:
    """Every consumer of the chat section runs to its end on the in-process delivery (smoke sizes)."""
    import asyncio

    from bench.adapter_chat import _measure, chat_stream

    m = asyncio.run(_measure(chat_stream(20, 10), 1, None))
    assert m["delivery"] == "in_process" and set(m["us_per_event"]) == {"floor", "sdk", "adapter", "run_step"}


def test_bench_jobs_only_with_quick(capsys: pytest.CaptureFixture[str]) -> None:
    """Sections at the same time skew each other's figures: a measurement refuses ``--jobs``."""
    from bench.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["--jobs", "2", "--only", "bedrock", "--out", "/nonexistent/results.json"])
    assert exc.value.code == 2 and "only with --quick" in capsys.readouterr().err


def test_bench_rounds_run_the_paired_consumers_as_neighbours_both_ways() -> None:
    """Issue 34's ratios divide neighbouring runs: A B C, the others rotated, C B A, then A B C C B A."""
    import asyncio

    from bench._util import cpu_rounds
    from bench.adapters import PAIRED, TOGETHER, paired_ratios

    ran: list[str] = []

    def runner(name: str) -> Any:
        async def fn() -> None:
            ran.append(name)

        return fn

    names = ["floor", "floor_httpx_sync", "sdk", "adapter", "run_step", "floor_httpx"]
    runners = {n: runner(n) for n in names}
    samples = asyncio.run(cpu_rounds(runners, 3, warmup=0, together=TOGETHER, passes=4))
    block, others = list(TOGETHER), ["floor", "sdk", "floor_httpx"]
    for r in range(3):
        one = ran[r * 15 : (r + 1) * 15]
        shift = r % 3
        assert one == block + others[shift:] + others[:shift] + block[::-1] + block + block[::-1], one
    assert {n: len(v) for n, v in samples.items()} == {n: 12 if n in TOGETHER else 3 for n in names}
    assert set(paired_ratios({n: [1.0] * len(v) for n, v in samples.items()})) == set(PAIRED)
    with pytest.raises(ValueError, match="even"):
        asyncio.run(cpu_rounds(runners, 1, together=TOGETHER, passes=3))
