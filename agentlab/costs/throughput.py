"""Throughput of one call or one run, as plain numbers: the live views' figures, without pandas.

The usage frame computes the same figures per call, vectorised (``costs.frames._throughput``), and
``usage_by`` per group; the views cannot build a frame at each step's end (pandas is slow to import
and they render on the flusher's thread), so the rule is written here for one call and one run, and
a test checks that both give the same numbers.

The rule: the reasoning phase runs from the first reasoning delta to the first answer delta (or
to the end of the response when no answer text streamed); the answer phase from the first answer
delta to the end. Reasoning tokens / reasoning phase and answer tokens (output minus reasoning)
/ answer phase are the rates. Unknown stays ``None``, never 0: a call that streamed no reasoning, a
provider that gave no reasoning figure, a call that was not streamed.

Tokens per second only where the timing is real: a real provider, or a simulator paced with
``+tps=``. An unpaced simulated call has no rate (``None``, with ``untimed`` saying why: see
:func:`agentlab.adapters._simulated.untimed_reason`); its first-token times are still shown.

Per run: time to first reasoning / answer token is the mean over the calls that measured one (as
``usage_by(df, "run_id")``), and a rate is the run's tokens over its measured phase time, calls
without a measurement left out of both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from agentlab.adapters._simulated import untimed_reason
from agentlab.render.html_tables import fmt_rate, fmt_seconds

__all__ = ["CallTimes", "Throughput", "call_throughput", "run_throughput"]


class _Usage(Protocol):
    @property
    def output_tokens(self) -> int | None: ...

    @property
    def reasoning_tokens(self) -> int | None: ...


class CallTimes(Protocol):
    """What a call must expose (``CallRecord``, ``ModelCallCompletedEvent``, a view's call snapshot)."""

    @property
    def usage(self) -> _Usage | None:
        """The call's tokens (None: not known yet)."""

    @property
    def model(self) -> str | None:
        """The provider's model name, options included (``sim-thinker+tps=40``): tells if timing is real."""

    @property
    def latency_s(self) -> float | None:
        """Request start to completed response."""

    @property
    def first_reasoning_s(self) -> float | None:
        """Request start to the first reasoning delta (None: none streamed)."""

    @property
    def first_text_s(self) -> float | None:
        """Request start to the first answer delta (None: none streamed)."""


@dataclass(frozen=True, slots=True)
class Throughput:
    """Time to first reasoning / answer token (seconds) and tokens per second; None: unknown."""

    first_reasoning_s: float | None = None
    first_text_s: float | None = None
    reasoning_tokens_per_s: float | None = None
    answer_tokens_per_s: float | None = None
    untimed: str | None = None
    """Why there is no tokens-per-second figure at all (``"unpaced simulator"``); None: timed."""

    def parts(self, *, mean: bool = False) -> list[str]:
        """The known figures as short labelled strings (unknown ones omitted, never shown as 0).

        ``mean``: the first-token times are means over calls (a run's figures) and say so.
        """
        out = []
        m = "mean " if mean else ""
        if self.first_reasoning_s is not None:
            out.append(f"{m}1st reasoning {fmt_seconds(self.first_reasoning_s)}")
        if self.first_text_s is not None:
            out.append(f"{m}1st answer {fmt_seconds(self.first_text_s)}")
        if self.reasoning_tokens_per_s is not None:
            out.append(f"reasoning {fmt_rate(self.reasoning_tokens_per_s)}")
        if self.answer_tokens_per_s is not None:
            out.append(f"answer {fmt_rate(self.answer_tokens_per_s)}")
        if self.untimed is not None:
            out.append(f"tok/s n/a ({self.untimed})")
        return out


@dataclass(frozen=True, slots=True)
class _Phases:
    reasoning: tuple[int, float] | None  # (tokens, seconds)
    answer: tuple[int, float] | None


def _phases(c: CallTimes) -> _Phases:
    end, fr, ft, u = c.latency_s, c.first_reasoning_s, c.first_text_s, c.usage
    out = None if u is None else u.output_tokens
    reasoning = None if u is None else u.reasoning_tokens
    r_phase = a_phase = None
    if fr is not None and reasoning is not None:
        r_end = ft if ft is not None else end
        if r_end is not None and r_end - fr > 0:
            r_phase = (reasoning, r_end - fr)
    if ft is not None and end is not None and out is not None and reasoning is not None and end - ft > 0:
        a_phase = (out - reasoning, end - ft)
    return _Phases(r_phase, a_phase)


def call_throughput(c: CallTimes) -> Throughput:
    """One call's figures (the usage frame's row, as plain numbers)."""
    untimed = untimed_reason(c.model)
    p = _phases(c) if untimed is None else _Phases(None, None)
    return Throughput(
        first_reasoning_s=c.first_reasoning_s,
        first_text_s=c.first_text_s,
        reasoning_tokens_per_s=None if p.reasoning is None else p.reasoning[0] / p.reasoning[1],
        answer_tokens_per_s=None if p.answer is None else p.answer[0] / p.answer[1],
        untimed=untimed,
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(phases: list[tuple[int, float]]) -> float | None:
    return sum(t for t, _ in phases) / sum(s for _, s in phases) if phases else None


def run_throughput(calls: Iterable[CallTimes]) -> Throughput:
    """A run's figures over its calls (``usage_by(df, "run_id")``'s rule, see the module docstring)."""
    calls = list(calls)
    reasons = [r for c in calls if (r := untimed_reason(c.model)) is not None]
    phases = [_phases(c) for c in calls if untimed_reason(c.model) is None]
    return Throughput(
        first_reasoning_s=_mean([c.first_reasoning_s for c in calls if c.first_reasoning_s is not None]),
        first_text_s=_mean([c.first_text_s for c in calls if c.first_text_s is not None]),
        reasoning_tokens_per_s=_rate([p.reasoning for p in phases if p.reasoning is not None]),
        answer_tokens_per_s=_rate([p.answer for p in phases if p.answer is not None]),
        untimed=reasons[0] if reasons and not phases else None,
    )
