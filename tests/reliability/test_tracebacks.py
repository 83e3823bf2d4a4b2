"""A run failing at its second model call leaks nothing secret through what its error carries.

Reasoning, opaque payloads and API keys must not get out through frame locals (formatters with locals:
``traceback`` with ``capture_locals``, IPython's ``%xmode Verbose``, ``rich.traceback`` with ``show_locals``),
the exception chain, objects reachable from the error, and opaque items kept alive by a held error.

Everything runs on the real adapters and SDKs against the simulator; the fault hits request 2 (the
first call's reasoning items are then in the request body being sent). Canaries come from the wire:

* reasoning: every reasoning delta the display hook saw (sentences that exist only as reasoning;
  the simulated reasoner's first sentence is "The user asks: <task>", unique per run);
* opaque: every ``encrypted_content``, ``signature`` and redacted ``data`` the simulator handed out;
* keys: fake keys given to the SDK clients (positive control: they reached the auth headers).
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import re
import traceback
import types
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import agentlab as al
from agentlab import sim
from agentlab.errors import ProviderError
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.neutral.items import ProviderReasoningItem
from tests.reliability.support import (
    MODELS,
    PROVIDERS,
    RecordingTransport,
    get_weather,
    opaque_payloads_on_wire,
)

TOKEN = uuid.uuid4().hex[:12]
KEYS = {"openai": f"sk-test-CANARYKEY{TOKEN}openai", "anthropic": f"sk-ant-test-CANARYKEY{TOKEN}anth"}
FAULTS = ("500", "429", "cut", "malformed", "reset")


def _adapter(provider: str, rec: RecordingTransport) -> Any:
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    key = KEYS[provider]
    if provider == "openai":
        client = sim.openai_client(transport=rec, api_key=key, max_retries=0)
        return OpenAIResponsesAdapter(MODELS[provider], client=client, max_retries=0)
    return AnthropicMessagesAdapter(
        MODELS[provider], client=sim.anthropic_client(transport=rec, api_key=key, max_retries=0)
    )


@dataclass
class Failure:
    """A failed run's error and the canaries that flowed while it ran."""

    error: BaseException
    run: al.Run
    adapter: Any
    needles: dict[str, str] = field(default_factory=dict)


async def _fail(run: al.Run) -> BaseException:
    # Only ``run`` lives in this frame: the error's outermost frame holds nothing but the user's handle.
    try:
        await run.arun()
    except ProviderError as e:
        return e
    raise AssertionError("the run did not fail")


def _needles(provider: str, shown: list[str], rec: RecordingTransport, result: Any) -> dict[str, str]:
    portable = json.dumps([i.model_dump() for i in result.history]) + str(result.output)
    needles = {"reasoning marker": "The user asks:"}
    for i, s in enumerate(re.split(r"(?<=[.!?])\s+|\n+", "".join(shown))):
        s = s.strip()
        if len(s) >= 30 and s not in portable and json.dumps(s)[1:-1] not in portable:
            needles[f"reasoning {i}"] = s
    opaque = opaque_payloads_on_wire(rec.exchanges)
    assert opaque, "opaque payloads were handed out"
    needles.update({f"opaque {i}": p[:40] for i, p in enumerate(opaque)})
    needles["key"] = KEYS[provider]
    needles["key fragment"] = f"CANARYKEY{TOKEN}"
    return needles


def fail_at_second_call(provider: str, fault: str) -> Failure:
    """A tool loop whose second model call fails with ``fault`` (no retries anywhere)."""
    rec = RecordingTransport(plan=lambda n, _p: fault if n >= 1 else None)
    adapter = _adapter(provider, rec)
    shown: list[str] = []

    def on_event(ev: object) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            shown.append(ev.text)

    run = al.Run(
        f"{provider}:{MODELS[provider]}", f"Is it warmer in Paris or Rome for trip canary-{TOKEN}?",
        tools=[get_weather], adapter=adapter, retries=0, on_event=on_event,
    )  # fmt: skip
    error = asyncio.run(_fail(run))
    assert len(rec.exchanges) == 2, "the fault hit the second call"
    assert run.result is not None and run.result.steps == 1
    auth = rec.exchanges[1].headers.get("authorization", "") + rec.exchanges[1].headers.get("x-api-key", "")
    assert KEYS[provider] in auth, "positive control: the key was on the wire"
    assert "The user asks:" in "".join(shown), "positive control: reasoning reached the display hook"
    body = rec.exchanges[1].body
    assert b"encrypted_content" in body or b"signature" in body, "positive control: opaque items went back"
    return Failure(error, run, adapter, _needles(provider, shown, rec, run.result))


def _leaks(text: str, needles: dict[str, str]) -> list[str]:
    return [name for name, n in needles.items() if n in text or json.dumps(n)[1:-1] in text]


@pytest.fixture(
    scope="module", params=[(p, f) for p in PROVIDERS for f in FAULTS], ids=lambda x: f"{x[0]}-{x[1]}"
)
def failure(request: pytest.FixtureRequest) -> Failure:
    provider, fault = request.param
    return fail_at_second_call(provider, fault)


# ---------------------------------------------------------------- formatters that print locals


def test_traceback_with_locals(failure: Failure) -> None:
    tbe = traceback.TracebackException.from_exception(failure.error, capture_locals=True)
    text = "".join(tbe.format())
    assert "events" in text or "arun" in text, "the traceback still shows where it failed"
    assert not _leaks(text, failure.needles)


def test_ipython_verbose_traceback(failure: Failure) -> None:
    from IPython.core.ultratb import VerboseTB

    e = failure.error
    text = VerboseTB(theme_name="nocolor").text(type(e), e, e.__traceback__)
    assert "arun" in text
    assert not _leaks(text, failure.needles)


