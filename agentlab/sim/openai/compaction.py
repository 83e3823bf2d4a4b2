"""Server-side compaction in the simulated Responses API: ``context_management`` and ``compaction`` items.

With ``context_management: [{"type": "compaction", "compact_threshold": N}]`` a response whose
prompt is over ``N`` tokens starts with a ``compaction`` output item
(``{"type": "compaction", "id": "cmp_...", "encrypted_content": ...}``): opaque provider state that
replaces the context before it. Sent back in a later request, it stands for everything before it:
only the items after it (and the summary it seals) count as the prompt. Its ``encrypted_content`` is
authenticated like a reasoning item's (a changed one is the 400 ``invalid_encrypted_content``), and
the summary the model wrote is billed as output tokens.
"""

from __future__ import annotations

from typing import Any

import agentlab.sim.errors as E
from agentlab.sim.core import Ids, Simulator

__all__ = ["KIND", "decrypted", "item", "summary", "threshold"]

KIND = "compaction"


def threshold(req: dict[str, Any]) -> int | None:
    """The request's ``compact_threshold`` (``None``: no compaction asked for)."""
    for entry in req.get("context_management") or ():
        if isinstance(entry, dict) and entry.get("type") == KIND:
            value = entry.get("compact_threshold")
            return value if isinstance(value, int) and not isinstance(value, bool) else 0
    return None


def summary(task: str, calls: int) -> str:
    """What the simulated model keeps of the context it compacts."""
    return f"Summary of the conversation so far: the user asked: {task} ({calls} tool call(s) answered)."


def item(sim: Simulator, ids: Ids, text: str) -> dict[str, Any]:
    """A ``compaction`` output item sealing ``text`` (its id drawn last: other ids do not move)."""
    cid = ids.hex("cmp_")
    sealed = sim.signer.encrypt_reasoning({"rid": cid, "kind": KIND, "summary": text})
    return {"id": cid, "type": KIND, "encrypted_content": sealed}


def decrypted(sim: Simulator, it: dict[str, Any]) -> dict[str, Any]:
    """The sealed payload of an input ``compaction`` item; a changed or foreign one is a 400."""
    token = it.get("encrypted_content")
    payload = sim.signer.decrypt_reasoning(token)
    ok = payload is not None and payload.get("kind") == KIND
    if ok and payload is not None and it.get("id") is not None:
        ok = payload.get("rid") == str(it.get("id"))
    if not ok or payload is None:
        shown = str(token)
        shown = f"{shown[:4]}...{shown[-4:]}" if len(shown) > 12 else shown
        raise E.SimError(
            400,
            "invalid_request_error",
            f"The encrypted content {shown} could not be verified.",
            None,
            "invalid_encrypted_content",
        )
    return payload
