"""Scorers: what a run's final answer (and tool calls) is worth on a task, as a value and a reason.

Why scorers see an :class:`Attempt` and not the run: scores are stored in the results file, so a
task set can be re-scored later (:func:`agentlab.evals.rescore`) from the file alone. An attempt is
what the file keeps of a run: the final answer, the status, and the tool calls it made (name and
arguments: portable history, never reasoning or opaque items).

Normalisation (``exact``, ``includes``): strip, case-fold (Unicode ``casefold``), collapse runs of
whitespace to one space; ``strip_punctuation=True`` also drops every Unicode punctuation character.

Every scorer gives a :class:`Score`: ``value`` is a bool (pass/fail), a float, or ``None`` when the
scorer could not score (no answer to a task without a target, a failed run, a scorer that raised:
``explanation`` says which). ``None`` is unknown, never a fail.
"""

from __future__ import annotations

import inspect
import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.errors import ConfigError
from agentlab.evals.dataset import EvalTask

__all__ = [
    "Attempt",
    "CalledTool",
    "JudgeUsage",
    "Score",
    "ScoreValue",
    "Scorer",
    "as_scorer",
    "choice",
    "exact",
    "includes",
    "json_valid",
    "normalize",
    "numeric",
    "regex",
    "scorer",
    "tool_called",
]

ScoreValue = bool | float | None
_NUM = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


