"""Tasks: checkers score phrasing variants, bad input is refused clearly, the shipped set is right."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.errors import ConfigError
from agentlab.sweeps import CITIES, Task, load_tasks, sim_tasks, sim_tools


def test_choice_checker_uses_the_first_named_candidate() -> None:
    t = Task("Is it warmer in Paris or Rome?", expected="Rome", choices=("Paris", "Rome"))
    assert t.match == "choice"
    assert t.score("Rome is warmer (24 vs Paris 18).")
    assert t.score("It is warmer in Rome than in Paris.")
    assert not t.score("Paris is warmer than Rome.")
    assert not t.score("I cannot tell.")
    assert t.score(None) is False  # no answer is a failure, not unscored


def test_number_checker_tolerates_separators_but_not_other_numbers() -> None:
    t = Task("total?", expected=5730000)
    assert t.match == "number"
    assert t.score("The total is 5,730,000 (2148000 + 2873000 + 709000).")
    assert t.score("Summing gives 5730000.")
    assert not t.score("The total is 5,730,001.")
    avg = Task("avg?", expected=20.125)
    assert avg.score("The average is 20.125")
    assert not avg.score("The average is 20.2")


def test_contains_exact_and_function_checkers() -> None:
    assert Task("w?", expected="9 C").score("Oslo: 9 c.")
    assert not Task("w?", expected="9 C").score("Oslo: 19 C")  # not inside a longer number
    assert Task("q", expected="yes", match="exact").score(" Yes. ")
    assert not Task("q", expected="yes", match="exact").score("yes indeed")
    assert Task("q", check=lambda out: out.endswith("!")).score("done!")
    assert Task("q").score("anything") is None  # unscored


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"prompt": ""}, "non-empty prompt"),
        ({"prompt": "x", "expected": "a", "check": len}, "not both"),
        ({"prompt": "x", "match": "choice", "expected": "a", "choices": ("b",)}, "include expected"),
        ({"prompt": "x", "match": "number", "expected": "a"}, "numeric expected"),
        ({"prompt": "x", "match": "fuzzy", "expected": "a"}, "match must be one of"),
        ({"prompt": "x", "id": "has space"}, "task id"),
        ({"prompt": "x", "expected": True}, "string or a number"),
    ],
)
def test_bad_tasks_raise_config_error(kw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        Task(**kw)  # type: ignore[arg-type]


def test_jsonl_loading_reports_the_line(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text(
        '# comment\n{"id": "a", "prompt": "What is 2 * 3?", "expected": 6}\n\n{"prompt": "x", "oops": 1}\n'
    )
    with pytest.raises(ConfigError, match=r"t\.jsonl:4: unknown task field"):
        load_tasks(p)
    p.write_text('{"id": "a", "prompt": "p"}\n{not json\n')
    with pytest.raises(ConfigError, match=r"t\.jsonl:2: not valid JSON"):
        load_tasks(p)
    p.write_text('{"id": "a", "prompt": "p"}\n{"id": "a", "prompt": "q"}\n')
    with pytest.raises(ConfigError, match="duplicate task id 'a'"):
        load_tasks(p)
    with pytest.raises(ConfigError, match="does not exist"):
        load_tasks(tmp_path / "missing.jsonl")


def test_tasks_from_strings_get_stable_ids_and_round_trip(tmp_path: Path) -> None:
    a, b = load_tasks(["What is 2 * 3?"]), load_tasks(["What is 2 * 3?"])
    assert a[0].id == b[0].id and a[0].id.startswith("task-")
    tasks = sim_tasks()
    p = tmp_path / "copy.jsonl"
    p.write_text("\n".join(json.dumps(t.to_json()) for t in tasks) + "\n")
    assert load_tasks(p) == tasks


def _value(kind: str, city: str) -> int:
    col = {"get_weather": 0, "get_population": 1, "get_elevation": 2}[kind]
    return CITIES[city][col]


def test_shipped_expected_answers_follow_the_city_table() -> None:
    """Recompute each shipped answer from the table, independently of the generator."""
    tasks = sim_tasks()
    assert len(tasks) >= 20
    assert len(sim_tasks(["continuity"])) >= 5
    for t in tasks:
        if "compare" in t.tags:
            low = t.prompt.lower()
            kind = (
                "get_elevation"
                if "elevation" in low
                else "get_population"
                if "population" in low
                else "get_weather"
            )
            vals = {c: _value(kind, c) for c in t.choices}
            pick = min if any(w in low for w in ("colder", "smaller", "lower")) else max
            assert t.expected == pick(vals, key=vals.__getitem__), t.id
        elif "aggregate" in t.tags:
            low = t.prompt.lower()
            kind = (
                "get_elevation"
                if "elevation" in low
                else "get_population"
                if "population" in low
                else "get_weather"
            )
            names = [c for c in CITIES if c in t.prompt]
            names.sort(key=t.prompt.index)
            nums = [_value(kind, c) for c in names]
            want = (
                sum(nums) / len(nums)
                if "average" in low
                else nums[0] - sum(nums[1:])
                if "difference" in low
                else sum(nums)
            )
            assert isinstance(t.expected, int | float) and math.isclose(t.expected, want, rel_tol=1e-4), t.id
        assert t.scored


def test_shipped_tools_answer_from_the_table() -> None:
    tools = {t.name: t for t in sim_tools()}
    assert tools["get_weather"].fn("Oslo") == "9 C"
    assert tools["get_population"].fn("paris") == "2148000 people"
    assert tools["get_elevation"].fn("La Paz, Bolivia") == "3640 m"
    assert tools["calculator"].fn("12 * (3 + 4)") == "84"
    assert "no weather data" in tools["get_weather"].fn("Atlantis")


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        ("12 * (3 + 4)", "84"),
        ("(18 + 24 + 21) / 3", "21"),
        ("1 / 3", "0.3333"),
        ("-2.5 * 4", "-10"),
        ("1 / 0", "error: float division by zero"),
        ("2 ** 3", "error: unsupported expression"),
        ("__import__('os')", "error: unsupported expression"),
        ("True + 1", "error: unsupported expression"),
    ],
)
def test_the_calculator_tool_does_arithmetic_and_nothing_else(expression: str, shown: str) -> None:
    calculator = next(t for t in sim_tools() if t.name == "calculator")
    assert calculator.fn(expression) == shown


def test_the_calculator_tool_does_not_reach_into_the_simulator() -> None:
    """The shipped tool runs for real providers too: it answers without importing ``agentlab.sim``."""
    code = (
        "import sys\n"
        "from agentlab.sweeps import sim_tools\n"
        "calc = next(t for t in sim_tools() if t.name == 'calculator')\n"
        "assert calc.fn('6 * 7') == '42'\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentlab.sim')))\n"
    )
    root = Path(__file__).resolve().parents[2]  # the checkout, so ``-c`` imports this agentlab
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False, cwd=root
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_number_checker_rounding_rule() -> None:
    t = Task("avg?", expected=14.6667)
    assert t.score("The average is 14.67.") and t.score("about 14.6667") and t.score("14.7")
    assert not t.score("The average is 15.") and not t.score("14.6")


def test_a_task_may_carry_its_own_system_prompt_and_tool_names(tmp_path: Path) -> None:
    from agentlab.sweeps import sweep

    t = Task("What is 6 * 7?", id="t", system="Be brief.", tools=["calculator"])  # type: ignore[arg-type]
    assert t.tools == ("calculator",) and t.system == "Be brief."
    with pytest.raises(ConfigError, match="tools must be a list of tool names"):
        Task("x", tools="calculator")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="system must be a non-empty string"):
        Task("x", system=" ")
    with pytest.raises(ConfigError, match=r"task u: unknown tool\(s\) \['nope'\]"):
        sweep([Task("x", id="u", tools=("nope",))], ["openai:sim-reasoner"], results=tmp_path / "r.jsonl",
              tools=sim_tools(), progress=None)  # fmt: skip
    assert not (tmp_path / "r.jsonl").exists()
