"""The tool loop: ``Run`` and ``run``/``arun``.

A run is pinned to one provider, chosen once from the model string at construction. Each step builds
a ``ModelRequest`` from the checkpoint's portable history plus this loop's continuation (the opaque
reasoning items received so far in this run), streams the adapter's events (born carrying its
``run_id``/``step``: the request's ``origin``), and on the completed response appends portable
items to history and opaque ones to the continuation. Tool calls run concurrently; their results
go back in the next request.

A ``Session`` (``agentlab.loop.session``) joins a run only through the :class:`SessionLink` hooks;
the sync bridge (``run_sync``, its worker thread and Ctrl-C handling) is ``agentlab.loop.sync``.

Invariants the tests hold us to:

* Provider errors are retried a bounded number of times on the *same* adapter (only errors the
  adapter marked ``retryable``), otherwise the run fails with the typed error. Never re-routed,
  never retried with reasoning switched off.
* The checkpoint changes only at step boundaries: a failed or cancelled model call (or tool batch)
  adds nothing, so ``history`` never holds a tool call without its result.
* On every exit (final answer, step limit, error, ``CancelledError``, ``KeyboardInterrupt``, a
  consumer leaving ``events()`` early) the continuation is released.
* ``max_steps`` reached without a final answer is *not* an exception: the result has
  ``status="step_limit"``; ``result.raise_for_status()`` raises ``StepLimitError`` when wanted.

Per-delta cost is kept low: deltas are built once by the adapter's assembler, already carrying
``run_id``/``step`` (events are frozen: nothing stamps them afterwards), and neither logged nor
written to the event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, cast, overload, runtime_checkable

import agentlab.frontend as frontend
from agentlab.adapters.base import Adapter, ModelRef, check_simulated, create_adapter, parse_model
from agentlab.adapters.registry import find_provider
from agentlab.assembly.assembler import stamped
from agentlab.errors import (
    AgentlabError,
    ConfigError,
    ModelBehaviorError,
    ProviderError,
    StorageError,
    UnknownModelError,
    UserError,
    detach_frames,
)
from agentlab.loop.checkpoint import Checkpoint, resumes_mid_turn
from agentlab.loop.continuation import Continuation
from agentlab.loop.observers import notify_run_created, notify_run_ended
from agentlab.loop.output import StructuredOutput, structured_output
from agentlab.loop.result import CallRecord, RunResult, RunStatus, RunUsage
from agentlab.loop.settings import KEYWORD_DEFAULTS, ContinuationPolicy, RunSettings, check_request
from agentlab.loop.steps import CallTiming, apply_response, retry_decision
from agentlab.loop.sync import run_sync
from agentlab.loop.tools import DEFAULT_TOOL_TIMEOUT_S, Tool, ToolLike, as_tools
from agentlab.neutral import _inputs, continuity
from agentlab.neutral.diagnostics import diagnostic
from agentlab.neutral.error_text import durable_error_text
from agentlab.neutral.events import (
    DiagnosticEvent,
    ErrorEvent,
    Event,
    EventOrigin,
    ModelCallStartedEvent,
    ModelResponse,
    ResponseCompletedEvent,
    RunCompletedEvent,
    RunEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentlab.neutral.items import (
    AssistantTextItem,
    PortableItem,
    SystemItem,
    ToolCallItem,
    ToolResultItem,
    UserItem,
)
from agentlab.neutral.request import CacheHints, CallOptions, ModelRequest, ReasoningSettings, ServiceTier
from agentlab.records.eventlog import EventLog
from agentlab.records.logs import get_logger, redact_secrets

if TYPE_CHECKING:
    from agentlab.loop.session import Session

__all__ = [
    "ContinuationPolicy",
    "Run",
    "RunStart",
    "Session",
    "SessionLink",
    "arun",
    "new_run",
    "presented",
    "run",
    "run_sync",
]

log = get_logger(__name__)

T = TypeVar("T")
E = TypeVar("E", bound=Event)
V = TypeVar("V")

_CANCEL_TYPES = (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit)


@dataclasses.dataclass(slots=True)
class _Ending:
    """How the steps of a run ended (they are a generator, so they cannot return it)."""

    status: RunStatus = "failed"
    output: str | None = None
    stop_reason: Any = None
    value: Any = None


def _new_run_id() -> str:
    return "run_" + uuid.uuid4().hex[:12]


def _route(model: object, task: object, adapter: object) -> ModelRef:
    """The run's provider from ``model``; the usual mistakes (task first, a typo) as one-line errors."""
    if (
        isinstance(model, str)
        and ":" not in model
        and isinstance(task, str)
        and find_provider(task.partition(":")[0].strip().lower()) is not None
    ):
        raise UnknownModelError(
            f"the model comes first, then the task: run({task!r}, {_short(model)!r}), not the other way round"
        )
    ref = parse_model(model)  # type: ignore[arg-type]
    if adapter is None:
        check_simulated(ref)
        return ref
    if not isinstance(adapter, Adapter):
        raise ConfigError(
            "adapter must be an agentlab adapter (stream/aclose, provider/api/model), "
            f"got {type(adapter).__name__}"
        )
    if adapter.provider != ref.provider or adapter.api != ref.api:
        raise ConfigError(
            f"adapter serves {adapter.provider}/{adapter.api} but the run is pinned to "
            f"{ref.provider}/{ref.api} by model {str(ref)!r}"
        )
    if adapter.model != ref.model:
        raise ConfigError(
            f"adapter was built for {ref.provider}:{adapter.model} but the run is for {str(ref)!r}; "
            f"build the adapter for {ref.model!r} or run {ref.provider}:{adapter.model}"
        )
    return ref


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_run_inputs(task: object, session: object, run_id: object, on_event: object) -> None:
    """What belongs to this one execution, not to its settings: the task, the session, the id, the hook."""
    if task is not None:
        _inputs.check_text(task, "task", error=UserError)
    if session is not None and not isinstance(session, SessionLink):
        raise ConfigError(f"session must be an agentlab.Session or None, got {type(session).__name__}")
    if run_id is not None and (not isinstance(run_id, str) or not run_id.strip()):
        raise ConfigError(f"run_id must be a non-empty str or None, got {run_id!r}")
    _inputs.callable_or_none(on_event, "on_event")


