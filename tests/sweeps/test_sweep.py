"""The sweep over tasks x models x policies on the simulated providers.

Checks rows, keys, the continuity effect, refused combinations, and resume bookkeeping.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlab.errors import ConfigError, InvalidSettingsError
from agentlab.neutral.request import ReasoningSettings
from agentlab.sweeps import (
    Setting,
    SweepProgress,
    TextProgress,
    continuity_settings,
    load_results,
    sim_tasks,
    sim_tools,
    summarize,
    sweep,
)
from agentlab.sweeps.store import ROW_FIELDS

MODELS = ["openai:sim-reasoner", "anthropic:sim-thinker"]


def test_grid_of_tasks_models_and_policies(tmp_path: Path) -> None:
    tasks = sim_tasks(["continuity"])[:3] + sim_tasks(["compare"])[:2]
    out = tmp_path / "r.jsonl"
    rep = sweep(
        tasks,
        MODELS,
        results=out,
        tools=sim_tools(),
        settings=continuity_settings(),
        repeats=2,
        progress=None,
    )
    # openai: verbatim + drop; anthropic: verbatim + thinking_off -> 5 tasks x 4 arms x 2 repeats
    assert rep.status == "completed" and rep.planned == 40 and rep.ran == 40 and rep.failed == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 40
    assert all(list(json.loads(line)) == list(ROW_FIELDS) for line in lines)
    df = load_results(out)
    assert set(zip(df["model"], df["setting"], strict=True)) == {
        ("openai:sim-reasoner", "verbatim"),
        ("openai:sim-reasoner", "drop"),
        ("anthropic:sim-thinker", "verbatim"),
        ("anthropic:sim-thinker", "thinking_off"),
    }
    assert df["success"].all() and (df["status"] == "completed").all()
    assert not df.duplicated(["task_id", "model", "setting", "repeat"]).any()
    assert df["run_id"].is_unique

    # The continuity effect as the simulator documents it: dropping reasoning items makes the
    # OpenAI model repeat its tool batch (one more step, twice the tool calls, more reasoning).
    oa = df[df["model"] == "openai:sim-reasoner"].set_index(["task_id", "repeat", "setting"])
    for task_id, rep_i in {(t, r) for t, r, _ in oa.index}:
        v, d = oa.loc[(task_id, rep_i, "verbatim")], oa.loc[(task_id, rep_i, "drop")]
        assert d["steps"] == v["steps"] + 1
        assert d["tool_calls"] == 2 * v["tool_calls"]
        assert d["reasoning_tokens"] > v["reasoning_tokens"]
        assert d["total_cost_usd"] > v["total_cost_usd"]
        assert d["reasoning_items_dropped"] > 0 and v["reasoning_items_dropped"] == 0
    an = df[df["model"] == "anthropic:sim-thinker"]
    assert (an.loc[an["setting"] == "thinking_off", "reasoning_tokens"] == 0).all()
    assert (an.loc[an["setting"] == "verbatim", "reasoning_tokens"] > 0).all()

    s = summarize(df)
    assert list(s.index) == [
        ("openai:sim-reasoner", "verbatim"),
        ("openai:sim-reasoner", "drop"),
        ("anthropic:sim-thinker", "verbatim"),
        ("anthropic:sim-thinker", "thinking_off"),
    ]
    assert (s["success_rate"] == 1.0).all() and (s["runs"] == 10).all()
    assert (
        s.loc[("openai:sim-reasoner", "drop"), "mean_steps"]
        > s.loc[("openai:sim-reasoner", "verbatim"), "mean_steps"]
    )
    assert s.loc[("anthropic:sim-thinker", "thinking_off"), "reasoning_share"] == 0.0

    # Same call again: everything is in the file, nothing runs, nothing is appended.
    again = sweep(
        tasks,
        MODELS,
        results=out,
        tools=sim_tools(),
        settings=continuity_settings(),
        repeats=2,
        progress=None,
    )
    assert again.ran == 0 and again.from_file == 40 and len(out.read_text().splitlines()) == 40


def test_a_tight_step_budget_turns_lost_plans_into_failures(tmp_path: Path) -> None:
    tasks = sim_tasks(["continuity"])[:2]
    rep = sweep(
        tasks,
        ["openai:sim-reasoner"],
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        settings=[Setting("verbatim", max_steps=2), Setting("drop", continuation_policy="drop", max_steps=2)],
        progress=None,
    )
    s = rep.summary()
    assert s.loc[("openai:sim-reasoner", "verbatim"), "success_rate"] == 1.0
    assert s.loc[("openai:sim-reasoner", "drop"), "success_rate"] == 0.0
    df = rep.frame()
    assert set(df.loc[df["setting"] == "drop", "status"]) == {"step_limit"}


def test_anthropic_drop_with_thinking_is_refused_and_thinking_off_offered(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(InvalidSettingsError) as ei:
        sweep(
            sim_tasks()[:1],
            MODELS,
            results=out,
            tools=sim_tools(),
            settings=[Setting("verbatim"), Setting("drop", continuation_policy="drop")],
            progress=None,
        )
    msg = str(ei.value)
    assert "anthropic:sim-thinker" in msg and "thinking off" in msg and "continuity_settings()" in msg
    assert not out.exists()  # refused before anything ran or was written
    # Thinking off + drop on Anthropic is allowed (there are no thinking blocks to drop).
    rep = sweep(
        sim_tasks()[:1],
        ["anthropic:sim-thinker"],
        results=out,
        tools=sim_tools(),
        settings=[
            Setting(
                "drop_no_thinking", continuation_policy="drop", reasoning=ReasoningSettings(enabled=False)
            )
        ],
        progress=None,
    )
    assert rep.status == "completed" and rep.failed == 0


def test_changed_setting_under_the_same_name_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    sweep(
        sim_tasks()[:1],
        ["openai:sim-reasoner"],
        results=out,
        tools=sim_tools(),
        settings=[Setting("arm", max_steps=5)],
        progress=None,
    )
    with pytest.raises(ConfigError, match="different definition"):
        sweep(
            sim_tasks()[:1],
            ["openai:sim-reasoner"],
            results=out,
            tools=sim_tools(),
            settings=[Setting("arm", max_steps=6)],
            progress=None,
        )


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"models": "openai:sim-reasoner"}, "list of 'provider:model'"),
        ({"models": ["openai:sim-reasoner", "openai:sim-reasoner"]}, "duplicate models"),
        ({"repeats": 0}, "repeats"),
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": {"openai": -1}}, "concurrency for openai"),
        ({"settings": ["a", "a"]}, "duplicate setting names"),
        ({"settings": {"a": {"continuation_policy": "keep"}}}, "continuation_policy"),
        ({"settings": {"a": {"nope": 1}}}, "setting 'a'"),
        ({"budget_usd": -1}, "budget_usd"),
        ({"budget_usd": True}, "budget_usd"),
        ({"budget_tokens": True}, "budget_tokens"),
        ({"repeats": True}, "repeats"),
        ({"max_consecutive_failures": True}, "max_consecutive_failures"),
        ({"results": "r.parquet"}, "JSONL"),
        ({"retries": -1}, "retries"),
        (
            {
                "settings": [Setting("drop", continuation_policy="drop", providers=("openai",))],
                "models": ["anthropic:sim-thinker"],
            },
            "no \\(model, setting\\) combination",
        ),
    ],
)
def test_bad_configuration_is_refused_before_anything_runs(
    tmp_path: Path, kw: dict[str, object], fragment: str
) -> None:
    args: dict[str, object] = {
        "models": ["openai:sim-reasoner"],
        "results": tmp_path / "r.jsonl",
        "progress": None,
    }
    args.update(kw)
    if isinstance(args["results"], str):
        args["results"] = tmp_path / str(args["results"])
    with pytest.raises(ConfigError, match=fragment):
        sweep(sim_tasks()[:1], tools=sim_tools(), **args)  # type: ignore[arg-type]
    assert not (tmp_path / "r.jsonl").exists()


def test_unscored_tasks_and_text_progress(tmp_path: Path) -> None:
    import io

    buf = io.StringIO()
    seen: list[SweepProgress] = []
    rep = sweep(
        ["Is it warmer in Paris or Rome?"],
        ["openai:sim-reasoner"],
        results=tmp_path / "r.jsonl",
        tools=sim_tools(),
        repeats=3,
        progress=TextProgress(buf, interval_s=0),
        on_progress=seen.append,
    )
    assert rep.ran == 3
    df = rep.frame()
    assert df["success"].isna().all()  # no checker: unscored, not failed
    s = rep.summary()
    assert s["scored"].iloc[0] == 0 and s["success_rate"].isna().all()
    assert [p.done for p in seen] == [1, 2, 3] and seen[-1].remaining == 0
    text = buf.getvalue()
    assert "\r" in text and "sweep 3/3 done" in text and text.endswith("\n")


def test_a_bad_tool_is_refused_once_up_front(tmp_path: Path) -> None:
    from agentlab.errors import ToolDefinitionError

    def untyped(city):  # type: ignore[no-untyped-def]
        return city

    with pytest.raises(ToolDefinitionError):
        sweep(
            sim_tasks()[:1],
            ["openai:sim-reasoner"],
            results=tmp_path / "r.jsonl",
            tools=[untyped],
            progress=None,
        )
    assert not (tmp_path / "r.jsonl").exists()


def test_rows_and_summary_say_what_priced_the_runs(tmp_path: Path) -> None:
    """Like the usage frame, a row names the price source and its date; the summary lists the sources."""
    out = tmp_path / "r.jsonl"
    sweep(sim_tasks()[:2], MODELS, results=out, tools=sim_tools(), progress=None)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["price_source"], r["price_updated"]) for r in rows} == {("agentlab simulated", "2026-11-30")}
    df = load_results(out)
    assert str(df["price_source"].dtype) == "string" and (df["price_source"] == "agentlab simulated").all()
    summary = summarize(df)
    assert (summary["price_source"] == "agentlab simulated").all()


def test_rows_written_before_price_columns_load_with_them_unknown(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    sweep(sim_tasks()[:1], MODELS[:1], results=out, tools=sim_tools(), progress=None)
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    old = {k: v for k, v in row.items() if k not in ("price_source", "price_updated")}
    out.write_text(json.dumps(old) + "\n")
    df = load_results(out)
    assert df["price_source"].isna().all() and df["price_updated"].isna().all()
    assert summarize(df)["price_source"].isna().all()
