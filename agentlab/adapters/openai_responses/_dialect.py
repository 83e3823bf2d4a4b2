"""What one Responses dialect is: the few facts in which the hosts of the Responses wire format differ.

The Responses format ("Open Responses") is served by OpenAI, xAI, DeepSeek, Azure OpenAI, Bedrock
Mantle and local servers (vLLM, Ollama, LM Studio). The request builder (:mod:`._request`), the
stream assembler (:mod:`._stream`) and the adapter (:mod:`._adapter`) are shared; each dialect is one
:class:`ResponsesDialect` holding only what is its own: where it lives and which key it reads, what
its ``encrypted_content`` is (ciphertext to send back verbatim, a server-side reference, or a field
the server refuses), whether a stored-by-default host gets ``store: false``, whether items are taken
from ``response.completed``, whether its tool ``call_id`` s are unique only within one response, and
how its usage (and its own cost figure) reads. Imports no SDK (``provider.py`` names the adapters).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentlab.adapters.openai_responses import _models
from agentlab.adapters.openai_responses._usage import usage_from_openai
from agentlab.adapters.wire_dialect import Host, WireDialect
from agentlab.neutral.usage import CallUsage

__all__ = ["API", "Encrypted", "ResponsesDialect", "no_cost"]

API = "responses"

Encrypted = Literal["ciphertext", "reference", "refused"]
"""What ``encrypted_content`` is on a host:

* ``ciphertext``: opaque state (OpenAI, Azure ``gAAAA...``, xAI, Mantle ``rsn_...``), asked for with
  ``include: ["reasoning.encrypted_content"]``; a reasoning item goes back verbatim with it, and an item
  whose ``encrypted_content`` is missing or ``null`` is never sent as if it carried state (it is dropped
  with a ``no_encrypted_content`` diagnostic: under ``store: false`` an id-only item is a 404).
* ``reference``: a pointer into the host's own storage (DeepSeek: ``"<response id>-0"``), never asked
  for; the item's state is its ``reasoning_text`` content, and it goes back verbatim (the recorded
  accepted DeepSeek request carries the same id, content and summary, with ``encrypted_content: null``
  where agentlab's copy has none).
* ``refused``: the host answers a non-null ``encrypted_content`` with 400 (vLLM: "Encrypted content is
  not supported."); never asked for, and the item goes back with its text only, without the field.
"""


def no_cost(usage: Mapping[str, Any]) -> float | None:
    """No provider-reported cost in this dialect's usage: unknown (never 0)."""
    return None


def _always(model: str) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponsesDialect(WireDialect):
    """One Responses dialect (the per-host facts the shared code reads)."""

    encrypted: Encrypted = "ciphertext"
    send_store: bool = True
    """Send ``store: false`` (xAI and Azure store by default: 30 days on xAI). Ollama lists no
    ``store`` field (stateless only), so it is not sent there."""
    items_from_completed: bool = False
    """Take the output items from ``response.completed`` when streaming (xAI's documented rule: keep
    every output item exactly as it arrived, in order, from the completed response)."""
    call_ids_per_response: bool = False
    """The host reuses ``call_id`` s across responses (Mantle: ``call_0`` every time): each call id is
    made ``"<response id>:<call id>"`` when it arrives, unique within a loop, for the call and its
    result alike (so a pair stays a pair); the host accepted that form in the recording."""
    replayed_call_ids: bool = True
    """Send a ``function_call``'s item id (``fc_...``) in a turn whose reasoning goes back (the
    reasoning item's follower). DeepSeek's accepted replay sends the call without it."""
    reasoning_model: Callable[[str], bool] = _always
    """``(model) -> bool``: whether the model reasons (takes ``reasoning``, returns reasoning items)."""
    usage: Callable[[Mapping[str, Any]], CallUsage] = usage_from_openai
    provider_cost: Callable[[Mapping[str, Any]], float | None] = no_cost
    """``(usage) -> USD | None``: the host's own cost figure for the call (xAI ``cost_in_usd_ticks``)."""
    options_key: str | None = None
    """The ``provider_options`` prefix (default: ``name``)."""

    @property
    def asks_encrypted(self) -> bool:
        """Whether requests ask for ``reasoning.encrypted_content`` (ciphertext hosts only)."""
        return self.encrypted == "ciphertext"


OPENAI = ResponsesDialect(
    name="openai",
    label="OpenAI",
    host=Host(None, "OPENAI_API_KEY"),
    reasoning_model=_models.is_reasoning_model,
)
"""OpenAI itself: the reference dialect (``base_url`` None: the SDK's default host)."""
