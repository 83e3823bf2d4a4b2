"""Bad input gets agentlab's typed error at construction, in one line, before anything is sent or logged.

Every keyword of ``Run`` (and of ``al.run``, ``Session.start``, ``compare`` and sweep ``Setting``s,
which build a ``Run`` or the same settings) is tried with values of the wrong type or range. Text that
cannot be encoded as UTF-8 (lone surrogates, which ``surrogateescape`` decoding produces) is refused
where the user gave it, made safe where a tool or model produced it, and never makes the event log and
``result.events`` disagree.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

import agentlab as al
from agentlab.costs.pricing import UnpricedModelWarning
from agentlab.errors import (
    AgentlabError,
    ConfigError,
    InvalidSettingsError,
    ToolDefinitionError,
    UnknownModelError,
    UserError,
)
from agentlab.neutral.events import DiagnosticEvent, RunStartedEvent
from agentlab.neutral.items import AssistantTextItem, ToolResultItem, UserItem
from agentlab.testing import ScriptedAdapter, Step

M = "openai:sim-reasoner"
BAD = "caf\udcff"  # what surrogateescape makes of a latin-1 byte in a UTF-8 file or filename


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 20C"


def _one_line(e: BaseException) -> None:
    """What a notebook shows: one line from ``_render_traceback_``, naming the error type."""
    assert isinstance(e, UserError), type(e)
    lines = e._render_traceback_()
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert lines[0].startswith(type(e).__name__ + ": ")


# ---------------------------------------------------------------- bad settings, at construction

BAD_RUN_KW: list[tuple[str, dict[str, Any], type[AgentlabError], str]] = [
    ("reasoning-effort", {"reasoning": "extreme"}, InvalidSettingsError, "effort"),
    ("reasoning-budget", {"reasoning": {"budget_tokens": -5}}, InvalidSettingsError, "budget_tokens"),
    ("reasoning-key", {"reasoning": {"efort": "low"}}, InvalidSettingsError, "efort"),
    ("reasoning-type", {"reasoning": 5}, InvalidSettingsError, "reasoning"),
    ("reasoning-budget-bool", {"reasoning": {"budget_tokens": True}}, InvalidSettingsError, "budget_tokens"),
    ("reasoning-enabled-str", {"reasoning": {"enabled": "no"}}, InvalidSettingsError, "enabled"),
    ("temperature-bool", {"temperature": True}, InvalidSettingsError, "temperature"),
    ("stream-str", {"stream": "yes"}, InvalidSettingsError, "stream"),
    ("parallel-int", {"parallel_tool_calls": 0}, InvalidSettingsError, "parallel_tool_calls"),
    ("cache-enabled-str", {"cache": {"enabled": "no"}}, InvalidSettingsError, "enabled"),
    ("system-type", {"system": 123}, ConfigError, "system"),
    ("max-output-0", {"max_output_tokens": 0}, InvalidSettingsError, "max_output_tokens"),
    ("max-output-neg", {"max_output_tokens": -1}, InvalidSettingsError, "max_output_tokens"),
    ("max-output-bool", {"max_output_tokens": True}, InvalidSettingsError, "max_output_tokens"),
    ("max-output-str", {"max_output_tokens": "100"}, InvalidSettingsError, "max_output_tokens"),
    ("options-prefix", {"provider_options": {"foo": 1}}, InvalidSettingsError, "openai_"),
    ("options-type", {"provider_options": "fast"}, InvalidSettingsError, "provider_options"),
    ("cache-str", {"cache": "yes"}, InvalidSettingsError, "cache"),
    ("cache-ttl", {"cache": {"ttl": "2h"}}, InvalidSettingsError, "ttl"),
    ("on-event", {"on_event": 3}, ConfigError, "on_event"),
    ("event-log", {"event_log": 3}, ConfigError, "event_log"),
    ("max-steps-bool", {"max_steps": True}, ConfigError, "max_steps"),
    ("max-steps-0", {"max_steps": 0}, ConfigError, "max_steps"),
    ("max-steps-str", {"max_steps": "3"}, ConfigError, "max_steps"),
    ("retries-bool", {"retries": True}, ConfigError, "retries"),
    ("retries-neg", {"retries": -1}, ConfigError, "retries"),
    ("retry-delay-neg", {"retry_delay": -1}, ConfigError, "retry_delay"),
    ("retry-delay-nan", {"retry_delay": math.nan}, ConfigError, "retry_delay"),
    ("retry-delay-str", {"retry_delay": "1"}, ConfigError, "retry_delay"),
    ("run-id-type", {"run_id": 7}, ConfigError, "run_id"),
    ("run-id-empty", {"run_id": ""}, ConfigError, "run_id"),
    ("policy", {"continuation_policy": "keep"}, ConfigError, "continuation_policy"),
    ("session-type", {"session": "s1"}, ConfigError, "session"),
    ("tools-not-list", {"tools": get_weather}, UserError, "list"),
    ("tools-str", {"tools": "get_weather"}, UserError, "list"),
    ("tools-item", {"tools": [3]}, ToolDefinitionError, "int"),
    ("adapter-type", {"adapter": object()}, ConfigError, "adapter"),
    ("adapter-other-model", {"adapter": "mini"}, ConfigError, "sim-reasoner-mini"),
    ("adapter-other-provider", {"adapter": "anthropic"}, ConfigError, "anthropic"),
]


def _kw(kw: dict[str, Any]) -> dict[str, Any]:
    kw = dict(kw)
    if kw.get("adapter") == "mini":
        kw["adapter"] = ScriptedAdapter([Step(text="x")], model="sim-reasoner-mini")
    elif kw.get("adapter") == "anthropic":
        kw["adapter"] = ScriptedAdapter([Step(text="x")], provider="anthropic", model="sim-reasoner")
    return kw


_ENTRIES = ("Run", "run", "Session.start", "compare")
_SET_BY = {"compare": {"session", "adapter", "on_event", "run_id"}, "Session.start": {"session"}}
"""Keywords an entry point sets itself (refused as such, or a duplicate argument): not its case."""


@pytest.mark.parametrize(
    ("entry", "kw", "err", "word"),
    [
        pytest.param(entry, kw, err, word, id=f"{entry}-{name}")
        for entry in _ENTRIES
        for name, kw, err, word in BAD_RUN_KW
        if not _SET_BY.get(entry, set()) & set(kw)
    ],
)
def test_bad_setting_is_a_typed_one_line_error_before_anything_happens(
    entry: str, kw: dict[str, Any], err: type[AgentlabError], word: str, tmp_path: Path
) -> None:
    kw = _kw(kw)
    log = tmp_path / "events.jsonl"
    if "event_log" not in kw:
        kw["event_log"] = log
    if entry == "compare":
        if kw["event_log"] == log:
            kw.pop("event_log")
        call: Any = lambda: al.compare("hi", [M], live=False, **kw)  # noqa: E731
    elif entry == "Session.start":
        call = lambda: al.Session().start(M, "hi", **kw)  # noqa: E731
    elif entry == "run":
        call = lambda: al.run(M, "hi", **kw)  # noqa: E731
    else:
        call = lambda: al.Run(M, "hi", **kw)  # noqa: E731
    with pytest.raises(err) as info:
        call()
    assert word in str(info.value), str(info.value)
    _one_line(info.value)
    assert not log.exists() or log.read_text() == "", "nothing may be logged"


def test_scripted_adapter_is_not_called_for_bad_settings() -> None:
    ad = ScriptedAdapter([Step(text="x")])
    with pytest.raises(InvalidSettingsError):
        al.run(M, "hi", adapter=ad, reasoning="extreme")
    assert ad.requests == []


BAD_SETTING: list[tuple[dict[str, Any], type[AgentlabError], str]] = [
    ({"reasoning": "extreme"}, InvalidSettingsError, "effort"),
    ({"reasoning": {"budget_tokens": -5}}, InvalidSettingsError, "budget_tokens"),
    ({"reasoning": {"budget_tokens": True}}, InvalidSettingsError, "budget_tokens"),
    ({"temperature": True}, InvalidSettingsError, "temperature"),
    ({"stream": "yes"}, InvalidSettingsError, "stream"),
    ({"max_output_tokens": 0}, InvalidSettingsError, "max_output_tokens"),
    ({"max_steps": True}, ConfigError, "max_steps"),
    ({"system": 123}, ConfigError, "system"),
    ({"system": BAD}, UserError, "system"),
]


@pytest.mark.parametrize(("kw", "err", "word"), BAD_SETTING)
def test_sweep_settings_refuse_the_same_values(
    kw: dict[str, Any], err: type[AgentlabError], word: str
) -> None:
    from agentlab.sweeps import Setting

    with pytest.raises(err) as info:
        Setting("s", **kw)
    assert word in str(info.value)
    _one_line(info.value)


# ---------------------------------------------------------------- common mistakes, one line each


def test_simulated_model_typo_says_did_you_mean() -> None:
    with pytest.raises(UnknownModelError) as info:
        al.run("openai:sim-reasonr", "hi")
    assert "did you mean 'openai:sim-reasoner'" in str(info.value)
    _one_line(info.value)
    with pytest.raises(UnknownModelError, match="sim-thinker"):
        al.Run("anthropic:sim-thinkr", "hi")
    with pytest.raises(UnknownModelError, match="did you mean"):
        al.Run("openai:sim-reasonr+fault=429x1", "hi")
    al.Run("openai:sim-reasoner+fault=429x1", "hi")  # simulator options after "+" are not a typo


def test_task_first_argument_order_is_explained() -> None:
    with pytest.raises(UnknownModelError) as info:
        al.run("What is 2+2?", M)
    assert "model comes first" in str(info.value)
    _one_line(info.value)


@pytest.mark.parametrize("entry", ["run", "Session.start", "Session.run"])
def test_unknown_keyword_lists_the_known_ones(entry: str) -> None:
    """``Run(...)`` is left out: it keeps its exact signature, so type checkers flag the typo first."""
    s = al.Session()
    fn: Any = {"run": al.run, "Session.start": s.start, "Session.run": s.run}[entry]
    with pytest.raises(UserError) as info:
        fn(M, "hi", max_step=3)
    msg = str(info.value)
    assert "max_step" in msg and "did you mean 'max_steps'" in msg and "reasoning" in msg
    _one_line(info.value)


def test_compare_unknown_keyword_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as info:
        al.compare("hi", [M], samples=3)
    msg = str(info.value)
    assert "samples" in msg and "check" in msg and "max_steps" in msg and "repeats" in msg
    _one_line(info.value)


def test_compare_models_given_as_one_string() -> None:
    with pytest.raises(UserError) as info:
        al.compare("hi", M)
    assert "list" in str(info.value)
    _one_line(info.value)


@pytest.mark.parametrize(
    ("model", "options"),
    [
        ("openai:sim-reasoner", {"openai_temperature": 0.2}),
        ("openai:sim-reasoner", {"openai_top_p": 0.5}),
        ("anthropic:sim-thinker", {"anthropic_temperature": 0.2}),
    ],
)
def test_sampling_in_provider_options_is_refused_like_the_generic_knob(
    model: str, options: dict[str, Any], tmp_path: Path
) -> None:
    """Refused by the adapter's own temperature rule while building the body: nothing is sent."""
    with pytest.raises(InvalidSettingsError, match=r"temperature|top_p") as info:
        al.run(model, "hi", provider_options=options)
    _one_line(info.value)


