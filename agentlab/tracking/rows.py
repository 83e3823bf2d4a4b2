"""What one results row becomes in an experiment tracker: params, metrics and tags, as plain values.

Why a module of its own, with no tracker import: what may leave agentlab is decided here, once, by a
whitelist, and it is tested without the tracker installed. The writer (:mod:`.mlflow_log`) only hands
these values to the tracker's client.

The input is a sweep results row (:data:`agentlab.sweeps.store.ROW_FIELDS`; a comparison's
``runs_frame()`` has the same columns). Every column is in exactly one of three groups:

* :data:`PARAM_COLUMNS`: what identifies the run (task id, model, provider, setting, repeat, the
  setting's fingerprint);
* :data:`METRIC_COLUMNS`: counts, token buckets (reasoning and cache included), costs and latency;
  ``success`` and ``output_valid`` as 1.0 / 0.0;
* :data:`TAG_COLUMNS`: short labels (status, stop reason, error type, reasoning and price source).

and :data:`NOT_LOGGED` holds the free-text columns (the final answer, the structured answer and the
error message), which never go to a tracker: a tracker is a shared, durable store, and only labels and
numbers are needed to compare runs there. A test keeps the groups covering ``ROW_FIELDS`` exactly, so
a new column is not logged until someone puts it in a group.

Unknown values (``None``/``<NA>``/NaN: reasoning tokens a provider did not report, an unpriced
model's cost, an unscored run's success) are **not logged** (a metric of 0 would read as "none"), and
the run's ``agentlab.unknown`` tag lists the metrics left out for that reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agentlab.adapters._simulated import is_simulated

if TYPE_CHECKING:
    from agentlab.sweeps.settings import Setting

__all__ = [
    "METRIC_COLUMNS",
    "NOT_LOGGED",
    "PARAM_COLUMNS",
    "TAG_COLUMNS",
    "TrackedRun",
    "is_simulated_model",
    "setting_params",
    "tracked_run",
]

PARAM_COLUMNS = ("task_id", "model", "provider", "setting", "repeat", "settings_fingerprint")
METRIC_COLUMNS = (
    "success",
    "steps",
    "tool_calls",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "reasoning_items_dropped",
    "input_cost_usd",
    "cache_read_cost_usd",
    "cache_write_cost_usd",
    "output_cost_usd",
    "reasoning_cost_usd",
    "total_cost_usd",
    "provider_cost_usd",
    "retries",
    "rate_limited",
    "latency_s",
    "output_valid",
    "resumed_steps",
)
TAG_COLUMNS = (
    "run_id",
    "status",
    "stop_reason",
    "error_type",
    "reasoning_source",
    "price_source",
    "price_updated",
    "started_at",
    "backend",
    "pricing_tier",
    "tool_servers",
    "v",
)
_ABSENT_BY_DESIGN = ("provider_cost_usd", "output_valid", "resumed_steps", "backend", "pricing_tier")
"""Missing on most runs for a known reason (no provider-reported cost; no structured output asked):
left out like any unknown, but not listed in ``agentlab.unknown``; the batch backend's columns are
set on batch sweeps only (``resumed_steps`` on runs a restarted batch driver resumed)."""
NOT_LOGGED = ("output", "output_value", "error", "scores", "called_tools")
"""Free text (answers, error messages, score explanations, tool arguments): kept in the results file,
never sent to a tracker."""

_TAG_CHARS = 250  # a label, not a document (MLflow allows far more; nothing here needs it)


def _known(v: Any) -> bool:
    if v is None:
        return False
    try:
        return not bool(v != v)  # NaN and pd.NA
    except TypeError:  # pd.NA's comparison is NA, whose truth value raises
        return False


def is_simulated_model(model: str) -> bool:
    """Whether a ``provider:model`` string (or a comparison label, ``...#2``) names a simulated model."""
    return is_simulated(model.partition(":")[2] or model)


@dataclass(frozen=True)
class TrackedRun:
    """One results row, split into what a tracker's run takes. Values are strings or floats only."""

    name: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    start_ms: int | None
    """Start of the run (``started_at``) in ms since the epoch; None when the row has none."""
    end_ms: int | None
    """``start_ms`` plus the run's latency."""
    failed: bool


def _start_ms(v: Any) -> int | None:
    if not _known(v):
        return None
    if isinstance(v, str):
        v = datetime.fromisoformat(v)
    ts = getattr(v, "timestamp", None)
    return int(ts() * 1000) if callable(ts) else None


def tracked_run(row: Mapping[str, Any], extra_params: Mapping[str, str] = {}) -> TrackedRun:
    """The params, metrics and tags of one results row (module docstring: what goes where)."""
    params = {c: str(row[c]) for c in PARAM_COLUMNS if _known(row.get(c))}
    params.update(extra_params)
    metrics: dict[str, float] = {}
    unknown: list[str] = []
    for c in METRIC_COLUMNS:
        v: Any = row.get(c)
        if not _known(v):
            if c not in _ABSENT_BY_DESIGN:
                unknown.append(c)
        elif isinstance(v, bool) or type(v).__name__ == "bool_":  # numpy's bool too
            metrics[c] = 1.0 if v else 0.0
        elif math.isfinite(f := float(v)):
            metrics[c] = f
        else:
            unknown.append(c)
    tags = {f"agentlab.{c}": str(row[c])[:_TAG_CHARS] for c in TAG_COLUMNS if _known(row.get(c))}
    if unknown:
        tags["agentlab.unknown"] = ",".join(unknown)
    model = str(row.get("model") or "")
    if is_simulated_model(model):
        tags["agentlab.simulated"] = "true"
    start = _start_ms(row.get("started_at"))
    latency = metrics.get("latency_s")
    end = start + int(latency * 1000) if start is not None and latency is not None else None
    name = f"{row.get('task_id')} · {model} · {row.get('setting')} · r{row.get('repeat')}"
    return TrackedRun(name, params, metrics, tags, start, end, failed=row.get("status") == "failed")


def _flat(prefix: str, data: Mapping[str, Any], out: dict[str, str]) -> None:
    for k, v in data.items():
        if isinstance(v, Mapping):
            _flat(f"{prefix}{k}.", v, out)
        elif v is not None:
            out[f"{prefix}{k}"] = ",".join(map(str, v)) if isinstance(v, list | tuple) else str(v)


_PRIVATE_KNOBS = ("system", "metadata", "user_id")
"""Setting fields that are text or identifiers of the user's, not knobs: logged as "set", never by value."""


def setting_params(settings: Iterable[Setting]) -> dict[str, dict[str, str]]:
    """Per setting name, its knobs as ``setting.<knob>`` params (only those that differ from the default).

    The system prompt, request metadata and user id are logged as ``"set"`` (whether one was given),
    not by value: they are the user's text and identifiers, not what a comparison varies.
    """
    from agentlab.neutral.request import CallOptions

    default = CallOptions().model_dump(mode="json")
    out: dict[str, dict[str, str]] = {}
    for s in settings:
        knobs: dict[str, str] = {}
        data: dict[str, Any] = {
            "continuation_policy": s.continuation_policy,
            "max_steps": s.max_steps,
            "max_output_tokens": s.max_output_tokens,
            "providers": list(s.providers) if s.providers is not None else None,
            "reasoning": s.reasoning.model_dump(mode="json", exclude_none=True) if s.reasoning else None,
        }
        options = s.call_options.model_dump(mode="json")
        data.update({k: v for k, v in options.items() if v != default.get(k) and k not in _PRIVATE_KNOBS})
        _flat("setting.", data, knobs)
        for k in _PRIVATE_KNOBS:
            if getattr(s, k, None) or options.get(k):
                knobs[f"setting.{k}"] = "set"
        out[s.name] = knobs
    return out
