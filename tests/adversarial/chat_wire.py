"""The hostile wire for the Chat Completions dialects: DeepSeek, OpenRouter and a local server (vLLM).

The same two-step tool loop as the OpenAI and Anthropic streams of ``support``, in each dialect's
real chunk shapes, with canaries where the dialect carries reasoning or secrets:

* DeepSeek: ``reasoning_content`` deltas (display text, and the opaque item sent back verbatim);
* OpenRouter (a Claude-backed model): ``reasoning`` + ``reasoning_details`` text pieces, the
  ``reasoning.text`` ``signature`` and a ``reasoning.encrypted`` ``data`` (opaque), with
  ``: OPENROUTER PROCESSING`` comment lines and a ``usage.cost``;
* vLLM: ``reasoning_content`` deltas, usage without reasoning tokens;
* each dialect's API key (the ``Authorization: Bearer`` header).

``DONE`` stands for the ``data: [DONE]`` line in an event list (``support.sse`` writes it so).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

CHAT = ("deepseek", "openrouter", "vllm")
MODELS = {
    "deepseek": "deepseek-reasoner",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "vllm": "Qwen/Qwen3-8B",
}
CLASSES = {"deepseek": "DeepSeekAdapter", "openrouter": "OpenRouterAdapter", "vllm": "VLLMAdapter"}
DONE: dict[str, Any] = {"[DONE]": True}
COMMENT = ": OPENROUTER PROCESSING"
REASONING = {
    "deepseek": "deepseek reasoning_content",
    "openrouter": "openrouter reasoning text",
    "vllm": "vllm reasoning_content",
}
OPAQUE = ("openrouter signature", "openrouter encrypted data")
KEY_PREFIX = {"deepseek": "sk-canary-ds-", "openrouter": "sk-or-v1-canary-", "vllm": "sk-canary-vl-"}


def _chunk(step: int, delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": f"gen-{step:04d}",
        "object": "chat.completion.chunk",
        "created": 1,
        "choices": [choice],
        **top,
    }


def _reasoning_delta(provider: str, text: str, index: int = 0) -> dict[str, Any]:
    if provider != "openrouter":
        return {"content": None, "reasoning_content": text}
    detail = {"type": "reasoning.text", "text": text, "index": index, "format": "anthropic-claude-v1"}
    return {"content": "", "reasoning": text, "reasoning_details": [detail]}


def _usage(provider: str) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": 50, "completion_tokens": 40, "total_tokens": 90}
    if provider == "deepseek":
        usage |= {"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 50}
    if provider != "vllm":
        usage["completion_tokens_details"] = {"reasoning_tokens": 30}
    if provider == "openrouter":
        usage |= {"cost": 0.00042, "prompt_tokens_details": {"cached_tokens": 0}}
    return usage


def chat_step(
    provider: str, reasoning: dict[str, str], opaque: dict[str, str], step: int, *, final: bool
) -> list[dict[str, Any]]:
    """A valid stream of one step, in the dialect's chunk shapes.

    Role chunk, reasoning in four pieces (canaries in the first and the last), the opaque tail on
    OpenRouter, then a tool call or the answer, the usage chunk and ``[DONE]``.
    """
    rsn = reasoning[REASONING[provider]]
    evs: list[dict[str, Any]] = [_chunk(step, {"role": "assistant", "content": ""})]
    for piece in (f"{rsn} step {step}: weigh", " the cities.", " Paris first.", f" {rsn} again."):
        evs.append(_chunk(step, _reasoning_delta(provider, piece)))
    if provider == "openrouter":
        sig = {"type": "reasoning.text", "signature": f"{opaque['openrouter signature']}-{step}", "index": 0}
        enc = {
            "type": "reasoning.encrypted",
            "data": f"{opaque['openrouter encrypted data']}-{step}",
            "index": 1,
            "format": "anthropic-claude-v1",
        }
        evs.append(_chunk(step, {"content": "", "reasoning_details": [sig, enc]}))
    if not final:
        call = {
            "index": 0,
            "id": "call_0001",
            "type": "function",
            "function": {"name": "get_weather", "arguments": ""},
        }
        evs.append(_chunk(step, {"content": None, "tool_calls": [call]}))
        evs.append(
            _chunk(step, {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]})
        )
        evs.append(_chunk(step, {}, "tool_calls"))
    else:
        from tests.adversarial.support import ANSWER

        evs.append(_chunk(step, {"content": ANSWER}))
        evs.append(_chunk(step, {}, "stop"))
    evs.append(
        {"id": f"gen-{step:04d}", "object": "chat.completion.chunk", "choices": [], "usage": _usage(provider)}
    )
    evs.append(DONE)
    return evs


def malformed(provider: str, reasoning: dict[str, str]) -> dict[str, Any]:
    """A reasoning delta whose text field has the wrong type (and holds the reasoning canary)."""
    rsn = reasoning[REASONING[provider]]
    field = "reasoning" if provider == "openrouter" else "reasoning_content"
    return _chunk(2, {field: [f"{rsn} wrong-typed"]})


def frame(events: list[dict[str, Any]], provider: str | None = None) -> bytes:
    """Chat Completions SSE framing: ``data:`` lines, ``[DONE]`` for :data:`DONE`.

    An ``event:`` line only where a mutation added a ``type``; OpenRouter's comment lines between events.
    """
    out = []
    for ev in events:
        if provider == "openrouter":
            out.append(f"{COMMENT}\n\n")
        if ev == DONE:
            out.append("data: [DONE]\n\n")
            continue
        head = f"event: {ev['type']}\n" if isinstance(ev.get("type"), str) else ""
        out.append(f"{head}data: {json.dumps(ev, separators=(',', ':'))}\n\n")
    return "".join(out).encode()


def error_500(provider: str) -> dict[str, Any]:
    if provider == "openrouter":
        return {"error": {"message": "Internal Server Error", "code": 500}}
    return {"error": {"message": "Service is too busy.", "type": "server_error", "code": "server_error"}}


def error_401(provider: str, key: str, markup: str) -> dict[str, Any]:
    """A 401 that echoes the key it was given (a proxy's habit) and some markup."""
    if provider == "openrouter":
        return {"error": {"message": f"No auth credentials found for {key} (model {markup})", "code": 401}}
    return {
        "error": {
            "message": f"Authentication Fails, Your api key: {key} is invalid. Model: {markup}",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }


_FREE = {"input": 0.0, "cache_read": 0.0, "cache_write_5m": 0.0, "cache_write_1h": 0.0, "output": 0.0}


@contextlib.contextmanager
def local_model_priced() -> Iterator[None]:
    """The self-hosted model priced free while a test runs (``conftest``), then unset again.

    No pricing source knows it, and an unpriced model warns, which the suite treats as an error;
    the override is process-wide, so it must not outlive the test.
    """
    import agentlab as al

    al.set_price("vllm", MODELS["vllm"], _FREE)
    try:
        yield
    finally:
        al.set_price("vllm", MODELS["vllm"], None)


def adapter_for(provider: str, http: Any, key: str, max_retries: int) -> Any:
    """The dialect's real adapter on the real SDK client."""
    import openai

    from agentlab.adapters import openai_chat

    client = openai.AsyncOpenAI(
        api_key=key, base_url="http://hostile.invalid/v1", max_retries=max_retries, http_client=http
    )
    return getattr(openai_chat, CLASSES[provider])(MODELS[provider], client=client, max_retries=max_retries)


SIM_MODELS = {"deepseek": "sim-deepseek", "openrouter": "sim-router-claude", "vllm": "sim-local"}
SIM_PATHS = {"deepseek": "", "openrouter": "/api/v1", "vllm": "/v1"}


def sim_adapter(provider: str, loopback: str, key: str, http: Any) -> tuple[Any, str]:
    """The dialect's adapter on the simulator's loopback server (its real route), and the model."""
    import openai

    from agentlab.adapters import openai_chat

    base = f"{loopback}{SIM_PATHS[provider]}"
    client = openai.AsyncOpenAI(base_url=base, api_key=key, max_retries=0, http_client=http)
    model = SIM_MODELS[provider]
    return getattr(openai_chat, CLASSES[provider])(model, client=client, max_retries=0), model
