"""The deterministic planner behind both simulated providers.

Why a planner and not canned text: tests and notebooks must check *answers*, continuity must change
*behaviour*, and effort must change *cost*. The planner reads the task and the tool specs, decides
which tool calls it needs (independent ones together, in parallel), reads the tool results it was
given and computes the answer from them. It is a pure function of its inputs.

Task family (what it solves; everything else gets a polite deterministic reply):

* **Comparison**: a comparative word and two or more names, e.g. "Is it warmer in Paris or Rome?"
  (warmer/hotter/larger/bigger/higher/more/greater/taller/older/longer/heavier pick the maximum;
  colder/cooler/smaller/lower/less/fewer/shorter/younger/cheaper/lighter the minimum). One call per
  name to the best-matching tool; the first number in each result is compared.
* **Aggregate over tool outputs**: "What is the total/sum/average/difference/product of the
  population of Paris, Rome and Berlin?" One call per name, then the arithmetic.
* **Lookup**: names without a comparative or aggregate word ("What's the weather in Florence,
  Italy?"): one call per name, answered with the results verbatim.
* **Arithmetic**: an expression of numbers and ``+ - * / ( )`` ("What is 12 * (3 + 4)?"): sent to a
  calculator-like tool (name or description mentions calc/math/evaluate/arithmetic) when one exists,
  else computed directly.

Names are runs of Capitalised words not in a small stop list (Is, What, Which, ...). Two names
separated only by a comma, in a task without "and"/"or", are one name ("Florence, Italy"). The tool
is the one whose name and description share most words with the task (ties: the first listed);
the argument is its first required string parameter.

Continuity (OpenAI and Gemini, see :class:`Situation.plan_known`): when the current loop already holds tool
calls but the request does not carry the reasoning items that planned them, the model has lost its
plan: it adds a re-planning paragraph to its reasoning (more reasoning tokens) and repeats its most
recent batch of tool calls once (same arguments, new call ids) before answering.

Effort: ``effort_level`` 0..6 adds that many verification paragraphs to the reasoning.

Grading (:mod:`agentlab.sim.grading`): a judge prompt (an ``<answer>`` section and a ``GRADE:``
line to give) gets the simulated judge's documented rule, labelled as simulated, whatever the tools.

Tool choice (:class:`ToolChoice`, both APIs map theirs onto it): ``auto`` is the plan above;
``none`` answers without a call (from the results it already has, computing arithmetic directly, or
saying what it could not look up); ``required`` calls a tool even when the plan would answer (the
best-matching tool, with the task's first name, expression or text); ``tool`` calls that tool, with
the arguments the plan meant for its own pick (one call when calls may not run in parallel).
"""

from __future__ import annotations

import ast
import contextvars
import hashlib
import json
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentlab.sim.grading import grade, grading_request

#: ``(model, P)`` while a request for a model with the ``skill=P`` option is planned (set by the app
#: around one request, so no protocol handler has to pass it down).
SKILL: contextvars.ContextVar[tuple[str, float] | None] = contextvars.ContextVar("sim_skill", default=None)

MAGIC_REDACTED = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)

_STOP = {
    "is",
    "what",
    "what's",
    "whats",
    "which",
    "who",
    "how",
    "the",
    "i",
    "please",
    "compare",
    "tell",
    "give",
    "find",
    "in",
    "of",
    "and",
    "or",
    "a",
    "an",
    "are",
    "does",
    "do",
    "can",
    "could",
    "would",
    "where",
    "when",
    "sum",
    "add",
    "total",
    "use",
    "then",
    "it",
    "whose",
    "answer",
    "check",
    "look",
    "get",
    "calculate",
    "compute",
    "show",
    "hey",
    "hi",
    "hello",
    "let",
    "we",
    "you",
    "is it",
    "was",
    "will",
}
_MAX_WORDS = (
    "warmer",
    "hotter",
    "larger",
    "bigger",
    "higher",
    "more",
    "greater",
    "taller",
    "older",
    "longer",
    "heavier",
    "faster",
    "richer",
    "wetter",
)
_MIN_WORDS = (
    "colder",
    "cooler",
    "smaller",
    "lower",
    "less",
    "fewer",
    "shorter",
    "younger",
    "cheaper",
    "lighter",
    "slower",
    "drier",
)
_AGG_WORDS = {
    "sum": "sum",
    "total": "sum",
    "combined": "sum",
    "add": "sum",
    "together": "sum",
    "average": "mean",
    "mean": "mean",
    "difference": "difference",
    "product": "product",
    "multiply": "product",
    "multiplied": "product",
}
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:\.\d+)?")
_CALC_HINTS = ("calc", "math", "evaluate", "arithmetic", "compute")


