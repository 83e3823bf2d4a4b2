"""Tasks for sweeps: a prompt plus an optional checker, from a list or a JSONL file.

Why tasks carry their own checker: a sweep's headline number is a success rate, and a success rate
is only as good as the scoring. A checker is either a function ``check(output) -> bool`` or an
expected answer with a match rule that tolerates different phrasings across models:

* ``"choice"`` (default when ``choices`` are given): of the candidate names, the one mentioned
  *first* in the answer must be ``expected`` ("Rome is warmer than Paris", "It is warmer in Rome").
* ``"number"`` (default for a numeric ``expected``): some number in the answer equals ``expected``
  rounded to the decimals that number shows (``14.67`` answers ``14.6667``; ``15`` does not;
  thousands separators allowed).
* ``"contains"`` (default for a string ``expected``): case-insensitive, whitespace-collapsed
  substring that does not start or end inside a word or number (``"9 C"`` is not in ``"19 C"``).
* ``"exact"``: the whole answer, stripped and case-folded, equals ``expected``.

A task without a checker is run and measured but scored ``<NA>`` (neither solved nor failed).

JSONL (one task per line; blank lines and lines starting with ``#`` are skipped)::

    {"id": "cmp-paris-rome", "prompt": "Is it warmer in Paris or Rome?",
     "expected": "Rome", "choices": ["Paris", "Rome"], "tags": ["compare"]}

The shipped set for the simulator's task family (:func:`sim_tasks`, tools from :func:`sim_tools`)
lives in ``agentlab/data/tasks/sim_family.jsonl``; its ``continuity`` subset holds tasks with many
tool calls in one plan, where losing the plan (OpenAI, ``continuation_policy="drop"``) repeats the
whole batch.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from agentlab.errors import ConfigError
from agentlab.loop.tools import Tool, tool

__all__ = ["CITIES", "Match", "Task", "jsonl_rows", "load_tasks", "sim_tasks", "sim_tools"]

Match = Literal["choice", "number", "contains", "exact"]
_MATCHES = ("choice", "number", "contains", "exact")
_FIELDS = {"id", "prompt", "expected", "match", "choices", "tags"}
_NUM = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _number_matches(written: str, expected: float) -> bool:
    """A written number matches when it is ``expected`` rounded to the decimals it shows.

    A non-integer ``expected`` needs at least one decimal (``17`` does not answer ``17.33``).
    """
    value = float(written.replace(",", ""))
    decimals = len(written.split(".", 1)[1]) if "." in written else 0
    if expected != int(expected) and decimals == 0:
        return False
    return abs(value - expected) <= 0.5 * 10.0**-decimals + 1e-9 * abs(expected)


@dataclass(frozen=True)
class Task:
    """One prompt to run, and how to score its final answer.

    ``id`` keys results (with model, setting and repeat), so it must stay stable across a resumed
    sweep: give one explicitly, or get ``task-<hash of the prompt>``.
    """

    prompt: str
    id: str = ""
    expected: str | float | None = None
    match: Match | None = None
    choices: tuple[str, ...] = ()
    check: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)
    tags: tuple[str, ...] = ()
    system: str | None = None
    """This task's system prompt, in place of the setting's (``None``: the setting's)."""
    tools: tuple[str, ...] | None = None
    """Names of the sweep's tools this task may use (``None``: all of them; ``()``: none)."""

    def __post_init__(self) -> None:
        self._check_identity()
        object.__setattr__(self, "choices", tuple(self.choices))
        object.__setattr__(self, "tags", tuple(self.tags))
        self._check_run_options()
        self._check_answer()
        if self.match is None and self.expected is not None:
            object.__setattr__(self, "match", self._default_match())
        if self.match is not None:
            self._check_match()

    def _check_identity(self) -> None:
        """The prompt and the id key a resumed sweep's results, so both are checked before any run."""
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise ConfigError(f"a task needs a non-empty prompt string, got {self.prompt!r}")
        if not self.id:
            digest = hashlib.sha256(self.prompt.encode()).hexdigest()[:10]
            object.__setattr__(self, "id", f"task-{digest}")
        if not isinstance(self.id, str) or not re.fullmatch(r"[\w.:@/-]{1,128}", self.id):
            raise ConfigError(f"task id must be 1-128 letters, digits or _.:@/- characters, got {self.id!r}")

    def _check_run_options(self) -> None:
        """A per-task system prompt and tool list change what the run sees: checked before any run."""
        if self.system is not None and (not isinstance(self.system, str) or not self.system.strip()):
            raise ConfigError(f"task {self.id}: system must be a non-empty string, got {self.system!r}")
        if self.tools is not None:
            if isinstance(self.tools, str) or not all(isinstance(t, str) for t in self.tools):
                raise ConfigError(f"task {self.id}: tools must be a list of tool names, got {self.tools!r}")
            object.__setattr__(self, "tools", tuple(self.tools))

    def _check_answer(self) -> None:
        """One way to score per task: a checker function or an expected answer, never both."""
        if self.check is not None and self.expected is not None:
            raise ConfigError(f"task {self.id}: give check= or expected=, not both")
        if self.check is not None and not callable(self.check):
            raise ConfigError(f"task {self.id}: check must be a function output -> bool")
        if isinstance(self.expected, bool) or not isinstance(self.expected, str | int | float | type(None)):
            raise ConfigError(f"task {self.id}: expected must be a string or a number, got {self.expected!r}")

    def _default_match(self) -> Match:
        """Choices imply a choice match; otherwise the expected value's type picks contains or number."""
        if self.choices:
            return "choice"
        return "contains" if isinstance(self.expected, str) else "number"

    def _check_match(self) -> None:
        """Each match kind needs an expected value of its own shape; say which, before a sweep starts."""
        if self.match not in _MATCHES:
            raise ConfigError(f"task {self.id}: match must be one of {_MATCHES}, got {self.match!r}")
        if self.expected is None:
            raise ConfigError(f"task {self.id}: match={self.match!r} needs expected=")
        if self.match == "choice" and (not self.choices or self.expected not in self.choices):
            raise ConfigError(f"task {self.id}: match='choice' needs choices that include expected")
        if self.match == "number" and not isinstance(self.expected, int | float):
            raise ConfigError(f"task {self.id}: match='number' needs a numeric expected")
        if self.match in ("contains", "exact") and not isinstance(self.expected, str):
            raise ConfigError(f"task {self.id}: match={self.match!r} needs a string expected")

    @property
    def scored(self) -> bool:
        """True when the task has a checker (its runs count towards success rates)."""
        return self.check is not None or self.expected is not None

    def score(self, output: str | None) -> bool | None:
        """Whether ``output`` solves the task; ``None`` without a checker. No answer is a failure."""
        if not self.scored:
            return None
        if output is None:
            return False
        if self.check is not None:
            return bool(self.check(output))
        exp = self.expected
        if self.match == "number":
            assert isinstance(exp, int | float)
            return any(_number_matches(m.group(0), float(exp)) for m in _NUM.finditer(output))
        assert isinstance(exp, str)
        if self.match == "exact":
            return _norm(output).strip(" .") == _norm(exp).strip(" .")
        if self.match == "contains":
            return re.search(r"(?<!\w)" + re.escape(_norm(exp)) + r"(?!\w)", _norm(output)) is not None
        text = _norm(output)
        first: tuple[int, str] | None = None
        for c in self.choices:
            m = re.search(r"(?<!\w)" + re.escape(_norm(c)) + r"(?!\w)", text)
            if m is not None and (first is None or m.start() < first[0]):
                first = (m.start(), c)
        return first is not None and first[1] == exp

    def to_json(self) -> dict[str, Any]:
        """The JSONL form (a ``check`` function cannot be written; such tasks raise ``ConfigError``)."""
        if self.check is not None:
            raise ConfigError(f"task {self.id}: a check function cannot be written to JSONL; use expected=")
        out: dict[str, Any] = {"id": self.id, "prompt": self.prompt}
        if self.expected is not None:
            out["expected"] = self.expected
            out["match"] = self.match
        if self.choices:
            out["choices"] = list(self.choices)
        if self.tags:
            out["tags"] = list(self.tags)
        return out


def _from_mapping(d: Mapping[str, Any], where: str) -> Task:
    unknown = sorted(set(d) - _FIELDS)
    if unknown:
        raise ConfigError(f"{where}: unknown task field(s) {unknown}; known: {sorted(_FIELDS)}")
    if "prompt" not in d:
        raise ConfigError(f"{where}: a task needs a 'prompt'")
    try:
        return Task(
            prompt=d["prompt"],
            id=d.get("id") or "",
            expected=d.get("expected"),
            match=d.get("match"),
            choices=tuple(d.get("choices") or ()),
            tags=tuple(d.get("tags") or ()),
        )
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def jsonl_rows(path: Path, error: type[ConfigError] = ConfigError) -> Iterator[tuple[str, Any]]:
    """``("<path>:<line>", value)`` for each JSON line of a task file; blank and ``#`` lines skipped.

    One reader for sweep task files and evaluation datasets, so both name a bad line the same way
    (``error``: the caller's ``ConfigError`` subclass).
    """
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                yield f"{path}:{n}", json.loads(s)
            except json.JSONDecodeError as e:
                raise error(f"{path}:{n}: not valid JSON ({e.msg})") from None


def load_tasks(
    source: str | Path | Iterable[Task | Mapping[str, Any] | str], *, tags: Iterable[str] | None = None
) -> list[Task]:
    """Tasks from a JSONL path, or a list of ``Task``s, dicts or prompt strings.

    ``tags`` keeps tasks carrying at least one of them. Duplicate ids raise ``ConfigError`` (ids
    key the results file), as do malformed lines (with their line number).
    """
    tasks: list[Task] = []
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"task file {path} does not exist")
        for where, d in jsonl_rows(path):
            if not isinstance(d, dict):
                raise ConfigError(f"{where}: a task line must be a JSON object")
            tasks.append(_from_mapping(d, where))
    else:
        for i, item in enumerate(source):
            if isinstance(item, Task):
                tasks.append(item)
            elif isinstance(item, str):
                tasks.append(Task(prompt=item))
            elif isinstance(item, Mapping):
                tasks.append(_from_mapping(item, f"task #{i}"))
            else:
                raise ConfigError(
                    f"task #{i}: expected a Task, a dict or a prompt string, got {type(item).__name__}"
                )
    if tags is not None:
        want = set(tags)
        tasks = [t for t in tasks if want & set(t.tags)]
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        if t.id in seen:
            raise ConfigError(
                f"duplicate task id {t.id!r} (tasks #{seen[t.id]} and #{i}); ids key the results"
            )
        seen[t.id] = i
    return tasks