def test_rich_traceback_show_locals(failure: Failure) -> None:
    from rich.console import Console
    from rich.traceback import Traceback

    e = failure.error
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(Traceback.from_exception(type(e), e, e.__traceback__, show_locals=True, max_frames=0))
    text = console.export_text()
    assert "arun" in text
    assert not _leaks(text, failure.needles)


# ---------------------------------------------------------------- the exception chain and what it reaches


def _frames(tb: types.TracebackType | None) -> Iterator[types.FrameType]:
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def _chain(e: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    todo = [e]
    while todo:
        x = todo.pop()
        if any(x is y for y in out):
            continue
        out.append(x)
        todo += [c for c in (x.__cause__, x.__context__) if c is not None]
    return out


_STOP = (types.ModuleType, type, types.FunctionType, types.CodeType, types.BuiltinFunctionType)


def reachable_texts(e: BaseException, stop: tuple[object, ...]) -> Iterator[str]:
    """Every str/bytes reachable from the error: attributes, chain, traceback frames' locals.

    The walk follows ``gc.get_referents`` but not into modules, classes, functions or code (globals
    are the world, not the error), not up ``f_back`` (callers are not what the error carries), and not
    into ``stop``: the user's own handles (the ``Run`` and its adapter hold the SDK client, which holds
    the key by necessity; the user holds them anyway).
    """
    seen: set[int] = {id(s) for s in stop}
    todo: list[Any] = []
    for x in _chain(e):
        todo.append(x)
        for f in _frames(x.__traceback__):
            seen.add(id(f))
            todo.extend(f.f_locals.values())
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _STOP):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, bytes | bytearray | memoryview):
            yield bytes(obj).decode("utf-8", "replace")
        elif isinstance(obj, ProviderReasoningItem):
            yield obj.unseal(provider=obj.provider, api=obj.api).decode("utf-8", "replace")
        elif isinstance(obj, types.FrameType):
            continue  # a frame not in the traceback (a caller's): not the error's
        else:
            todo.extend(gc.get_referents(obj))


def test_the_raised_error_reaches_no_key_or_payload(failure: Failure) -> None:
    e = failure.error
    assert isinstance(e, ProviderError)
    assert e.provider in PROVIDERS and e.message
    for x in _chain(e)[1:]:
        assert isinstance(x, al.errors.AgentlabError), f"the chain holds a foreign {type(x).__name__}"
    found = {
        n for t in reachable_texts(e, (failure.run, failure.adapter)) for n in _leaks(t, failure.needles)
    }
    assert not found, sorted(found)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_http_error_keeps_what_debugging_needs(provider: str) -> None:
    f = fail_at_second_call(provider, "429")
    e = f.error
    assert isinstance(e, al.errors.RateLimitError)
    assert e.status == 429 and e.request_id and e.error_type
    assert e.retry_after is not None
    assert e.__cause__ is None and e.__context__ is None
    assert e.code is None or isinstance(e.code, str)
    f5 = fail_at_second_call(provider, "500")
    assert isinstance(f5.error, al.errors.ProviderServerError) and f5.error.status == 500
    assert f5.error.request_id and f5.error.error_type
    assert f5.error.retry_after is None or f5.error.retry_after >= 0  # an attribute on every error
    assert f5.error.__cause__ is None and f5.error.__context__ is None


# ---------------------------------------------------------------- keep-alive


def _live_reasoning_items() -> int:
    return sum(isinstance(o, ProviderReasoningItem) for o in gc.get_objects())


def test_held_errors_keep_no_opaque_item_alive() -> None:
    gc.collect()
    before = _live_reasoning_items()
    errors: list[BaseException] = []
    for i in range(60):
        provider = PROVIDERS[i % 2]
        rec = RecordingTransport(plan=lambda n, _p: "500" if n >= 1 else None)
        run = al.Run(
            f"{provider}:{MODELS[provider]}", "Is it warmer in Paris or Rome?", tools=[get_weather],
            adapter=_adapter(provider, rec), retries=0,
        )  # fmt: skip
        errors.append(asyncio.run(_fail(run)))
        body = rec.exchanges[1].body
        assert b"encrypted_content" in body or b"signature" in body
    del run, rec
    gc.collect()
    assert len(errors) == 60
    assert _live_reasoning_items() - before == 0


# ---------------------------------------------------------------- notebook path: sync run in a loop


def _fail_sync(run: al.Run) -> BaseException:
    try:
        run.run_sync()  # a loop is running: the run goes to a worker thread's loop (as in Jupyter)
    except ProviderError as e:
        return e
    raise AssertionError("the run did not fail")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sync_run_inside_a_running_loop(provider: str) -> None:
    from IPython.core.ultratb import VerboseTB

    rec = RecordingTransport(plan=lambda n, _p: "500" if n >= 1 else None)
    run = al.Run(
        f"{provider}:{MODELS[provider]}", f"Is it warmer in Paris or Rome for trip canary-{TOKEN}?",
        tools=[get_weather], adapter=_adapter(provider, rec), retries=0,
    )  # fmt: skip

    async def in_a_cell() -> BaseException:
        return _fail_sync(run)

    e = asyncio.run(in_a_cell())
    assert len(rec.exchanges) == 2
    needles = {"reasoning marker": "The user asks:", "key fragment": f"CANARYKEY{TOKEN}"}
    needles.update({f"opaque {i}": p[:40] for i, p in enumerate(opaque_payloads_on_wire(rec.exchanges))})
    text = "".join(traceback.TracebackException.from_exception(e, capture_locals=True).format())
    text += VerboseTB(theme_name="nocolor").text(type(e), e, e.__traceback__)
    assert "run_sync" in text
    assert not _leaks(text, needles)
