"""The simulated Chat Completions dialects as profiles: who serves which model, and how.

Why profiles and not six protocols' worth of code: DeepSeek, OpenRouter, Kimi, GLM, xAI and local
servers speak
one wire protocol (``POST .../chat/completions``) and differ in a handful of facts: the field that
carries reasoning text, the shape of usage and of stream chunks, and the continuity rule they
enforce. Each fact is a field here, so the handler never branches on a dialect's name.

* ``deepseek`` (``sim-deepseek``): thinking mode by default, ``reasoning_content``; an assistant
  message that made tool calls must carry its ``reasoning_content`` back in every later request
  (DeepSeek's thinking-mode guide: "in all subsequent user interaction turns"), else the real 400.
  The text is not verified: DeepSeek reads it as plain context and has no signature to check.
* ``openrouter`` (``sim-router-gemini`` / ``-claude`` / ``-openai``): ``reasoning`` +
  ``reasoning_details``; the backing vendor decides the rule (Gemini: the encrypted detail is a
  thought signature, required and verified; Claude: Anthropic's rule on the latest assistant turn;
  OpenAI: lenient, a dropped item only loses the plan).
* ``local`` (``sim-local`` with ``reasoning_content``, ``sim-local-reasoning`` with ``reasoning``):
  lenient like llama.cpp / vLLM / Ollama, no key needed; dropping reasoning only loses the plan.
* ``moonshot`` (``sim-kimi``, Kimi K2.5): thinking on by default (``thinking: {type: disabled}``
  turns it off), ``reasoning_content``; strict like DeepSeek: with thinking on, every assistant
  message that made tool calls must carry a non-empty ``reasoning_content``, else the real 400
  "thinking is enabled but reasoning_content is missing in assistant tool call message at index N".
  Usage has ``cached_tokens`` at the top level and no reasoning count.
* ``zai`` (``sim-glm``, GLM-4.7): ``reasoning_content`` (interleaved thinking), served on
  ``/api/paas/v4`` and the coding plan's ``/api/coding/paas/v4``; lenient: a dropped reasoning
  item loses the plan (no Z.AI error for it is known). Bodies carry ``request_id``.
* ``xai_chat`` (``sim-xai-chat``, grok-3-mini): ``reasoning_content``, ``reasoning_effort`` low/high;
  lenient like the other two; usage's ``completion_tokens`` *excludes* the reasoning tokens
  (``total_tokens`` adds them) and carries ``cost_in_usd_ticks`` (10^-10 USD).
"""

from __future__ import annotations

from dataclasses import dataclass

#: dialect -> the simulated model names it serves (``agentlab.sim.core.CHAT_MODELS`` is this table).
DEEPSEEK_MODELS = ("sim-deepseek",)
OPENROUTER_MODELS = ("sim-router-gemini", "sim-router-claude", "sim-router-openai")
LOCAL_MODELS = ("sim-local", "sim-local-reasoning")
MOONSHOT_MODELS = ("sim-kimi",)
ZAI_MODELS = ("sim-glm",)
XAI_CHAT_MODELS = ("sim-xai-chat",)


@dataclass(frozen=True)
class Profile:
    """What one simulated model does on the wire (see the module docstring for the rules).

    ``reasoning_field`` names the message/delta field of the reasoning text (``None``: OpenRouter's
    ``reasoning`` + ``reasoning_details``); ``vendor`` is the backing model family behind a router
    (``gemini``, ``claude``, ``openai``) or the dialect itself; ``needs_key`` says whether a request
    without a bearer key is refused; ``reasoning_tokens`` whether usage reports them.
    """

    dialect: str
    model: str
    vendor: str
    reasoning_field: str | None
    needs_key: bool
    reasoning_tokens: bool
    fingerprint: str | None


PROFILES: dict[str, Profile] = {
    "sim-deepseek": Profile(
        "deepseek", "sim-deepseek", "deepseek", "reasoning_content", True, True, "fp_sim_deepseek"
    ),
    "sim-router-gemini": Profile("openrouter", "sim-router-gemini", "gemini", None, True, True, None),
    "sim-router-claude": Profile("openrouter", "sim-router-claude", "claude", None, True, True, None),
    "sim-router-openai": Profile("openrouter", "sim-router-openai", "openai", None, True, True, None),
    "sim-local": Profile(
        "local", "sim-local", "local", "reasoning_content", False, False, "b0000-agentlab-sim"
    ),
    "sim-local-reasoning": Profile(
        "local", "sim-local-reasoning", "local", "reasoning", False, False, "b0000-agentlab-sim"
    ),
    "sim-kimi": Profile("moonshot", "sim-kimi", "moonshot", "reasoning_content", True, False, None),
    "sim-glm": Profile("zai", "sim-glm", "zai", "reasoning_content", True, True, None),
    "sim-xai-chat": Profile(
        "xai_chat", "sim-xai-chat", "xai_chat", "reasoning_content", True, True, "fp_sim_xai"
    ),
}

#: OpenRouter's ``provider`` field per backing vendor (who the router says served the request).
ROUTER_PROVIDER = {"gemini": "Google AI Studio", "claude": "Anthropic", "openai": "OpenAI"}
#: OpenRouter's ``reasoning_details[].format`` per backing vendor.
DETAIL_FORMAT = {
    "gemini": "google-gemini-v1",
    "claude": "anthropic-claude-v1",
    "openai": "openai-responses-v1",
}


#: Real names (``real_models`` on, as ``python -m agentlab.sim serve`` has it) -> the simulated model
#: that behaves like each: DeepSeek's thinking models, models seen behind OpenRouter in the
#: recordings and its docs, and gpt-oss as llama.cpp serves it (the recorded local server).
CHAT_REAL_MODELS: dict[str, str] = {
    **dict.fromkeys(("deepseek-reasoner", "deepseek-v4-pro", "deepseek-v4-flash"), "sim-deepseek"),
    **dict.fromkeys(("openai/gpt-oss-20b", "openai/gpt-oss-120b", "gpt-oss:20b"), "sim-local"),
    **dict.fromkeys(("kimi-k2.5", "kimi-k2.6", "kimi-k2-thinking"), "sim-kimi"),
    **dict.fromkeys(("grok-3-mini", "grok-3-mini-fast"), "sim-xai-chat"),
}
ZAI_REAL_MODELS: dict[str, str] = dict.fromkeys(("glm-4.7", "glm-4.7-flash", "glm-5", "glm-5.1"), "sim-glm")
ROUTER_REAL_MODELS: dict[str, str] = {
    **dict.fromkeys(
        (
            "google/gemini-3-pro-preview",
            "google/gemini-3.1-pro-preview",
            "google/gemini-3-flash-preview",
            "google/gemini-3.1-flash-lite-preview",
        ),
        "sim-router-gemini",
    ),
    **dict.fromkeys(
        ("anthropic/claude-haiku-4.5", "anthropic/claude-sonnet-4.5", "anthropic/claude-opus-4.6"),
        "sim-router-claude",
    ),
    **dict.fromkeys(("openai/gpt-5", "openai/gpt-5.1", "openai/gpt-5-mini"), "sim-router-openai"),
}


def profile(model: str) -> Profile:
    """The profile of a simulated model name (the app has already refused unknown names)."""
    return PROFILES[model]


def dialect_of(model: object) -> str | None:
    """The dialect serving a model name, if any (used to pick an error shape)."""
    p = PROFILES.get(model) if isinstance(model, str) else None
    return p.dialect if p else None
