"""The reasoning rules of Converse, per model family, with the real error texts.

Claude (``sim-bedrock-claude``; Anthropic's rules behind Bedrock, its texts prefixed "The model
returned the following errors: "), checked when thinking is on:

* every ``reasoningText`` must carry a ``signature`` ("...thinking.signature: Field required") that
  is Bedrock's ("Invalid `signature` in `thinking` block": one from Anthropic's own API, or altered);
* in the latest assistant message, each reasoning block must be as returned, at its position, with
  all its siblings ("... cannot be modified. These blocks must remain as they were in the original
  response.");
* the latest assistant message, when it holds ``toolUse``, must start with its reasoning block
  ("Expected `thinking` or `redacted_thinking`, but found `text`..."): a reordered or missing block.

OpenAI models on Bedrock (``sim-bedrock-openai``) return only ``redactedContent`` and refuse a
``reasoningText`` sent back ("This model doesn't support the reasoningContent.reasoningText.text
field for assistant messages. Remove reasoningContent.reasoningText.text and try again."). Kimi
(``sim-bedrock-kimi``) returns unsigned ``reasoningText`` and takes it back as it is.
"""

from __future__ import annotations

import base64
from typing import Any

from agentlab.sim.anthropic.messages import _EXPECTED_THINKING
from agentlab.sim.bedrock import sealing
from agentlab.sim.bedrock.errors import model_error, validation
from agentlab.sim.errors import SimError
from agentlab.sim.signing import turn_layout

CLAUDE, OPENAI, KIMI = "claude", "openai", "kimi"
#: The simulated models and the family each behaves as.
FAMILIES = {"sim-bedrock-claude": CLAUDE, "sim-bedrock-openai": OPENAI, "sim-bedrock-kimi": KIMI}
OPENAI_PREFIX = b"rsn_"
NO_REASONING_TEXT = (
    "This model doesn't support the reasoningContent.reasoningText.text field for assistant messages. "
    "Remove reasoningContent.reasoningText.text and try again."
)


def block_type(block: dict[str, Any]) -> str:
    """The Messages type Claude sees for a Converse block (its errors name those)."""
    if "reasoningContent" in block:
        rc = block["reasoningContent"] or {}
        return "redacted_thinking" if "redactedContent" in rc else "thinking"
    return {"toolUse": "tool_use", "toolResult": "tool_result", "text": "text"}.get(
        next(iter(block), ""), "text"
    )


def redacted_bytes(value: Any) -> bytes | None:
    """``redactedContent`` as bytes (base64 in the JSON body)."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return None


def _modified(i: int, j: int) -> SimError:
    return model_error(
        f"messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant "
        "message cannot be modified. These blocks must remain as they were in the original response."
    )


def _reasoning(content: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    return [
        (j, b["reasoningContent"] or {})
        for j, b in enumerate(content)
        if isinstance(b, dict) and "reasoningContent" in b
    ]


def _layout_text(secret: bytes, rc: dict[str, Any], j: int) -> tuple[str, str, bytes | None, bool]:
    """(type, text the layout digests, signed layout, verified) of one reasoning block at ``j``."""
    if "redactedContent" in rc:
        data = redacted_bytes(rc.get("redactedContent"))
        opened = sealing.unseal(secret, data, j) if data is not None else None
        return (
            "redacted_thinking",
            opened[0] if opened else "",
            opened[1] if opened else None,
            opened is not None,
        )
    text = (rc.get("reasoningText") or {}).get("text")
    verdict, layout = sealing.check(secret, text, (rc.get("reasoningText") or {}).get("signature"), j)
    return "thinking", str(text), layout, verdict == sealing.OK


def _check_signatures(i: int, content: list[Any], secret: bytes, latest: bool) -> None:
    blocks = _reasoning(content)
    for j, rc in blocks:
        rt = rc.get("reasoningText")
        if isinstance(rt, dict):
            if "signature" not in rt:
                raise model_error(f"messages.{i}.content.{j}.thinking.signature: Field required")
            if sealing.check(secret, rt.get("text"), rt.get("signature"), j)[0] == sealing.INVALID:
                raise model_error(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
    if not latest or not blocks:
        return
    seen = [(j, *_layout_text(secret, rc, j)) for j, rc in blocks]
    layout = turn_layout([(j, kind, text) for j, kind, text, _, _ in seen])
    for j, _kind, _text, signed, ok in seen:
        if not ok or signed != layout:
            raise _modified(i, j)


def check_claude(messages: list[Any], secret: bytes, thinking_on: bool) -> None:
    """Claude's rules on the reasoning blocks sent back (see the module docstring)."""
    assistants = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    if not assistants:
        return
    last = assistants[-1]
    content = list(messages[last].get("content") or [])
    has_tool = any(isinstance(b, dict) and "toolUse" in b for b in content)
    if thinking_on and has_tool and content and "reasoningContent" not in content[0]:
        raise model_error(
            f"messages.{last}.content.0.type: " + _EXPECTED_THINKING.format(block_type(content[0]))
        )
    for i in assistants:
        _check_signatures(i, list(messages[i].get("content") or []), secret, i == last)


def check_openai(messages: list[Any]) -> None:
    """OpenAI models on Bedrock take back ``redactedContent`` only."""
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        for _, rc in _reasoning(list(m.get("content") or [])):
            if "reasoningText" in rc:
                raise validation(NO_REASONING_TEXT)


def check(family: str, messages: list[Any], secret: bytes, thinking_on: bool) -> None:
    """The family's rules (Kimi has none: it takes its unsigned text back as it is)."""
    if family == CLAUDE:
        check_claude(messages, secret, thinking_on)
    elif family == OPENAI:
        check_openai(messages)
