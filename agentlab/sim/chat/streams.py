r"""How each Chat Completions dialect writes a completion: JSON bodies, stream chunks and usage.

Why apart from the handler: the three hosts put the same output in different envelopes (key order,
``logprobs``/``usage: null`` placeholders, OpenRouter's ``provider`` and ``native_finish_reason``,
llama.cpp's ``choices``-first layout), and the fidelity tests compare exactly these envelopes with
the recordings in ``fixtures/chat_completions``. Everything here is a pure function of the
:class:`~agentlab.sim.chat.completions.Out` the handler built.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentlab.sim.chat.dialects import DETAIL_FORMAT, ROUTER_PROVIDER, Profile
from agentlab.sim.core import Ids, SSEEvent
from agentlab.sim.tokenizer import chunks

if TYPE_CHECKING:
    from agentlab.sim.chat.completions import Out

DETAIL_FORMATS = DETAIL_FORMAT
#: Simulated OpenRouter prices (USD per million input, output tokens) per backing vendor.
PRICES = {"gemini": (0.25, 1.5), "claude": (1.0, 5.0), "openai": (0.05, 0.4)}
#: Cached input is billed at this fraction of the input price.
CACHED_FRACTION = 0.1
#: xAI's grok-3-mini prices in ticks (10^-10 USD) per token: input, cached input, output (USD 0.30,
#: 0.075 and 0.50 per million; they reproduce the recorded ``cost_in_usd_ticks``).
XAI_TICKS = (3000, 750, 5000)
PROCESSING = b": OPENROUTER PROCESSING\n\n"
DONE = b"data: [DONE]\n\n"
_NATIVE = {
    "gemini": {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"},
    "claude": {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"},
    "openai": {"stop": "completed", "tool_calls": "completed", "length": "max_output_tokens"},
}


@dataclass(frozen=True)
class Meta:
    """The envelope facts of one completion: who answers, under which name, id and time."""

    p: Profile
    model: str
    id: str
    created: int


def completion_id(p: Profile, ids: Ids) -> str:
    """The id in the host's shape (DeepSeek a UUID, OpenRouter ``gen-``, llama.cpp ``chatcmpl-``)."""
    if p.dialect == "deepseek":
        h = ids.hex("", 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if p.dialect == "openrouter":
        return ids.alnum("gen-1767225600-", 20)
    if p.dialect == "xai_chat":
        h = ids.hex("", 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if p.dialect == "zai":
        return "20260101000000" + ids.hex("", 16)
    if p.dialect == "moonshot":
        return ids.alnum("chatcmpl-", 24)
    return ids.alnum("chatcmpl-", 32)


# -- usage ------------------------------------------------------------------------------------------


def usage(meta: Meta, out: Out) -> dict[str, Any]:
    """Usage in the dialect's shape; reasoning tokens are part of ``completion_tokens``."""
    p, prompt, comp = meta.p, out.prompt, out.completion
    if p.dialect == "moonshot":  # Kimi: the cache hits at the top level, no reasoning count
        return {"prompt_tokens": prompt, "completion_tokens": comp, "total_tokens": prompt + comp,
                "cached_tokens": out.cached}  # fmt: skip
    if p.dialect == "xai_chat":
        return _xai_usage(out)
    if not p.reasoning_tokens:  # local servers: prompt/completion/total only (reasoning unknown)
        return {"completion_tokens": comp, "prompt_tokens": prompt, "total_tokens": prompt + comp}
    if p.dialect == "zai":
        return {"completion_tokens": comp,
                "completion_tokens_details": {"reasoning_tokens": out.reasoning_tokens},
                "prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": out.cached},
                "total_tokens": prompt + comp}  # fmt: skip
    base: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": comp, "total_tokens": prompt + comp}
    if p.dialect == "deepseek":
        base["prompt_tokens_details"] = {"cached_tokens": out.cached}
        base["completion_tokens_details"] = {"reasoning_tokens": out.reasoning_tokens}
        base["prompt_cache_hit_tokens"] = out.cached
        base["prompt_cache_miss_tokens"] = prompt - out.cached
        return base
    pin, pout = PRICES[p.vendor]
    prompt_cost = ((prompt - out.cached) * pin + out.cached * pin * CACHED_FRACTION) / 1e6
    comp_cost = comp * pout / 1e6
    base |= {"cost": round(prompt_cost + comp_cost, 10), "is_byok": False}
    base["prompt_tokens_details"] = {
        "cached_tokens": out.cached,
        "cache_write_tokens": 0,
        "audio_tokens": 0,
        "video_tokens": 0,
    }
    base["cost_details"] = {
        "upstream_inference_cost": round(prompt_cost + comp_cost, 10),
        "upstream_inference_prompt_cost": round(prompt_cost, 10),
        "upstream_inference_completions_cost": round(comp_cost, 10),
    }
    base["completion_tokens_details"] = {
        "reasoning_tokens": out.reasoning_tokens,
        "image_tokens": 0,
        "audio_tokens": 0,
    }
    return base


def _xai_usage(out: Out) -> dict[str, Any]:
    """The usage xAI writes: ``completion_tokens`` without the reasoning, which ``total_tokens`` adds back."""
    visible = out.completion - out.reasoning_tokens
    tin, tcached, tout = XAI_TICKS
    ticks = (out.prompt - out.cached) * tin + out.cached * tcached + out.completion * tout
    return {
        "prompt_tokens": out.prompt,
        "completion_tokens": visible,
        "total_tokens": out.prompt + out.completion,
        "prompt_tokens_details": {
            "text_tokens": out.prompt, "audio_tokens": 0, "image_tokens": 0, "cached_tokens": out.cached,
        },
        "completion_tokens_details": {
            "reasoning_tokens": out.reasoning_tokens, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
        },
        "num_sources_used": 0,
        "cost_in_usd_ticks": ticks,
    }  # fmt: skip


# -- non-streaming bodies ------------------------------------------------------------------------------


def _calls(out: Out, indexed: bool) -> list[dict[str, Any]]:
    return [
        {
            **({"index": k} if indexed else {}),
            "id": cid,
            "type": "function",
            "function": {"name": n, "arguments": a},
        }
        for k, (cid, n, a) in enumerate(out.calls)
    ]


def body(meta: Meta, out: Out) -> bytes:
    """The ``chat.completion`` object, laid out as the host writes it."""
    p = meta.p
    if p.dialect == "openrouter":
        return b"\n         \n\n" + _dumps(_router_body(meta, out))
    msg: dict[str, Any] = {"role": "assistant", "content": out.content if out.content is not None else ""}
    if out.reasoning is not None and p.reasoning_field:
        msg[p.reasoning_field] = out.reasoning
    if out.calls:
        msg["tool_calls"] = _calls(out, indexed=p.dialect in ("deepseek", "zai", "moonshot"))
    if p.dialect in ("moonshot", "xai_chat"):
        return _dumps(_openai_body(meta, out, msg))
    if p.dialect == "zai":
        return _dumps(_zai_body(meta, out, msg))
    if p.dialect == "deepseek":
        choice = {"index": 0, "message": msg, "logprobs": None, "finish_reason": out.finish}
        doc: dict[str, Any] = {"id": meta.id, "object": "chat.completion", "created": meta.created}
        doc |= {"model": meta.model, "choices": [choice], "usage": usage(meta, out)}
        doc["system_fingerprint"] = p.fingerprint
        return _dumps(doc)
    local = {"choices": [{"finish_reason": out.finish, "index": 0, "message": msg}], "created": meta.created}
    local |= {"model": meta.model, "system_fingerprint": p.fingerprint, "object": "chat.completion"}
    local |= {"usage": usage(meta, out), "id": meta.id}
    return _dumps(local)


def _openai_body(meta: Meta, out: Out, msg: dict[str, Any]) -> dict[str, Any]:
    """Kimi's and xAI's layout: OpenAI's key order (xAI adds ``refusal: null`` to the message)."""
    if meta.p.dialect == "xai_chat":
        msg["refusal"] = None
    choice = {"index": 0, "message": msg, "finish_reason": out.finish}
    doc: dict[str, Any] = {"id": meta.id, "object": "chat.completion", "created": meta.created}
    doc |= {"model": meta.model, "choices": [choice], "usage": usage(meta, out)}
    if meta.p.fingerprint:
        doc["system_fingerprint"] = meta.p.fingerprint
    return doc


def _zai_body(meta: Meta, out: Out, msg: dict[str, Any]) -> dict[str, Any]:
    """Z.AI's layout (keys sorted, as recorded), with ``request_id`` equal to the id."""
    choice = {"finish_reason": out.finish, "index": 0, "message": dict(sorted(msg.items()))}
    doc: dict[str, Any] = {"choices": [choice], "created": meta.created, "id": meta.id}
    doc |= {"model": meta.model, "object": "chat.completion", "request_id": meta.id}
    doc["usage"] = usage(meta, out)
    return doc


def _router_body(meta: Meta, out: Out) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": out.content,
        "refusal": None,
        "reasoning": out.reasoning,
    }
    if out.calls:
        msg["tool_calls"] = [
            {"type": "function", "index": k, "id": cid, "function": {"name": n, "arguments": a}}
            for k, (cid, n, a) in enumerate(out.calls)
        ]
    if out.details:
        msg["reasoning_details"] = out.details
    choice: dict[str, Any] = {"index": 0, "logprobs": None, "finish_reason": out.finish}
    choice |= {"native_finish_reason": _NATIVE[meta.p.vendor][out.finish], "message": msg}
    doc: dict[str, Any] = {
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
    }
    doc |= {"provider": ROUTER_PROVIDER[meta.p.vendor], "system_fingerprint": None, "choices": [choice]}
    doc["usage"] = usage(meta, out)
    return doc


