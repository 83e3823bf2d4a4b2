"""Structured logging redaction and the portable-only memory store."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import agentlab as al
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, SummaryItem, UserItem
from agentlab.records.logs import get_logger, redact, redact_secrets
from agentlab.records.memory import MemoryStore


@pytest.mark.parametrize(
    "secret",
    [
        "sk-ant-api03-AbCdEfGhIjKlMnOp_qrs",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk-abcdefghijklmnopqrstuv",
        "Bearer abcdefghijklmnopq.rst",
        "Bearer ABSKQmVkcm9ja0FQSUtleS+abc/def0123456789==",
        "x-amz-security-token:IQoJb3JpZ2luX2VjEFAaCXVz+ZWFzdC0x/EiK==",
    ],
)
def test_redact_secrets(secret: str) -> None:
    out = redact_secrets(f"key={secret} end")
    assert secret not in out and "[REDACTED]" in out and out.endswith(" end")


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Authorization: Bearer ABSKQmVkcm9ja0FQSUtleS+abc/def0123456789== end", "Authorization: "),
        ("x-amz-security-token:IQoJb3JpZ2luX2VjEFAaCXVz+ZWFzdC0x/EiK== end", ""),
    ],
)
def test_a_base64_token_is_redacted_whole(line: str, kept: str) -> None:
    """A Bedrock API key and an AWS session token are base64: no tail after a ``+`` or ``/`` survives."""
    assert redact_secrets(line) == f"{kept}[REDACTED] end"


def test_redact_structures() -> None:
    data = {
        "input": [{"type": "reasoning", "encrypted_content": "E"}, {"type": "message", "content": "hi"}],
        "thinking": "T",
        "nested": {"api_key": "K", "ok": "fine"},
        "blocks": ({"type": "redacted_thinking", "data": "D"},),
    }
    out = redact(data)
    flat = repr(out)
    for s in ("'E'", "'T'", "'K'", "'D'"):
        assert s not in flat
    assert out["input"][1] == {"type": "message", "content": "hi"} and out["nested"]["ok"] == "fine"
    assert "redacted" in repr(redact(ReasoningDeltaEvent(text="T")))


def test_logger_filter_redacts_extra_and_args(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    log = get_logger("agentlab.test")
    log.debug("auth %s", "sk-proj-abcdefghijklmnopqrstuvwx", extra={"agentlab": {"signature": "SIG", "n": 1}})
    (rec,) = [r for r in caplog.records if r.name == "agentlab.test"]
    assert "sk-proj" not in rec.getMessage()
    assert vars(rec)["agentlab"] == {"signature": "[REDACTED]", "n": 1}  # where `extra` lands


def test_non_agentlab_loggers_untouched(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    get_logger("agentlab.x")
    logging.getLogger("someapp").debug("thinking: %s", {"thinking": "keep"})
    (rec,) = [r for r in caplog.records if r.name == "someapp"]
    assert "keep" in rec.getMessage()


def test_memory_accepts_portable_only(tmp_path: Path) -> None:
    m = MemoryStore(tmp_path / "mem.jsonl")
    m.add(UserItem(text="Paris is in France"))
    m.extend([AssistantTextItem(text="noted"), SummaryItem(text="geography chat")])
    item = ProviderReasoningItem(
        b"x", provider="openai", api="responses", model="m", block_type="reasoning", turn_id="t", index=0
    )
    for bad in (item, ReasoningDeltaEvent(text="thought"), {"kind": "user", "text": "raw dict"}, "text"):
        with pytest.raises(al.PrivacyError):
            m.add(bad)  # type: ignore[arg-type]
    with pytest.raises(al.PrivacyError):
        m.extend([UserItem(text="ok"), item])  # type: ignore[list-item]
    assert len(m) == 3  # the rejected batch stored nothing
    assert m.search("paris") == [UserItem(text="Paris is in France")]
    again = MemoryStore(tmp_path / "mem.jsonl")
    assert list(again) == list(m)
