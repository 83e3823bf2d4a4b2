"""Recorded-shape SSE bodies, built once and served byte for byte to every consumer.

The shapes follow recorded provider streams: an OpenAI Responses stream of a reasoning
item (summary deltas, ``encrypted_content`` partial in ``output_item.added`` and complete in
``output_item.done`` and ``response.completed``), a message and one function call with streamed
arguments; an Anthropic Messages stream of a thinking block (thinking deltas, one signature delta),
a text block and one ``tool_use`` block with ``input_json_delta``s; a Gemini
``streamGenerateContent?alt=sse`` stream (``../shared/fixtures/gemini/``): every event a whole
``GenerateContentResponse`` chunk with ``usageMetadata``, ``modelVersion`` and ``responseId``, events
ended by a CRLF blank line, no ``[DONE]``; thought-summary parts (``thought: true``), answer text parts,
one ``functionCall`` part carrying the ``thoughtSignature`` and a closing empty text part with
``finishReason``; a DeepSeek-shaped Chat Completions stream (``chat.completion.chunk``s of
``reasoning_content`` deltas, ``content`` deltas, one tool call in two pieces, the usage chunk,
``[DONE]``). The default size is the
headline case: 5,000 reasoning deltas, 2,000 text deltas, one tool call.

``final_*`` bodies are the short answer a tool loop's second request gets (a few text deltas), so
agent loops (agentlab's ``Run``, pydantic-ai's ``Agent``) can finish on the same bytes.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CHAT_MODEL",
    "GEMINI_MODEL",
    "Stream",
    "anthropic_final",
    "anthropic_stream",
    "chat_final",
    "chat_stream",
    "gemini_final",
    "gemini_stream",
    "openai_final",
    "openai_stream",
]

RID = "resp_0bench0000000000000000000000000000000000000000"
RS = "rs_0bench0000000000000000000000000000000000000000"
MSG = "msg_0bench000000000000000000000000000000000000000"
FC = "fc_0bench0000000000000000000000000000000000000000"
WORDS = [
    " The",
    " user",
    " asks",
    " about",
    " weather",
    " in",
    " Paris",
    ";",
    " I",
    " should",
    " call",
    " it",
]
ARG_PIECES = ('{"', "city", '":"', "Paris", '"}')
ARGS = "".join(ARG_PIECES)


@dataclass(frozen=True)
class Stream:
    """An SSE body and how many events (``data:`` lines) it holds."""

    body: bytes
    events: int


def _words(n: int) -> list[str]:
    return [WORDS[i % len(WORDS)] for i in range(n)]


class _Writer:
    def __init__(self, *, openai: bool) -> None:
        self.out: list[str] = []
        self.seq = 0
        self.openai = openai

    def emit(self, obj: dict[str, Any]) -> None:
        if self.openai:
            obj = {
                "type": obj["type"],
                "sequence_number": self.seq,
                **{k: v for k, v in obj.items() if k != "type"},
            }
        self.seq += 1
        self.out.append(f"event: {obj['type']}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n")

    def done(self) -> Stream:
        return Stream("".join(self.out).encode("utf-8"), self.seq)


def _oai_base() -> dict[str, Any]:
    return {
        "id": RID,
        "object": "response",
        "created_at": 1764547200,
        "status": "in_progress",
        "model": "gpt-5-2025-08-07",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def _oai_usage(n_out: int, n_reasoning: int) -> dict[str, Any]:
    return {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n_out,
        "output_tokens_details": {"reasoning_tokens": n_reasoning},
        "total_tokens": 120 + n_out,
    }


def _oai_message(w: _Writer, item_id: str, output_index: int, n_text: int) -> dict[str, Any]:
    """Emit one streamed assistant ``message`` item of ``n_text`` deltas; return the completed item."""
    text = "".join(_words(n_text))
    msg_done = {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
    }
    w.emit(
        {
            "type": "response.output_item.added",
            "output_index": output_index,
            "item": {**msg_done, "status": "in_progress", "content": []},
        }
    )
    cp = {"item_id": item_id, "output_index": output_index, "content_index": 0}
    w.emit(
        {
            "type": "response.content_part.added",
            **cp,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
        }
    )
    for d in _words(n_text):
        w.emit({"type": "response.output_text.delta", **cp, "delta": d, "logprobs": [], "obfuscation": "Zx9"})
    w.emit({"type": "response.output_text.done", **cp, "text": text, "logprobs": []})
    w.emit(
        {
            "type": "response.content_part.done",
            **cp,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": text},
        }
    )
    w.emit({"type": "response.output_item.done", "output_index": output_index, "item": msg_done})
    return msg_done


def openai_stream(
    n_reasoning: int = 5000, n_text: int = 2000, *, reasoning_deltas: list[str] | None = None
) -> Stream:
    """A gpt-5-shaped Responses stream: reasoning summary deltas, answer text, one function call.

    ``reasoning_deltas`` replaces the generated reasoning words (e.g. with markers, to trace each
    delta to the display).
    """
    r_deltas = reasoning_deltas if reasoning_deltas is not None else _words(n_reasoning)
    w = _Writer(openai=True)
    base = _oai_base()
    w.emit({"type": "response.created", "response": base})
    w.emit({"type": "response.in_progress", "response": base})
    enc = "gAAAAAB" + "x7Yq" * 600
    summary = "".join(r_deltas)
    rs_done = {
        "id": RS,
        "type": "reasoning",
        "encrypted_content": enc,
        "summary": [{"type": "summary_text", "text": summary}],
    }
    w.emit(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"id": RS, "type": "reasoning", "encrypted_content": enc[:100], "summary": []},
        }
    )
    part = {"item_id": RS, "output_index": 0, "summary_index": 0}
    w.emit(
        {
            "type": "response.reasoning_summary_part.added",
            **part,
            "part": {"type": "summary_text", "text": ""},
        }
    )
    for d in r_deltas:
        w.emit(
            {"type": "response.reasoning_summary_text.delta", **part, "delta": d, "obfuscation": "aB3dE9fGh1"}
        )
    w.emit({"type": "response.reasoning_summary_text.done", **part, "text": summary})
    w.emit(
        {
            "type": "response.reasoning_summary_part.done",
            **part,
            "part": {"type": "summary_text", "text": summary},
        }
    )
    w.emit({"type": "response.output_item.done", "output_index": 0, "item": rs_done})
    msg_done = _oai_message(w, MSG, 1, n_text)
    fc_done = {
        "id": FC,
        "type": "function_call",
        "status": "completed",
        "arguments": ARGS,
        "call_id": "call_bench",
        "name": "get_weather",
    }
    w.emit(
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {**fc_done, "arguments": "", "status": "in_progress"},
        }
    )
    for piece in ARG_PIECES:
        w.emit(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": FC,
                "output_index": 2,
                "delta": piece,
                "obfuscation": "q1",
            }
        )
    w.emit(
        {"type": "response.function_call_arguments.done", "item_id": FC, "output_index": 2, "arguments": ARGS}
    )
    w.emit({"type": "response.output_item.done", "output_index": 2, "item": fc_done})
    final = {
        **base,
        "status": "completed",
        "output": [rs_done, msg_done, fc_done],
        "usage": _oai_usage(len(r_deltas) + n_text + 10, len(r_deltas)),
    }
    w.emit({"type": "response.completed", "response": final})
    return w.done()


def openai_final(n_text: int = 5) -> Stream:
    """The short closing answer of a tool loop (no reasoning item, no tool call)."""
    w = _Writer(openai=True)
    base = {**_oai_base(), "id": RID + "2"}
    w.emit({"type": "response.created", "response": base})
    msg_done = _oai_message(w, MSG + "2", 0, n_text)
    w.emit(
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [msg_done], "usage": _oai_usage(n_text, 0)},
        }
    )
    return w.done()


def _ant_message(msg_id: str) -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        },
    }


def anthropic_stream(n_reasoning: int = 5000, n_text: int = 2000) -> Stream:
    """A claude-sonnet-4-5-shaped Messages stream: thinking deltas + signature, text, one tool_use."""
    w = _Writer(openai=False)
    w.emit({"type": "message_start", "message": _ant_message("msg_01bench000000000000000000")})
    w.emit({"type": "ping"})
    w.emit(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
    )
    for d in _words(n_reasoning):
        w.emit(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": d}}
        )
    w.emit(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCkYIBxgCKkB" + "s1g" * 120},
        }
    )
    w.emit({"type": "content_block_stop", "index": 0})
    w.emit({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    for d in _words(n_text):
        w.emit({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": d}})
    w.emit({"type": "content_block_stop", "index": 1})
    w.emit(
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_01bench", "name": "get_weather", "input": {}},
        }
    )
    for piece in ARG_PIECES:
        w.emit(
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
        )
    w.emit({"type": "content_block_stop", "index": 2})
    w.emit(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": n_reasoning + n_text + 10},
        }
    )
    w.emit({"type": "message_stop"})
    return w.done()


def anthropic_final(n_text: int = 5) -> Stream:
    """The short closing answer of a tool loop."""
    w = _Writer(openai=False)
    w.emit({"type": "message_start", "message": _ant_message("msg_01bench000000000000000002")})
    w.emit({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for d in _words(n_text):
        w.emit({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}})
    w.emit({"type": "content_block_stop", "index": 0})
    w.emit(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": n_text},
        }
    )
    w.emit({"type": "message_stop"})
    return w.done()


GEMINI_MODEL = "gemini-3-flash-preview"
GEMINI_SIGNATURE = base64.b64encode(bytes((i * 37 + 11) % 256 for i in range(372))).decode()
"""A signature of a recorded signature's size (standard base64 with ``+``/``/``, as the API sends it)."""


