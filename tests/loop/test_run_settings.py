"""``RunSettings``: one value for a run's configuration, checked once, with the combination rules.

The same value, and the same messages, whether the knobs come as ``Run`` keywords, as ``settings=``,
or through ``RunSettings.checked(where=...)`` (what a sweep ``Setting`` builds); a bad combination
fails at construction, before anything is sent or written.
"""

from __future__ import annotations

import inspect
import json
import pickle
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest

import agentlab as al
from agentlab import sim
from agentlab.adapters.base import parse_model
from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
from agentlab.errors import ConfigError, InvalidSettingsError, UserError
from agentlab.loop.runner import Run
from agentlab.loop.session import Session
from agentlab.loop.settings import KEYWORD_DEFAULTS, RunSettings, check_combination, drop_split
from agentlab.neutral.request import CacheHints, CallOptions, ReasoningSettings

Setting = al.Setting  # public: the sweep modules are being reorganized
TASK = "Is it warmer in Paris or Rome?"
THINKER = "anthropic:sim-thinker"
REASONER = "openai:sim-reasoner"


class Recording(httpx2.AsyncBaseTransport):
    """Keeps each request body on its way to the simulator."""

    def __init__(self) -> None:
        self.inner = sim.SimTransport()
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(await request.aread()))
        return await self.inner.handle_async_request(request)


def _reasoner() -> tuple[OpenAIResponsesAdapter, Recording]:
    rec = Recording()
    return OpenAIResponsesAdapter("sim-reasoner", client=sim.openai_client(transport=rec, max_retries=0)), rec


# ---------------------------------------------------------------- the value


def test_the_value_holds_the_knobs_normalized_and_is_frozen() -> None:
    s = RunSettings(reasoning="high", cache={"enabled": False}, temperature=0.3, options={"stream": False})  # type: ignore[arg-type,call-arg]
    assert s.reasoning == ReasoningSettings(effort="high")
    assert s.cache == CacheHints(enabled=False)
    assert s.options == CallOptions(temperature=0.3, stream=False)
    assert s.set_fields() == ("reasoning", "cache", "options")
    with pytest.raises(Exception, match="frozen"):
        s.max_steps = 3
    assert s.replace(max_steps=3).max_steps == 3 and s.replace(max_steps=3).reasoning == s.reasoning


def test_the_repr_shows_the_knobs_and_only_the_shape_of_text_and_metadata() -> None:
    s = RunSettings(system="SECRET-PROMPT", metadata={"k": "SECRET-META"}, max_steps=7)  # type: ignore[call-arg]
    shown = repr(s) + str(s)
    assert "max_steps=7" in shown and "SECRET" not in shown


def test_the_run_signature_and_the_value_agree_on_every_keyword_and_default() -> None:
    params = inspect.signature(Run.__init__).parameters
    assert {k: params[k].default for k in KEYWORD_DEFAULTS} == KEYWORD_DEFAULTS
    assert params["settings"].default is None and params["settings"].kind is params["settings"].KEYWORD_ONLY


BAD: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"max_steps": 0}, ConfigError, "max_steps must be a positive int, got 0"),
    ({"retries": -1}, ConfigError, "retries must be an int >= 0, got -1"),
    ({"retry_delay": float("nan")}, ConfigError, "retry_delay must be a finite number >= 0"),
    ({"continuation_policy": "keep"}, ConfigError, "continuation_policy must be 'verbatim' or 'drop'"),
    ({"reasoning": {"effort": "extreme"}}, InvalidSettingsError, "reasoning: effort"),
    ({"tool_timeout": 0}, ConfigError, "tool_timeout must be a number of seconds > 0"),
    ({"cache": 3}, InvalidSettingsError, "cache must be CacheHints(...)"),
    ({"max_output_tokens": True}, InvalidSettingsError, "max_output_tokens must be a positive int"),
    ({"provider_options": {"top_logprobs": 2}}, InvalidSettingsError, "provider_options ['top_logprobs']"),
    ({"temperature": 9}, InvalidSettingsError, "temperature"),
    ({"system": 3}, ConfigError, "system must be a str, got int"),
    ({"options": {"temprature": 1}}, InvalidSettingsError, "unknown knob 'temprature'"),
]
IDS = [f"{next(iter(k))}-{i}" for i, (k, _, _) in enumerate(BAD)]


