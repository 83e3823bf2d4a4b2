"""The Responses dialects as simulator profiles: who serves which model, and how it differs from OpenAI.

Why profiles and not a protocol per host: xAI, DeepSeek, Azure OpenAI, Bedrock Mantle and the local
servers speak one wire format (``POST .../responses``) and differ in a handful of facts, each a
field here, so :mod:`agentlab.sim.openai.responses` never branches on a host's name. Built from the
recordings in ``../shared/fixtures/responses_dialects`` and the hosts' documented rules:

* ``sim-grok`` (xAI): ``encrypted_content`` on request; **lenient** about dropped or reordered
  reasoning items (the real API answers 200; the plan is lost and the answer gets worse:
  ``x-sim-plan: lost``), strict about a tampered token; usage carries ``cost_in_usd_ticks``
  (10^-10 USD, at this profile's fictional rates), ``num_sources_used``, ``num_server_side_tools_used``.
* ``sim-deepseek-responses`` (DeepSeek): reasoning as ``content: [{type: reasoning_text}]`` (streamed
  as ``response.reasoning_text.delta``), ``summary: []``; ``encrypted_content`` only when asked, and
  then a reference ``"<response id>-0"``; the item kept server-side, so an item sent back with its
  text and ``encrypted_content: null`` restores the plan; messages carry ``phase``.
* ``sim-azure`` / ``sim-azure-null`` (Azure OpenAI v1): OpenAI's rules and ``content_filters`` (one entry
  per source); ``sim-azure-null`` answers ``encrypted_content: null`` (reported for Azure), and such
  an item sent back under ``store: false`` is the real 404 "Item with id ... not found".
* ``sim-mantle`` (Bedrock Mantle): ``rsn_`` + base64 tokens (a token without the prefix is not
  verifiable: 400), ``call_id`` ``call_0``, ``call_1``... in every response (so a client must scope
  them), ``billing``, ``cache_write_tokens``, ``phase``; a reasoning item is paired with its
  following call by item id.
* ``sim-local-responses`` (vLLM, Ollama, LM Studio): reasoning as ``reasoning_text`` content, never
  ``encrypted_content``; a reasoning input item with a non-null ``encrypted_content`` is vLLM's 400
  "Encrypted content is not supported."; usage without reasoning or cached-token figures; no key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import agentlab.sim.errors as E

__all__ = ["PROFILES", "RESPONSES_MODELS", "Profile", "extras", "profile", "text_payload"]


@dataclass(frozen=True)
class Profile:
    """What one simulated Responses host does on the wire (see the module docstring).

    ``encrypted``: ``ciphertext`` (sealed token, verified), ``reference`` (a pointer to the item kept
    server-side) or ``refused`` (never issued; a non-null one in the input is a 400).
    ``reasoning_as``: ``summary`` (OpenAI's summary parts) or ``content`` (``reasoning_text``).
    ``strict_following``: a reasoning item without the item that followed it is the real 400.
    ``reused_call_ids``: ``call_id`` s are ``call_<n>`` within each response (Mantle).
    ``ticks_per_mtok``: (input, cached input, output) USD per million tokens behind
    ``cost_in_usd_ticks`` (``None``: no cost in usage).
    """

    dialect: str
    model: str
    encrypted: Literal["ciphertext", "reference", "refused"] = "ciphertext"
    reasoning_as: Literal["summary", "content"] = "summary"
    strict_following: bool = True
    reused_call_ids: bool = False
    token_prefix: str = ""
    null_tokens: bool = False
    phase: bool = False
    content_filters: bool = False
    mantle_usage: bool = False
    reports_details: bool = True
    ticks_per_mtok: tuple[float, float, float] | None = None


OPENAI = Profile("openai", "sim-reasoner")
PROFILES: dict[str, Profile] = {
    p.model: p
    for p in (
        Profile("xai", "sim-grok", strict_following=False, ticks_per_mtok=(0.20, 0.02, 1.50)),
        Profile(
            "deepseek_responses",
            "sim-deepseek-responses",
            encrypted="reference",
            reasoning_as="content",
            strict_following=False,
            phase=True,
        ),
        Profile("azure", "sim-azure", content_filters=True),
        Profile("azure", "sim-azure-null", content_filters=True, null_tokens=True),
        Profile(
            "mantle", "sim-mantle", reused_call_ids=True, token_prefix="rsn_", phase=True, mantle_usage=True
        ),
        Profile(
            "local",
            "sim-local-responses",
            encrypted="refused",
            reasoning_as="content",
            strict_following=False,
            reports_details=False,
        ),
    )
}

#: agentlab provider name -> the simulated models serving it (``agentlab.sim.RESPONSES_MODELS``).
RESPONSES_MODELS: dict[str, tuple[str, ...]] = {
    "xai": ("sim-grok",),
    "deepseek_responses": ("sim-deepseek-responses",),
    "azure": ("sim-azure", "sim-azure-null"),
    "mantle": ("sim-mantle",),
    "vllm_responses": ("sim-local-responses",),
    "ollama_responses": ("sim-local-responses",),
    "lmstudio_responses": ("sim-local-responses",),
}


def profile(model: str) -> Profile:
    """The profile of a served model (OpenAI's own for ``sim-reasoner`` and the others)."""
    return PROFILES.get(model, OPENAI)


VLLM_ENCRYPTED = "Encrypted content is not supported."


def text_payload(stored: dict[str, Any], item: dict[str, Any], p: Profile) -> dict[str, Any]:
    """The plan behind a reasoning item on a host without ciphertext: the item it keeps by id.

    A refusing host answers a non-null ``encrypted_content`` with vLLM's 400; otherwise the text is
    context and an unknown id only loses the plan (``{}``), never an error.
    """
    if p.encrypted == "refused" and item.get("encrypted_content") is not None:
        raise E.OPENAI.bad_request(VLLM_ENCRYPTED, "input", None)
    hit = stored.get("item:" + str(item.get("id", "")))
    return dict(hit) if isinstance(hit, dict) else {}


def token(p: Profile, sealed: str, resp_id: str) -> str | None:
    """The ``encrypted_content`` the host returns for a sealed payload (when asked for)."""
    if p.null_tokens:
        return None
    if p.encrypted == "reference":
        return f"{resp_id}-0"
    return p.token_prefix + sealed


def unwrap(p: Profile, given: Any) -> Any:
    """The sealed token inside a host's ``encrypted_content`` (``None``: not this host's form)."""
    if not p.token_prefix:
        return given
    if isinstance(given, str) and given.startswith(p.token_prefix):
        return given[len(p.token_prefix) :]
    return None


def _filters(source: str) -> dict[str, Any]:
    safe = {"filtered": False, "severity": "safe"}
    results: dict[str, Any] = {k: dict(safe) for k in ("hate", "sexual", "violence", "self_harm")}
    if source == "prompt":
        results["jailbreak"] = {"detected": False, "filtered": False}
    else:
        for k in ("protected_material_code", "protected_material_text"):
            results[k] = {"detected": False, "filtered": False}
    return {
        "blocked": False, "source_type": source, "content_filter_raw": [],
        "content_filter_results": results, "content_filter_offsets": {"start_offset": 0, "end_offset": 0},
    }  # fmt: skip


def extras(p: Profile, final: dict[str, Any]) -> None:
    """The host's own fields on a completed response (usage, filters, billing), in place."""
    usage = final.get("usage") or {}
    if p.content_filters:
        final["content_filters"] = [_filters("prompt"), _filters("completion")]
    if p.mantle_usage:
        final["billing"] = {"payer": "developer"}
        usage.setdefault("input_tokens_details", {})["cache_write_tokens"] = 0
    if not p.reports_details:
        usage.pop("input_tokens_details", None)
        usage.pop("output_tokens_details", None)
    if p.ticks_per_mtok is not None:
        rate_in, rate_cached, rate_out = p.ticks_per_mtok
        cached = (usage.get("input_tokens_details") or {}).get("cached_tokens", 0)
        uncached = usage["input_tokens"] - cached
        usd = (uncached * rate_in + cached * rate_cached + usage["output_tokens"] * rate_out) / 1e6
        usage["cost_in_usd_ticks"] = round(usd * 10**10)
        usage["num_sources_used"] = 0
        usage["num_server_side_tools_used"] = 0