@dataclass(frozen=True)
class ToolDef:
    """A function tool as the request declared it (name, description, JSON schema)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    def arg_name(self) -> str:
        """The parameter the planner fills: first required string property, else the first one."""
        props = self.parameters.get("properties") or {}
        required = list(self.parameters.get("required") or [])
        for name in required:
            if (props.get(name) or {}).get("type", "string") == "string":
                return str(name)
        for name, spec in props.items():
            if (spec or {}).get("type", "string") == "string":
                return str(name)
        return str(required[0]) if required else (next(iter(props), "input"))


@dataclass(frozen=True)
class PastCall:
    """A tool call of the current loop, with its result when the request carried one."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None


@dataclass(frozen=True)
class ToolChoice:
    """What the request lets the model do with its tools this turn.

    ``mode`` is ``auto``, ``none``, ``required`` (some tool) or ``tool`` (the one named ``name``);
    the handlers have already refused a name the request does not declare.
    """

    mode: str = "auto"
    name: str | None = None


@dataclass(frozen=True)
class Situation:
    """Everything the planner may look at for one model call."""

    task: str
    tools: tuple[ToolDef, ...] = ()
    calls: tuple[PastCall, ...] = ()
    parallel: bool = True
    #: False when the loop has tool calls whose planning reasoning was not sent back (OpenAI, Gemini).
    plan_known: bool = True
    effort_level: int = 2
    choice: ToolChoice = field(default_factory=ToolChoice)


@dataclass(frozen=True)
class Step:
    """What the model does in one call: reasoning paragraphs, then tool calls or an answer."""

    reasoning: tuple[str, ...]
    summary: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    answer: str | None = None
    replanned: bool = False

    @property
    def reasoning_text(self) -> str:
        """The paragraphs as one text, a blank line between them.

        The OpenAI side both counts reasoning tokens from it and seals it into encrypted content, so the
        billed count and the sealed text agree.
        """
        return "\n\n".join(self.reasoning)


@dataclass(frozen=True)
class TaskPlan:
    """What the task asks, as the planner understood it."""

    kind: str  # compare | aggregate | lookup | arithmetic | chat
    entities: tuple[str, ...] = ()
    op: str = ""  # max/min for compare, sum/mean/difference/product for aggregate
    word: str = ""  # the comparative or aggregate word as written
    expression: str = ""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def extract_entities(task: str) -> list[str]:
    """Capitalised names in ``task`` (see the module docstring for the rules)."""
    text = task.replace(MAGIC_REDACTED, " ")
    runs: list[tuple[int, int, str]] = []
    for m in re.finditer(r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*", text):
        words = m.group(0).split()
        while words and words[0].lower().rstrip("'’s") in _STOP | {"what"}:
            words = words[1:]
        if words and words[0].lower() in _STOP:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words).rstrip(".")
        runs.append((m.start(), m.end(), name))
    has_list = re.search(r"\b(and|or|vs\.?|versus)\b", text) is not None
    names: list[str] = []
    prev_end = -1
    for start, end, name in runs:
        gap = text[prev_end:start] if prev_end >= 0 else ""
        if names and not has_list and gap.strip() == ",":
            names[-1] = f"{names[-1]}, {name}"
        else:
            names.append(name)
        prev_end = end
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def understand(task: str) -> TaskPlan:
    """Classify the task into the documented family."""
    words = _words(task)
    entities = tuple(extract_entities(task))
    expr_match = re.search(r"[-(]*\d[\d\s.+\-*/()]*[\d)]", task)
    if not entities and expr_match and re.search(r"\d\s*[-+*/]\s*[\d(]", expr_match.group(0)):
        return TaskPlan(kind="arithmetic", expression=expr_match.group(0).strip())
    if entities:
        for w in words:
            if w in _AGG_WORDS:
                return TaskPlan(kind="aggregate", entities=entities, op=_AGG_WORDS[w], word=w)
        if len(entities) >= 2:
            for w in words:
                if w in _MAX_WORDS:
                    return TaskPlan(kind="compare", entities=entities, op="max", word=w)
                if w in _MIN_WORDS:
                    return TaskPlan(kind="compare", entities=entities, op="min", word=w)
        return TaskPlan(kind="lookup", entities=entities)
    return TaskPlan(kind="chat")