def _dumps(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


# -- streams --------------------------------------------------------------------------------------------


def _event(obj: dict[str, Any]) -> SSEEvent:
    return SSEEvent(b"data: " + _dumps(obj) + b"\n\n", delta=True)


def stream(meta: Meta, out: Out, include_usage: bool) -> list[SSEEvent]:
    """The stream's events: the dialect's chunks, the error-chunk fault's mark, then ``[DONE]``."""
    if meta.p.dialect in ("deepseek", "moonshot", "xai_chat"):
        chunks_ = list(_deepseek_chunks(meta, out, include_usage))
    elif meta.p.dialect == "openrouter":
        chunks_ = list(_router_chunks(meta, out))
    else:
        chunks_ = list(_local_chunks(meta, out, include_usage))
    events = [_event(c) for c in chunks_]
    mid = max(1, len(events) // 2)
    events[mid] = SSEEvent(events[mid].raw, True, error=_error_chunk(meta, out) + DONE)
    head = [SSEEvent(PROCESSING)] * 3 if meta.p.dialect == "openrouter" else []
    return [*head, *events, SSEEvent(DONE)]


def _error_chunk(meta: Meta, out: Out) -> bytes:
    """OpenRouter's in-stream failure (the recorded ``error`` chunk, HTTP status already 200)."""
    chunk: dict[str, Any] = {"id": meta.id, "object": "chat.completion.chunk", "created": meta.created}
    chunk |= {
        "model": meta.model,
        "error": {"code": 502, "message": "Upstream stream interrupted (simulated)"},
    }
    chunk["choices"] = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": "error"}]
    return b"data: " + _dumps(chunk) + b"\n\n"


def _pieces(out: Out) -> Iterator[tuple[str, str]]:
    for piece in chunks(out.reasoning or "", 2):
        yield "reasoning", piece
    for piece in chunks(out.content or "", 2):
        yield "content", piece


def _deepseek_chunks(meta: Meta, out: Out, include_usage: bool) -> Iterator[dict[str, Any]]:
    thinking = out.reasoning is not None

    def chunk(delta: dict[str, Any], finish: str | None = None, u: Any = None) -> dict[str, Any]:
        c: dict[str, Any] = {"id": meta.id, "object": "chat.completion.chunk", "created": meta.created}
        c |= {"model": meta.model, "system_fingerprint": meta.p.fingerprint}
        c["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        c["usage"] = u
        return c

    yield chunk(
        {"role": "assistant", "content": None, "reasoning_content": ""}
        if thinking
        else {"role": "assistant", "content": ""}
    )
    for kind, piece in _pieces(out):
        if kind == "reasoning":
            yield chunk({"content": None, "reasoning_content": piece})
        else:
            yield chunk({"content": piece, "reasoning_content": None} if thinking else {"content": piece})
    for k, (cid, name, args) in enumerate(out.calls):
        yield chunk(
            {
                "tool_calls": [
                    {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
                ]
            }
        )
        for piece in chunks(args, 2):
            yield chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    end = {"content": "", "reasoning_content": None} if thinking else {"content": ""}
    yield chunk(end, out.finish, usage(meta, out) if include_usage else None)


def _router_chunks(meta: Meta, out: Out) -> Iterator[dict[str, Any]]:
    vendor = meta.p.vendor
    native = _NATIVE[vendor][out.finish]

    def chunk(
        delta: dict[str, Any], finish: str | None = None, u: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        c: dict[str, Any] = {"id": meta.id, "object": "chat.completion.chunk", "created": meta.created}
        c |= {"model": meta.model, "provider": ROUTER_PROVIDER[vendor]}
        c["choices"] = [
            {
                "index": 0,
                "delta": delta,
                "finish_reason": finish,
                "native_finish_reason": native if finish else None,
            }
        ]
        if u is not None:
            c["usage"] = u
        return c

    base = {"content": "", "role": "assistant"}
    whole = [d for d in out.details if d["type"] == "reasoning.encrypted"]
    if vendor == "gemini" and out.calls:
        yield chunk({**base, "reasoning": None, "reasoning_details": whole})
    yield from _router_reasoning(out, base, chunk)
    if vendor == "openai" and whole:
        yield chunk({**base, "reasoning": None, "reasoning_details": whole})
    for k, (cid, name, args) in enumerate(out.calls):
        call = {"index": k, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        yield chunk({"content": None, "role": "assistant", "tool_calls": [call]})
        yield chunk(
            {
                "content": None,
                "role": "assistant",
                "tool_calls": [{"index": k, "function": {"arguments": args}}],
            }
        )
    for piece in chunks(out.content or "", 6):
        yield chunk({"content": piece, "role": "assistant"})
    if vendor == "gemini" and not out.calls:
        yield chunk({**base, "reasoning": None, "reasoning_details": whole})
    yield chunk({**base, "reasoning": None}, out.finish)
    yield chunk(dict(base), out.finish, usage(meta, out))


def _router_reasoning(out: Out, base: dict[str, Any], chunk: Any) -> Iterator[dict[str, Any]]:
    """Readable reasoning in pieces, each also a partial detail by ``index``; a signature after them."""
    text_items = [d for d in out.details if d["type"] in ("reasoning.text", "reasoning.summary")]
    if not text_items or out.reasoning is None:
        return
    item = text_items[0]
    key = "text" if item["type"] == "reasoning.text" else "summary"
    for piece in chunks(out.reasoning, 3):
        partial = {"type": item["type"], key: piece, "format": item["format"], "index": item["index"]}
        yield chunk({**base, "reasoning": piece, "reasoning_details": [partial]})
    if "signature" in item:
        sig = {
            "type": item["type"],
            "signature": item["signature"],
            "format": item["format"],
            "index": item["index"],
        }
        yield chunk({**base, "reasoning": None, "reasoning_details": [sig]})


def _local_chunks(meta: Meta, out: Out, include_usage: bool) -> Iterator[dict[str, Any]]:
    field = meta.p.reasoning_field or "reasoning_content"

    def chunk(delta: dict[str, Any], finish: str | None = None, choices: bool = True) -> dict[str, Any]:
        c: dict[str, Any] = {
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}] if choices else []
        }
        c |= {"created": meta.created, "id": meta.id, "model": meta.model}
        c |= {"system_fingerprint": meta.p.fingerprint, "object": "chat.completion.chunk"}
        return c

    yield chunk({"role": "assistant", "content": None})
    for kind, piece in _pieces(out):
        yield chunk({field: piece} if kind == "reasoning" else {"content": piece})
    for k, (cid, name, args) in enumerate(out.calls):
        pieces = chunks(args, 2) or [""]
        first = {
            "index": k,
            "id": cid,
            "type": "function",
            "function": {"name": name, "arguments": pieces[0]},
        }
        yield chunk({"tool_calls": [first]})
        for piece in pieces[1:]:
            yield chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
    yield chunk({}, out.finish)
    if include_usage:
        yield {**chunk({}, choices=False), "usage": usage(meta, out)}
