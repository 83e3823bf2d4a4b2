"""Reasoning settings and continuity rules of the Chat Completions dialects, and their opaque items.

Why here, apart from the wire code: these are the rules a client breaks (and the reason the
simulator exists), each stated as the real host states it:

* DeepSeek, thinking on: every assistant message that made tool calls must carry its
  ``reasoning_content``, in every later request (the thinking-mode guide: "must be passed back to
  the API in all subsequent user interaction turns"); absent or null is the real 400 "The
  `reasoning_content` in the thinking mode must be passed back to the API." (V4 wording; the V3.2
  wording named the message index). The text itself is *not* verified: it is plain text with no
  signature, and no report shows DeepSeek refusing an edited one, so an altered text is accepted.
  With ``thinking: {type: disabled}`` nothing is required.
* OpenRouter, Gemini-backed: each assistant tool-call message of the current turn (after the last
  user message, as Gemini validates) must carry its ``reasoning.encrypted`` detail: Gemini's thought
  signature, bound here by HMAC to the first call's name and arguments and to the message's position
  in Gemini's ``contents``. Dropped: "Gemini models require OpenRouter reasoning details to be
  preserved ..." with the upstream "missing a `thought_signature`" body; altered, moved or foreign:
  "Thought signature is not valid." (the real bodies in ``fixtures/errors/issue__openrouter_400_*``).
* OpenRouter, Claude-backed with reasoning on: Anthropic's rule for the latest assistant message
  holding tool calls: it must start with its signed ``reasoning.text`` detail (missing: "Expected
  `thinking` ..."; bad signature: "Invalid `signature`"; edited text: "cannot be modified").
* Kimi (Moonshot), thinking on (the default; ``thinking: {type: disabled}`` turns it off): every
  assistant message that made tool calls must carry a non-empty ``reasoning_content`` (an empty
  string counts as missing on k2.5/k2.6), else the real 400 "thinking is enabled but
  reasoning_content is missing in assistant tool call message at index N" (N: the message's index
  in ``messages``), in Moonshot's ``{"error": {"message", "type"}}`` shape. Not verified either.
* OpenRouter, OpenAI-backed, GLM (Z.AI), xAI Chat and local servers: lenient. A dropped (or
  unreadable) reasoning item on a current-turn tool-call message loses the model's plan: it re-plans
  and repeats its last batch of calls once (the same continuity effect as the simulated Responses
  API), ``x-sim-plan: lost``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentlab.sim.chat import errors as CE
from agentlab.sim.chat.dialects import Profile
from agentlab.sim.chat.schema import (
    DS_EFFORTS,
    LOCAL_EFFORTS,
    ROUTER_EFFORTS,
    XAI_EFFORTS,
    turn_start,
)
from agentlab.sim.core import Simulator
from agentlab.sim.errors import SimError
from agentlab.sim.signing import ThinkingVerdict

DS_MUST_PASS_BACK = "The `reasoning_content` in the thinking mode must be passed back to the API."
KIMI_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
)
ROUTER_GEMINI_PREFIX = (
    "Gemini models require OpenRouter reasoning details to be preserved in each request. Please refer to "
    "our docs: https://openrouter.ai/docs/guides/best-practices/reasoning-tokens"
    "#preserving-reasoning-blocks. "
    "Upstream error: "
)
VERTEX_MISSING = (
    "Unable to submit request because function call `{name}` in the {position}. content block is missing a "
    "`thought_signature`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures"
)
VERTEX_INVALID = (
    "Unable to submit request because Thought signature is not valid.. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
CLAUDE_EXPECTED = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
    + _DOCS
)
CLAUDE_INVALID = "messages.{i}.content.0: Invalid `signature` in `thinking` block"
CLAUDE_MODIFIED = (
    "messages.{i}.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot "
    "be modified. These blocks must remain as they were in the original response."
)
#: The Vertex-hosted Gemini the recorded OpenRouter errors came from.
GEMINI_UPSTREAM = "Google"


# -- settings ---------------------------------------------------------------------------------------


def thinking_level(p: Profile, req: Mapping[str, Any]) -> int:
    """How hard the model reasons: -1 off, else an effort level 0..6 for the planner."""
    if p.dialect == "deepseek":
        thinking = req.get("thinking")
        if isinstance(thinking, dict) and thinking.get("type") == "disabled":
            return -1
        return DS_EFFORTS.get(str(req.get("reasoning_effort") or "high"), 2)
    if p.dialect == "local":
        return LOCAL_EFFORTS.get(str(req.get("reasoning_effort") or "medium"), 2)
    if p.dialect in ("moonshot", "zai"):
        thinking = req.get("thinking")
        return -1 if isinstance(thinking, dict) and thinking.get("type") == "disabled" else 2
    if p.dialect == "xai_chat":
        return XAI_EFFORTS.get(str(req.get("reasoning_effort") or "low"), 1)
    return _router_level(p, req)


def _router_level(p: Profile, req: Mapping[str, Any]) -> int:
    """OpenRouter's ``reasoning`` object (or top-level ``reasoning_effort``) per backing vendor."""
    r = req.get("reasoning")
    r = r if isinstance(r, dict) else {}
    asked = bool(r) or req.get("reasoning_effort") is not None
    if r.get("enabled") is False:
        return -1 if p.vendor == "claude" else 0
    effort = r.get("effort", req.get("reasoning_effort"))
    if isinstance(r.get("max_tokens"), int):
        budget = int(r["max_tokens"])
        return 1 if budget < 2048 else 2 if budget < 8192 else 4
    level = ROUTER_EFFORTS.get(str(effort), 2) if effort is not None else 2
    if p.vendor == "claude":
        return level if asked and level >= 0 else -1
    if p.vendor == "gemini" and not asked:
        return 0
    return max(level, 0)


