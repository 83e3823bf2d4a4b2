"""Pacing: simulated replies delivered at a chosen speed, so streaming can be watched and timed.

A simulated model answers as fast as the machine can frame it (a whole tool loop in a fraction of a
second), which is right for tests and wrong for a person who wants to see reasoning stream into a
panel, or for a throughput figure that should mean something. Pacing is a model option, separate
from faults (a fault is a failure to test; pacing is a speed)::

    openai:sim-reasoner+tps=40            40 tokens per second
    anthropic:sim-thinker+tps=60+ttft=800 the first token after 800 ms, then 60 tokens per second

* ``tps=N``: tokens per second of streamed output. Each delta event (reasoning, text, tool-call
  arguments, in every protocol) is preceded by a pause of ``tokens / N`` seconds, its tokens counted
  by the simulator's tokenizer on the text the event carries (:func:`delta_tokens`), so the rate a
  client measures is the one asked for, whatever the protocol's chunk size.
* ``ttft=MS``: time to first token: a pause of MS milliseconds before the first event of a stream
  (a non-streaming reply waits ``ttft`` only, then arrives whole).

Both are checked when the model string is read (:func:`parse_options`), so a typo is a one-line
error before anything is sent, never a silently fast run.

One more option is not a speed but lives in the same grammar, so it is checked the same way:

* ``skill=P``: the simulated model's final answer is right on a share ``P`` (0 to 1) of tasks and a
  plausible wrong answer on the rest (:func:`model_skill`; the draw is in
  :mod:`agentlab.sim.reasoner`). It exists so that an evaluation on simulated models has differences
  to find; it is deterministic per (model, task), so repeats of a task agree, as at temperature 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentlab.sim.tokenizer import count_tokens

__all__ = ["OPTIONS", "Pace", "PaceError", "delta_tokens", "model_skill", "parse_options", "read_options"]

#: Keys under which a delta event carries streamed text, in every simulated protocol.
_TEXT_KEYS = frozenset(
    {"delta", "thinking", "text", "partial_json", "reasoning_content", "reasoning", "content", "arguments"}
)

#: The model options the simulator reads after ``+`` (``sim-reasoner+fault=429x1+tps=40``).
OPTIONS = ("fault", "tps", "ttft", "skill")


class PaceError(ValueError):
    """A model option outside the grammar above (named, never ignored)."""


@dataclass(frozen=True)
class Pace:
    """How fast a reply is delivered: tokens per second, and the pause before the first token."""

    tps: float | None = None
    ttft_ms: int = 0

    def before(self, raw: bytes) -> float:
        """Seconds before a delta event whose framed bytes are ``raw`` (0 when unpaced)."""
        return delta_tokens(raw) / self.tps if self.tps else 0.0

    def first(self) -> float:
        """Seconds before the first event."""
        return self.ttft_ms / 1000


def _number(key: str, value: str, low: float, high: float) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not low <= number <= high:  # NaN fails too
        raise PaceError(f"model option {key}={value!r}: expected a number from {low:g} to {high:g}")
    return number


def parse_options(raw: str) -> tuple[str, str | None, Pace]:
    """``sim-reasoner+fault=429x1+tps=40`` -> (``sim-reasoner``, ``429x1``, ``Pace(tps=40)``).

    Raises :class:`PaceError` naming an unknown option or a value out of range.
    """
    base, fault, pace, _ = read_options(raw)
    return base, fault, pace


def model_skill(raw: str) -> float | None:
    """The ``skill=P`` option of a model string (``None`` without one: every answer as planned)."""
    return read_options(raw)[3]


def read_options(raw: str) -> tuple[str, str | None, Pace, float | None]:
    """Every option of a model string in one pass: name, fault spec, pace and skill.

    Raises :class:`PaceError` naming an unknown option or a value out of range.
    """
    base, _, opts = raw.partition("+")
    fault: str | None = None
    skill: float | None = None
    tps: float | None = None
    ttft = 0
    for opt in opts.split("+") if opts else []:
        key, eq, value = opt.partition("=")
        if key not in OPTIONS or not eq:
            raise PaceError(f"unknown simulator model option {opt!r}; options: fault=, tps=, ttft=, skill=")
        if key == "fault":
            fault = value
        elif key == "skill":
            skill = _number(key, value, 0, 1)
        elif key == "tps":
            tps = _number(key, value, 0.1, 100_000)
        else:
            ttft = int(_number(key, value, 0, 600_000))
    return base, fault, Pace(tps, ttft), skill


def _text_tokens(value: Any, key: str | None) -> int:
    if isinstance(value, str):
        return count_tokens(value) if key in _TEXT_KEYS else 0
    if isinstance(value, dict):
        return sum(_text_tokens(v, k) for k, v in value.items())
    if isinstance(value, list):
        return sum(_text_tokens(v, key) for v in value)
    return 0


def delta_tokens(raw: bytes) -> int:
    """Tokens of streamed text in one framed SSE event (at least 1: a delta is never free)."""
    total = 0
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("data:"):
            try:
                total += _text_tokens(json.loads(line[5:]), None)
            except ValueError:
                continue
    return max(1, total)
