"""A run's checkpoint: portable history that may be saved, plus the live continuation that may not.

``history`` and the step counters are ordinary pydantic fields: JSON and pickle carry them.
``provider_continuation`` is a private attribute, so it is outside the schema, outside
``model_dump``/``model_dump_json`` and, through ``__getstate__``, outside pickles and copies. That
exclusion is by construction: no serializer option can bring it back. A checkpoint loaded from JSON
or a pickle therefore never has a continuation; resuming it starts a fresh tool loop.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from agentlab.loop.continuation import Continuation
from agentlab.neutral._shapes import ShapedRepr
from agentlab.neutral.items import PortableItem, SummaryItem, ToolCallItem, UserItem

__all__ = ["Checkpoint", "resumes_mid_turn"]


def resumes_mid_turn(history: tuple[PortableItem, ...]) -> bool:
    """Whether ``history`` ends inside a tool loop: tool calls after its last user (or summary) message.

    A run starting from such a history (a checkpoint restored from JSON or a pickle, a session run
    that hit its step limit) continues a loop whose continuation was released when the earlier run
    stopped: the opaque items of those calls are gone for good, a known gap and not a bug.
    """
    for item in reversed(history):
        if isinstance(item, UserItem | SummaryItem):
            return False
        if isinstance(item, ToolCallItem):
            return True
    return False


class Checkpoint(ShapedRepr, BaseModel):
    """Where a run stands after its last *completed* step.

    Updated only at step boundaries (a model call that failed mid-stream adds nothing), so a saved
    checkpoint is always consistent: every tool call in ``history`` has its result, or the run is
    about to produce them in the step recorded by ``step``. The repr shows the history as a count and
    kinds (``checkpoint.history`` holds it).
    """

    _repr_shown = frozenset({"run_id", "provider", "api", "model", "step", "status"})

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    run_id: str
    provider: str
    api: str | None = None
    model: str
    step: int = 0
    """Model calls completed so far."""
    status: str = "pending"
    history: tuple[PortableItem, ...] = ()
    """Portable items only (system, user, assistant text, tool calls/results, summaries)."""

    _continuation: Continuation | None = PrivateAttr(default=None)

    @property
    def provider_continuation(self) -> Continuation | None:
        """This loop's opaque items (live only); ``None`` once released or after deserialization."""
        c = self._continuation
        return None if c is None or c.released else c

    def attach(self, continuation: Continuation | None) -> None:
        """Give this checkpoint the loop's live opaque items; never serialized, copied or pickled with it."""
        self._continuation = continuation

    def release_continuation(self) -> int:
        """Release the live continuation (if any); returns how many opaque items it held."""
        c, self._continuation = self._continuation, None
        return c.release() if c is not None else 0

    def to_json(self, **kw: Any) -> str:
        """Portable JSON: the history and counters only (the continuation is private and never dumped)."""
        return self.model_dump_json(**kw)

    @classmethod
    def from_json(cls, data: str | bytes) -> Checkpoint:
        """A checkpoint from ``to_json``, without continuation: a resumed run starts opaque state afresh."""
        return cls.model_validate_json(data)

    def __getstate__(self) -> dict[Any, Any]:
        state = super().__getstate__()
        state["__pydantic_private__"] = {"_continuation": None}
        return state

    def __copy__(self) -> Checkpoint:
        return self.model_copy_portable()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Checkpoint:
        return self.model_copy_portable()

    def model_copy_portable(self) -> Checkpoint:
        """A copy without the continuation (copies are snapshots; the live loop state is not theirs)."""
        return Checkpoint.model_validate(self.model_dump())

    def __repr_args__(self) -> Any:
        yield from super().__repr_args__()
        yield "provider_continuation", self.provider_continuation