class CalledTool(BaseModel):
    """One tool call a run made: the tool's name and its arguments (the parsed JSON, or the raw text)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    arguments: Any = None


class Attempt(BaseModel):
    """What a scorer sees of one run (what the results file keeps of it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str | None
    """The run's final answer text (``None``: the run gave none)."""
    status: str = "completed"
    called_tools: tuple[CalledTool, ...] = ()


class JudgeUsage(BaseModel):
    """A judge's own spend on one score: never added to the candidate's tokens or cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    """``None`` when any judging call was unpriced (unknown, never 0)."""
    repeats: int = 1
    agreement: float | None = None
    """Share of the repeated verdicts equal to the one reported (1.0: all agreed)."""


class Score(BaseModel):
    """One scorer's verdict on one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    value: bool | float | None
    explanation: str = ""
    judge: JudgeUsage | None = Field(default=None, exclude_if=lambda v: v is None)

    def stored(self) -> dict[str, Any]:
        """The results-file form (``scores[name]`` of a row)."""
        return self.model_dump(mode="json", exclude={"name"})


class Scorer:
    """A named scoring rule. Subclasses implement :meth:`score`; a judge overrides :meth:`ascore`."""

    name: str = "score"

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        """The verdict on ``attempt``; override this (sync) or :meth:`ascore`."""
        raise NotImplementedError

    async def ascore(self, attempt: Attempt, task: EvalTask) -> Score:
        """Async form (what evaluations call); the default runs :meth:`score`."""
        return self.score(attempt, task)

    def _make(self, value: ScoreValue, explanation: str) -> Score:
        return Score(name=self.name, value=value, explanation=explanation)

    def __repr__(self) -> str:
        return f"<scorer {self.name}>"


def normalize(text: str, *, strip_punctuation: bool = False) -> str:
    """Strip, case-fold, collapse whitespace; optionally drop every Unicode punctuation character."""
    if strip_punctuation:
        text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
    return " ".join(text.casefold().split())


class _TextRule(Scorer):
    """A rule comparing the answer with the task's target as text (exact, includes)."""

    def __init__(self, name: str, how: Literal["exact", "includes"], strip_punctuation: bool) -> None:
        self.name, self.how, self.strip_punctuation = name, how, strip_punctuation

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        if task.target is None:
            return self._make(None, "the task has no target")
        if attempt.answer is None:
            return self._make(False, "no answer")
        ans = normalize(attempt.answer, strip_punctuation=self.strip_punctuation)
        want = normalize(str(task.target), strip_punctuation=self.strip_punctuation)
        ok = ans == want if self.how == "exact" else want in ans
        verb = "equals" if self.how == "exact" else "contains"
        return self._make(ok, f"answer {verb if ok else 'does not ' + verb.rstrip('s')} the target")


def exact(*, strip_punctuation: bool = False, name: str = "exact") -> Scorer:
    """The normalised answer equals the normalised target (see the module docstring)."""
    return _TextRule(name, "exact", strip_punctuation)


def includes(*, strip_punctuation: bool = False, name: str = "includes") -> Scorer:
    """The normalised target appears in the normalised answer."""
    return _TextRule(name, "includes", strip_punctuation)


class _Regex(Scorer):
    def __init__(self, pattern: str | None, name: str, flags: int) -> None:
        if pattern is not None:
            try:
                re.compile(pattern, flags)
            except re.error as e:
                raise ConfigError(f"regex scorer {name!r}: bad pattern ({e})") from None
        self.pattern, self.name, self.flags = pattern, name, flags

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        pattern = self.pattern if self.pattern is not None else task.target
        if pattern is None:
            return self._make(None, "no pattern and the task has no target")
        if attempt.answer is None:
            return self._make(False, "no answer")
        try:
            hit = re.search(str(pattern), attempt.answer, self.flags)
        except re.error as e:
            return self._make(None, f"the task's target is not a valid pattern ({e})")
        return self._make(hit is not None, "pattern found" if hit else "pattern not found")


def regex(pattern: str | None = None, *, flags: int = re.IGNORECASE, name: str = "regex") -> Scorer:
    """``pattern`` (default: the task's target, as a pattern) is found in the answer (``re.search``)."""
    return _Regex(pattern, name, flags)


class _Numeric(Scorer):
    def __init__(self, tolerance: float, relative: bool, pick: str, name: str) -> None:
        if tolerance < 0:
            raise ConfigError(f"numeric scorer {name!r}: tolerance must be >= 0, got {tolerance}")
        if pick not in ("first", "last", "any"):
            raise ConfigError(f"numeric scorer {name!r}: pick must be 'first', 'last' or 'any', got {pick!r}")
        self.tolerance, self.relative, self.pick, self.name = tolerance, relative, pick, name

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        try:
            want = float(str(task.target).replace(",", "")) if task.target is not None else None
        except ValueError:
            want = None
        if want is None:
            return self._make(None, "the task has no numeric target")
        nums = [float(m.group(0).replace(",", "")) for m in _NUM.finditer(attempt.answer or "")]
        if not nums:
            return self._make(False, "no number in the answer")
        picked = nums if self.pick == "any" else [nums[0] if self.pick == "first" else nums[-1]]
        tol = self.tolerance * abs(want) if self.relative else self.tolerance
        hit = next((x for x in picked if abs(x - want) <= tol), None)
        if hit is not None:
            return self._make(True, f"{hit:g} is within {tol:g} of {want:g}")
        return self._make(False, f"{picked[0]:g} is not within {tol:g} of {want:g}")


def numeric(
    *, tolerance: float = 1e-6, relative: bool = False, pick: str = "first", name: str = "numeric"
) -> Scorer:
    """A number in the answer (the ``first``, ``last`` or ``any``) is within ``tolerance`` of the target.

    Numbers may carry thousands separators (``2,148,000``); ``relative=True`` scales the tolerance
    by the target.
    """
    return _Numeric(tolerance, relative, pick, name)


_LETTER_RULES = (
    re.compile(r"\banswer\s*(?:is|:)?\s*\(?([A-Z])\)?(?![\w])", re.IGNORECASE),
    re.compile(r"^\s*\(?([A-Z])(?:[).:]|\s|$)"),
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"(?<![\w'])([A-Z])(?![\w'])"),
)


def extract_letter(answer: str, letters: str) -> str | None:
    """The option letter an answer gives: ``Answer: B``, a leading ``B)``, ``(B)``, then a lone ``B``."""
    for rule in _LETTER_RULES:
        for m in rule.finditer(answer):
            letter = m.group(1).upper()
            if letter in letters:
                return letter
    return None


class _Choice(Scorer):
    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(task.choices) or 10]
        target = str(task.target) if task.target is not None else None
        if target is not None and target not in letters and target in task.choices:
            target = letters[task.choices.index(target)]  # the target given as the option's text
        if target is None or target not in letters:
            return self._make(None, "the task's target is not an option letter or option")
        got = extract_letter(attempt.answer or "", letters)
        if got is None:
            return self._make(False, "no option letter in the answer")
        return self._make(got == target, f"answered {got}, the target is {target}")


def choice(*, name: str = "choice") -> Scorer:
    """Multiple choice: the option letter in the answer equals the target (a letter or an option's text)."""
    return _Choice(name)


def _json_text(answer: str) -> str:
    """The answer without a Markdown code fence around it."""
    m = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", answer, re.DOTALL)
    return m.group(1) if m else answer


def _jsonschema() -> Any:
    """The ``jsonschema`` module (a dependency without type stubs), imported when a schema is used."""
    import importlib

    return importlib.import_module("jsonschema")