# ---------------------------------------------------------------- @tool parameters


@pytest.mark.parametrize("value", ["x", 0, -1, 1.5, True, [10]])
def test_tool_max_output_chars_is_checked_at_decoration(value: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="max_output_chars") as info:

        @al.tool(max_output_chars=value)
        def f(x: int) -> str:
            return "a" * x

    _one_line(info.value)


async def test_tool_max_output_chars_none_means_no_limit() -> None:
    @al.tool(max_output_chars=None)
    def f(x: int) -> str:
        return "a" * x

    out = await f.run({"x": 50_000})
    assert len(out.output) == 50_000 and not out.truncated


@pytest.mark.parametrize(("kw", "word"), [({"name": 3}, "name"), ({"description": 3}, "description")])
def test_tool_name_and_description_types(kw: dict[str, Any], word: str) -> None:
    with pytest.raises(ToolDefinitionError, match=word):
        al.tool(**kw)(lambda x: x)


# ---------------------------------------------------------------- unencodable text


@pytest.mark.parametrize(
    ("kw", "where"),
    [
        ({"task": BAD}, "task"),
        ({"system": BAD}, "system"),
    ],
)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_unencodable_input_names_where(kw: dict[str, Any], where: str, provider: str, tmp_path: Path) -> None:
    model = "openai:sim-reasoner" if provider == "openai" else "anthropic:sim-thinker"
    kw = dict(kw)
    task = kw.pop("task", "hi")
    log = tmp_path / "e.jsonl"
    with pytest.raises(UserError) as info:
        al.run(model, task, event_log=log, **kw)
    assert where in str(info.value) and "U+DCFF" in str(info.value), str(info.value)
    _one_line(info.value)
    assert not log.exists() or log.read_text() == ""


