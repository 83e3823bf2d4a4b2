"""What the batch driver asks of a provider's batch API: submit, poll, read results, cancel, delete.

Each provider package implements :class:`BatchAPI` in its own ``_batch`` module (named by
``ProviderSpec.batch``), through its official SDK; the driver never sees a wire format. Why the
line outcome carries the *body* a live non-streaming call would have returned: the adapter's own
assembler then turns it into the same neutral response, usage and opaque items as a live call, so
a batch run and a live run differ only in when their answers arrive and what they cost.

Why ``delete`` is separate from ``results``: a batch's input and output at the provider hold the
loop's prompts and its opaque reasoning items (OpenAI's ``encrypted_content``, Anthropic's signed
thinking blocks, Gemini's thought signatures). They must go on every exit of a round, not only after
a successful read: a cancelled, failed or abandoned batch is deleted too (the driver cancels it and
waits for it to end first, where the provider refuses to delete a running batch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentlab.adapters.built_request import BuiltRequest
from agentlab.assembly.assembler import Assembler, WireCall
from agentlab.errors import AgentlabError
from agentlab.neutral.request import ModelRequest

__all__ = ["BatchAPI", "BatchState", "LineOutcome", "PendingLine"]


@dataclass(frozen=True, repr=False)
class PendingLine:
    """One model call waiting for a round: its id in the batch and the body the adapter built."""

    custom_id: str
    built: BuiltRequest[Any]

    def __repr__(self) -> str:  # the body holds the prompt and opaque items: ids and sizes only
        return f"<PendingLine {self.custom_id}>"


@dataclass(frozen=True, repr=False)
class LineOutcome:
    """One request's answer in a batch's results: the live-equivalent body, or a typed error.

    ``error`` is an agentlab error of the same type a live call would raise (a 400 stays a
    ``ProviderAPIError``; an expired, cancelled or server-failed line is a retryable one), so the
    run's retry rules decide what is tried again in the next round.
    """

    custom_id: str
    body: bytes | None = None
    request_id: str | None = None
    error: AgentlabError | None = None

    def __repr__(self) -> str:
        what = f"error={type(self.error).__name__}" if self.error else f"body=<{len(self.body or b'')} bytes>"
        return f"<LineOutcome {self.custom_id} {what}>"


@dataclass(frozen=True)
class BatchState:
    """A batch as the provider reports it now: its own status word, and whether it has ended."""

    batch_id: str
    status: str
    ended: bool
    counts: Mapping[str, int]


@runtime_checkable
class BatchAPI(Protocol):
    """A provider's batch endpoints, built from the model's adapter (``Class(adapter)``)."""

    provider: str
    max_requests: int
    """The provider's limit of requests per batch (a round larger than this is split)."""
    max_bytes: int
    """The provider's limit of one batch's input size in bytes."""
    searchable: bool
    """Whether :meth:`find` can find a batch by the intent tag it was created with."""

    def line_size(self, line: PendingLine) -> int:
        """The bytes ``line`` adds to a batch input (for splitting by ``max_bytes``)."""

    def assembler(self) -> Callable[[Any, ModelRequest, WireCall, float], Assembler]:
        """The adapter's own assembler factory, which turns a result body into the neutral response."""

    async def submit(self, lines: Sequence[PendingLine], *, metadata: Mapping[str, str]) -> str:
        """Create one batch of ``lines``; returns its id. Input the provider needs is never logged."""

    async def find(self, intent: str) -> list[str]:
        """Ids of the batches created with ``metadata["agentlab_intent"] == intent`` (newest first).

        For a driver that died between creating a batch and recording its id. Empty where the
        provider keeps nothing to search by (``searchable`` False).
        """

    async def state(self, batch_id: str) -> BatchState:
        """The batch's status now."""

    async def results(self, batch_id: str) -> list[LineOutcome]:
        """Every line's outcome of an ended batch (read into memory, never written to disk)."""

    async def cancel(self, batch_id: str) -> None:
        """Ask the provider to cancel the batch (requests already answered are still billed)."""

    async def delete(self, batch_id: str, *, ended: bool) -> bool:
        """Delete every copy the provider keeps of the batch (input, output, the batch itself).

        ``ended``: the batch has ended (a running one is cancelled first by the caller). Deletes
        what the provider lets go now; True when nothing is left there, False when something can
        only go once the batch has ended (the driver then tries again, on resume at the latest). A
        copy already gone (404) counts as deleted.
        """