# ---------------------------------------------------------------------- the shipped task set

CITIES: dict[str, tuple[int, int, int]] = {
    # city: (temperature C, population, elevation m) - a fixed, fictional-but-plausible table
    "Paris": (18, 2148000, 35),
    "Rome": (24, 2873000, 21),
    "Oslo": (9, 709000, 23),
    "Berlin": (15, 3645000, 34),
    "Madrid": (27, 3223000, 667),
    "Lisbon": (22, 545000, 100),
    "Vienna": (17, 1897000, 151),
    "Athens": (29, 664000, 70),
    "Dublin": (13, 554000, 20),
    "Prague": (14, 1309000, 235),
    "Quito": (19, 2011000, 2850),
    "La Paz": (11, 757000, 3640),
    "Cairo": (33, 9540000, 23),
    "Warsaw": (12, 1794000, 100),
}


def _city(name: str) -> tuple[str, tuple[int, int, int]] | None:
    key = name.split(",")[0].strip()
    for city, row in CITIES.items():
        if city.casefold() == key.casefold():
            return city, row
    return None


def _city_fact(city: str, column: int, unit: str, what: str) -> str:
    """One column of :data:`CITIES` as a tool answers it, or a no-data line the model can act on."""
    found = _city(city)
    return f"{found[1][column]} {unit}" if found else f"no {what} data for {city}"


