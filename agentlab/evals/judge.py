"""A model-graded scorer: a judge model reads the task, the target and the final answer, and grades.

How the judge is kept honest:

* **It sees only the task input, the target and the final answer** (:func:`judge_prompt`): never
  the candidate's reasoning, tool calls or opaque state. The scorer is handed an
  :class:`~agentlab.evals.scorers.Attempt`, which holds none of those, so it could not leak them.
* **It runs through agentlab, pinned to its own provider and model** (a plain ``Run`` with no tools),
  whatever model produced the answer.
* **Its spend is its own**: tokens and cost go in the score's ``judge`` entry (and the runs table's
  ``judge_*`` columns), never into the candidate's token or cost columns.
* **Repeated judging reports agreement**: ``repeats=3`` asks three times; the score is the majority
  verdict (pass/fail) or the mean (a scale), and ``agreement`` the share of verdicts equal to the
  one reported.

The grade line the judge must end with is ``GRADE: PASS`` / ``GRADE: FAIL``, or ``GRADE: <n>`` on a
``scale`` of 0..n (the value is then ``n_given / n``). A reply without one scores ``None``
("unparseable"), never a fail. The simulated models answer judge prompts by a documented, labelled
rule (:mod:`agentlab.sim.grading`), so evaluations run offline.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from agentlab.adapters.base import Adapter, ModelRef, check_simulated, parse_model
from agentlab.errors import ConfigError
from agentlab.evals.dataset import EvalTask
from agentlab.evals.scorers import Attempt, JudgeUsage, Score, Scorer
from agentlab.neutral._inputs import int_at_least

__all__ = ["JUDGE_SYSTEM", "Judge", "judge", "judge_prompt", "parse_grade"]

JUDGE_SYSTEM = (
    "You are a strict, fair grader. Judge only the answer against the task, the reference and the "
    "rubric. Explain briefly, then end with the grade line exactly as asked."
)
_GRADE = re.compile(r"GRADE:\s*(PASS|FAIL|-?\d+(?:\.\d+)?)\b", re.IGNORECASE)


def judge_prompt(task: EvalTask, answer: str, rubric: str, scale: int | None) -> str:
    """The judge's whole view of a run: task input, target (if any), final answer, rubric."""
    parts = [f"<task>\n{task.input}\n</task>"]
    if task.target is not None:
        parts.append(f"<reference>\n{task.target}\n</reference>")
    parts.append(f"<answer>\n{answer}\n</answer>")
    parts.append(f"<rubric>\n{rubric}\n</rubric>")
    if scale is None:
        parts.append("End your reply with one line: GRADE: PASS or GRADE: FAIL.")
    else:
        parts.append(f"End your reply with one line: GRADE: <integer from 0 to {scale}>.")
    return "\n\n".join(parts)


def parse_grade(text: str | None, scale: int | None) -> bool | float | None:
    """The last grade line's verdict: a bool (pass/fail) or ``n / scale``; ``None`` if there is none."""
    found = _GRADE.findall(text or "")
    if not found:
        return None
    g = found[-1].upper()
    if scale is None:
        return {"PASS": True, "FAIL": False}.get(g)
    if g in ("PASS", "FAIL"):
        return None
    n = float(g)
    return n / scale if 0 <= n <= scale else None


def _add(a: int | float | None, b: int | float | None) -> Any:
    return None if a is None or b is None else a + b


def _reduce(verdicts: Sequence[bool | float | None]) -> tuple[bool | float | None, float | None]:
    """``(value, agreement)``: the majority (ties: fail) or the mean, and how many agreed with it."""
    known = [v for v in verdicts if v is not None]
    if not known:
        return None, None
    if all(isinstance(v, bool) for v in known):
        passes = sum(1 for v in known if v)
        value: bool | float = passes * 2 > len(known)
    else:
        value = sum(float(v) for v in known) / len(known)
        mode = Counter(float(v) for v in known).most_common(1)[0][0]
        return value, sum(1 for v in verdicts if v is not None and float(v) == mode) / len(verdicts)
    return value, sum(1 for v in verdicts if v is value) / len(verdicts)


