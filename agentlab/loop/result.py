"""What a finished run hands back: output, status, per-call records, usage and cost, durable events.

Everything here is portable (pydantic values, JSON- and pickle-safe): no reasoning text, no opaque
item can be reached from a ``RunResult``. That is what lets a result be saved with a notebook.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentlab.costs.pricing import Cost
from agentlab.errors import StepLimitError
from agentlab.loop.tools import ToolSource
from agentlab.neutral._shapes import Shape
from agentlab.neutral.events import DurableEvent, ModelCallCompletedEvent, StopReason
from agentlab.neutral.items import PortableItem
from agentlab.neutral.usage import CallUsage, sum_usage

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CallRecord", "RunResult", "RunStatus", "RunUsage"]

RunStatus = Literal["completed", "failed", "cancelled", "step_limit"]


class CallRecord(BaseModel):
    """One model call: what the usage frame's row is made of."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    step: int
    provider: str
    api: str | None = None
    model: str
    response_id: str | None = None
    stop_reason: StopReason | None = None
    usage: CallUsage
    cost: Cost
    latency_s: float | None = None
    first_reasoning_s: float | None = None
    first_text_s: float | None = None
    reasoning_items_dropped: int = 0
    """Opaque items not sent back (other provider/model/endpoint, released, or policy ``drop``)."""
    provider_cost_usd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """The provider's own cost figure (OpenRouter ``usage.cost``), kept beside ``cost`` (agentlab's,
    from the price table); None: the provider reports none (left out of dumps then)."""
    started_s: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """When the call's last attempt was sent, seconds from the run's start (monotonic clock): the
    timeline's start of this call, so retries and waits before it show as a gap. None in results
    saved before it was recorded (left out of dumps then)."""

    @classmethod
    def of(cls, event: ModelCallCompletedEvent, *, api: str | None, cost: Cost) -> CallRecord:
        """The record of a completed call: the event's own figures, plus what the event does not carry.

        The event keeps the cost as a total only and does not name the API; every other field is
        read from it, so the record and the event cannot tell two different stories about a call.
        """
        return cls(api=api, cost=cost, **{k: getattr(event, k) for k in _FROM_EVENT})


_FROM_EVENT = tuple(k for k in CallRecord.model_fields if k not in ("api", "cost"))
"""The fields a ``CallRecord`` takes from its ``ModelCallCompletedEvent`` as they are."""


def _reported_total(records: tuple[CallRecord, ...] | list[CallRecord]) -> float | None:
    """The provider-reported cost of all calls, or None when any call reported none."""
    figures = [r.provider_cost_usd for r in records]
    if not figures or any(f is None for f in figures):
        return None
    return float(sum(f for f in figures if f is not None))


class RunUsage(BaseModel):
    """A run's tokens (summed ``CallUsage``, same convention) and cost (summed ``Cost``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = 0
    tokens: CallUsage = Field(default_factory=lambda: sum_usage(()))
    cost: Cost = Field(default_factory=Cost)
    reasoning_items_dropped: int = 0
    provider_cost_usd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Sum of the calls' provider-reported costs; None unless *every* call reported one (a partial
    sum would look like the whole)."""

    @classmethod
    def from_records(cls, records: tuple[CallRecord, ...] | list[CallRecord]) -> RunUsage:
        """The run's totals, summed from its call records so they can never disagree with them."""
        cost = Cost()
        for r in records:
            cost = cost + r.cost
        return cls(
            calls=len(records),
            tokens=sum_usage(r.usage for r in records),
            cost=cost,
            reasoning_items_dropped=sum(r.reasoning_items_dropped for r in records),
            provider_cost_usd=_reported_total(records),
        )

    # Flat accessors: the figures people look for first.
    @property
    def input_tokens(self) -> int | None:
        """Inclusive input tokens of the run (cache reads and writes inside); None if any call did not say."""
        return self.tokens.input_tokens

    @property
    def cache_read_tokens(self) -> int | None:
        """The part of ``input_tokens`` read from the provider's cache; None if any call did not say."""
        return self.tokens.cache_read_tokens

    @property
    def cache_write_tokens(self) -> int | None:
        """The part of ``input_tokens`` written to the provider's cache; None if any call did not say."""
        return self.tokens.cache_write_tokens

    @property
    def output_tokens(self) -> int | None:
        """All billed output tokens over the run, reasoning included; None if any call did not say."""
        return self.tokens.output_tokens

    @property
    def reasoning_tokens(self) -> int | None:
        """The part of ``output_tokens`` spent reasoning; None when a provider gave no figure (never 0)."""
        return self.tokens.reasoning_tokens

    @property
    def total_usd(self) -> float:
        """The run's USD total; NaN when any call was unpriced (unknown, not free)."""
        return self.cost.total

    def _repr_html_(self) -> str:
        """Tokens and cost per bucket (renders without widgets: nbconvert, GitHub)."""
        from agentlab.render.html_tables import table_html

        t, c = self.tokens, self.cost

        def n(v: int | None) -> str:
            return "<NA>" if v is None else f"{v:,}"

        def usd(v: float) -> str:
            from agentlab.render.html_tables import fmt_usd

            return "<NA> (unpriced)" if v != v else fmt_usd(v)

        rows = [
            ("input, uncached", n(t.uncached_input_tokens), usd(c.input)),
            ("input, cache read", n(t.cache_read_tokens), usd(c.cache_read)),
            ("input, cache write", n(t.cache_write_tokens), usd(c.cache_write)),
            ("output (all)", n(t.output_tokens), usd(c.output)),
            (f"  of which reasoning ({t.reasoning_source})", n(t.reasoning_tokens), usd(c.reasoning)),
            ("total", n(t.total_tokens), usd(c.total)),
        ]
        cap = f"Usage over {self.calls} model call(s)"
        if self.reasoning_items_dropped:
            cap += f"; {self.reasoning_items_dropped} opaque reasoning item(s) dropped"
        return table_html(("bucket", "tokens", "cost"), rows, caption=cap)


