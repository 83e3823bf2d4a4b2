"""Reading a Gemini request body: field names as the API's JSON parser takes them, and the prompt's tokens.

Why a module of its own: the generate endpoint (:mod:`agentlab.sim.gemini.generate`), explicit
caches (:mod:`agentlab.sim.gemini.cache`) and batch jobs (:mod:`agentlab.sim.batch.gemini`) read
bodies the same way and count a prompt the same way; the endpoint also serves the routes of the
other two, so with these here the three import this module instead of each other (no import cycle).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import agentlab.sim.gemini.errors as GE
from agentlab.sim.gemini.schema import normalize
from agentlab.sim.tokenizer import tokenize

__all__ = ["content_parts", "content_text", "prompt_tokens", "read_request"]


def read_request(req: dict[str, Any], message: str = "GenerateContentRequest") -> dict[str, Any]:
    """The body in camelCase; unknown names refused as the API's JSON parser does (all at once)."""
    body, bad = normalize(message, req)
    if bad:
        violations = [
            {"field": v.field, "description": v.description} if v.field else {"description": v.description}
            for v in bad
        ]
        raise GE.invalid_argument("\n".join(v.description for v in bad), violations)
    assert isinstance(body, dict)
    return body


def content_parts(content: Any) -> list[dict[str, Any]]:
    """A content's parts that are objects (a client's malformed part is refused elsewhere, not here)."""
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts or [] if isinstance(p, dict)]


def content_text(content: Any) -> str:
    """A content's visible text: thought summaries are not part of what the model reads back."""
    return "".join(str(p.get("text") or "") for p in content_parts(content) if not p.get("thought"))


def prompt_tokens(req: Mapping[str, Any], contents: list[Any]) -> list[str]:
    """The prompt as tokens: system instruction, tools, then contents (a cached prefix is stable)."""
    text = [content_text(req.get("systemInstruction"))]
    text += [json.dumps(t, sort_keys=True) for t in req.get("tools") or []]
    for c in contents:
        for p in content_parts(c):
            if p.get("thought"):
                continue
            body = {k: v for k, v in p.items() if k not in ("thoughtSignature",)}
            text.append(p["text"] if set(body) == {"text"} else json.dumps(body, sort_keys=True))
    return tokenize("\n".join(t for t in text if t))