class Judge(Scorer):
    """A model-graded scorer (build it with :func:`judge`)."""

    def __init__(
        self,
        ref: ModelRef,
        rubric: str,
        *,
        scale: int | None,
        repeats: int,
        name: str,
        adapter_factory: Callable[[ModelRef], Adapter] | None,
    ) -> None:
        self.ref, self.rubric, self.scale, self.repeats = ref, rubric, scale, repeats
        self.name, self.adapter_factory = name, adapter_factory

    def score(self, attempt: Attempt, task: EvalTask) -> Score:
        """Sync form, for use outside a running loop."""
        from agentlab.loop.sync import run_sync

        return run_sync(self.ascore(attempt, task))

    async def ascore(self, attempt: Attempt, task: EvalTask) -> Score:
        """Ask the judge ``repeats`` times (sequentially: agreement is about the model, not a race)."""
        if attempt.answer is None:
            return self._make(False, "no answer to judge")
        prompt = judge_prompt(task, attempt.answer, self.rubric, self.scale)
        verdicts: list[bool | float | None] = []
        usage = JudgeUsage(
            model=str(self.ref), input_tokens=0, output_tokens=0, reasoning_tokens=0, cost_usd=0.0
        )
        last = ""
        for _ in range(self.repeats):
            verdict, text, u = await self._once(prompt)
            verdicts.append(verdict)
            last = text or last
            usage = usage.model_copy(update={k: _add(getattr(usage, k), v) for k, v in u.items()})
        value, agreement = _reduce(verdicts)
        usage = usage.model_copy(update={"repeats": self.repeats, "agreement": agreement})
        why = last.strip().splitlines()[0][:300] if last.strip() else "no reply"
        if value is None:
            why = f"unparseable judge reply: {why}"
        return Score(name=self.name, value=value, explanation=why, judge=usage)

    async def _once(self, prompt: str) -> tuple[bool | float | None, str, dict[str, Any]]:
        """One judging run: its verdict, its reply text and its usage (unknown stays ``None``)."""
        from agentlab.loop.runner import Run

        adapter = self.adapter_factory(self.ref) if self.adapter_factory is not None else None
        run = Run(self.ref, prompt, system=JUDGE_SYSTEM, adapter=adapter, max_steps=2)
        try:
            await run.arun()
        except Exception:  # the record says what failed; the verdict is unknown, not a fail
            pass
        finally:
            if adapter is not None:
                await adapter.aclose()
        r = run.result
        if r is None:
            return None, "the judge run did not start", {"cost_usd": None}
        t = r.usage.tokens
        used = {
            "input_tokens": t.input_tokens,
            "output_tokens": t.output_tokens,
            "reasoning_tokens": t.reasoning_tokens,
            "cost_usd": r.usage.cost.total,
        }
        if r.status != "completed":
            return None, f"the judge run {r.status}: {r.error_type or ''}", used
        return parse_grade(r.output, self.scale), r.output or "", used


def judge(
    model: str = "openai:sim-reasoner",
    rubric: str = "The answer is correct and answers the task.",
    *,
    scale: int | None = None,
    repeats: int = 1,
    name: str = "judge",
    adapter_factory: Callable[[ModelRef], Adapter] | None = None,
) -> Judge:
    """A model-graded scorer pinned to ``model`` (see the module docstring).

    ``scale=None`` asks for PASS/FAIL (a bool score); ``scale=10`` for an integer 0..10 (a float
    score in 0..1). ``repeats`` judges each answer that many times and reports agreement.
    ``adapter_factory(ref)`` builds the judge's adapter (tests inject one; default: agentlab's own).
    """
    ref = parse_model(model)
    if adapter_factory is None:
        check_simulated(ref)
    if not isinstance(rubric, str) or not rubric.strip():
        raise ConfigError(f"judge {name!r}: rubric must be a non-empty string")
    if scale is not None:
        int_at_least(scale, f"judge {name!r}: scale", 1, note=" or None")
    int_at_least(repeats, f"judge {name!r}: repeats", 1)
    return Judge(ref, rubric, scale=scale, repeats=repeats, name=name, adapter_factory=adapter_factory)
