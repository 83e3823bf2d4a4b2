"""Fuzzed wire events: a valid stream, mutated, through the real adapter on the real SDK.

Only agentlab's typed errors may come out (never a bare ``TypeError``/``KeyError``/pydantic
``ValidationError``), and a canary planted in a wrong-typed field or in a reasoning/opaque field
never reaches the error text, ``RunResult.error`` or the event log. Canaries are only planted where
no portable content can legitimately carry them (wrong-typed values anywhere; valid strings only in
reasoning and opaque fields), so any hit is a leak. Deterministic (``derandomize=True``).
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentlab as al
from tests.adversarial.support import (
    MODELS,
    PROVIDERS,
    TASK,
    Canaries,
    HostileTransport,
    adapter_on,
    chain,
    report,
    scan,
    sse,
    sse_headers,
    valid_stream,
)

C = Canaries.fresh()
WRONG = "cnyFUZZwrong7e1d"  # planted inside wrong-typed values
NEEDLES = {**C.all, "wrong-typed value": WRONG}
_SECRET_FIELDS = {"delta", "thinking", "signature", "data", "encrypted_content", "text"}
_REASONING_EVENTS = {"response.reasoning_summary_text.delta", "thinking_delta", "signature_delta"}


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _get_parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path[:-1]:
        obj = obj[p]
    return obj


def _is_reasoning_field(ev: dict[str, Any], path: tuple[Any, ...]) -> bool:
    """Fields that hold reasoning or opaque data (a canary there is secret, never content)."""
    leaf = path[-1]
    if leaf in ("signature", "data", "encrypted_content", "thinking"):
        return True
    if ev.get("type") == "response.reasoning_summary_text.delta" and leaf == "delta":
        return True
    return leaf == "text" and "summary" in path


MUTATIONS = ("drop_field", "wrong_type", "secret_string", "drop_event", "dup_event", "truncate", "retype")


@st.composite
def mutated(draw: st.DrawFn, provider: str) -> list[dict[str, Any]]:
    events = copy.deepcopy(valid_stream(provider, C, 1, final=True))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(MUTATIONS))
        i = draw(st.integers(0, len(events) - 1))
        ev = events[i]
        paths = [p for p in _paths(ev) if p != ("type",)]
        if kind in ("drop_field", "wrong_type", "secret_string") and paths:
            path = draw(st.sampled_from(paths))
            parent = _get_parent(ev, path)
            if kind == "drop_field":
                if isinstance(parent, dict):
                    parent.pop(path[-1], None)
            elif kind == "wrong_type":
                parent[path[-1]] = draw(
                    st.sampled_from([[WRONG], {"v": WRONG}, 7, None, True, [[WRONG]], {"text": WRONG}])
                )
            elif _is_reasoning_field(ev, path):
                parent[path[-1]] = (
                    f"{C.reasoning['openai reasoning summary']} {C.opaque['anthropic signature']}"
                )
        elif kind == "drop_event":
            events.pop(i)
        elif kind == "dup_event":
            events.insert(i, copy.deepcopy(ev))
        elif kind == "truncate":
            del events[i:]
        elif kind == "retype":
            ev["type"] = draw(
                st.sampled_from(
                    ["ping", "message_stop", "response.completed", "error", "", "content_block_stop"]
                )
            )
        if not events:
            break
    return events


def _run(provider: str, events: list[dict[str, Any]]) -> tuple[BaseException | None, Any, al.EventLog]:
    body = sse(events)

    def respond(step: int, request: Any, raw: bytes) -> Any:
        return 200, sse_headers(provider), [body]

    transport = HostileTransport(provider, respond)
    adapter = adapter_on(provider, transport, C.key_for(provider))
    log = al.EventLog()
    run = al.Run(f"{provider}:{MODELS[provider]}", TASK, adapter=adapter, event_log=log, retries=0)

    async def go() -> BaseException | None:
        try:
            await run.arun()
            return None
        except Exception as e:
            return e
        finally:
            await adapter._client.close()

    return asyncio.run(go()), run.result, log


def _check(provider: str, events: list[dict[str, Any]]) -> None:
    err, result, log = _run(provider, events)
    where = f"[{provider}] mutated stream {json.dumps([e.get('type') for e in events])}"
    if err is not None:
        assert isinstance(err, al.AgentlabError), (
            f"{where}: a bare {type(err).__module__}.{type(err).__name__} escaped (want an agentlab typed "
            f"error): {str(err)[:300]!r}"
        )
    hits = []
    if err is not None:
        hits += scan(f"error text {where}", "\n".join(f"{e!s} {e!r}" for e in chain(err)), NEEDLES)
    if result is not None:
        hits += scan(f"RunResult.error {where}", str(result.error), NEEDLES)
    hits += scan(f"event log {where}", "\n".join(r.model_dump_json() for r in log), NEEDLES)
    assert not hits, report(hits)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_fuzzed_wire_events_give_typed_errors_without_canaries(provider: str) -> None:
    @settings(
        derandomize=True,
        max_examples=80,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutated(provider))
    def check(events: list[dict[str, Any]]) -> None:
        _check(provider, events)

    check()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unmutated_stream_completes(provider: str) -> None:
    """Control: the stream the fuzzer starts from is valid, so every failure above is the mutation's."""
    err, result, _ = _run(provider, valid_stream(provider, C, 1, final=True))
    assert err is None and result is not None and result.status == "completed", err