def value_shape(value: Any) -> str:
    """A structured answer as its type and field names (``<Weather: city, temp_c>``), never its values.

    A pydantic instance shows its class's declared fields (the caller's own names); a dict or list
    only its size, since its keys may be the model's words.
    """
    if isinstance(value, BaseModel):
        names = list(type(value).model_fields)
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return f"<{type(value).__name__}: {shown}>"
    if isinstance(value, dict):
        return f"<dict, {len(value)} keys>"
    if isinstance(value, list):
        return f"<list, {len(value)} items>"
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return f"<{type(value).__name__}>"


def _fmt_int(v: int | None) -> str:
    return "<NA>" if v is None else f"{v:,}"


def _fmt_usd(v: float) -> str:
    """The money rule of every table (``fmt_usd``); ``<NA>`` for an unpriced run (unknown, not free)."""
    from agentlab.render.html_tables import fmt_usd

    return fmt_usd(v)


class RunResult(BaseModel):
    """The outcome of a run.

    ``status`` is ``completed`` (final answer), ``step_limit`` (``max_steps`` reached without one:
    not raised, call ``raise_for_status()`` to turn it into ``StepLimitError``), ``failed`` (``error``
    says why; ``arun`` raised it) or ``cancelled``. ``events`` are the durable records only.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    provider: str
    model: str
    status: RunStatus
    output: str | None = None
    output_value: Any = None
    """The final answer validated into the run's ``output_type``: the pydantic instance, or the
    parsed JSON for a schema dict; None without ``output_type`` (or for a refusal). It is the
    answer's text in structured form, so it is as portable as ``output``."""
    stop_reason: StopReason | None = None
    steps: int = 0
    usage: RunUsage = Field(default_factory=RunUsage)
    calls: tuple[CallRecord, ...] = ()
    history: tuple[PortableItem, ...] = ()
    events: tuple[DurableEvent, ...] = ()
    error: str | None = None
    error_type: str | None = None
    setup_s: float | None = None
    """Seconds spent building the run's adapter (provider SDK import, client creation) before its
    clock started; kept apart so no model latency includes it. ``None``: an adapter was given."""
    tool_sources: dict[str, ToolSource] = Field(default_factory=dict)
    """Tool name -> where it came from, for the tools that are not Python functions here (an MCP
    server's, with the server's name and version as of the run's end); empty when none."""

    def raise_for_status(self) -> RunResult:
        """Return self when completed; raise ``StepLimitError`` for ``step_limit``."""
        if self.status == "step_limit":
            raise StepLimitError(f"run {self.run_id} reached max_steps ({self.steps}) without a final answer")
        return self

    def usage_frame(self) -> pd.DataFrame:
        """One row per model call (see ``agentlab.costs.frames`` for columns and dtypes)."""
        from agentlab.costs.frames import usage_frame

        return usage_frame(self.calls)

    def __str__(self) -> str:
        return self.output or f"<{self.status}>"

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """Pydantic's repr, with ``output_value`` as its type and field names (see ``value_shape``)."""
        for name, value in super().__repr_args__():
            yield name, Shape(value_shape(value)) if name == "output_value" else value

    def _repr_html_(self) -> str:
        """Plain-text rows; ``fields_html`` escapes every one (model, error and output come from outside)."""
        from agentlab.render.html_tables import fields_html

        u = self.usage
        rows = [
            ("model", f"{self.provider}:{self.model}"),
            ("status", self.status + (f" ({self.stop_reason})" if self.stop_reason else "")),
            ("steps", str(self.steps)),
            ("input tokens", _fmt_int(u.input_tokens)),
            ("cache read / write", f"{_fmt_int(u.cache_read_tokens)} / {_fmt_int(u.cache_write_tokens)}"),
            ("output tokens (reasoning)", f"{_fmt_int(u.output_tokens)} ({_fmt_int(u.reasoning_tokens)})"),
            ("cost", _fmt_usd(u.cost.total)),
        ]
        if u.reasoning_items_dropped:
            rows.append(("reasoning items dropped", str(u.reasoning_items_dropped)))
        if self.output_value is not None:
            rows.append(("output value", value_shape(self.output_value)))
        if self.error:
            rows.append(("error", f"{self.error_type}: {self.error}"))
        return fields_html(rows, body=self.output or "")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(
            f"RunResult({self.provider}:{self.model}, status={self.status}, steps={self.steps}, "
            f"cost={_fmt_usd(self.usage.cost.total)}, output={self.output!r}"
            + (f", output_value={value_shape(self.output_value)}" if self.output_value is not None else "")
            + ")"
        )
