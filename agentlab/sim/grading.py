"""The simulated models as a judge: a deterministic, labelled grading rule (simulated, not a model).

Why the simulator grades at all: ``agentlab.evals.judge`` runs a model-graded scorer through agentlab
itself, and offline tests, docs and notebooks need that judge to answer in a parseable way. A real
model reads the rubric; the simulator does not. It applies one documented rule, says so in its
answer, and ends with the grade line the judge prompt asks for.

The prompt it recognises (the layout :mod:`agentlab.evals.judge` sends): an ``<answer>...</answer>``
section, an optional ``<reference>...</reference>`` section, and a closing instruction naming the
grade line, either ``GRADE: PASS`` / ``GRADE: FAIL`` or ``GRADE: <integer from 0 to N>``.

The rule: with a reference, PASS when the reference (case-folded, whitespace collapsed, a trailing
full stop dropped) appears in the answer not inside a longer word or number; without one, PASS when
the answer is not empty. On a numeric scale PASS is ``N`` and FAIL ``0``. The rubric is ignored.
"""

from __future__ import annotations

import re

__all__ = ["GradeRequest", "grade", "grading_request"]

_SECTION = r"<{0}>\s*(.*?)\s*</{0}>"
_SCALE = re.compile(r"GRADE:\s*<integer from 0 to (\d+)>")


class GradeRequest:
    """What the simulator reads from a judge prompt: the answer, the reference, the scale."""

    def __init__(self, answer: str, reference: str | None, scale: int | None) -> None:
        self.answer = answer
        self.reference = reference
        self.scale = scale


def _section(text: str, name: str) -> str | None:
    m = re.search(_SECTION.format(name), text, re.DOTALL)
    return m.group(1) if m else None


def grading_request(task: str) -> GradeRequest | None:
    """The judge prompt's parts, or ``None`` when ``task`` is not one (no answer section or grade line)."""
    answer = _section(task, "answer")
    if answer is None or "GRADE:" not in task:
        return None
    scale = _SCALE.search(task)
    return GradeRequest(answer, _section(task, "reference"), int(scale.group(1)) if scale else None)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def grade(req: GradeRequest) -> tuple[str, str]:
    """``(reasoning paragraph, answer text)`` for a judge prompt, by the module's rule."""
    answer = _norm(req.answer)
    if req.reference is None:
        passed = bool(answer)
        why = "the answer is not empty" if passed else "the answer is empty"
    else:
        ref = _norm(req.reference)
        passed = bool(ref) and re.search(r"(?<![\w.])" + re.escape(ref) + r"(?![\w])", answer) is not None
        why = f"the reference answer {'appears' if passed else 'does not appear'} in the answer"
    verdict = ("PASS" if passed else "FAIL") if req.scale is None else str(req.scale if passed else 0)
    reasoning = f"I am grading an answer. By the simulated judge's rule, {why}."
    return reasoning, f"Simulated judge: {why}.\nGRADE: {verdict}"