def choose_tool(task: str, tools: Sequence[ToolDef], *, arithmetic: bool = False) -> ToolDef | None:
    """The tool sharing most words with the task (first listed on ties)."""
    if not tools:
        return None
    if arithmetic:
        for t in tools:
            hay = (t.name + " " + t.description).lower()
            if any(h in hay for h in _CALC_HINTS):
                return t
        return None
    task_words = set(_words(task))
    best, best_score = tools[0], -1
    for t in tools:
        tool_words = set(_words(t.name.replace("_", " ") + " " + t.description))
        score = len(task_words & tool_words)
        if "weather" in tool_words or "temperature" in tool_words:
            score += 2 * bool(task_words & {"warmer", "colder", "hotter", "cooler", "weather", "temperature"})
        if score > best_score:
            best, best_score = t, score
    return best


def first_number(text: str | None) -> float | None:
    """The first number in a tool result (thousands commas allowed)."""
    if text is None:
        return None
    m = _NUMBER.search(text)
    if m is None:
        return None
    raw = m.group(0)
    if raw.count(",") and re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", raw):
        raw = raw.replace(",", "")
    else:
        raw = raw.replace(",", ".")
    try:
        return float(raw)
    except ValueError:
        return None


def fmt(x: float) -> str:
    """Numbers as people write them: ints without '.0', others to at most 4 decimals."""
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")


_OPS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def safe_eval(expression: str) -> float:
    """Evaluate ``+ - * / ( )`` over numbers; anything else raises ValueError."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](ev(node.left), ev(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return float(_OPS[type(node.op)](ev(node.operand)))
        raise ValueError("unsupported expression")

    try:
        return ev(ast.parse(expression, mode="eval"))
    except (SyntaxError, ZeroDivisionError) as exc:
        raise ValueError(str(exc)) from exc


def _verification(level: int, facts: str) -> list[str]:
    templates = (
        "Let me double-check the plan against the request: {f}",
        "Checking again that nothing in the question was missed: {f}",
        "Considering edge cases, such as units or ties, before committing: {f}",
        "Re-reading the tool descriptions to be sure the arguments are right: {f}",
        "One more pass over the numbers, step by step: {f}",
        "Verifying the final wording will answer exactly what was asked: {f}",
    )
    return [templates[i % len(templates)].format(f=facts) for i in range(max(0, min(level, 6)))]


@dataclass
class _Turn:
    """What one planning call works from: the situation, the task as understood, the tool results.

    ``paras`` are the reasoning paragraphs written so far; each step appends its own.
    """

    s: Situation
    plan: TaskPlan
    paras: list[str]
    results: dict[tuple[str, str], str | None]
    counts: dict[tuple[str, str], int]
    replanned: bool

    def step(
        self, headline: str, calls: tuple[tuple[str, dict[str, Any]], ...] = (), answer: str | None = None
    ) -> Step:
        return Step(tuple(self.paras), _summary(headline, self.paras), calls, answer, self.replanned)

    def verify(self, facts: str) -> None:
        self.paras += _verification(self.s.effort_level, facts)


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return (name, json.dumps(arguments, sort_keys=True))


def plan_step(s: Situation) -> Step:
    """Decide this call's reasoning and action (tool calls or the final answer)."""
    paras: list[str] = [f"The user asks: {s.task.replace(MAGIC_REDACTED, '').strip()}"]
    replanned = not s.plan_known and bool(s.calls)
    if replanned:
        paras.append(
            "I do not have my earlier reasoning for this task in context, so I must re-derive the plan "
            "from scratch and re-check the most recent tool results before relying on them."
        )
    results: dict[tuple[str, str], str | None] = {}
    counts: dict[tuple[str, str], int] = {}
    for c in s.calls:
        key = _key(c.name, c.arguments)
        counts[key] = counts.get(key, 0) + 1
        if c.result is not None or key not in results:
            results[key] = c.result
    turn = _Turn(s, understand(s.task), paras, results, counts, replanned)
    judged = grading_request(s.task)
    if judged is not None:  # a judge prompt (agentlab.evals): the simulated grading rule, labelled
        why, answer = grade(judged)
        turn.paras.append(why)
        turn.verify(answer.splitlines()[-1])
        return turn.step("Grading", answer=answer)
    if s.choice.mode == "none":
        return _no_tool_step(turn)
    repeat = _repeat_step(turn) if replanned else None
    step = repeat if repeat is not None else _STEPS.get(turn.plan.kind, _tool_step)(turn)
    step = _forced_step(turn, step) if s.choice.mode in ("required", "tool") else step
    return _skilled(step, turn.plan, s.task)