def test_unencodable_history_item_names_its_position() -> None:
    s = al.Session(history=[UserItem(text="ok"), AssistantTextItem(text="fine"), UserItem(text=BAD)])
    with pytest.raises(UserError, match=r"history\[2\]\.text") as info:
        s.start(M, "next")
    _one_line(info.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_unencodable_tool_output_is_replaced_and_said(provider: str, tmp_path: Path) -> None:
    @al.tool(name="read_file")
    def read_file(path: str) -> str:
        """Read a file."""
        return "name: " + BAD

    model = "openai:sim-reasoner" if provider == "openai" else "anthropic:sim-thinker"
    steps = [Step(tool_calls=[("read_file", {"path": "a"})]), Step(text="done")]
    ad = ScriptedAdapter(steps, provider=provider, model=model.split(":")[1])
    log = tmp_path / "e.jsonl"
    r = al.run(model, "read a", tools=[read_file], adapter=ad, event_log=log)
    assert r.status == "completed"
    (res,) = [i for i in r.history if isinstance(i, ToolResultItem)]
    assert "\udcff" not in res.output and "\ufffd" in res.output and "unencodable" in res.output
    json.loads(r.model_dump_json())
    assert [type(e) for e in al.EventLog.read(log)] == [type(e) for e in r.events]


async def test_unencodable_tool_output_on_the_simulator_reaches_the_model_safely() -> None:
    @al.tool(name="get_weather")
    def weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name.
        """
        return "20C " + BAD

    r = await al.arun(M, "What is the weather in Paris?", tools=[weather])
    assert r.status == "completed", r.error
    json.loads(r.model_dump_json())


def test_model_text_with_lone_surrogates_still_serializes(tmp_path: Path) -> None:
    log = tmp_path / "e.jsonl"
    ad = ScriptedAdapter([Step(tool_calls=[("get_weather", {"city": "P\ud800"})]), Step(text="x\ud800y")])
    r = al.run(M, "hi", tools=[get_weather], adapter=ad, event_log=log)
    assert r.status == "completed" and r.output is not None and "\ud800" not in r.output
    json.loads(r.model_dump_json())
    assert len(al.EventLog.read(log)) == len(r.events)
    assert any(isinstance(e, DiagnosticEvent) and e.code == "unencodable_text" for e in r.events)


class _FailingLog(al.EventLog):
    """An event log whose disk fills up after ``ok`` records."""

    def __init__(self, path: Path, ok: int) -> None:
        super().__init__(path)
        self.ok = ok

    def append(self, event: Any) -> None:
        if len(self) >= self.ok:
            raise OSError(28, "No space left on device")
        super().append(event)


@pytest.mark.parametrize("ok", [0, 1, 3])
def test_event_log_write_failure_fails_the_run_typed_and_events_match_the_log(
    ok: int, tmp_path: Path
) -> None:
    log = _FailingLog(tmp_path / "e.jsonl", ok)
    ad = ScriptedAdapter([Step(tool_calls=[("get_weather", {"city": "Paris"})]), Step(text="x")])
    run = al.Run(M, "hi", tools=[get_weather], adapter=ad, event_log=log)
    with pytest.raises(AgentlabError) as info:
        run.run_sync()
    assert "event log" in str(info.value)
    assert run.result is not None and run.result.status == "failed"
    assert list(run.result.events) == log.records
    on_disk = al.EventLog.read(log.path) if log.path and log.path.exists() else []
    assert [type(e) for e in on_disk] == [type(e) for e in run.result.events]
    if ok:
        assert isinstance(run.result.events[0], RunStartedEvent)


# ---------------------------------------------------------------- NaN on the wire


def _strict(s: str) -> Any:
    def refuse(c: str) -> Any:
        raise ValueError(f"non-standard JSON constant {c}")

    return json.loads(s, parse_constant=refuse)


def test_unpriced_result_json_is_strict_and_unknown_is_null() -> None:
    ad = ScriptedAdapter([Step(text="x")], model="gpt-unpriced-9")
    with pytest.warns(UnpricedModelWarning):
        r = al.run("openai:gpt-unpriced-9", "hi", adapter=ad)
    assert math.isnan(r.usage.cost.total) and not r.usage.cost.known  # in memory: NaN, as documented
    data = _strict(r.model_dump_json())
    assert data["usage"]["cost"]["total"] is None and data["calls"][0]["cost"]["input"] is None
    back = al.RunResult.model_validate_json(r.model_dump_json())
    assert math.isnan(back.usage.cost.total)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _strict(back.usage.cost.model_dump_json())


# ---------------------------------------------------------------- what IPython prints


def test_ipython_prints_one_line_for_the_common_mistakes() -> None:
    """Through a real ``InteractiveShell``, in a subprocess.

    Importing IPython here would switch the notebook integration on for the rest of the test session.
    """
    import os
    import subprocess
    import sys

    cells = [
        "al.run('openai:sim-reasonr', 'hi')",
        "al.run('openai:sim-reasoner', 'hi', tools=get_weather)",
        "al.compare('hi', ['openai:sim-reasoner'], samples=3)",
        "al.run('openai:sim-reasoner', 'hi', reasoning='extreme')",
        "al.run('What is 2+2?', 'openai:sim-reasoner')",
    ]
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "sh = InteractiveShell.instance(colors='NoColor')\n"
        "sh.run_cell('import agentlab as al\\n@al.tool\\n'\n"
        "            'def get_weather(city: str) -> str:\\n    return city')\n"
        f"for cell in {cells!r}:\n"
        "    print('=== cell')\n"
        "    sh.run_cell(cell)\n"
    )
    env = {**os.environ, "AGENTLAB_NO_WIDGETS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, timeout=120
    ).stdout
    blocks = [b.strip() for b in out.split("=== cell")[1:]]
    assert len(blocks) == len(cells), out
    for cell, block in zip(cells, blocks, strict=True):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        assert len(lines) == 1, (cell, block)
        assert "Error: " in lines[0], (cell, block)


# ---------------------------------------------------------------- sweeps and compare: same family

SWEEP_BAD: list[tuple[str, dict[str, Any], type[AgentlabError], str]] = [
    ("unknown-kw", {"repeat": 2}, UserError, "did you mean 'repeats'"),
    (
        "model-typo",
        {"models": ["openai:sim-reasonr"]},
        UnknownModelError,
        "did you mean 'openai:sim-reasoner'",
    ),
    ("budget-nan", {"budget_usd": math.nan}, ConfigError, "budget_usd"),
    ("on-progress", {"on_progress": 3}, ConfigError, "on_progress"),
    ("tools-not-list", {"tools": get_weather}, UserError, "list"),
    ("setting-reasoning", {"settings": {"a": {"reasoning": "extreme"}}}, InvalidSettingsError, "effort"),
    ("setting-providers", {"settings": {"a": {"providers": "openai"}}}, ConfigError, "providers"),
]


@pytest.mark.parametrize(("kw", "err", "word"), [c[1:] for c in SWEEP_BAD], ids=[c[0] for c in SWEEP_BAD])
def test_sweep_refuses_bad_configuration_before_any_run(
    kw: dict[str, Any], err: type[AgentlabError], word: str, tmp_path: Path
) -> None:
    from agentlab.sweeps import sweep

    kw = dict(kw)
    models = kw.pop("models", [M])
    results = tmp_path / "r.jsonl"
    with pytest.raises(err) as info:
        sweep(["What is 2+2?"], models, results=results, progress=None, **kw)
    assert word in str(info.value), str(info.value)
    _one_line(info.value)
    assert not results.exists() or results.read_text() == ""


def test_compare_check_must_be_callable() -> None:
    with pytest.raises(UserError, match="check") as info:
        al.compare("hi", [M], check=3, live=False)  # type: ignore[arg-type]
    _one_line(info.value)