# -- signatures of router items ------------------------------------------------------------------


def _gemini_key(sim: Simulator) -> bytes:
    return hmac.new(sim.secret, b"openrouter-gemini-signature", hashlib.sha256).digest()


def call_digest(call: Mapping[str, Any]) -> str:
    """What a Gemini signature binds: the first call's name and arguments (as sent, parsed)."""
    fn = call.get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        args = fn.get("arguments")
    return f"{fn.get('name')}|{json.dumps(args, sort_keys=True, separators=(',', ':'))}"


def sign_gemini(sim: Simulator, digest: str, position: int) -> str:
    """A ``reasoning.encrypted`` ``data`` for the content at ``position`` showing ``digest``."""
    head = position.to_bytes(2, "big") + hashlib.sha256(digest.encode()).digest()[:16]
    tag = hmac.new(_gemini_key(sim), b"gemini" + head, hashlib.sha256).digest()
    return base64.b64encode(b"\x12\x34" + head + tag).decode()


def check_gemini(sim: Simulator, data: Any, digest: str, position: int) -> bool:
    """Whether ``data`` is ours, for this call, at this position."""
    return isinstance(data, str) and hmac.compare_digest(data, sign_gemini(sim, digest, position))


def gemini_position(messages: Sequence[Mapping[str, Any]], index: int) -> int:
    """Where message ``index`` lands in Gemini's ``contents`` (no system; consecutive tool results merged)."""
    pos, prev = 0, None
    for m in messages[:index]:
        role = m.get("role")
        if role in ("system", "developer") or (role == "tool" and prev == "tool"):
            continue
        pos, prev = pos + 1, role
    return pos


def details(m: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    """The message's ``reasoning_details`` items of one ``type``."""
    items = m.get("reasoning_details")
    return (
        [d for d in items or [] if isinstance(d, dict) and d.get("type") == kind]
        if isinstance(items, list)
        else []
    )


# -- the rules ------------------------------------------------------------------------------------


def check(sim: Simulator, p: Profile, messages: list[dict[str, Any]], thinking: bool) -> bool:
    """Refuse what the dialect refuses; otherwise whether the model still knows its plan."""
    if p.vendor == "deepseek":
        if thinking:
            _deepseek(messages)
        return True
    if p.vendor == "moonshot" and thinking:
        _kimi(messages)
    if p.vendor == "gemini":
        _gemini(sim, messages)
        return True
    if p.vendor == "claude":
        if thinking:
            _claude(sim, messages)
        return True
    return _plan_known(sim, p, messages)


def _deepseek(messages: list[dict[str, Any]]) -> None:
    for m in messages:
        if (
            m.get("role") == "assistant"
            and m.get("tool_calls")
            and not isinstance(m.get("reasoning_content"), str)
        ):
            raise CE.deepseek_error(400, DS_MUST_PASS_BACK)


def _kimi(messages: list[dict[str, Any]]) -> None:
    for i, m in enumerate(messages):
        if m.get("role") == "assistant" and m.get("tool_calls") and not m.get("reasoning_content"):
            raise CE.moonshot_error(400, KIMI_MISSING.format(i=i))


def _gemini(sim: Simulator, messages: list[dict[str, Any]]) -> None:
    for i in range(turn_start(messages), len(messages)):
        m = messages[i]
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        if not calls:
            continue
        pos = gemini_position(messages, i)
        items = details(m, "reasoning.encrypted")
        if not items:
            name = (calls[0].get("function") or {}).get("name")
            raise _vertex(VERTEX_MISSING.format(name=name, position=pos + 1), ROUTER_GEMINI_PREFIX)
        if not any(check_gemini(sim, d.get("data"), call_digest(calls[0]), pos) for d in items):
            raise _vertex(VERTEX_INVALID, "")


def _vertex(message: str, prefix: str) -> SimError:
    raw = (
        json.dumps({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}, indent=2)
        + "\n"
    )
    return CE.upstream(raw, GEMINI_UPSTREAM, prefix)


def _claude(sim: Simulator, messages: list[dict[str, Any]]) -> None:
    """Anthropic's rule on the latest assistant message, when it holds tool calls."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None or not messages[last].get("tool_calls"):
        return
    i = last - sum(1 for m in messages[:last] if m.get("role") in ("system", "developer"))
    texts = details(messages[last], "reasoning.text")
    if not texts and not details(messages[last], "reasoning.encrypted"):
        raise _anthropic(CLAUDE_EXPECTED.format(i=i))
    for d in texts:
        verdict, _ = sim.signer.check_thinking(str(d.get("text") or ""), d.get("signature"), 0)
        if verdict == ThinkingVerdict.INVALID:
            raise _anthropic(CLAUDE_INVALID.format(i=i))
        if verdict == ThinkingVerdict.MODIFIED:
            raise _anthropic(CLAUDE_MODIFIED.format(i=i))


def _anthropic(message: str) -> SimError:
    raw = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
    return CE.upstream(raw, "Anthropic")


def _plan_known(sim: Simulator, p: Profile, messages: list[dict[str, Any]]) -> bool:
    """Lenient dialects: every current-turn tool-call message still carries (readable) reasoning."""
    for m in messages[turn_start(messages) :]:
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        if p.vendor == "openai":
            tokens = [d.get("data") for d in details(m, "reasoning.encrypted")]
            if not any(sim.signer.decrypt_reasoning(t) is not None for t in tokens):
                return False
        elif not (m.get("reasoning_content") or m.get("reasoning")):
            return False
    return True