def _skilled(step: Step, plan: TaskPlan, task: str) -> Step:
    """The planned answer, or under ``skill=P`` a wrong one on the tasks the (model, task) draw misses.

    The draw is a hash, not a random number: the same model misses the same tasks in every run and
    every repeat, and two models with the same ``P`` miss different tasks.
    """
    skill = SKILL.get()
    if skill is None or step.answer is None:
        return step
    model, p = skill
    digest = hashlib.sha256(f"{model}|{task.strip()}".encode()).digest()
    if int.from_bytes(digest[:8], "big") / 2**64 < p:
        return step
    return replace(step, answer=_wrong_answer(step.answer, plan))


def _wrong_answer(answer: str, plan: TaskPlan) -> str:
    """A plausible wrong answer: another entity for a comparison, else the result off by one.

    The result is the last number before any parenthesised working, so a scorer that looks for the
    target finds it nowhere in the answer.
    """
    if plan.kind == "compare" and len(plan.entities) > 1:
        right = next((e for e in plan.entities if answer.startswith(e)), plan.entities[0])
        other = next(e for e in plan.entities if e != right)
        return f"{other} is {plan.word}."
    head = answer.rstrip(".")
    if head.endswith(")") and " (" in head:  # working after the result: "The sum is 84 (40 + 44)."
        head = head.rpartition(" (")[0]
    m = next(reversed(list(re.finditer(r"-?\d+(?:\.\d+)?", head))), None)
    if m is None:
        return "I could not work this out."
    end = "." if answer.endswith(".") else ""
    return f"{head[: m.start()]}{fmt(float(m.group()) + 1)}{head[m.end() :]}{end}"


def _no_tool_step(t: _Turn) -> Step:
    """``tool_choice: none``: the planned answer when it needs no call, else one without tools."""
    opening = list(t.paras)
    step = _STEPS.get(t.plan.kind, _tool_step)(t)
    if not step.tool_calls:
        return step
    t.paras[:] = opening
    if t.plan.kind == "arithmetic":  # computed directly, as without a calculator
        return _arithmetic_step(replace(t, s=replace(t.s, tools=())))
    tool = step.tool_calls[0][0]
    names = ", ".join(t.plan.entities)
    t.paras.append(f"Tool use is off for this turn, so I answer without calling {tool}.")
    t.verify("no tool may be called.")
    return t.step("Answering without tools", answer=f"I cannot look up {names} without calling a tool.")