#: The city tools, one a column of :data:`CITIES`: name, column, unit, what it is, the description,
#: and the example city its parameter names.
_CITY_TOOLS: tuple[tuple[str, int, str, str, str, str], ...] = (
    ("get_weather", 0, "C", "weather", "Current weather (temperature in Celsius) for a city.", "Paris"),
    ("get_population", 1, "people", "population", "Population of a city (number of inhabitants).", "Paris"),
    ("get_elevation", 2, "m", "elevation", "Elevation of a city above sea level, in metres.", "Quito"),
)


def _city_tool(name: str, column: int, unit: str, what: str, description: str, example: str) -> Tool:
    def fact(city: str) -> str:
        return _city_fact(city, column, unit, what)

    fact.__doc__ = f'''{description}\n\nArgs:\n    city: City name, e.g. "{example}".\n'''
    return Tool(fact, name=name)


def sim_tools() -> list[Tool]:
    """The tools the shipped tasks use: weather, population, elevation (a fixed table), calculator."""

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression (numbers, + - * / and parentheses).

        Args:
            expression: e.g. "12 * (3 + 4)".
        """
        try:
            return _number_text(_arithmetic(expression))
        except ValueError as e:
            return f"error: {e}"

    return [*(_city_tool(*row) for row in _CITY_TOOLS), calculator]


#: The calculator's operators: the four of arithmetic and a sign, nothing that can run code.
_ARITHMETIC: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _arithmetic(expression: str) -> float:
    """``+ - * / ( )`` over numbers, by walking the parsed expression; anything else is a ValueError.

    Why its own and not the simulator's: the tool ships for real providers too, and a sweep scored
    on the simulator should not pass because tool and simulated model share one evaluator (the
    simulator is a leaf the sweep tools do not reach into).
    """

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        ):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return float(_ARITHMETIC[type(node.op)](value(node.left), value(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _ARITHMETIC:
            return float(_ARITHMETIC[type(node.op)](value(node.operand)))
        raise ValueError("unsupported expression")

    try:
        return value(ast.parse(expression, mode="eval"))
    except (SyntaxError, ZeroDivisionError, OverflowError) as exc:
        raise ValueError(str(exc)) from exc


def _number_text(x: float) -> str:
    """A result as people write it: whole numbers without ``.0``, others to at most 4 decimals."""
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


def sim_tasks(tags: Sequence[str] | None = None) -> list[Task]:
    """The shipped task set for the simulator's task family (``tags`` filters, e.g. ``["continuity"]``).

    Tags: ``compare``, ``aggregate``, ``lookup``, ``arithmetic``, and ``continuity`` (tasks with
    five or more tool calls in one plan: losing the plan repeats them all).
    """
    ref = resources.files("agentlab").joinpath("data/tasks/sim_family.jsonl")
    with resources.as_file(ref) as path:
        return load_tasks(path, tags=tags)
