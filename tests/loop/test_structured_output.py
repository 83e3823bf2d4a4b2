"""``output_type=`` end to end: runs on both simulated providers, compare, sweeps, and the mismatch.

The mismatch tests are written as an attacker: the model's answer carries a canary in every value
and in an invented key, and the canary must not reach the error's text, its repr, the recorded
error (``RunResult.error``, the event log's ``ErrorEvent``), the result's repr, or a traceback that
prints frame locals.
"""

from __future__ import annotations

import json
import pickle
import traceback
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

import agentlab as al
from agentlab.errors import InvalidSettingsError, OutputValidationError
from agentlab.sweeps import sim_tasks, sim_tools
from agentlab.testing import ScriptedAdapter, Step

CANARY = "CANARY-7f3a9"


class Weather(BaseModel):
    city: Literal["Paris", "Rome"]
    reason: str
    temp_c: float


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    city: str
    temp_c: int


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return {"paris": "18 C, rain", "rome": "24 C, sun"}.get(city.lower(), "no data")


SCHEMA = {
    "name": "weather",
    "schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}, "temp_c": {"type": "number"}},
        "required": ["city", "temp_c"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("model", ["openai:sim-reasoner", "anthropic:sim-thinker"])
def test_run_validates_into_a_pydantic_instance(model: str) -> None:
    r = al.run(model, "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=Weather)
    assert r.status == "completed"
    assert isinstance(r.output_value, Weather)
    assert r.output_value.city == "Rome"  # the simulated answer names the warmer city first
    assert json.loads(r.output or "") == r.output_value.model_dump()
    # a result stays plain data: JSON round trip (as a dict) and pickle (as the instance)
    assert al.RunResult.model_validate_json(r.model_dump_json()).output_value == r.output_value.model_dump()
    assert pickle.loads(pickle.dumps(r)).output_value == r.output_value


@pytest.mark.parametrize("model", ["openai:sim-reasoner", "anthropic:sim-thinker"])
def test_run_with_a_schema_dict_gives_the_parsed_json(model: str) -> None:
    r = al.run(model, "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=SCHEMA)
    assert r.output_value == {"city": "Rome", "temp_c": 18.0}


def test_result_shows_the_value_as_type_and_field_names() -> None:
    r = al.run(
        "openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=Weather
    )
    assert "output_value=<Weather: city, reason, temp_c>" in repr(r)
    html = r._repr_html_()
    assert "&lt;Weather: city, reason, temp_c&gt;" in html


def test_constraints_the_provider_drops_are_still_validated() -> None:
    """A ``minimum`` Anthropic's structured outputs cannot take is still checked by the run.

    The SDK's transformation moves it into the description, the simulated model ignores it, and the
    validation against the pydantic type catches the answer.
    """

    class Hot(BaseModel):
        temp_c: float = Field(ge=100)

    with pytest.raises(OutputValidationError) as info:
        al.run("anthropic:sim-thinker", "What is 12 * (3 + 4)?", output_type=Hot)
    assert info.value.fields == ("temp_c",)
    assert "field temp_c: greater_than_equal" in str(info.value)


def _scripted(text: str) -> ScriptedAdapter:
    return ScriptedAdapter([Step(text=text)], provider="openai", model="sim-reasoner")


BAD_ANSWERS = [
    f'{{"city": "{CANARY}", "temp_c": "{CANARY}", "{CANARY}": 1}}',  # wrong type, invented key
    f"Sure! {CANARY}",  # not JSON
    f'{{"city": "{CANARY}"',  # cut JSON
    f'["{CANARY}"]',  # wrong shape
]


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_mismatch_is_a_typed_error_naming_fields_never_values(answer: str, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    run = al.Run(
        "openai:sim-reasoner", "weather?", output_type=Strict, adapter=_scripted(answer), event_log=log
    )
    with pytest.raises(OutputValidationError) as info:
        run.run_sync()
    err = info.value
    assert isinstance(err, al.ModelBehaviorError)
    assert err.__cause__ is None and err.__context__ is None  # pydantic's error (quotes input) not chained
    tb = err.__traceback__
    assert tb is not None  # skip this test's own frame: its locals hold the scripted answer
    text = "".join(traceback.TracebackException(type(err), err, tb.tb_next, capture_locals=True).format())
    # the answer itself is model output and is logged as such (the call's items); the error is not
    records = [json.loads(line) for line in log.read_text().splitlines()]
    error_records = [r for r in records if r["kind"] in ("error", "run_completed")]
    assert [r["kind"] for r in error_records] == ["error", "run_completed"]
    result = run.result
    assert result is not None and result.status == "failed"
    sinks = {
        "str": str(err),
        "repr": repr(err),
        "traceback with locals": text,
        "result.error": result.error or "",
        "result repr": repr(result.model_copy(update={"history": ()})),
        "event log error records": json.dumps(error_records),
        "pickled error": repr(pickle.loads(pickle.dumps(err)).__dict__),
    }
    leaked = [k for k, v in sinks.items() if CANARY in v]
    assert not leaked, leaked
    assert result.error_type == "OutputValidationError"
    assert "'Strict'" in str(err)


def test_mismatch_message_lists_the_failing_fields() -> None:
    answer = f'{{"city": 3, "{CANARY}": 1}}'
    with pytest.raises(OutputValidationError) as info:
        al.run("openai:sim-reasoner", "weather?", output_type=Strict, adapter=_scripted(answer))
    msg = str(info.value)
    assert "field city: string_type" in msg
    assert "field temp_c: missing" in msg
    assert "field <unexpected field>: extra_forbidden" in msg
    assert set(info.value.fields) == {"city", "temp_c", "<unexpected field>"}


def test_schema_dict_mismatch_names_fields_too() -> None:
    answer = f'{{"city": "{CANARY}", "extra": 1}}'
    with pytest.raises(OutputValidationError) as info:
        al.run("openai:sim-reasoner", "weather?", output_type=SCHEMA, adapter=_scripted(answer))
    msg = str(info.value)
    assert CANARY not in msg
    assert "field city: enum" in msg and "field temp_c: missing" in msg
    assert "<unexpected field>: extra_forbidden" in msg


def test_a_refusal_is_not_validated() -> None:
    adapter = ScriptedAdapter([Step(text="I can't help with that.", stop_reason="refusal")])
    r = al.run("openai:sim-reasoner", "weather?", output_type=Strict, adapter=adapter)
    assert r.status == "completed" and r.stop_reason == "refusal" and r.output_value is None


def test_compare_gives_each_column_its_value() -> None:
    cmp = al.compare(
        "Is it warmer in Paris or Rome?",
        models=["openai:sim-reasoner", "anthropic:sim-thinker"],
        tools=[get_weather],
        output_type=Weather,
        live=False,
    )
    values = cmp.values
    assert set(values) == {"openai:sim-reasoner", "anthropic:sim-thinker"}
    assert all(isinstance(v, Weather) and v.city == "Rome" for v in values.values())
    assert all(isinstance(e.output_value, Weather) for e in cmp.entries)


def test_sweep_rows_hold_the_value_or_its_validation_status(tmp_path: Path) -> None:
    tasks = [t for t in sim_tasks() if t.id == "cmp-paris-rome"] or sim_tasks()[:1]
    path = tmp_path / "results.jsonl"
    report = al.sweep(
        tasks,
        ["openai:sim-reasoner", "anthropic:sim-thinker"],
        results=path,
        tools=sim_tools(),
        output_type=Weather,
        progress=None,
    )
    assert report.failed == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(r["output_valid"] is True for r in rows)
    assert all(Weather.model_validate_json(r["output_value"]) for r in rows)
    frame = al.load_results(path)
    assert frame["output_valid"].all()

    class Hot(BaseModel):
        temp_c: float = Field(ge=1000)

    bad = tmp_path / "bad.jsonl"
    al.sweep(tasks, ["anthropic:sim-thinker"], results=bad, tools=sim_tools(), output_type=Hot, progress=None)
    (row,) = [json.loads(line) for line in bad.read_text().splitlines()]
    assert row["status"] == "failed" and row["output_valid"] is False and row["output_value"] is None
    assert row["error_type"] == "OutputValidationError"


def test_sweep_refuses_a_bad_output_type_before_running(tmp_path: Path) -> None:
    with pytest.raises(al.ConfigError):
        al.sweep(
            ["hi"], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl", output_type=int, progress=None
        )
    assert not (tmp_path / "r.jsonl").exists()


def test_session_run_takes_output_type() -> None:
    s = al.Session()
    r = s.run(
        "openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=Weather
    )
    assert isinstance(r.output_value, Weather)


def _simulated_models() -> list[str]:
    """Every simulated model of every registered provider, as ``provider:model``."""
    from agentlab.adapters.registry import get_provider, provider_names

    return [f"{p}:{m}" for p in provider_names() for m in get_provider(p).simulated_model_names() or ()]


#: Where the real API has no schema-constrained output: refused when the run is built, with the fix.
NO_STRUCTURED = {
    "deepseek:sim-deepseek": "This response_format type is unavailable now",
    "anthropic:sim-thinker-legacy": "structured outputs",
    "anthropic_bedrock:sim-thinker-legacy": "structured outputs",
    "anthropic_vertex:sim-thinker-legacy": "structured outputs",
    # Gemini 2.5 takes a schema, but not beside function declarations (the test's run has a tool)
    "google:sim-gemini-legacy": "Function calling with a response mime type",
    "bedrock:sim-bedrock-claude": "structured output",  # not mapped onto Converse here
    "bedrock:sim-bedrock-openai": "structured output",
    "bedrock:sim-bedrock-kimi": "structured output",
}


@pytest.mark.parametrize("model", _simulated_models())
def test_output_type_on_every_registered_simulated_model(model: str) -> None:
    """A valid instance, or a typed one-line refusal before anything runs (issue 29, item 10)."""
    if model in NO_STRUCTURED:
        with pytest.raises(InvalidSettingsError, match=NO_STRUCTURED[model]) as info:
            al.Run(model, "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=Weather)
        assert "\n" not in str(info.value)
        return
    r = al.run(model, "Is it warmer in Paris or Rome?", tools=[get_weather], output_type=Weather)
    assert r.status == "completed", r.error
    assert isinstance(r.output_value, Weather)
    assert json.loads(r.output or "") == r.output_value.model_dump()
