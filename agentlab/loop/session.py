"""``Session``: portable history carried from one run to the next, each run pinned to its own provider.

A session composes runs; it does not reach into them. A ``Run`` given ``session=`` calls the three
hooks of :class:`agentlab.loop.runner.SessionLink` (``begin_run`` when its loop starts,
``abandon_run`` if it fails before its first record, ``end_run`` once its result exists), and gets
its starting history and the notices about the previous loop back as an explicit
:class:`~agentlab.loop.runner.RunStart` value. The session in turn reads only a run's public
attributes (``ref``, ``run_id``, ``result``, ``checkpoint``). So this module depends on the run
module and not the reverse, and neither side touches the other's private members (a test checks
both by their syntax trees).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from agentlab.adapters.base import ModelRef
from agentlab.errors import ConfigError, UserError
from agentlab.loop.result import RunResult
from agentlab.loop.runner import Run, RunStart, new_run, presented
from agentlab.loop.settings import RunSettings
from agentlab.loop.sync import run_sync
from agentlab.neutral.diagnostics import diagnostic, dropped
from agentlab.neutral.events import DiagnosticEvent, EventOrigin
from agentlab.neutral.items import PortableItem

__all__ = ["Session"]

_Pin = tuple[str, str, str]
"""Where a tool loop ran: ``(provider, api, model)``."""


class Session:
    """Portable history across runs; each run pinned to its own provider.

    What crosses from one run to the next is portable history only. Opaque reasoning never does: a
    run's continuation is released when its loop ends. When the next run is on *another* provider
    (or API/model), the items the previous loop held are reported as dropped (a
    ``reasoning_items_dropped`` diagnostic and the count on the new run's first call). On the same
    provider the new loop simply starts without the old continuation (a ``continuation_not_carried``
    diagnostic says so).

    A session is plain data (system prompt, portable history, results): it pickles and copies. A
    copy never carries a live run (``_active``) and so never a continuation: a copy taken mid-run is
    the session as of its last finished run, idle, with a lock of its own.
    """

    def __init__(
        self,
        *,
        system: str | None = None,
        history: Iterable[PortableItem] = (),
        settings: RunSettings | None = None,
    ) -> None:
        if settings is not None and not isinstance(settings, RunSettings):
            raise ConfigError(f"settings must be RunSettings(...) or None, got {type(settings).__name__}")
        self.system = system
        self.settings = settings
        """What each run of the session is configured with unless it is given ``settings=`` itself;
        keywords given to one run add to it (``RunSettings.merged``)."""
        self.history: tuple[PortableItem, ...] = tuple(history)
        self.results: list[RunResult] = []
        self._last: _Pin | None = None
        self._last_opaque = 0
        self._active: Run | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Settings and history only: no lock, no active run (its continuation stays with it)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_active")}
        state["results"] = list(self.results)  # a shallow copy must not share the list it appends to
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.settings = None  # a session pickled before sessions carried settings
        self.__dict__.update(state)
        self._active = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the hooks a Run calls

    def begin_run(self, run: Run) -> RunStart:
        """Claim the session for ``run`` as its loop starts; hand it the history to continue from.

        Called by the run, not by users. One run at a time: a second claim while one is active is a
        ``UserError`` (two loops appending to one history would interleave their turns). The history
        is the session's as of *now*, since another run may have ended after this one was built; the
        notices say what became of the previous loop's opaque items.
        """
        with self._lock:
            if self._active is not None:
                raise UserError("this Session already has an active run; await it before starting another")
            self._active = run
        notices, dropped = _carry_notices(self._last, self._last_opaque, run)
        return RunStart(history=self.history, notices=notices, dropped=dropped)

    def abandon_run(self, run: Run) -> None:
        """Release the claim of a run that stopped before recording anything (history unchanged)."""
        with self._lock:
            if self._active is run:
                self._active = None

    def end_run(self, run: Run, held: int) -> None:
        """Take the ended ``run``'s history and result; ``held``: opaque items its loop released.

        Only the count of those items is kept, for the next run's notices: the items themselves were
        released with the run's continuation and never reach the session.
        """
        result = run.result
        assert result is not None, "end_run is called once the run's result exists"
        self.history = run.checkpoint.history
        self.results.append(result)
        self._last = (run.ref.provider, run.ref.api, run.ref.model)
        self._last_opaque = held
        with self._lock:
            self._active = None

    # ------------------------------------------------------------------ starting runs

    def start(self, model: str | ModelRef, task: str | None = None, **kw: Any) -> Run:
        """A ``Run`` continuing this session (iterate ``events()`` or ``await arun()``)."""
        base = {"settings": self.settings} if self.settings is not None else {}
        return new_run(model, task, {**base, **kw, "session": self}, "Session.start")

    async def arun(self, model: str | ModelRef, task: str | None = None, **kw: Any) -> RunResult:
        """Start a run continuing this session and await its result (shown live in a notebook)."""
        return await presented(self.start(model, task, **kw)).arun()

    def run(self, model: str | ModelRef, task: str | None = None, **kw: Any) -> RunResult:
        """Sync form of :meth:`arun`; works in scripts and inside Jupyter's running event loop."""
        return run_sync(presented(self.start(model, task, **kw)).arun())

    def __repr__(self) -> str:
        last = ":".join(self._last) if self._last else None
        return f"<Session {len(self.history)} items, {len(self.results)} runs, last={last}>"


def _carry_notices(last: _Pin | None, opaque: int, run: Run) -> tuple[tuple[DiagnosticEvent, ...], int]:
    """What the new ``run`` records about the previous loop's ``opaque`` items, and how many it drops.

    Another provider/API/model: they count as dropped (``reasoning_item_dropped``, the count on the
    new run's first call). The same one: the new loop starts without them, which is not a drop (the
    same provider never received them for this loop), so only a ``continuation_not_carried`` note.
    """
    if last is None:
        return (), 0
    here = (run.ref.provider, run.ref.api, run.ref.model)
    if here != last:
        notice = dropped(
            count=opaque,
            reason="provider_switch",
            provider=run.ref.provider,
            detail=f"session moved from {':'.join(last)} to {':'.join(here)}; the "
            "previous loop's items were dropped, portable history kept",
            origin=EventOrigin(run_id=run.run_id, step=0),
        )
        return (notice,), opaque
    if not opaque:
        return (), 0
    not_carried = diagnostic(
        "continuation_not_carried",
        f"new tool loop on {':'.join(here)} starts without the previous loop's {opaque} opaque item(s)",
        origin=EventOrigin(run_id=run.run_id, step=0),
        count=opaque,
    )
    return (not_carried,), 0