def _event_log(value: object) -> EventLog | None:
    if value is None or isinstance(value, EventLog):
        return value
    if isinstance(value, str | Path):
        return EventLog(value)
    raise ConfigError(
        f"event_log must be an EventLog, a path (str or Path) or None, got {type(value).__name__}"
    )


@dataclasses.dataclass(frozen=True, slots=True)
class RunStart:
    """What a session hands a run as its loop starts (the answer to :meth:`SessionLink.begin_run`).

    Explicit values instead of state written into the run: ``history`` is the portable history to
    continue from, ``notices`` the diagnostics the run records right after ``RunStartedEvent`` (what
    became of the previous loop's opaque items), ``dropped`` how many of those items the run counts
    as dropped on its first call's record (``CallRecord.reasoning_items_dropped``).
    """

    history: tuple[PortableItem, ...]
    notices: tuple[DiagnosticEvent, ...] = ()
    dropped: int = 0


@runtime_checkable
class SessionLink(Protocol):
    """What a run asks of the session it continues (``session=``): its history source and sink.

    ``agentlab.Session`` is the implementation; the protocol is the whole contract between the two,
    so neither touches the other's private members. The run reads ``system`` and ``history`` at
    construction (to check its request shape early), calls :meth:`begin_run` when its loop starts,
    :meth:`abandon_run` if it stops before recording anything, and :meth:`end_run` once its result
    exists (on every other exit: completed, step limit, failed, cancelled).
    """

    @property
    def system(self) -> str | None:
        """The system prompt a run uses when it is given none of its own."""

    @property
    def history(self) -> tuple[PortableItem, ...]:
        """The portable history as of the last ended run."""

    def begin_run(self, run: Run) -> RunStart:
        """Claim the session for ``run`` (at most one active run) and hand it its start."""

    def abandon_run(self, run: Run) -> None:
        """Give back the claim of ``run``, which recorded nothing."""

    def end_run(self, run: Run, held: int) -> None:
        """Take the ended ``run``'s result and history; ``held``: opaque items its loop released."""