def _forced_step(t: _Turn, step: Step) -> Step:
    """``required`` / a named tool: the plan's calls when they fit the choice, else the forced ones."""
    forced = t.s.choice.name
    if step.tool_calls and (forced is None or all(n == forced for n, _ in step.tool_calls)):
        return step
    tool = next((d for d in t.s.tools if d.name == forced), None) if forced else _best_tool(t)
    if tool is None:  # nothing declared to call (hosted tools only): the plan stands
        return step
    values = [next(iter(a.values()), "") for _, a in step.tool_calls] or [_forced_value(t)]
    calls = tuple(dict.fromkeys((tool.name, json.dumps({tool.arg_name(): v})) for v in values))
    todo = tuple((n, json.loads(a)) for n, a in calls)[: None if t.s.parallel else 1]
    listed = ", ".join(f"{n}({_short(a)})" for n, a in todo)
    t.paras.append(f"The request requires a call to {tool.name} now, so I call {listed}.")
    t.verify(f"calls: {listed}.")
    return t.step(f"Calling {tool.name}", todo)


def _best_tool(t: _Turn) -> ToolDef | None:
    """The tool ``required`` falls back on: a calculator for arithmetic, else the best match."""
    if t.plan.kind == "arithmetic":
        return choose_tool(t.s.task, t.s.tools, arithmetic=True) or choose_tool(t.s.task, t.s.tools)
    return choose_tool(t.s.task, t.s.tools)


def _forced_value(t: _Turn) -> str:
    """The argument of a forced call the plan did not want: the first name, the expression, the task."""
    if t.plan.entities:
        return t.plan.entities[0]
    return t.plan.expression or t.s.task.replace(MAGIC_REDACTED, "").strip()


def _repeat_step(t: _Turn) -> Step | None:
    """A model that lost its plan repeats its most recent batch of calls once (see module docstring)."""
    repeat = [
        (c.name, c.arguments) for c in _last_batch(t.s.calls) if t.counts[_key(c.name, c.arguments)] == 1
    ]
    if not repeat:
        return None
    names = ", ".join(f"{n}({_short(a)})" for n, a in repeat)
    t.paras.append(f"To be safe I will call {names} again.")
    t.verify(f"repeat {names}.")
    return t.step("Re-planning", tuple(repeat))


def _chat_step(t: _Turn) -> Step:
    """Nothing to look up or compute: a polite fixed reply."""
    t.paras.append("There is nothing to look up or compute here, so I will answer directly.")
    t.verify("a direct reply is enough.")
    answer = "I can compare, look up and add up values with the tools you give me; ask me about named things."
    return t.step("Answering directly", answer=answer)


def _arithmetic_step(t: _Turn) -> Step:
    """An expression: through a calculator-like tool when given one, else computed directly."""
    expression = t.plan.expression
    tool = choose_tool(t.s.task, t.s.tools, arithmetic=True)
    if tool is not None:
        return _calculator_step(t, tool)
    try:
        answer = f"{expression} = {fmt(safe_eval(expression))}"
    except ValueError:
        answer = f"I cannot evaluate {expression}."
    t.paras.append(f"Computing {expression} step by step gives the result.")
    t.verify(answer)
    return t.step("Computing", answer=answer)


def _calculator_step(t: _Turn, tool: ToolDef) -> Step:
    """Call the calculator tool, or report what it returned."""
    expression = t.plan.expression
    key = _key(tool.name, {tool.arg_name(): expression})
    if key not in t.results or t.results[key] is None:
        t.paras.append(f"I will evaluate {expression} with the {tool.name} tool.")
        t.verify(f"the expression is {expression}.")
        return t.step("Planning the calculation", ((tool.name, {tool.arg_name(): expression}),))
    value = first_number(t.results[key])
    if value is None:
        answer = f"The {tool.name} tool returned {t.results[key]!r}, which is not a number."
    else:
        answer = f"{expression} = {fmt(value)}"
    t.paras.append(f"The tool says {t.results[key]}.")
    t.verify(answer)
    return t.step("Reporting the result", answer=answer)