class _JsonValid(Scorer):
    def __init__(self, schema: Any, name: str) -> None:
        self.name = name
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            self.model: type[BaseModel] | None = schema
            self.schema: dict[str, Any] | None = None
        elif isinstance(schema, Mapping):
            jsonschema = _jsonschema()
            try:
                jsonschema.Draft202012Validator.check_schema(dict(schema))
            except jsonschema.SchemaError as e:
                raise ConfigError(
                    f"json_valid scorer {name!r}: not a valid JSON schema ({e.message})"
                ) from None
            self.model, self.schema = None, dict(schema)
        else:
            raise ConfigError(f"json_valid needs a JSON schema dict or a pydantic model, got {schema!r}")

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        if attempt.answer is None:
            return self._make(False, "no answer")
        text = _json_text(attempt.answer)
        if self.model is not None:
            from pydantic import ValidationError

            try:
                self.model.model_validate_json(text)
            except ValidationError as e:
                err = e.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "the value"
                return self._make(False, f"{where}: {err['msg']}")
            return self._make(True, f"valid {self.model.__name__}")
        return self._schema_score(text)

    def _schema_score(self, text: str) -> Score:
        jsonschema = _jsonschema()
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            return self._make(False, f"not JSON ({e.msg})")
        err = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema or {}).iter_errors(value)
        )
        if err is not None:
            where = "/".join(str(p) for p in err.absolute_path) or "the value"
            return self._make(False, f"{where}: {err.message}")
        return self._make(True, "valid against the schema")


def json_valid(schema: Mapping[str, Any] | type[BaseModel], *, name: str = "json_valid") -> Scorer:
    """The answer (a Markdown code fence allowed around it) is JSON valid against ``schema``."""
    return _JsonValid(schema, name)


def _same(want: Any, got: Any) -> bool:
    """Argument values match: strings normalised (case, whitespace), everything else equal."""
    if isinstance(want, str) and isinstance(got, str):
        return normalize(want) == normalize(got)
    return bool(want == got)


class _ToolCalled(Scorer):
    def __init__(self, tool: str, arguments: Mapping[str, Any], name: str) -> None:
        self.tool, self.arguments, self.name = tool, dict(arguments), name

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        want = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        label = f"{self.tool}({want})"
        calls = [c for c in attempt.called_tools if c.name == self.tool]
        for c in calls:
            args = c.arguments if isinstance(c.arguments, dict) else {}
            if all(k in args and _same(v, args[k]) for k, v in self.arguments.items()):
                return self._make(True, f"called {label}")
        if not calls:
            return self._make(False, f"{self.tool} was never called")
        return self._make(False, f"{self.tool} was called {len(calls)} time(s), never as {label}")


def tool_called(tool: str, *, name: str | None = None, **arguments: Any) -> Scorer:
    """The run called ``tool`` with (at least) these arguments: ``tool_called("get_weather", city="Paris")``.

    String arguments compare normalised (case and whitespace); other arguments must be equal. Read
    from the run's tool calls (portable history), so it works on a results file too.
    """
    return _ToolCalled(tool, arguments, name or f"called_{tool}")


class _Function(Scorer):
    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        out = self.fn(attempt.answer, task)
        value, explanation = out if isinstance(out, tuple) else (out, "")
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if value is not None and not isinstance(value, bool | float):
            raise TypeError(f"returned {type(value).__name__}; a score is a bool, a number or None")
        return self._make(value, str(explanation))


def scorer(fn: Callable[..., Any], *, name: str | None = None) -> Scorer:
    """A scorer from ``fn(answer, task) -> value`` or ``-> (value, explanation)``.

    ``value``: a bool, a number or ``None`` (not scored). ``answer`` is the final answer text
    (``None`` when the run gave none), ``task`` the :class:`~agentlab.evals.dataset.EvalTask`.
    """
    if not callable(fn):
        raise ConfigError(f"scorer needs a function (answer, task) -> value, got {fn!r}")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = None
    if (
        params is not None
        and len(params) < 2
        and not any(p.kind == p.VAR_POSITIONAL for p in params.values())
    ):
        raise ConfigError(f"scorer {getattr(fn, '__name__', fn)!r} must take (answer, task)")
    return _Function(fn, name or str(getattr(fn, "__name__", "score")))


def as_scorer(item: Scorer | Callable[..., Any]) -> Scorer:
    """A :class:`Scorer` as is; a plain function through :func:`scorer`."""
    if isinstance(item, Scorer):
        return item
    return scorer(item)