class _FromSettings(Generic[V]):
    """A read-only ``Run`` attribute that is the field of the same name of its ``settings``.

    Why: the names (``run.max_steps``, ``run.reasoning``...) stay as they were, with one source.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, run: None, owner: type) -> Self: ...
    @overload
    def __get__(self, run: Run, owner: type) -> V: ...
    def __get__(self, run: Run | None, owner: type) -> V | Self:
        return self if run is None else cast("V", getattr(run.settings, self._name))

    def __set__(self, run: Run, value: object) -> None:
        raise AttributeError(f"{self._name} is read-only: a run's settings are one frozen value")


class Run:
    """One tool loop on one provider. Iterate ``events()`` or ``await arun()`` — once.

    ``adapter`` is for tests and custom transports (e.g. ``agentlab.testing.ScriptedAdapter``); it
    must serve the same provider/API as ``model``. Without it the adapter is created from ``model``
    on first use (that is when the provider SDK is imported).

    ``on_event`` gets every event as it happens; more watchers attach with :meth:`subscribe` (the
    notebook's live views do, so they never replace the caller's ``on_event``).

    ``output_type`` (a pydantic model class, or a JSON schema dict ``{"name", "schema", "strict"?}``)
    asks for a structured final answer: the schema goes to the provider (OpenAI ``text.format``,
    Anthropic ``output_config.format``) and the answer is validated into ``result.output_value``; a
    mismatch fails the run with ``OutputValidationError`` (it names fields, never values).

    ``tool_timeout`` (seconds, default ``DEFAULT_TOOL_TIMEOUT_S`` = 120; ``None``: no limit) bounds
    each tool call whose tool has no ``@tool(timeout=...)`` of its own. A call past it is abandoned:
    the model gets an error result (like any failing tool) and a ``tool_timeout`` diagnostic names the
    tool and the seconds. A call still running when the run is cancelled is abandoned too (a
    ``tool_abandoned`` diagnostic), so one Ctrl-C returns at once even while a sync tool hangs.

    The per-call knobs (``temperature``, ``top_p``, ``tool_choice``, ``parallel_tool_calls``,
    ``stream``, ``stop_sequences``, ``metadata``, ``user_id``, ``service_tier``) are flat keywords,
    or one :class:`~agentlab.neutral.request.CallOptions` as ``options=`` (reusable across runs and
    what a sweep ``Setting`` carries); a knob given both ways must agree. They are checked here
    against the provider's rules (``ProviderSpec.check_options``), so a refused one raises
    ``InvalidSettingsError`` before anything is sent or logged.

    Every configuration keyword (all but ``tools``, ``output_type``, ``adapter``, ``event_log``,
    ``session``, ``on_event``, ``run_id``) becomes one frozen :class:`~agentlab.RunSettings`,
    ``run.settings``, checked once with the rules about combinations (``agentlab.loop.settings``).
    ``settings=`` hands one over (built once, reused across runs); keywords beside it add to it and
    must agree with the values it sets.
    """

    # Read from ``settings`` (one frozen value): a run's knobs never change once it is built.
    reasoning = _FromSettings[ReasoningSettings]()
    cache = _FromSettings[CacheHints | None]()
    max_steps = _FromSettings[int]()
    max_output_tokens = _FromSettings[int | None]()
    continuation_policy = _FromSettings[ContinuationPolicy]()
    retries = _FromSettings[int]()
    retry_delay = _FromSettings[float]()
    provider_options = _FromSettings[dict[str, Any]]()
    tool_timeout = _FromSettings[float | None]()
    options = _FromSettings[CallOptions]()

    def __init__(
        self,
        model: str | ModelRef,
        task: str | None = None,
        *,
        tools: Iterable[ToolLike] = (),
        system: str | None = None,
        reasoning: ReasoningSettings | Mapping[str, Any] | str | None = None,
        cache: CacheHints | None = CacheHints(),  # noqa: B008 - frozen value
        max_steps: int = 20,
        max_output_tokens: int | None = None,
        adapter: Adapter | None = None,
        event_log: EventLog | str | Path | None = None,
        session: SessionLink | None = None,
        continuation_policy: ContinuationPolicy = "verbatim",
        on_event: Callable[[RunEvent], Any] | None = None,
        run_id: str | None = None,
        retries: int = 2,
        retry_delay: float = 0.5,
        provider_options: Mapping[str, Any] | None = None,
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S,
        output_type: type[Any] | Mapping[str, Any] | None = None,
        options: CallOptions | Mapping[str, Any] | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        tool_choice: str | None = None,
        parallel_tool_calls: bool | None = None,
        stream: bool | None = None,
        stop_sequences: Sequence[str] | None = None,
        metadata: Mapping[str, str] | None = None,
        user_id: str | None = None,
        service_tier: ServiceTier | None = None,
        settings: RunSettings | None = None,
    ) -> None:
        self.ref = _route(model, task, adapter)
        # The configuration keywords, by name (KEYWORD_DEFAULTS), become one value, checked once there.
        config = {k: v for k, v in locals().items() if k in KEYWORD_DEFAULTS}
        self.settings = RunSettings.merged(settings, config, self.ref.provider)
        self.settings.check_model(self.ref)
        _check_run_inputs(task, session, run_id, on_event)
        self.tools: dict[str, Tool] = as_tools(tools)
        self.settings.check_tools(self.tools)
        self.output: StructuredOutput | None = structured_output(output_type)
        self._on_event = on_event
        self.run_id = run_id or _new_run_id()
        self.session = session
        self.task = task
        self.event_log = _event_log(event_log)
        self._set_up(adapter, session)

    def _set_up(self, adapter: Adapter | None, session: SessionLink | None) -> None:
        """Everything built from the checked inputs: the history, the state, the provider's check."""
        self._adapter = adapter
        self._owns_adapter = adapter is None
        self._setup_error: BaseException | None = None
        self.setup_s: float | None = None
        """Seconds spent building this run's adapter (SDK import, client creation); never inside a
        model's ``latency_s``. ``None``: the adapter was given (nothing to set up) or not built yet."""
        self._system = self.settings.system
        if self._system is None and session is not None:
            self._system = session.system
        if self._system is not None:
            _inputs.check_text(self._system, "system")
        # The request shape, checked once now, so a bad one fails here and not at step 1.
        self._specs = tuple(t.spec for t in self.tools.values())
        self.checkpoint = Checkpoint(
            run_id=self.run_id,
            provider=self.ref.provider,
            api=self.ref.api,
            model=self.ref.model,
            history=self._compose(session.history if session is not None else ()),
        )
        self._empty_loop_state()
        # The provider's rules for the knobs, now: a refused one fails before anything is sent or logged.
        check_request(self.ref, self._request(None, 1), adapter)
        # integrations following every run (tracing), with closers for the loop's end: loop/observers.py
        self._observer_closers = notify_run_created(self)
        if (fe := frontend.current()) is not None:  # Jupyter: cell-scoped continuations without %load_ext
            fe.run_created(self)

    def _empty_loop_state(self) -> None:
        """What the loop grows as it runs: empty until it starts."""
        self._forced_choice_spent = False
        self._released_mid_loop = False
        self.result: RunResult | None = None
        self._started = False
        self._durable_events: list[Any] = []
        self._calls: list[CallRecord] = []
        self._t0 = time.perf_counter()  # reset when the run starts (after the adapter is created)
        self._carried_drop = 0
        self._subscribers: tuple[Callable[[RunEvent], Any], ...] = ()
        self._listen()
        self._drain = False  # set by ``arun``: deltas are delivered, not yielded (see ``_attempt``)

    # ------------------------------------------------------------------ public

    @property
    def provider(self) -> str:
        """The provider this run is pinned to; a run never switches provider mid-loop."""
        return self.ref.provider

    @property
    def on_event(self) -> Callable[[RunEvent], Any] | None:
        """The caller's own watcher (``Run(on_event=...)``): every event, before any subscriber."""
        return self._on_event

    @on_event.setter
    def on_event(self, callback: Callable[[RunEvent], Any] | None) -> None:
        _inputs.callable_or_none(callback, "on_event")
        self._on_event = callback
        self._listen()

    def _listen(self) -> None:
        """Who gets each event: ``on_event``, then the subscribers; one tuple the hot path reads once."""
        first = () if self._on_event is None else (self._on_event,)
        self._listeners: tuple[Callable[[RunEvent], Any], ...] = (*first, *self._subscribers)

    @property
    def adapter(self) -> Adapter | None:
        """The adapter given at construction or built by :meth:`prepare`; None until then.

        A live view reads it to know whether the run will still pay for importing the provider SDK
        (timed as ``setup_s``, before the run's clock starts).
        """
        return self._adapter

    def prepare(self) -> None:
        """Build the adapter now (importing its SDK), timed as ``setup_s``, before any clock starts.

        Why: an SDK import is seconds of work that holds the event loop; done inside a run it lands
        in the latency of every call in flight beside it (a compare's other columns). ``compare``
        prepares all its runs before starting any. A failure here is kept and raised when the run
        starts, so it is recorded as that run's failure like any other. Idempotent.
        """
        if self._adapter is not None or self._setup_error is not None:
            return
        t0 = time.perf_counter()
        try:
            self._adapter = create_adapter(self.ref)
        except Exception as e:
            self._setup_error = e
        finally:
            self.setup_s = time.perf_counter() - t0

    def subscribe(self, callback: Callable[[RunEvent], Any]) -> Callable[[], None]:
        """Deliver every event to ``callback`` too; returns a function that unsubscribes it.

        Several watchers (a live run view, a compare column, the caller's own ``on_event``) can follow
        one run without rewiring each other's callbacks. Subscribers get the events exactly as
        ``on_event`` does: the same objects, in the same order, on the same thread, right after
        ``on_event``; an exception one raises ends the run as one from ``on_event`` would.
        """
        if not callable(callback):
            raise ConfigError(
                f"subscribe takes a function of the event (e.g. print), not {type(callback).__name__}"
            )
        self._subscribers = (*self._subscribers, callback)
        self._listen()

        def unsubscribe() -> None:
            self._subscribers = tuple(c for c in self._subscribers if c is not callback)
            self._listen()

        return unsubscribe

    @property
    def model(self) -> str:
        """The model name without its provider prefix (simulator options included, e.g. ``sim-reasoner``)."""
        return self.ref.model

    def release_continuation(self) -> int:
        """Release this run's opaque items now; returns how many were held.

        A live loop then continues from portable items only (a ``continuation_released`` diagnostic).
        """
        return self.checkpoint.release_continuation()

    async def arun(self) -> RunResult:
        """Run to the end; return the result (raises the typed error if the run failed)."""
        self._drain = True  # nobody reads the deltas from the stream: they go to on_event/subscribers only
        gen = self._events()
        step = gen.__anext__
        try:
            while True:
                await step()  # no local keeps the last event: a held error keeps nothing alive
        except StopAsyncIteration:
            pass
        except BaseException as e:
            detach_frames(e)  # the boundary: see ``events``
            raise
        finally:
            await gen.aclose()
        assert self.result is not None
        return self.result

    def run_sync(self) -> RunResult:
        """``arun`` from sync code, also inside a running event loop (Jupyter)."""
        return run_sync(self.arun())

    def __repr__(self) -> str:
        state = self.result.status if self.result else ("running" if self._started else "new")
        return f"<Run {self.run_id} {self.ref} step={self.checkpoint.step} {state}>"

    # ------------------------------------------------------------------ the loop

    def _emit(self, ev: E) -> E:
        """Record a durable event: the event log first, then ``result.events``, then the hook.

        The one place both records grow, in that order, so they are the same sequence by
        construction: an event the log could not take (disk full, unencodable) is in neither, and
        the run fails with a typed ``StorageError`` instead of going on unrecorded. Never used for
        deltas.
        """
        if self.event_log is not None:
            try:
                self.event_log.append(ev)
            except AgentlabError:
                raise
            except Exception as e:
                raise StorageError(
                    f"the event log {self.event_log.path or '(memory)'} could not take a "
                    f"{type(ev).__name__} ({type(e).__name__}); the run stops here",
                    path=str(self.event_log.path) if self.event_log.path else None,
                    errno=getattr(e, "errno", None),
                ) from None
        self._durable_events.append(ev)
        self._deliver(ev)  # type: ignore[arg-type]
        return ev

    def _deliver(self, ev: RunEvent) -> None:
        """``on_event``, then each subscriber (see :meth:`subscribe`)."""
        for callback in self._listeners:
            callback(ev)

    def _compose(self, base: Iterable[PortableItem]) -> tuple[PortableItem, ...]:
        """Prior history + this run's system prompt (if new) + its task.

        Prior history is checked here (not only by ``Session``): a history item whose text UTF-8
        cannot encode fails now, naming its position, instead of at the first send.
        """
        history = list(base)
        _inputs.check_items(history)
        if self._system is not None:
            existing = [i for i in history if isinstance(i, SystemItem)]
            if not existing:
                history.insert(0, SystemItem(text=self._system))
            elif existing[0].text != self._system:
                raise UserError("this session already has a different system prompt; start a new Session")
        if self.task is not None:
            history.append(UserItem(text=self.task))
        if not any(isinstance(i, UserItem) for i in history):
            raise UserError("nothing to answer: give a task, e.g. Run('openai:sim-reasoner', 'What is 2+2?')")
        return tuple(history)

    def _claim_session(self) -> tuple[DiagnosticEvent, ...]:
        """Claim the session (if any) as the loop starts; the notices to record after ``RunStartedEvent``.

        The history is taken as the session hands it over *now* (another run may have ended since
        this Run was constructed); if it cannot be composed, the claim is given back untouched.
        """
        session = self.session
        if session is None:
            return ()
        start = session.begin_run(self)
        self._carried_drop = start.dropped
        try:
            self.checkpoint.history = self._compose(start.history)
        except BaseException:
            session.abandon_run(self)
            raise
        return start.notices

    def _request(
        self, cont: Continuation | None, step: int, expected: tuple[continuity.OpaqueRef, ...] = ()
    ) -> ModelRequest:
        """This step's request (``cont=None``: the one the constructor checks, with no opaque items).

        A forced ``tool_choice`` goes back to ``"auto"`` once the model has called a tool, unless
        ``reset_tool_choice=False`` (see ``CallOptions``). ``expected``: the last response's opaque
        items the request must carry back (the continuity guard checks them before anything is sent).
        """
        opaque = cont.items if cont is not None and self.continuation_policy == "verbatim" else ()
        return ModelRequest(
            origin=EventOrigin(run_id=self.run_id, step=step),
            model=self.ref.model,
            items=self.checkpoint.history,
            continuation=opaque,
            continuation_released=self._released_mid_loop,
            continuity_expected=expected,
            tools=self._specs,
            output=self.output.spec if self.output is not None else None,
            **self.settings.request_fields(forced_choice_spent=self._forced_choice_spent),
        )

    def _renew(self, adapter: Adapter) -> Continuation:
        """A fresh continuation after the old one was released mid-loop (e.g. at a notebook cell's end).

        The loop goes on from portable items only: the released opaque items are gone for good, and
        the adapter takes its documented path for a tool-use turn without them (OpenAI: sent without
        reasoning items; Anthropic: the exchange written out as text, thinking kept on). From here on
        every request of the loop says so (``ModelRequest.continuation_released``), so an adapter can
        tell these known gaps from a signature lost by a bug.
        """
        ref = self.ref
        cont = Continuation(
            provider=ref.provider, api=ref.api, model=ref.model, base_url=adapter.base_url, run_id=self.run_id
        )
        self.checkpoint.attach(cont)
        self._released_mid_loop = True  # every later request says so (ModelRequest.continuation_released)
        return cont

    def _released_notice(self, step: int) -> DiagnosticEvent:
        return diagnostic(
            "continuation_released",
            "this tool loop's opaque reasoning items were released (its notebook cell ended); "
            "it continues from portable items only",
            origin=EventOrigin(run_id=self.run_id, step=step),
        )

    async def events(self) -> AsyncGenerator[RunEvent, None]:
        """The event stream: adapter events (stamped) and the run's durable records, in order.

        Leave early with ``contextlib.aclosing`` (or ``await gen.aclose()``): the run is then
        recorded as cancelled and its continuation released.

        This is the boundary where an error leaves the run: the loop's frames (and the adapter's and
        SDK's below them) have finished by then, and ``detach_frames`` clears their locals, so the
        raised error carries no request body, raw event or opaque item into a traceback formatter
        that prints locals, and keeps none alive while it is held.
        """
        gen = self._events()
        step = gen.__anext__
        try:
            while True:
                yield await step()
        except StopAsyncIteration:
            return
        except BaseException as e:
            detach_frames(e)
            raise
        finally:
            await gen.aclose()

    async def _events(self) -> AsyncGenerator[RunEvent, None]:
        """The loop behind ``events`` (and ``arun``, which drains it without the extra hop per event).

        Set-up and tear-down live here (the session claim, the adapter, the continuation, the closing
        records on every exit); each step's work is in :meth:`_steps`.
        """
        if self._started:
            raise UserError("a Run runs once; create a new Run (or use a Session for follow-ups)")
        self._started = True
        ref, rid, cp = self.ref, self.run_id, self.checkpoint
        notices = self._claim_session()
        adapter: Adapter | None = None
        try:
            self.prepare()
            if self._setup_error is not None:
                raise self._setup_error
            adapter = self._adapter
            assert adapter is not None  # prepare() built it or kept the error raised above
            cont = Continuation(
                provider=ref.provider, api=ref.api, model=ref.model, base_url=adapter.base_url, run_id=rid
            )
            cp.attach(cont)
            cp.status = "running"
            log.debug("run %s started on %s", rid, ref)
            self._t0 = time.perf_counter()  # the run's clock: the timeline's zero
            yield self._emit(
                RunStartedEvent(
                    run_id=rid, step=0, provider=ref.provider, model=ref.model, api=ref.api, task=self.task
                )
            )
            for diag in notices:
                yield self._emit(diag)
            end = _Ending()
            async with _closing(self._steps(adapter, cont, end)) as steps:
                async for ev in steps:
                    yield ev
            yield self._finish(end.status, end.output, end.stop_reason, value=end.value)
        except BaseException as e:
            if self.result is None:
                self._finish("cancelled" if isinstance(e, _CANCEL_TYPES) else "failed", None, None, error=e)
            raise
        finally:
            cp.release_continuation()
            notify_run_ended(self._observer_closers)
            await _end_run(adapter, rid)
            if self._owns_adapter and adapter is not None:
                try:
                    await adapter.aclose()
                except Exception:  # pragma: no cover - closing must not mask the run's outcome
                    log.warning("run %s: closing the adapter failed", rid, exc_info=True)

    async def _steps(
        self, adapter: Adapter, cont: Continuation, end: _Ending
    ) -> AsyncGenerator[RunEvent, None]:
        """The steps of the tool loop, until a final answer or ``max_steps``; how it ended goes to ``end``.

        One step: a model call (with retries), its response applied to the continuation and the
        records, then its tool calls run and the exchange appended to history in one assignment.
        """
        ref, rid, cp = self.ref, self.run_id, self.checkpoint
        sdk_retries = _sdk_retries(adapter)
        extra_dropped = self._carried_drop
        # Resumed from portable history mid-loop: that loop's continuation was released when it stopped.
        self._released_mid_loop = resumes_mid_turn(cp.history)
        layout = getattr(adapter, "continuity_layout", None)
        expected: tuple[continuity.OpaqueRef, ...] = ()  # the last response's kept items, by digest
        step = 0
        while step < self.max_steps:
            step += 1
            yield self._emit(
                ModelCallStartedEvent(run_id=rid, step=step, provider=ref.provider, model=ref.model)
            )
            # Built after that yield: a consumer may pause there (a notebook cell ends and releases
            # the continuation); a request built before would still carry the released items.
            if cont.released:
                extra_dropped += cont.released_count  # every drop is counted, a release's too
                cont = self._renew(adapter)
                expected = ()  # released: their absence is known, not a bug
                yield self._emit(self._released_notice(step))
            call = CallTiming(self._request(cont, step, expected), step, run_t0=self._t0)
            continuity.check_request(expected, call.request.continuation)  # the guard, neutral depth
            async with _closing(self._call_model(adapter, call, sdk_retries)) as stream:
                async for ev in stream:
                    yield ev
            completed = call.completed
            assert completed is not None  # _call_model returns only with a completed response
            resp = completed.response
            if resp.reasoning and self.continuation_policy == "verbatim" and cont.released:
                extra_dropped += cont.released_count
                cont = self._renew(adapter)  # released while this call streamed: a new segment owns them
                yield self._emit(self._released_notice(step))
            refused, expected = self._keep(cont, resp, layout)
            applied = apply_response(
                completed,
                call,
                ref=ref,
                run_id=rid,
                step=step,
                policy=self.continuation_policy,
                refused=refused,
                carried_drop=extra_dropped,
            )
            extra_dropped = 0
            for diag in applied.diagnostics:
                yield self._emit(diag)
            self._calls.append(applied.record)
            self._deliver(completed)
            yield completed
            yield self._emit(applied.completed)
            calls = resp.tool_calls
            log.debug(
                "run %s step %d: %s, stop=%s, %d tool call(s)", rid, step, ref, resp.stop_reason, len(calls)
            )
            results: list[ToolResultItem] = []
            if calls:
                async with _closing(self._tool_step(calls, step, results)) as tool_events:
                    async for ev in tool_events:
                        yield ev
            # One assignment: the call and its results enter history together.
            cp.history = (*cp.history, *resp.items, *results)
            cp.step = step
            self._forced_choice_spent = self._forced_choice_spent or bool(calls)
            if calls or resp.stop_reason == "pause_turn":
                continue  # "pause_turn": the provider paused a long turn; sending history back resumes it
            end.status, end.output, end.stop_reason = "completed", resp.text, resp.stop_reason
            end.value = self._output_value(resp)
            return
        end.status = "step_limit"

    def _keep(
        self, cont: Continuation, resp: ModelResponse, layout: continuity.ContinuityLayout | None
    ) -> tuple[int, tuple[continuity.OpaqueRef, ...]]:
        """The response's opaque items into the continuation, as the policy says.

        Returns how many were not kept (the ``drop`` policy's, or made elsewhere) and what the next
        request must carry back: every kept item the adapter can replay (``layout``), by digest.
        """
        if not resp.reasoning:
            return 0, ()
        if self.continuation_policy != "verbatim":
            return len(resp.reasoning), ()
        kept_out = cont.add(resp.reasoning)
        kept = [r for r in resp.reasoning if not any(r is k for k in kept_out)]
        return len(kept_out), continuity.expected_refs(kept, layout, (i.index for i in resp.items))

    async def _call_model(
        self, adapter: Adapter, call: CallTiming, sdk_retries: int
    ) -> AsyncGenerator[RunEvent, None]:
        """One model call: attempts on the same adapter until one completes or the retry rule says stop.

        A failed attempt adds nothing to the checkpoint (its deltas were display only), so a retry
        starts from the same request; the ``retry`` diagnostic records why and how long it waited.
        """
        attempt = 0
        while True:
            try:
                async with _closing(self._attempt(adapter, call)) as stream:
                    async for ev in stream:
                        yield ev
                return
            except ProviderError as e:
                decision = retry_decision(e, attempt, self.retries, self.retry_delay, sdk_retries)
                if not decision.retry:
                    raise _gave_up(e, decision.reason, attempt, sdk_retries) from None  # e itself
                attempt += 1
                log.info(
                    "run %s step %d: retry %d on %s after %s",
                    self.run_id,
                    call.step,
                    attempt,
                    self.ref,
                    type(e).__name__,
                )
                yield self._emit(
                    diagnostic(
                        "retry",
                        f"retrying on the same provider ({attempt}/{self.retries}) after "
                        f"{type(e).__name__}: {redact_secrets(e.message)}",
                        origin=call.request.origin,
                        attempt=attempt,
                        delay_s=decision.delay_s,
                        error_type=type(e).__name__,
                    )
                )
                if decision.delay_s > 0:
                    await asyncio.sleep(decision.delay_s)

    async def _attempt(self, adapter: Adapter, call: CallTiming) -> AsyncGenerator[RunEvent, None]:
        """Stream one attempt: deliver each event, keep the completed response.

        The hot path (one pass per delta). Events arrive carrying this call's ``run_id``/``step`` (the
        request's ``origin``); an adapter that does not read it gets its events copied with it
        (``stamped``), never mutated. Timings are the adapter's (taken once, in its assembler). The
        completed response is not yielded here: the step yields it after it has been accounted for.
        """
        origin = call.request.origin
        call.start()
        # ``arun`` drains: a delta it would receive is dropped there, so it is delivered (on_event,
        # subscribers, the live view) and not yielded up the four generator levels to the drain.
        # With nobody listening either, a delta is dropped unread (not even stamped): it costs this
        # loop its type test and two reads.
        drain = self._drain
        # aclosing: a consumer leaving events() early (GeneratorExit at our yield) must close the
        # adapter's stream, and with it the HTTP response, now.
        # The adapter's stream directly: one generator level less per delta (the completed response
        # is made encodable here, see ``_encodable``).
        async with _closing(adapter.stream(call.request)) as stream:
            async for ev in stream:
                t = type(ev)
                if t is ResponseCompletedEvent:
                    ev, note = _encodable(stamped(ev, origin), origin)  # type: ignore[arg-type]
                    if note is not None:
                        yield self._emit(note)
                    call.completed = ev
                    continue
                if t is DiagnosticEvent:
                    yield self._emit(stamped(ev, origin))
                    continue
                # Read per delta: a live view may subscribe mid-stream.
                if self._listeners or not drain:
                    if ev.run_id is None:
                        ev = stamped(ev, origin)
                    self._deliver(ev)
                    if not drain:
                        yield ev
        call.stop()
        if call.completed is None:
            raise ModelBehaviorError(
                f"{self.ref.provider} adapter ended a stream without a completed response"
            )

    async def _tool_step(
        self, calls: list[ToolCallItem], step: int, results: list[ToolResultItem]
    ) -> AsyncGenerator[RunEvent, None]:
        """A response's tool calls: their events, the calls run (:meth:`_run_tools`), their results.

        The result items go to ``results`` (in call order) for the caller to append to history with
        the response's items in one assignment.
        """
        rid = self.run_id
        for c in calls:
            yield self._emit(ToolCallEvent(run_id=rid, step=step, call=c))
        done, notes = await self._run_tools(calls, step)
        for res, started, dur in done:
            yield self._emit(
                ToolResultEvent(run_id=rid, step=step, result=res, duration_s=dur, started_s=started)
            )
        for note in notes:
            yield self._emit(note)
        results.extend(r for r, _, _ in done)

    def _output_value(self, resp: ModelResponse) -> Any:
        """The final answer validated into ``output_type`` (None without one, or for a refusal).

        A mismatch raises ``OutputValidationError`` (value-free) and fails the run; the answer
        itself is already in history, where model text belongs.
        """
        if self.output is None or resp.stop_reason == "refusal":
            return None
        return self.output.validate(resp.text, stop_reason=resp.stop_reason)

    def _finish(
        self,
        status: RunStatus,
        output: str | None,
        stop_reason: Any,
        *,
        error: BaseException | None = None,
        value: Any = None,
    ) -> RunCompletedEvent:
        """Release the continuation, write the closing records, build the result. Must not raise.

        The recorded error text (``RunResult.error``, the ``ErrorEvent``) follows one rule, owned by
        :func:`agentlab.neutral.error_text.durable_error_text`: an agentlab error's own text (built value-free
        where it was raised), else the exception's type and a value-free description, never the text
        of an arbitrary exception (an ``on_event`` callback's may quote a reasoning delta).
        """
        cp = self.checkpoint
        held = cp.release_continuation()
        cp.status = status
        rid = self.run_id
        err_text = err_type = None
        if error is not None and status == "failed":
            err_type = type(error).__name__
            err_text = _inputs.scrub(redact_secrets(durable_error_text(error)))[0]
            self._emit_safely(
                ErrorEvent(
                    run_id=rid,
                    step=cp.step,
                    error_type=err_type,
                    message=err_text,
                    provider=getattr(error, "provider", None) or self.ref.provider,
                    status=getattr(error, "status", None),
                    request_id=getattr(error, "request_id", None),
                )
            )
        usage = RunUsage.from_records(self._calls)
        done = RunCompletedEvent(
            run_id=rid,
            step=cp.step,
            status=status,
            output=output,
            steps=len(self._calls),
            usage=usage.tokens,
            cost_usd=usage.cost.total if usage.cost.known else None,
        )
        self._emit_safely(done)
        self.result = RunResult(
            run_id=rid,
            provider=self.ref.provider,
            model=self.ref.model,
            status=status,
            output=output,
            output_value=value,
            stop_reason=stop_reason,
            steps=len(self._calls),
            usage=usage,
            calls=tuple(self._calls),
            history=cp.history,
            events=tuple(self._durable_events),
            error=err_text,
            error_type=err_type,
            setup_s=self.setup_s,
            tool_sources={n: s for n, t in self.tools.items() if (s := t.source) is not None},
        )
        log.debug("run %s finished: %s after %d call(s)", rid, status, len(self._calls))
        if self.session is not None:
            self.session.end_run(self, held)
        return done

    def _emit_safely(self, ev: Event) -> None:
        try:
            self._emit(ev)
        except Exception:
            log.warning("run %s: recording %s failed", self.run_id, type(ev).__name__, exc_info=True)

    async def _run_tools(
        self, calls: list[ToolCallItem], step: int
    ) -> tuple[list[tuple[ToolResultItem, float | None, float | None]], list[DiagnosticEvent]]:
        """Run a response's tool calls concurrently; every call gets exactly one result, in order.

        Calls whose id repeats within the response, or reuses an id from earlier history, are not run:
        they get one error result each id (two results with one id would be ambiguous). A call past
        its timeout becomes an error result plus a ``tool_timeout`` diagnostic (returned, emitted
        after the results). A call still running when the run is cancelled is abandoned, not waited
        for, and recorded at once as a ``tool_abandoned`` diagnostic (the run is ending). Each result
        comes with when its tool started (seconds from the run's start; None: it never ran) and how
        long it took.
        """
        earlier = {i.call_id for i in self.checkpoint.history if isinstance(i, ToolCallItem)}
        counts = Counter(c.call_id for c in calls)
        answered: set[str] = set()
        notes: list[DiagnosticEvent] = []

        async def one(c: ToolCallItem) -> tuple[ToolResultItem, float | None, float | None] | None:
            if counts[c.call_id] > 1:
                if c.call_id in answered:
                    return None
                answered.add(c.call_id)
                return (
                    _err(c, f"duplicate tool call id {c.call_id!r} in one response; none of them were run"),
                    None,
                    None,
                )
            if c.call_id in earlier:
                return (
                    _err(c, f"tool call id {c.call_id!r} was already used earlier in this run; not run"),
                    None,
                    None,
                )
            t = self.tools.get(c.name)
            if t is None:
                avail = ", ".join(sorted(self.tools)) or "none"
                return _err(c, f"unknown tool {c.name!r}; available tools: {avail}"), None, None
            limit = t.timeout if t.timeout is not None else self.tool_timeout
            t0 = time.perf_counter()
            outcome = await t.run(
                c.arguments, timeout=limit, on_abandon=lambda why: self._abandoned(c, step, why)
            )
            if outcome.timed_out:
                notes.append(self._timeout_notice(c, step, limit, outcome.blocked_loop))
            if outcome.server_failure is not None:  # e.g. an MCP server that crashed mid-call
                notes.append(self._server_failure_notice(c, step, outcome.server_failure))
            res = ToolResultItem(
                call_id=c.call_id, name=t.name, output=outcome.output, is_error=outcome.is_error
            )
            # Stamped where the tool ran (outcome.started/duration_s), not when this loop got round to
            # it: the loop also feeds other runs' observers. The wait here stands in only for a call
            # that never ran or never finished.
            started = outcome.started if outcome.started is not None else t0
            dur = outcome.duration_s if outcome.duration_s is not None else time.perf_counter() - t0
            return res, started - self._t0, dur

        if len(calls) == 1:
            out = [await one(calls[0])]
        else:
            out = await _all_or_none([asyncio.ensure_future(one(c)) for c in calls])
        return [r for r in out if r is not None], notes

    def _timeout_notice(
        self, c: ToolCallItem, step: int, limit: float | None, blocked_loop: bool
    ) -> DiagnosticEvent:
        why = (
            "; its event loop was blocked (a blocking call inside async def, in this tool or in "
            "another running beside it: make that a sync tool, or use asyncio.to_thread)"
            if blocked_loop
            else ""
        )
        return diagnostic(
            "tool_timeout",
            f"tool {c.name!r} timed out after {limit:g} s (call {c.call_id}); abandoned, and "
            f"the model was given an error result{why}",
            origin=EventOrigin(run_id=self.run_id, step=step),
            tool=c.name,
            timeout_s=limit,
            call_id=c.call_id,
        )

    def _server_failure_notice(self, c: ToolCallItem, step: int, text: str) -> DiagnosticEvent:
        origin = EventOrigin(run_id=self.run_id, step=step)
        return diagnostic("tool_server_failed", text, origin=origin, tool=c.name, call_id=c.call_id)

    def _abandoned(self, c: ToolCallItem, step: int, why: str) -> None:
        """A call left running because the run was cancelled: record it now (the run is ending)."""
        if why != "cancelled":
            return  # a timeout is reported with its result
        self._emit_safely(
            diagnostic(
                "tool_abandoned",
                f"tool {c.name!r} (call {c.call_id}) was still running when the run was "
                "cancelled; it was abandoned, not waited for (its thread, or the tool loop it held, "
                "ends on its own)",
                origin=EventOrigin(run_id=self.run_id, step=step),
                tool=c.name,
                call_id=c.call_id,
            )
        )