def _gemini_chunk(parts: list[dict[str, Any]], usage: dict[str, Any], rid: str, finish: bool = False) -> str:
    cand: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = "STOP"
    obj = {"candidates": [cand], "usageMetadata": usage, "modelVersion": GEMINI_MODEL, "responseId": rid}
    return f"data: {json.dumps(obj, separators=(',', ': '))}\r\n\r\n"


def _gemini_usage(n_out: int, n_thoughts: int) -> dict[str, Any]:
    usage: dict[str, Any] = {"promptTokenCount": 65, "candidatesTokenCount": n_out}
    usage["totalTokenCount"] = 65 + n_out + n_thoughts
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 65}]
    if n_thoughts:
        usage["thoughtsTokenCount"] = n_thoughts
    return usage


def gemini_stream(n_reasoning: int = 5000, n_text: int = 2000) -> Stream:
    """Thought-summary chunks, answer-text chunks, a signed ``functionCall`` chunk, the closing chunk."""
    usage = _gemini_usage(n_text + 16, n_reasoning)
    rid = "yACzaZiFOp3Uz7IPbench01"
    out = [_gemini_chunk([{"text": d, "thought": True}], usage, rid) for d in _words(n_reasoning)]
    out += [_gemini_chunk([{"text": d}], usage, rid) for d in _words(n_text)]
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "9d532gc9"}
    out.append(_gemini_chunk([{"functionCall": call, "thoughtSignature": GEMINI_SIGNATURE}], usage, rid))
    out.append(_gemini_chunk([{"text": ""}], usage, rid, finish=True))
    return Stream("".join(out).encode("utf-8"), len(out))


