"""Drivers for the Chat Completions simulator tests: a tool loop on the real ``openai`` SDK.

The loop keeps the assistant message the way a careful client does (``keep``: every field the
response carried, reasoning included) or drops chosen reasoning fields, so each strict rule can be
shown failing for its real reason and passing when obeyed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentlab import sim

TEMPS = {"Paris": "18 C, cloudy", "Rome": "24 C, sunny", "Oslo": "-3 C, snow", "Berlin": "11 C"}
TASK = "Is it warmer in Paris or Rome?"
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
Edit = Callable[[dict[str, Any]], dict[str, Any]]


def merge_stream(chunks: list[Any]) -> tuple[dict[str, Any], Any]:
    """An assistant message from SDK chunks (reasoning_details merged by ``index``), and the usage."""
    content, text = "", {"reasoning_content": "", "reasoning": ""}
    calls: dict[int, dict[str, Any]] = {}
    details: dict[int, dict[str, Any]] = {}
    usage = None
    for ch in chunks:
        usage = ch.usage or usage
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        content += d.content or ""
        extra = d.model_extra or {}
        for f in text:
            text[f] += extra.get(f) or ""
        for item in extra.get("reasoning_details") or []:
            merged = details.setdefault(item["index"], {})
            for k, v in item.items():
                if k in ("text", "summary") and v is not None:
                    merged[k] = merged.get(k, "") + v
                elif v is not None or k not in merged:
                    merged[k] = v
        for tc in d.tool_calls or []:
            e = calls.setdefault(
                tc.index, {"id": None, "type": "function", "function": {"name": None, "arguments": ""}}
            )
            e["id"] = tc.id or e["id"]
            if tc.function is not None:
                e["function"]["name"] = tc.function.name or e["function"]["name"]
                e["function"]["arguments"] += tc.function.arguments or ""
    msg: dict[str, Any] = {"role": "assistant", "content": content or None}
    msg |= {f: v for f, v in text.items() if v}
    if details:
        msg["reasoning_details"] = [details[i] for i in sorted(details)]
    if calls:
        msg["tool_calls"] = [calls[i] for i in sorted(calls)]
    return msg, usage


def tool_results(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``role: tool`` message per call, answered from :data:`TEMPS`."""
    return [
        {
            "role": "tool",
            "tool_call_id": c["id"],
            "content": TEMPS[json.loads(c["function"]["arguments"])["city"]],
        }
        for c in msg.get("tool_calls") or []
    ]


async def run_loop(
    client: Any,
    model: str,
    *,
    stream: bool = False,
    edit: Edit | None = None,
    messages: list[dict[str, Any]] | None = None,
    max_steps: int = 5,
    **kw: Any,
) -> tuple[str | None, list[dict[str, Any]], list[Any]]:
    """Drive the loop to an answer: (answer, the messages sent last, raw responses or chunk lists)."""
    msgs = list(messages or [{"role": "user", "content": TASK}])
    seen: list[Any] = []
    for _ in range(max_steps):
        if stream:
            s = await client.chat.completions.create(
                model=model, messages=msgs, tools=[WEATHER_TOOL], stream=True, **kw
            )
            chunks = [c async for c in s]
            seen.append(chunks)
            msg, _ = merge_stream(chunks)
        else:
            r = await client.chat.completions.create(model=model, messages=msgs, tools=[WEATHER_TOOL], **kw)
            seen.append(r)
            msg = r.choices[0].message.model_dump(exclude_none=True)
        msgs.append(edit(msg) if edit else msg)
        if not msg.get("tool_calls"):
            return msg.get("content"), msgs, seen
        msgs += tool_results(msg)
    return None, msgs, seen


def drop(*fields: str) -> Edit:
    """An edit that removes reasoning fields from every assistant message it keeps."""
    return lambda m: {k: v for k, v in m.items() if k not in fields}


def client(dialect: str, transport: Any = None, **kw: Any) -> Any:
    """``sim.chat_client`` on a given transport (fresh one by default), without SDK retries."""
    kw.setdefault("max_retries", 0)
    return sim.chat_client(dialect, transport=transport or sim.SimTransport(), **kw)
