"""The plan of a sweep and its resume.

Every (task, model, setting, repeat) as a ``Plan``, what the results file already holds
(``read_finished``) and what is left to run (``pending``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlab.adapters.base import Adapter, ModelRef, check_simulated, parse_model
from agentlab.errors import (
    ConfigError,
)
from agentlab.sweeps.settings import Setting, check_setting
from agentlab.sweeps.store import RunKey, read_rows, row_key
from agentlab.sweeps.tasks import Task

__all__ = [
    "Finished",
    "Plan",
    "build_plan",
    "check_arms",
    "pending",
    "read_finished",
    "resolve_models",
    "spend",
]

@dataclass
class Plan:
    """One run to make: its key in the results file, and what it runs."""

    key: RunKey
    task: Task
    ref: ModelRef
    setting: Setting


def resolve_models(
    models: Sequence[str | ModelRef], adapter_factory: Callable[[ModelRef], Adapter] | None
) -> list[ModelRef]:
    """Parse and check the model list once, so a typo fails before anything runs, not in every run."""
    if isinstance(models, str):
        raise ConfigError("models must be a list of 'provider:model' strings, e.g. ['openai:sim-reasoner']")
    refs = [parse_model(m) for m in models]
    if not refs:
        raise ConfigError("no models to run")
    for ref in refs if adapter_factory is None else ():
        check_simulated(ref)  # a simulated-model typo fails here with the nearest name, not in every run
    dup = sorted({str(r) for r in refs if sum(str(x) == str(r) for x in refs) > 1})
    if dup:
        raise ConfigError(f"duplicate models {dup}")
    return refs


def check_arms(refs: Sequence[ModelRef], setting_list: Sequence[Setting], budget_usd: float | None) -> None:
    """Refuse combinations a provider cannot run, and a USD budget that could not be measured."""
    for ref in refs:
        for s in setting_list:
            if s.applies_to(ref.provider):
                check_setting(ref, s)
    if budget_usd is not None:
        from agentlab.costs.pricing import get_price

        unpriced = [str(r) for r in refs if get_price(r.provider, r.model) is None]
        if unpriced:
            raise ConfigError(
                f"budget_usd needs a price for every model; none for {unpriced}. Add one with "
                "agentlab.set_price(provider, model, {...}) or use budget_tokens."
            )


def build_plan(
    task_list: Sequence[Task], refs: Sequence[ModelRef], setting_list: Sequence[Setting], repeats: int
) -> list[Plan]:
    """Every (task, model, setting, repeat) the sweep covers, in a fixed order (tasks outermost).

    Pure: the same inputs give the same keys in the same order, which is what resume relies on.
    Settings restricted to other providers (``providers=``) are left out for that model.
    """
    plan: list[Plan] = []
    for task in task_list:
        for ref in refs:
            for s in setting_list:
                if not s.applies_to(ref.provider):
                    continue
                for rep in range(repeats):
                    plan.append(Plan((task.id, str(ref), s.name, rep), task, ref, s))
    return plan


@dataclass
class Finished:
    """What the results file already holds: the last status per key and the money spent so far."""

    last_status: dict[RunKey, str] = field(default_factory=dict)
    usd: float = 0.0
    tokens: int = 0


def read_finished(path: Path, fingerprints: Mapping[str, str]) -> Finished:
    """Read every row (including superseded failures: their money was spent) and check definitions.

    A setting whose fingerprint differs from the one recorded under its name is refused, since mixing
    two definitions under one name would corrupt the comparison.
    """
    out = Finished()
    for row in read_rows(path):
        key = row_key(row)
        out.last_status[key] = str(row.get("status"))
        c, t = spend(row)
        out.usd += c
        out.tokens += t
        name = key[2]
        if name in fingerprints and row.get("settings_fingerprint") not in (None, fingerprints[name]):
            raise ConfigError(
                f"{path}: setting {name!r} was run with a different definition before (fingerprint "
                f"{row.get('settings_fingerprint')} vs {fingerprints[name]} now); give the changed "
                "setting a new name or use a new results file"
            )
    return out


def pending(plan: Sequence[Plan], last_status: Mapping[RunKey, str], retry_failed: bool) -> list[Plan]:
    """The plan minus finished keys; ``retry_failed`` also keeps keys whose last row failed."""
    todo: list[Plan] = []
    for p in plan:
        prev = last_status.get(p.key)
        if prev is None or (retry_failed and prev == "failed"):
            todo.append(p)
    return todo


def _usd(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else 0.0


def spend(row: Mapping[str, Any]) -> tuple[float, int]:
    """What a row cost (USD, input + output tokens): the run's, plus its judges' (an evaluation's).

    A judge's spend is kept out of the run's own columns, but it is money spent, so the budget
    guard and the report count it.
    """
    usd = _usd(row.get("total_cost_usd"))
    tokens = (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
    for score in (row.get("scores") or {}).values():
        judge = score.get("judge") if isinstance(score, dict) else None
        if isinstance(judge, dict):
            usd += _usd(judge.get("cost_usd"))
            tokens += (judge.get("input_tokens") or 0) + (judge.get("output_tokens") or 0)
    return usd, int(tokens)