@pytest.mark.parametrize(("kw", "error", "text"), BAD, ids=IDS)
def test_a_bad_field_is_one_typed_line_naming_it_the_same_from_run_and_from_the_value(
    kw: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as direct:
        RunSettings.checked(provider="openai", **kw)
    with pytest.raises(error) as via_run:
        Run(REASONER, TASK, **kw)
    assert text in str(direct.value) and "\n" not in str(direct.value)
    assert type(via_run.value) is type(direct.value) and str(via_run.value) == str(direct.value)
    # Written in a sweep's setting, the same line says which one.
    with pytest.raises(error, match=r"^setting 'arm': ") as where:
        RunSettings.checked("setting 'arm':", provider="openai", **kw)
    assert str(where.value) == f"setting 'arm': {direct.value}"


def test_an_unknown_field_names_the_nearest_one() -> None:
    with pytest.raises(ConfigError, match=r"unknown field\(s\) \['max_step'\].*did you mean 'max_steps'"):
        RunSettings.checked(max_step=3)


# ---------------------------------------------------------------- the combination rules, once


def test_drop_with_thinking_on_is_one_message_from_run_session_and_the_rule() -> None:
    ref = parse_model(THINKER)
    with pytest.raises(InvalidSettingsError) as rule:
        check_combination(ref, "drop", True)
    msg = str(rule.value)
    assert msg.startswith("continuation_policy='drop' cannot run on anthropic:sim-thinker: with thinking on")
    assert "thinking off" in msg and "continuity_settings()" in msg and "\n" not in msg
    assert all(p in msg for p in drop_split()[0])
    for build in (
        lambda: Run(THINKER, TASK, continuation_policy="drop"),
        lambda: Run(THINKER, TASK, settings=RunSettings(continuation_policy="drop")),
        lambda: Session().start(THINKER, TASK, continuation_policy="drop"),
        lambda: RunSettings(continuation_policy="drop").check_model(ref),
    ):
        with pytest.raises(InvalidSettingsError) as e:
            build()
        assert str(e.value) == msg
    with pytest.raises(InvalidSettingsError) as arm:
        check_combination(ref, "drop", True, where="setting 'drop':")
    assert str(arm.value) == f"setting 'drop': {msg}"
    # The honest ablations pass the same rule.
    check_combination(ref, "drop", False)
    check_combination(parse_model(REASONER), "drop", True)
    Run(THINKER, TASK, continuation_policy="drop", reasoning={"enabled": False})


def test_a_refused_combination_fails_before_anything_is_sent_or_written(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    adapter, rec = _reasoner()
    with pytest.raises(InvalidSettingsError, match="tool_choice='required' needs at least one tool"):
        Run(REASONER, TASK, adapter=adapter, event_log=log, settings=RunSettings(tool_choice="required"))  # type: ignore[call-arg]
    with pytest.raises(InvalidSettingsError, match="temperature"):  # the provider's rule for the knob
        Run(REASONER, TASK, adapter=adapter, event_log=log, settings=RunSettings(temperature=0.5))  # type: ignore[call-arg]
    assert rec.bodies == [] and not log.exists()


# ---------------------------------------------------------------- settings= beside the keywords


def test_a_run_takes_one_value_and_the_wire_shows_it() -> None:
    adapter, rec = _reasoner()
    s = RunSettings(max_steps=4, max_output_tokens=900, reasoning="low", metadata={"exp": "e1"})  # type: ignore[arg-type,call-arg]
    r = Run(REASONER, TASK, adapter=adapter, settings=s)
    assert r.settings == s and r.max_steps == 4 and r.reasoning.effort == "low"
    assert r.run_sync().status in ("completed", "step_limit")
    assert rec.bodies[0]["max_output_tokens"] == 900 and rec.bodies[0]["metadata"] == {"exp": "e1"}
    assert rec.bodies[0]["reasoning"]["effort"] == "low"


def test_keywords_beside_settings_add_to_it_and_must_agree_with_it() -> None:
    s = RunSettings(max_steps=4)
    r = Run(REASONER, TASK, settings=s, retries=0, max_steps=4)
    assert (r.max_steps, r.retries) == (4, 0)
    assert Run(REASONER, TASK, settings=s, max_steps=20).max_steps == 4  # the default is "not given"
    with pytest.raises(InvalidSettingsError, match=r"\['max_steps'\] given both as keywords and in settings"):
        Run(REASONER, TASK, settings=s, max_steps=5)
    with pytest.raises(ConfigError, match="settings must be RunSettings"):
        Run(REASONER, TASK, settings={"max_steps": 4})  # type: ignore[arg-type]
    with pytest.raises(UserError, match="unknown keyword"):
        al.run(REASONER, TASK, setting=s)


def test_run_and_session_take_the_value_by_keyword() -> None:
    s = RunSettings(system="Answer briefly.", max_steps=6)
    result = al.run(REASONER, TASK, tools=[], settings=s)
    assert result.history[0] == al.SystemItem(text="Answer briefly.")
    session = Session()
    session.run(REASONER, TASK, settings=s)
    assert session.results[0].history[0] == al.SystemItem(text="Answer briefly.")


def test_a_session_carries_settings_for_each_of_its_runs() -> None:
    session = Session(settings=RunSettings(max_steps=6, reasoning="low"))  # type: ignore[arg-type]
    first = session.start(REASONER, TASK)
    assert (first.max_steps, first.reasoning.effort) == (6, "low")
    first.run_sync()
    second = session.start(REASONER, "And Madrid?", retries=0)  # keywords add to the session's settings
    assert (second.max_steps, second.retries) == (6, 0)
    with pytest.raises(InvalidSettingsError, match="given both as keywords and in settings"):
        session.start(REASONER, "And Oslo?", max_steps=3)
    assert session.start(REASONER, "Oslo?", settings=RunSettings(max_steps=3)).max_steps == 3
    copy = pickle.loads(pickle.dumps(session))
    assert copy.settings == session.settings
    with pytest.raises(ConfigError, match="settings must be RunSettings"):
        Session(settings={"max_steps": 6})  # type: ignore[arg-type]


# ---------------------------------------------------------------- what the sweep side will call


SETTING_CASES: list[dict[str, Any]] = [
    {"max_steps": 0},
    {"max_output_tokens": 0},
    {"continuation_policy": "keep"},
    {"reasoning": {"effort": "extreme"}},
    {"system": 3},
    {"options": 3},
    {"temperature": 9},
]


@pytest.mark.parametrize("kw", SETTING_CASES, ids=[next(iter(k)) for k in SETTING_CASES])
def test_from_setting_gives_a_sweep_setting_its_own_messages(kw: dict[str, Any]) -> None:
    with pytest.raises(UserError) as today:
        Setting("arm", **kw)
    with pytest.raises(UserError) as value:
        RunSettings.from_setting(SimpleNamespace(name="arm", **kw))
    # The same line; where today's forgot to say which setting (a knob's value), it now does.
    said = str(today.value)
    expected = said if said.startswith("setting 'arm': ") else f"setting 'arm': {said}"
    assert type(value.value) is type(today.value) and str(value.value) == expected


def test_from_setting_reads_a_sweep_setting_into_the_value_a_run_takes() -> None:
    s = Setting("arm", reasoning=ReasoningSettings(effort="low"), max_steps=4, temperature=0.2)
    v = RunSettings.from_setting(s)
    assert (v.reasoning.effort, v.max_steps, v.options) == ("low", 4, CallOptions(temperature=0.2))
    assert RunSettings.from_setting(Setting("default")) == RunSettings()
    arms = {a.name: a.providers for a in al.continuity_settings()}
    assert (arms["drop"], arms["thinking_off"]) == drop_split()
    # The sweep's arm check and its message: the one rule, naming the setting.
    drop = Setting("drop", continuation_policy="drop")
    with pytest.raises(InvalidSettingsError) as e:
        RunSettings.from_setting(drop).check_model(parse_model(THINKER), where=f"setting {drop.name!r}:")
    msg = str(e.value)
    assert msg.startswith("setting 'drop': continuation_policy='drop' cannot run on anthropic:sim-thinker")
    assert "thinking off" in msg and "continuity_settings()" in msg  # what the sweep's test pins


def test_compare_hands_one_value_to_every_column_and_refuses_a_bad_combination_up_front() -> None:
    s = RunSettings(max_steps=1, system="Answer briefly.")
    cmp = al.compare(TASK, [REASONER, THINKER], settings=s, live=False)
    firsts = [e.result.history[0] for e in cmp.entries if e.result]
    assert firsts == [al.SystemItem(text="Answer briefly.")] * 2
    with pytest.raises(InvalidSettingsError, match="continuation_policy='drop' cannot run on anthropic:sim"):
        al.compare(TASK, [REASONER, THINKER], settings=RunSettings(continuation_policy="drop"), live=False)
