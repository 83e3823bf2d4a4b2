"""@tool: schemas from hints and docstrings, validation, sync/async, errors the model sees, truncation."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import agentlab as al
from agentlab.errors import ToolDefinitionError, ToolExecutionError
from agentlab.loop.tools import Tool, as_tools, tool
from agentlab.neutral.items import ToolCallItem


class Point(BaseModel):
    x: float
    y: float


def test_schema_from_hints_and_google_docstring() -> None:
    @tool
    def get_weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> str:
        """Current weather for a city.

        Longer explanation.

        Args:
            city: The city name,
                e.g. Paris.
            days (int): How many days.
            unit: Temperature unit.

        Returns:
            A sentence.
        """
        return city

    spec = get_weather.spec
    assert spec.name == "get_weather"
    assert spec.description == "Current weather for a city.\n\nLonger explanation."
    p = spec.parameters
    assert p["type"] == "object" and p["additionalProperties"] is False
    assert p["required"] == ["city"]
    assert p["properties"]["city"] == {"type": "string", "description": "The city name, e.g. Paris."}
    assert (
        p["properties"]["days"]["type"] == "integer"
        and p["properties"]["days"]["description"] == "How many days."
    )
    assert p["properties"]["unit"]["enum"] == ["C", "F"]
    assert "title" not in p and "title" not in p["properties"]["city"]
    assert spec.strict is False  # optional params: a strict schema would have to require them


def test_sphinx_docstring_and_strict_when_all_required() -> None:
    @tool
    def move(p: Point, by: float) -> Point:
        """Move a point.

        :param p: the point
        :param by: distance
        """
        return Point(x=p.x + by, y=p.y + by)

    spec = move.spec
    assert spec.description == "Move a point."
    assert spec.parameters["properties"]["by"]["description"] == "distance"
    assert set(spec.parameters["required"]) == {"p", "by"}


def test_decorated_function_still_callable() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert add(2, 3) == 5
    assert isinstance(add, Tool) and "add" in repr(add)


def test_tool_options_and_definition_errors() -> None:
    @tool(name="renamed", description="custom")
    def f(x: int) -> int:
        return x

    assert (f.spec.name, f.spec.description) == ("renamed", "custom")

    with pytest.raises(ToolDefinitionError, match="no type hint"):

        @tool
        def untyped(x):  # type: ignore[no-untyped-def]
            return x

    with pytest.raises(ToolDefinitionError, match=r"\*args"):

        @tool
        def star(*args: int) -> int:
            return 0

    with pytest.raises(ToolDefinitionError, match="must match"):
        tool(name="bad name!")(lambda: 1)

    with pytest.raises(ToolDefinitionError, match="two tools"):
        as_tools([f, f])


async def test_validation_coerces_and_rejects() -> None:
    @tool
    def when(day: dt.date, n: int) -> str:
        """Date."""
        return f"{day.isoformat()} x{n}"

    ok = await when.run('{"day": "2026-01-02", "n": "3"}')
    assert (ok.output, ok.is_error) == ("2026-01-02 x3", False)
    bad = await when.run('{"day": "yesterday"}')
    assert bad.is_error and "day" in bad.output and "n" in bad.output and "Fix them" in bad.output
    extra = await when.run({"day": "2026-01-02", "n": 1, "zzz": 1})
    assert extra.is_error and "zzz" in extra.output
    broken = await when.run('{"day": ')
    assert broken.is_error


async def test_async_tool_and_return_serialization() -> None:
    @tool
    async def data(n: int) -> dict[str, Any]:
        """Dict result."""
        return {"n": n, "items": [1, 2]}

    out = await data.run('{"n": 2}')
    assert out.output == '{"n":2,"items":[1,2]}' and not out.is_error
    assert data.is_async

    @tool
    def model() -> Point:
        """Pydantic result."""
        return Point(x=1, y=2)

    assert (await model.run("{}")).output == '{"x":1.0,"y":2.0}'


async def test_non_serializable_return_is_clear_error() -> None:
    class Weird:
        pass

    @tool
    def weird() -> object:
        """Returns something odd."""
        return Weird()

    out = await weird.run("{}")
    assert out.is_error and "Weird" in out.output and "JSON-serializable" in out.output


async def test_huge_output_truncated_with_marker() -> None:
    @tool(max_output_chars=100)
    def big() -> str:
        """Big."""
        return "x" * 1000

    out = await big.run("{}")
    assert out.truncated and out.output.startswith("x" * 100)
    assert "[truncated 900 of 1000 characters]" in out.output and len(out.output) < 200


async def test_run_call_and_invoke() -> None:
    @tool
    def half(n: int) -> float:
        """Half."""
        if n < 0:
            raise ValueError("negative")
        return n / 2

    res = await half.run_call(ToolCallItem(call_id="c", name="half", arguments='{"n": 3}'))
    assert (res.call_id, res.name, res.output, res.is_error) == ("c", "half", "1.5", False)
    assert await half.invoke(n=4) == 2.0
    with pytest.raises(ToolExecutionError, match="negative"):
        await half.invoke(n=-1)


def test_plain_function_accepted_in_run() -> None:
    def shout(text: str) -> str:
        """Upper-case."""
        return text.upper()

    tools = as_tools([shout])
    assert tools["shout"].spec.description == "Upper-case."
    assert al.tool is tool


# ---------------------------------------------------------------- how a tool displays

HOSTILE = '<img src=x onerror="alert(1)"> & </div><script>steal()</script>\x1b[31m\nnext line'


def _hostile_tool() -> al.Tool:
    def population(city: str, year: int | None = None) -> int:
        return 1

    population.__doc__ = f"{HOSTILE}\n\nArgs:\n    city: the <b>city</b> name\n"
    return al.tool(population)


def test_tool_repr_shows_description_and_parameter_types() -> None:
    t = _hostile_tool()
    r = repr(t)
    assert r.startswith("<Tool population(city: string, year?: integer | null) '")
    assert "onerror" in r  # the description is there...
    assert "\n" not in r and "\x1b" not in r  # ...quoted: no control character or line break gets out


def test_tool_repr_html_shows_the_schema_escaped() -> None:
    t = _hostile_tool()
    page = t._repr_html_()
    assert "<script" not in page and "<img" not in page and "<b>city" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page and "&lt;/div&gt;" in page
    assert "&lt;b&gt;city&lt;/b&gt; name" in page  # the parameter's doc, as text
    for part in ("population(city: string, year?: integer | null)", "JSON schema", "&quot;required&quot;"):
        assert part in page
    # the markup agentlab adds is balanced: nothing in the text closed or opened an element
    assert page.count("<div") == page.count("</div>") and page.count("<pre>") == page.count("</pre>")


@pytest.mark.parametrize("bare", [False, True])
def test_a_misspelt_option_is_a_definition_error_naming_it(bare: bool) -> None:
    def f(x: int) -> int:
        """Echo."""
        return x

    with pytest.raises(ToolDefinitionError, match=r"no option 'nme' \(did you mean 'name'\?\)"):
        if bare:
            tool(f, nme="g")  # type: ignore[call-overload]
        else:
            tool(nme="g")(f)  # type: ignore[call-overload]