async def _all_or_none(tasks: list[asyncio.Future[T]]) -> list[T]:
    """``gather`` the calls of one step; when cancelled, return only once every call has ended.

    ``gather`` ends at the first call that ends cancelled, while the others may still be handing
    their cancellation to a tool (a thread, the tool loop; bounded by ``CANCEL_GRACE_S`` each):
    the run would record itself cancelled with a call still in flight.
    """
    try:
        return await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        await asyncio.wait(tasks)
        raise


async def _end_run(adapter: Adapter | None, run_id: str) -> None:
    """Tell the adapter the run ended (any exit) so it frees what it holds for it on the server.

    Optional (``Adapter``'s docstring): an adapter without ``end_run`` holds nothing per run. A
    failure is logged, never raised: it must not mask the run's outcome.
    """
    end = getattr(adapter, "end_run", None)
    if end is None:
        return
    try:
        await end(run_id)
    except Exception:  # pragma: no cover - an adapter's end_run logs its own failures
        log.warning("run %s: the adapter's end_run failed", run_id, exc_info=True)


def _gave_up(e: ProviderError, reason: str, attempts: int, sdk_retries: int) -> ProviderError:
    """The error a call ends with, its message carrying the retry count when retries ran out.

    The SDK retried a retryable HTTP status error ``sdk_retries`` times before raising it; the run
    retried anything else ``attempts`` times. An error that was never retried keeps its message.
    """
    if reason == "already retried by the SDK":
        return e.gave_up(sdk_retries)
    if reason == "retries used up" and attempts > 0:
        return e.gave_up(attempts)
    return e


