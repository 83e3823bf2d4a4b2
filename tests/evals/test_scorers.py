"""Every built-in scorer on fixed answers, and functions as scorers."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentlab.errors import ConfigError
from agentlab.evals import (
    Attempt,
    CalledTool,
    EvalTask,
    Score,
    choice,
    exact,
    includes,
    json_valid,
    normalize,
    numeric,
    regex,
    scorer,
    tool_called,
)


def _task(target: object = None, **kw: object) -> EvalTask:
    return EvalTask.model_validate({"id": "t", "input": "question?", "target": target, **kw})


def _v(s: object, answer: str | None, target: object = None, **kw: object) -> object:
    sc = s.score(Attempt(answer=answer), _task(target, **kw))  # type: ignore[attr-defined]
    assert isinstance(sc, Score)
    return sc.value


def test_normalisation() -> None:
    assert normalize("  The   ANSWER\tis\nRome ") == "the answer is rome"
    assert normalize("Straße!") == "strasse!"
    assert normalize("Rome, of course.", strip_punctuation=True) == "rome of course"


def test_exact_and_includes() -> None:
    assert _v(exact(), "  ROME ", "rome") is True
    assert _v(exact(), "Rome.", "Rome") is False
    assert _v(exact(strip_punctuation=True), "Rome.", "Rome") is True
    assert _v(exact(), None, "Rome") is False
    assert _v(exact(), "Rome", None) is None
    assert _v(includes(), "It is warmer in  ROME today", "in rome") is True
    assert _v(includes(), "Paris", "Rome") is False


def test_regex() -> None:
    assert _v(regex(r"\brome\b"), "Rome is warmer") is True
    assert _v(regex(r"^paris"), "Rome is warmer") is False
    assert _v(regex(), "answer: 42", r"\d+") is True  # the target as the pattern
    assert _v(regex(), "x", None) is None
    with pytest.raises(ConfigError, match="bad pattern"):
        regex("(")


def test_numeric() -> None:
    assert _v(numeric(), "The total is 5,021,000 people", 5021000) is True
    assert _v(numeric(tolerance=0.001), "about 3.14159", "3.14") is False
    assert _v(numeric(tolerance=0.01), "about 3.141", "3.14") is True
    assert _v(numeric(relative=True, tolerance=0.1), "105", 100) is True
    assert _v(numeric(), "12 * (3 + 4) = 84", 84) is False  # the first number is 12
    assert _v(numeric(pick="last"), "12 * (3 + 4) = 84", 84) is True
    assert _v(numeric(pick="any"), "3 then 84", 84) is True
    assert _v(numeric(), "no digits", 84) is False
    assert _v(numeric(), "42", "forty") is None
    with pytest.raises(ConfigError, match="pick must be"):
        numeric(pick="middle")


def test_multiple_choice_letter_extraction() -> None:
    opts = {"choices": ["Paris", "Rome", "Oslo"]}
    assert _v(choice(), "Answer: B", "B", **opts) is True
    assert _v(choice(), "The answer is (c)", "C", **opts) is True
    assert _v(choice(), "B) Rome, because it is south", "Rome", **opts) is True  # target as option text
    assert _v(choice(), "I pick (B).", "B", **opts) is True
    assert _v(choice(), "I would say A", "A", **opts) is True
    assert _v(choice(), "Rome", "B", **opts) is False  # no letter given
    assert _v(choice(), "D", "D", **opts) is None  # not an option of a 3-choice task


class Weather(BaseModel):
    city: str
    temp_c: float


def test_json_valid_against_a_model_and_a_schema() -> None:
    assert _v(json_valid(Weather), '{"city": "Rome", "temp_c": 24}') is True
    assert _v(json_valid(Weather), '```json\n{"city": "Rome", "temp_c": 24}\n```') is True
    sc = json_valid(Weather).score(Attempt(answer='{"city": "Rome"}'), _task())
    assert sc.value is False and "temp_c" in sc.explanation
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert _v(json_valid(schema), '{"n": 3}') is True
    assert _v(json_valid(schema), '{"n": "3"}') is False
    assert _v(json_valid(schema), "not json") is False
    with pytest.raises(ConfigError, match="not a valid JSON schema"):
        json_valid({"type": 5})


def test_tool_called_reads_the_calls() -> None:
    calls = (
        CalledTool(name="get_weather", arguments={"city": "paris "}),
        CalledTool(name="calculator", arguments="1+"),
    )
    at = Attempt(answer="x", called_tools=calls)
    assert tool_called("get_weather", city="Paris").score(at, _task()).value is True
    s = tool_called("get_weather", city="Rome").score(at, _task())
    assert s.value is False and "never as get_weather(city='Rome')" in s.explanation
    assert tool_called("get_population").score(at, _task()).value is False
    assert tool_called("calculator").score(at, _task()).value is True  # any arguments
    assert tool_called("get_weather", city="Paris").name == "called_get_weather"


def test_functions_as_scorers() -> None:
    s = scorer(lambda answer, task: (len(answer or "") > 3, "long enough"), name="long")
    sc = s.score(Attempt(answer="Rome!"), _task())
    assert (sc.name, sc.value, sc.explanation) == ("long", True, "long enough")

    def half(answer: str | None, task: EvalTask) -> int:
        return 1

    assert scorer(half).score(Attempt(answer="x"), _task()).value == 1.0
    with pytest.raises(ConfigError, match="must take \\(answer, task\\)"):
        scorer(lambda a: True)
    with pytest.raises(TypeError, match="a score is a bool"):
        scorer(lambda a, t: "yes").score(Attempt(answer="x"), _task())