def gemini_final(n_text: int = 5) -> Stream:
    """The short closing answer of a tool loop."""
    usage = _gemini_usage(n_text, 0)
    rid = "yACzaZiFOp3Uz7IPbench02"
    out = [_gemini_chunk([{"text": d}], usage, rid) for d in _words(n_text)]
    out.append(_gemini_chunk([{"text": ""}], usage, rid, finish=True))
    return Stream("".join(out).encode("utf-8"), len(out))


CHAT_MODEL = "deepseek-chat"


def chat_stream(n_reasoning: int, n_text: int) -> Stream:
    """The SSE body (each event ending with a blank line) and its event count."""
    base = {"id": "bench-1", "object": "chat.completion.chunk", "created": 1, "model": CHAT_MODEL}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        obj = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    pieces = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    pieces += [chunk({"content": None, "reasoning_content": f"step {i} "}) for i in range(n_reasoning)]
    pieces += [chunk({"content": f"word{i} "}) for i in range(n_text)]
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    pieces.append(chunk({"tool_calls": [call]}))
    pieces.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Paris"}'}}]}))
    usage = {
        "prompt_tokens": 40, "completion_tokens": n_reasoning + n_text + 8, "prompt_cache_hit_tokens": 0,
        "completion_tokens_details": {"reasoning_tokens": n_reasoning},
    }  # fmt: skip
    pieces.append(chunk({}, "tool_calls", usage=usage))
    pieces.append(b"data: [DONE]\n\n")
    return Stream(b"".join(pieces), len(pieces))


def chat_final(n_text: int = 5) -> Stream:
    """The short closing answer of a tool loop: content deltas, the usage chunk, ``[DONE]``."""
    base = {"id": "bench-2", "object": "chat.completion.chunk", "created": 1, "model": CHAT_MODEL}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        obj = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    pieces = [chunk({"role": "assistant", "content": ""})]
    pieces += [chunk({"content": d}) for d in _words(n_text)]
    usage = {"prompt_tokens": 60, "completion_tokens": n_text, "prompt_cache_hit_tokens": 0}
    pieces.append(chunk({}, "stop", usage=usage))
    pieces.append(b"data: [DONE]\n\n")
    return Stream(b"".join(pieces), len(pieces))