def _sdk_retries(adapter: Adapter) -> int:
    """How often the adapter's SDK retries an HTTP status error itself (``Adapter.max_retries``).

    Read defensively: an adapter written before the protocol declared it (a third party's) may not
    have the attribute, or not an int; it then counts as 0 (its SDK does not retry), so the run's
    own ``retries`` cover status errors too.
    """
    n = getattr(adapter, "max_retries", 0)
    return n if isinstance(n, int) else 0


def _scrubbed(resp: ModelResponse) -> tuple[ModelResponse, int]:
    r"""The response with text UTF-8 cannot encode made safe, and how many code points were replaced.

    Every model output passes here before it enters history, the event log or the result, so a
    JSON ``"\ud800"`` escape from a provider (a lone surrogate once decoded) cannot make any of them
    unwritable; one place, for every adapter.
    """
    items: list[AssistantTextItem | ToolCallItem] = []
    fixed = 0
    for it in resp.items:
        new, n = _inputs.scrub_item(it)
        items.append(new)  # type: ignore[arg-type]
        fixed += n
    return (resp.model_copy(update={"items": tuple(items)}), fixed) if fixed else (resp, 0)


def _encodable(
    ev: ResponseCompletedEvent, origin: EventOrigin | None
) -> tuple[ResponseCompletedEvent, DiagnosticEvent | None]:
    """A completed response made encodable (see ``_scrubbed``), with the diagnostic that says so.

    A response that needed it comes after an ``unencodable_text`` diagnostic, so the run records
    that the model's text was changed. Deltas are not looked at (display only, never written).
    """
    resp, fixed = _scrubbed(ev.response)
    if not fixed:
        return ev, None
    note = diagnostic(
        "unencodable_text",
        f"{fixed} character(s) in the model's output could not be encoded as "
        "UTF-8 (lone surrogates) and were replaced with U+FFFD",
        origin=origin,
        count=fixed,
    )
    return ev.model_copy(update={"response": resp}), note


