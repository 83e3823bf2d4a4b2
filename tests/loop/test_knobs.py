"""The request knobs through ``Run``/``run``/``Session``/``compare``/sweep ``Setting``s, end to end.

Against the strict simulator through the real SDKs, with a recording transport, so each test sees
what went on the wire; refusals are checked to happen at construction, before any request is sent
and before anything reaches the event log.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest

import agentlab as al
from agentlab import sim
from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import InvalidSettingsError, ToolDefinitionError, UserError
from agentlab.loop.runner import Run
from agentlab.loop.session import Session
from agentlab.loop.tools import tool
from agentlab.neutral.events import ModelCallStartedEvent, ResponseCompletedEvent
from agentlab.neutral.request import CallOptions, ReasoningSettings
from agentlab.sweeps import Setting, load_results, sweep

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}
TASK = "Is it warmer in Paris or Rome?"
OFF = {"enabled": False}


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return TEMPS.get(city, "unknown")


class Recording(httpx2.AsyncBaseTransport):
    """Keeps each request body (JSON) on its way to the simulator."""

    def __init__(self) -> None:
        self.inner = sim.SimTransport()
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(await request.aread()))
        return await self.inner.handle_async_request(request)


OLD_API = {"anthropic-version": "2023-06-01"}  # the last Messages version with sampling fields


def _adapter(provider: str, **kw: Any) -> tuple[Any, Recording]:
    rec = Recording()
    if provider == "openai":
        client = sim.openai_client(transport=rec, max_retries=0)
        return OpenAIResponsesAdapter("sim-reasoner", client=client), rec
    aclient = sim.anthropic_client(transport=rec, max_retries=0)
    return AnthropicMessagesAdapter("sim-thinker", client=aclient, **kw), rec


def _run(provider: str, *, pinned: bool = False, **kw: Any) -> tuple[al.RunResult, Recording]:
    adapter, rec = _adapter(provider, **({"extra_headers": OLD_API} if pinned else {}))
    model = "openai:sim-reasoner" if provider == "openai" else "anthropic:sim-thinker"
    result = Run(model, TASK, tools=[get_weather], adapter=adapter, **kw).run_sync()
    return result, rec


# ---------------------------------------------------------------- on the wire, end to end


def test_anthropic_knobs_reach_the_wire_and_the_simulator_accepts_them() -> None:
    result, rec = _run(
        "anthropic",
        pinned=True,  # sampling fields exist only up to API version 2023-06-01
        reasoning=OFF,
        temperature=0.2,
        top_p=0.9,
        stop_sequences=["###"],
        user_id="u-9f2",
        service_tier="standard_only",
        tool_choice="tool:get_weather",
        parallel_tool_calls=False,
    )
    assert result.status == "completed" and "Rome" in (result.output or "")
    first, *rest = rec.bodies
    assert first["temperature"] == 0.2 and first["top_p"] == 0.9
    assert first["stop_sequences"] == ["###"]
    assert first["metadata"] == {"user_id": "u-9f2"}
    assert first["service_tier"] == "standard_only"
    assert first["tool_choice"] == {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}
    # A forced choice holds until the model called a tool, then the loop asks with "auto".
    assert rest and all(b["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True} for b in rest)


def test_openai_knobs_reach_the_wire_and_the_simulator_accepts_them() -> None:
    result, rec = _run(
        "openai",
        tool_choice="required",
        parallel_tool_calls=False,
        metadata={"experiment": "e1"},
        user_id="u-9f2",
        service_tier="flex",
    )
    assert result.status == "completed"
    first, *rest = rec.bodies
    assert first["tool_choice"] == "required" and first["parallel_tool_calls"] is False
    assert first["metadata"] == {"experiment": "e1"}
    assert first["safety_identifier"] == "u-9f2"
    assert first["service_tier"] == "flex"
    assert rest and all(b["tool_choice"] == "auto" for b in rest)


def test_forced_choice_kept_when_reset_is_off() -> None:
    result, rec = _run(
        "anthropic",
        reasoning=OFF,
        options=CallOptions(tool_choice="tool:get_weather", reset_tool_choice=False),
        max_steps=3,
    )
    # The simulator honours forced tool use: every turn calls the tool, so the run never answers.
    assert len(rec.bodies) == 3 and result.output is None
    assert all(b["tool_choice"] == {"type": "tool", "name": "get_weather"} for b in rec.bodies)


# ---------------------------------------------------------------- stream=False


_IDS = re.compile(r"\b(?:resp|req|fc|call|msg|toolu|rs)_[A-Za-z0-9]{8,}")
_OPAQUE = re.compile(r'"(encrypted_content|signature)": "[^"]*"')


def _normalized(text: str) -> str:
    """Provider ids as positional placeholders, opaque tokens blanked.

    The simulator derives both from the request bytes, which differ by the ``stream`` flag alone.
    """
    seen: dict[str, str] = {}
    text = _OPAQUE.sub(lambda m: f'"{m.group(1)}": "<opaque>"', text)
    return _IDS.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), text)


def _durable(result: al.RunResult) -> str:
    """The durable record of a run without what differs between two runs (run id, wall times, ids)."""
    out = []
    for ev in result.events:
        d = ev.model_dump(mode="json")
        d = {k: v for k, v in d.items() if k not in ("run_id", "ts") and not k.endswith("_s")}
        out.append([type(ev).__name__, d])
    return _normalized(json.dumps(out, sort_keys=True))


def _body(b: dict[str, Any]) -> str:
    return _normalized(json.dumps({k: v for k, v in b.items() if k != "stream"}, sort_keys=True))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_non_streamed_run_is_the_streamed_run(provider: str) -> None:
    streamed, srec = _run(provider)
    whole, wrec = _run(provider, stream=False)
    assert all(b.get("stream") is True for b in srec.bodies)
    assert all(b.get("stream") in (False, None) for b in wrec.bodies)
    assert whole.status == streamed.status == "completed"
    assert whole.output == streamed.output
    assert [type(e).__name__ for e in whole.events] == [type(e).__name__ for e in streamed.events]
    assert _durable(whole) == _durable(streamed)
    assert whole.usage.tokens == streamed.usage.tokens
    history = [
        _normalized(json.dumps([i.model_dump(mode="json") for i in r.history])) for r in (whole, streamed)
    ]
    assert history[0] == history[1]
    assert len(wrec.bodies) == len(srec.bodies) >= 2
    # The continuation went back the same way: each later request carries the same items, and the
    # opaque reasoning items (blanked here) are in the same places.
    assert [_body(b) for b in wrec.bodies] == [_body(b) for b in srec.bodies]
    assert "<opaque>" in _body(wrec.bodies[1])


# ---------------------------------------------------------------- refused before sending or logging


@pytest.mark.parametrize(
    ("provider", "kw", "match"),
    [
        ("openai", {"temperature": 0.2}, "temperature is not supported by the reasoning model"),
        ("openai", {"top_p": 0.5}, "top_p is not supported by the reasoning model"),
        ("openai", {"stop_sequences": ["END"]}, "stop_sequences"),
        ("openai", {"service_tier": "standard_only"}, "service_tier"),
        ("anthropic", {"temperature": 0.2}, "may only be set to 1 when thinking is enabled"),
        ("anthropic", {"top_p": 0.5}, "top_p must be between 0.95 and 1"),
        ("anthropic", {"reasoning": OFF, "temperature": 0.5}, "temperature: Extra inputs are not permitted"),
        ("anthropic", {"tool_choice": "required"}, "forces tool use"),
        ("anthropic", {"tool_choice": "tool:get_weather"}, "forces tool use"),
        ("anthropic", {"metadata": {"experiment": "e1"}}, "metadata takes only user_id"),
        ("anthropic", {"service_tier": "flex"}, "service_tier"),
        ("anthropic", {"tool_choice": "tool:get_wether"}, "did you mean 'get_weather'"),
        ("anthropic", {"temperature": 3}, "temperature: Input should be less than or equal to 2"),
        ("openai", {"tool_choice": "any"}, "tool_choice must be 'auto', 'required', 'none' or 'tool:<name>'"),
        ("openai", {"user_id": ""}, "user_id"),
    ],
)
def test_refused_knobs_fail_before_anything_is_sent_or_logged(
    provider: str, kw: dict[str, Any], match: str, tmp_path: Path
) -> None:
    adapter, rec = _adapter(provider)
    model = "openai:sim-reasoner" if provider == "openai" else "anthropic:sim-thinker"
    log = tmp_path / "events.jsonl"
    with pytest.raises(InvalidSettingsError, match=match):
        Run(model, TASK, tools=[get_weather], adapter=adapter, event_log=log, **kw)
    assert rec.bodies == []
    assert not log.exists() or log.read_text() == ""


def test_unknown_knob_and_double_knob() -> None:
    with pytest.raises(UserError, match="did you mean 'temperature'"):
        al.run("anthropic:sim-thinker", TASK, tempreature=0.2)
    with pytest.raises(InvalidSettingsError, match="unknown knob 'tempreature'"):
        Run("anthropic:sim-thinker", TASK, options={"tempreature": 0.2})
    with pytest.raises(InvalidSettingsError, match="given both as keywords and in options"):
        Run("anthropic:sim-thinker", TASK, reasoning=OFF, user_id="a", options={"user_id": "b"})
    # the same value both ways is fine
    Run("anthropic:sim-thinker", TASK, reasoning=OFF, user_id="a", options={"user_id": "a"})


# ---------------------------------------------------------------- every entry point


def test_run_and_session_take_the_knobs() -> None:
    r = al.run(
        "anthropic:sim-thinker", "What is 2+2?", reasoning=OFF, service_tier="auto", stop_sequences=["###"]
    )
    assert r.status == "completed"
    s = Session()
    assert s.run("openai:sim-reasoner", "What is 2+2?", stream=False, user_id="u1").status == "completed"
    with pytest.raises(InvalidSettingsError, match="reasoning model"):
        s.start("openai:sim-reasoner", "And 3+3?", temperature=0.5)


def test_compare_takes_the_knobs_and_refuses_before_any_run() -> None:
    # Forced tool use is fine on OpenAI but refused on Anthropic with thinking: no run starts.
    with pytest.raises(InvalidSettingsError, match="forces tool use"):
        al.compare(
            TASK,
            ["openai:sim-reasoner", "anthropic:sim-thinker"],
            tools=[get_weather],
            tool_choice="required",
        )
    ok = al.compare(
        TASK,
        ["openai:sim-reasoner", "anthropic:sim-thinker"],
        tools=[get_weather],
        parallel_tool_calls=False,
        user_id="u1",
        stream=False,
    )
    assert [e.status for e in ok.entries] == ["completed", "completed"]


def test_sweep_settings_carry_the_knobs(tmp_path: Path) -> None:
    plain = Setting("plain")
    assert plain.fingerprint() == Setting("plain", options=CallOptions()).fingerprint()
    cold = Setting(
        "cold", reasoning=ReasoningSettings(enabled=False), service_tier="auto", stop_sequences=("###",)
    )
    assert cold.call_options.service_tier == "auto" and cold.call_options.stop_sequences == ("###",)
    assert (
        cold.fingerprint()
        != Setting("warm", reasoning=ReasoningSettings(enabled=False), stop_sequences=("END",)).fingerprint()
    )
    with pytest.raises(InvalidSettingsError, match="temperature"):
        Setting("bad", temperature=-1)
    rep = sweep(
        [TASK],
        ["anthropic:sim-thinker", "openai:sim-reasoner"],
        results=tmp_path / "r.jsonl",
        tools=[get_weather],
        settings=[cold],
        progress=None,
    )
    assert rep.status == "completed"
    df = load_results(tmp_path / "r.jsonl")
    by_model = dict(zip(df["model"], df["status"], strict=True))
    assert by_model["anthropic:sim-thinker"] == "completed"
    assert (
        by_model["openai:sim-reasoner"] == "failed"
    )  # temperature on a reasoning model: refused, no call made
    errors = dict(zip(df["model"], df["error_type"], strict=True))
    assert errors["openai:sim-reasoner"] == "InvalidSettingsError"


# ---------------------------------------------------------------- @tool strict / open schemas


def test_tool_strict_and_open_schema() -> None:
    @tool(strict=True)
    def closed(city: str) -> str:
        return city

    assert closed.spec.strict is True

    with pytest.raises(ToolDefinitionError, match=r"tool 'loose': strict=True.*not required: \['units'\]"):

        @tool(strict=True)
        def loose(city: str, units: str = "C") -> str:
            return city

    @tool(strict=False)
    def never(city: str) -> str:
        return city

    assert never.spec.strict is False

    @tool(additional_properties=True)
    def open_(city: str) -> str:
        return city

    assert open_.parameters["additionalProperties"] is True
    assert open_.spec.strict is False
    assert open_.validate('{"city": "Paris", "extra": 1}').model_dump() == {"city": "Paris"}
    with pytest.raises(ToolDefinitionError, match="strict mode needs a closed schema"):
        tool(strict=True, additional_properties=True)
    with pytest.raises(ToolDefinitionError, match="strict"):
        tool(strict="yes")  # type: ignore[call-overload]


def test_default_tool_spec_is_unchanged_on_the_wire() -> None:
    """``@tool`` without options sends what it sent before (strict where the schema qualifies)."""
    from agentlab.adapters.openai_responses._request import _tool

    assert _tool(get_weather.spec)["strict"] is True

    @tool
    def optional(city: str, units: str = "C") -> str:
        return city

    assert _tool(optional.spec)["strict"] is False


def test_model_call_events_are_the_same_shape(tmp_path: Path) -> None:
    """Sanity: a non-streamed run still yields call-started and completed events per step."""
    result, _ = _run("openai", stream=False)
    starts = [e for e in result.events if isinstance(e, ModelCallStartedEvent)]
    assert len(starts) == result.steps
    assert not any(isinstance(e, ResponseCompletedEvent) for e in result.events)
