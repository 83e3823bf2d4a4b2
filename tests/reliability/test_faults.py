"""Faults, both protocols, over the real SDKs and the real adapters, via the simulator's fault grammar.

For every fault: the documented outcome (bounded retry then success, or a typed error naming the
provider, the HTTP status where there is one, and the request id), the checkpoint left consistent
(history at the last completed step, every tool call with its result, continuation released), and
the JSONL event log complete up to the fault and ending with the error record and the run's end.
Timeouts need real sockets (an in-process transport cannot time out), so they run against the
loopback server.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.errors import (
    OverloadedError,
    ProviderError,
    ProviderServerError,
    RateLimitError,
    StreamInterruptedError,
)
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    ModelCallCompletedEvent,
    ModelCallStartedEvent,
    ReasoningDeltaEvent,
    RunCompletedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    TASK,
    RecordingTransport,
    check_history_consistent,
    check_log_ends_with_error,
    close_adapter,
    get_weather,
    make_adapter,
    no_live_continuation,
    open_sockets,
    socket_adapter,
)

REPO = Path(__file__).resolve().parents[2]
ANSWER = "Rome is warmer (24 vs Paris 18)."

# fault -> (error type, HTTP status per provider or None for in-stream faults, retried by the run?)
# None: the adapter decides (a cut stream may be a retryable interruption or a malformed event);
# the test then checks that the run's attempts match the error's own ``retryable`` flag.
PERSISTENT: dict[str, tuple[type[ProviderError], dict[str, int | None], bool | None]] = {
    "429": (RateLimitError, {"openai": 429, "anthropic": 429}, True),
    "500": (ProviderServerError, {"openai": 500, "anthropic": 500}, True),
    "529": (OverloadedError, {"openai": 503, "anthropic": 529}, True),
    "reset": (StreamInterruptedError, {"openai": None, "anthropic": None}, True),
    "cut": (StreamInterruptedError, {"openai": None, "anthropic": None}, None),
    "malformed": (StreamInterruptedError, {"openai": None, "anthropic": None}, False),
}
HTTP_FAULTS = ("429", "500", "529")


def _run(provider: str, adapter: Any, log: Path, **kw: Any) -> al.Run:
    kw.setdefault("retry_delay", 0.01)
    return al.Run(
        f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, event_log=log, **kw
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", [*HTTP_FAULTS, "reset"])
async def test_transient_fault_is_retried_then_succeeds(provider: str, fault: str, tmp_path: Path) -> None:
    """The first request of the loop fails once; a bounded retry on the same provider recovers."""
    rec = RecordingTransport(plan=lambda n, _p: fault if n == 0 else None)
    adapter = make_adapter(provider, rec, max_retries=2)
    run = _run(provider, adapter, tmp_path / "events.jsonl")
    try:
        result = await run.arun()
    finally:
        await close_adapter(adapter)
    assert result.status == "completed" and result.output == ANSWER
    assert len(rec.exchanges) == 3, rec.statuses  # one failed attempt + the two calls of the loop
    first = rec.exchanges[0]
    assert first.status == PERSISTENT[fault][1][provider] or (fault == "reset" and first.status == 200)
    assert rec.exchanges[1].body == first.body, "a retry resends the identical request"
    assert all(s == 200 for s in rec.statuses[1:])
    check_history_consistent(result.history)
    assert run.checkpoint.provider_continuation is None and no_live_continuation(run.run_id)
    assert not rec.unclosed
    recs = al.EventLog.read(tmp_path / "events.jsonl")
    assert isinstance(recs[-1], RunCompletedEvent) and recs[-1].status == "completed"
    assert not any(isinstance(r, ErrorEvent) for r in recs)
    if fault == "reset":  # broken streams are retried by the run, visibly
        retries = [r for r in recs if isinstance(r, DiagnosticEvent) and r.code == "retry"]
        assert len(retries) == 1 and retries[0].data["error_type"] == "StreamInterruptedError"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", list(PERSISTENT))
async def test_persistent_fault_mid_loop_fails_typed_and_consistent(
    provider: str, fault: str, tmp_path: Path
) -> None:
    """Step 1 succeeds (tool calls run, opaque items held); every later request faults.

    The run ends ``failed`` with the typed error, its checkpoint at step 1, the continuation released.
    """
    err_type, statuses, documented_retry = PERSISTENT[fault]
    rec = RecordingTransport(plan=lambda n, _p: fault if n >= 1 else None)
    adapter = make_adapter(provider, rec, max_retries=1)
    log = tmp_path / "events.jsonl"
    run = _run(provider, adapter, log, retries=1)
    held: list[int] = []

    def watch(ev: Any) -> None:
        if isinstance(ev, ModelCallStartedEvent) and ev.step == 2:
            c = run.checkpoint.provider_continuation
            held.append(len(c) if c is not None else -1)

    run.on_event = watch
    try:
        with pytest.raises(err_type) as info:
            await run.arun()
    finally:
        await close_adapter(adapter)
    err = info.value
    # --- the documented outcome: typed, names provider, status (HTTP faults), request id
    assert type(err) is err_type, repr(err)
    assert err.provider == provider and f"[{provider}" in str(err)
    assert err.status == statuses[provider]
    assert err.request_id and err.request_id in str(err)
    # HTTP status errors are retried by the SDK only (attempts do not multiply); the run retries
    # what the SDK cannot: a stream broken mid-way.
    run_retries = err.retryable and fault not in HTTP_FAULTS
    if documented_retry is not None:
        assert err.retryable is documented_retry
    # --- bounded: SDK attempts for HTTP errors; the run's attempts for stream errors
    step2 = rec.exchanges[1:]
    sdk_attempts = 2 if fault in HTTP_FAULTS else 1
    assert len(step2) == sdk_attempts * (2 if run_retries else 1), rec.statuses
    assert all(e.body == step2[0].body for e in step2), "every retry resends the identical request"
    assert not rec.unclosed, "every response stream was closed"
    # --- checkpoint consistent: exactly step 1 (its tool calls with their results), nothing of step 2
    cp = run.checkpoint
    assert cp.step == 1 and cp.status == "failed"
    check_history_consistent(cp.history)
    assert sum(isinstance(i, ToolCallItem) for i in cp.history) == 2
    assert sum(isinstance(i, ToolResultItem) for i in cp.history) == 2
    assert held and held[0] >= 1, "step 2 was sent with the loop's opaque items"
    assert cp.provider_continuation is None and no_live_continuation(run.run_id)
    assert run.result is not None and run.result.status == "failed"
    assert run.result.error_type == err_type.__name__
    # --- event log: complete up to the fault, then the error record, then the run's end
    mine = check_log_ends_with_error(log, run.run_id)
    kinds = [type(r) for r in mine if not (isinstance(r, DiagnosticEvent) and r.code == "retry")]
    assert kinds == [
        RunStartedEvent,
        ModelCallStartedEvent,
        ModelCallCompletedEvent,
        ToolCallEvent,
        ToolCallEvent,
        ToolResultEvent,
        ToolResultEvent,
        ModelCallStartedEvent,
        ErrorEvent,
        RunCompletedEvent,
    ], kinds
    error = mine[-2]
    assert error.provider == provider and error.status == statuses[provider]
    assert error.request_id == err.request_id and error.error_type == err_type.__name__
    assert len([r for r in mine if isinstance(r, DiagnosticEvent) and r.code == "retry"]) == int(run_retries)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_unknown_event_type_is_tolerated(provider: str, tmp_path: Path) -> None:
    """Providers add event types; an unknown one in every stream changes nothing."""
    clean = RecordingTransport()
    faulty = RecordingTransport(plan=lambda _n, _p: "unknown_event")
    results = []
    for rec in (clean, faulty):
        adapter = make_adapter(provider, rec)
        try:
            results.append(await _run(provider, adapter, tmp_path / f"{id(rec)}.jsonl").arun())
        finally:
            await close_adapter(adapter)
    assert any("sim_unknown_event" in e.text for e in faulty.exchanges)
    a, b = results
    assert b.status == "completed" and b.output == a.output == ANSWER
    assert [type(i) for i in b.history] == [type(i) for i in a.history]
    assert b.usage.tokens == a.usage.tokens
    assert len(faulty.exchanges) == 2 and all(s == 200 for s in faulty.statuses)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_slow_stream_arrives_incrementally(provider: str, tmp_path: Path) -> None:
    """A slow stream still completes, and its deltas reach ``on_event`` while it streams (not at the end)."""
    rec = RecordingTransport(plan=lambda n, _p: "slow:15" if n == 0 else None)
    adapter = make_adapter(provider, rec)
    seen: list[float] = []

    def on_event(ev: Any) -> None:
        if isinstance(ev, ReasoningDeltaEvent) and ev.step == 1:
            seen.append(time.perf_counter())

    try:
        result = await _run(provider, adapter, tmp_path / "e.jsonl", on_event=on_event).arun()
    finally:
        await close_adapter(adapter)
    assert result.status == "completed" and result.output == ANSWER
    assert len(seen) >= 3
    assert seen[-1] - seen[0] >= 0.015 * (len(seen) - 1) * 0.8, "deltas were delivered as they arrived"


# ---------------------------------------------------------------- real sockets: timeouts


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to count sockets")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_read_timeout_mid_stream_is_typed_and_leaks_nothing(
    provider: str, server: str, tmp_path: Path
) -> None:
    before = open_sockets()
    adapter = socket_adapter(provider, server, timeout=0.2, fault="slow:600")
    log = tmp_path / "events.jsonl"
    run = _run(provider, adapter, log, retries=1)
    t0 = time.perf_counter()
    try:
        with pytest.raises(ProviderError) as info:
            await run.arun()
    finally:
        await close_adapter(adapter)
    assert time.perf_counter() - t0 < 5, "the timeout bounded the wait"
    err = info.value
    assert isinstance(err, StreamInterruptedError | al.errors.ProviderConnectionError), repr(err)
    assert err.provider == provider and re.search(r"timed out|timeout", str(err), re.IGNORECASE), str(err)
    assert err.request_id, f"the request id is known once headers arrived: {err!r}"
    assert err.retryable, "a timeout is a broken connection: retryable"
    assert run.checkpoint.step == 0 and run.checkpoint.provider_continuation is None
    check_log_ends_with_error(log, run.run_id)
    assert open_sockets() <= before, "no socket left open after the client closed"