@contextlib.asynccontextmanager
async def _closing(stream: AsyncIterator[T]) -> AsyncGenerator[AsyncIterator[T], None]:
    """Close an adapter's stream on the way out (the protocol types it as a plain async iterator)."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _err(c: ToolCallItem, msg: str) -> ToolResultItem:
    return ToolResultItem(call_id=c.call_id, name=c.name, output=f"Error: {msg}", is_error=True)


async def arun(model: str | ModelRef, task: str | None = None, **kw: Any) -> RunResult:
    """``await agentlab.arun("openai:sim-reasoner", "task", tools=[...])``: one run, its result."""
    return await presented(new_run(model, task, kw, "arun")).arun()


def run(model: str | ModelRef, task: str | None = None, **kw: Any) -> RunResult:
    """Sync form of ``arun``; works in scripts and inside Jupyter's running event loop."""
    r = presented(new_run(model, task, kw, "run"))
    return run_sync(r.arun())


def new_run(model: str | ModelRef, task: str | None, kw: dict[str, Any], caller: str) -> Run:
    """``Run(model, task, **kw)``; an unknown keyword is a one-line ``UserError`` naming the known ones.

    ``caller`` is the entry point the user called (``"run"``, ``"Session.start"``), named in that error.
    """
    _inputs.check_kwargs(kw, Run.__init__, caller)
    return Run(model, task, **kw)


def presented(r: Run) -> Run:
    """``r``, shown by the installed frontend first (in a Jupyter kernel: a live run view).

    Scripts have no frontend, so nothing is imported for it (``agentlab.frontend``;
    ``AGENTLAB_NO_WIDGETS=1`` turns the live view off).
    """
    if (fe := frontend.current()) is not None:
        fe.present_run(r)
    return r