def _tool_step(t: _Turn) -> Step:
    """Lookups, comparisons and aggregates: one call per name, then the answer from the results."""
    plan = t.plan
    tool = choose_tool(t.s.task, t.s.tools)
    if tool is None:
        names = ", ".join(plan.entities)
        t.paras.append(f"I would need a tool to look up {names}, and none was provided.")
        t.verify("no tool is available.")
        return t.step("No tool available", answer=f"I have no tool to look up {names}.")
    arg = tool.arg_name()
    needed = [(tool.name, {arg: e}) for e in plan.entities]
    missing = [c for c in needed if t.results.get(_key(*c)) is None]
    if missing:
        todo = missing if t.s.parallel else missing[:1]
        how = "in parallel, since the calls are independent" if len(todo) > 1 else "next"
        listed = ", ".join(f"{tool.name}({a[arg]!r})" for _, a in todo)
        t.paras.append(f"I need {tool.name} for {', '.join(plan.entities)}. I will call {listed} {how}.")
        t.verify(f"calls: {listed}.")
        return t.step(f"Calling {tool.name}", tuple(todo))
    values = [(e, t.results[_key(tool.name, {arg: e})]) for e in plan.entities]
    listed = "; ".join(f"{e}: {r}" for e, r in values)
    t.paras.append(f"The results are {listed}.")
    answer = _answer(plan, values)
    t.paras.append(f"So: {answer}")
    t.verify(answer)
    return t.step("Answering from the results", answer=answer)


#: The step of each task kind (lookup, compare and aggregate share :func:`_tool_step`).
_STEPS: dict[str, Callable[[_Turn], Step]] = {"chat": _chat_step, "arithmetic": _arithmetic_step}


def _answer(plan: TaskPlan, values: list[tuple[str, str | None]]) -> str:
    if plan.kind == "lookup":
        return " ".join(f"{e}: {r}." for e, r in values)
    nums = [(e, first_number(r)) for e, r in values]
    bad = [e for e, n in nums if n is None]
    if bad:
        return f"I could not read a number for {', '.join(bad)}."
    pairs = [(e, float(n)) for e, n in nums if n is not None]
    if plan.kind == "compare":
        pick = max if plan.op == "max" else min
        best = pick(pairs, key=lambda p: p[1])
        if sum(1 for _, v in pairs if v == best[1]) > 1:
            tied = [e for e, v in pairs if v == best[1]]
            return f"{' and '.join(tied)} are tied at {fmt(best[1])}."
        others = ", ".join(f"{e} {fmt(v)}" for e, v in pairs if e != best[0])
        return f"{best[0]} is {plan.word} ({fmt(best[1])} vs {others})."
    vals = [v for _, v in pairs]
    if plan.op == "sum":
        total = sum(vals)
        expr = " + ".join(fmt(v) for v in vals)
        return f"The {plan.word} is {fmt(total)} ({expr})."
    if plan.op == "mean":
        return f"The {plan.word} is {fmt(sum(vals) / len(vals))} (from {', '.join(fmt(v) for v in vals)})."
    if plan.op == "difference":
        diff = vals[0] - sum(vals[1:])
        return f"The difference is {fmt(diff)} ({' - '.join(fmt(v) for v in vals)})."
    prod = math.prod(vals)
    return f"The product is {fmt(prod)} ({' * '.join(fmt(v) for v in vals)})."


def _last_batch(calls: Sequence[PastCall]) -> list[PastCall]:
    """The calls of the most recent model turn (those sharing the last call's batch prefix)."""
    if not calls:
        return []
    # A batch is a maximal run of calls with distinct (name, args); the sim issues batches of those.
    batch: list[PastCall] = []
    seen: set[str] = set()
    for c in reversed(calls):
        key = c.name + json.dumps(c.arguments, sort_keys=True)
        if key in seen:
            break
        seen.add(key)
        batch.append(c)
    return list(reversed(batch))


def _short(args: dict[str, Any]) -> str:
    return ", ".join(repr(v) for v in args.values())


def _summary(headline: str, paras: Sequence[str]) -> str:
    """A reasoning summary: a bold headline and the first sentence of each paragraph."""
    firsts = [re.split(r"(?<=[.!?])\s", p, maxsplit=1)[0] for p in paras]
    return f"**{headline}**\n\n" + " ".join(firsts)
