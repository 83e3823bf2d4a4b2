"""Log redaction covers the loggers a run actually uses, discovered, not assumed.

A run at DEBUG on real sockets (the loopback simulator: the SDK, its HTTP client and that client's
transport all log) records which loggers emitted. Then (a) nothing any of them wrote holds a key or
reasoning, and (b) each of them redacts: a record carrying a key, a reasoning event and a wire body
with opaque fields, logged through that very logger, comes out clean. (b) is what catches a library
that logs under a name the redaction list does not know (``httpcore2``, not ``httpcore``).
"""

from __future__ import annotations

import io
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import agentlab as al
from agentlab.neutral.events import ReasoningDeltaEvent
from tests.reliability.support import MODELS, PROVIDERS, get_weather

TOKEN = uuid.uuid4().hex[:12]
KEYS = {"openai": f"sk-test-CANARYKEY{TOKEN}openai", "anthropic": f"sk-ant-test-CANARYKEY{TOKEN}anth"}
REASONING = f"REASONINGCANARY{TOKEN}"


class _Names(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.names: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        self.names.add(record.name)


@pytest.fixture
def debug_root() -> Iterator[tuple[io.StringIO, _Names]]:
    buf = io.StringIO()
    text = logging.StreamHandler(buf)
    text.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    names = _Names()
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(text)
    root.addHandler(names)
    try:
        yield buf, names
    finally:
        root.removeHandler(text)
        root.removeHandler(names)
        root.setLevel(old)


def _socket_adapter(provider: str, url: str) -> Any:
    import anthropic
    import httpx2
    import openai

    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    if provider == "openai":
        oc = openai.AsyncOpenAI(
            base_url=f"{url}/v1", api_key=KEYS[provider], max_retries=1, http_client=httpx2.AsyncClient()
        )
        return OpenAIResponsesAdapter(
            MODELS[provider], client=oc, max_retries=1, extra_headers={"x-sim-fault": "500x1"}
        )
    ac = anthropic.AsyncAnthropic(
        base_url=url, api_key=KEYS[provider], max_retries=1, http_client=httpx2.AsyncClient(),
        default_headers={"x-sim-fault": "500x1"},
    )  # fmt: skip
    return AnthropicMessagesAdapter(MODELS[provider], client=ac)


def test_every_logger_a_debug_run_uses_is_redacted(
    server: str, debug_root: tuple[io.StringIO, _Names]
) -> None:
    buf, handler = debug_root
    shown: list[str] = []

    def on_event(ev: object) -> None:
        if isinstance(ev, ReasoningDeltaEvent):
            shown.append(ev.text)

    for provider in PROVIDERS:
        result = al.run(
            f"{provider}:{MODELS[provider]}", "Is it warmer in Paris or Rome?", tools=[get_weather],
            adapter=_socket_adapter(provider, server), on_event=on_event,
        )  # fmt: skip
        assert result.status == "completed"
    emitted = set(handler.names)
    assert any(n.startswith("openai") for n in emitted) and any(n.startswith("anthropic") for n in emitted)
    assert any(n.startswith("httpcore2") for n in emitted), "positive control: the transport logged"
    run_log = buf.getvalue()
    assert "The user asks:" in "".join(shown)
    for needle in ("The user asks:", f"CANARYKEY{TOKEN}"):
        assert needle not in run_log

    # every logger that emitted redacts what it is given
    leaked: list[str] = []
    item = {"type": "reasoning", "encrypted_content": REASONING, "summary": [{"text": REASONING}]}
    body = {"input": [item]}
    for name in sorted(emitted):
        before = len(buf.getvalue())
        logging.getLogger(name).debug(
            "headers Authorization: Bearer %s x-api-key: %s event %s body %s",
            KEYS["openai"], KEYS["anthropic"], ReasoningDeltaEvent(text=REASONING),
            body,
        )  # fmt: skip
        line = buf.getvalue()[before:]
        assert line.startswith(name), "the probe record was written"
        if f"CANARYKEY{TOKEN}" in line or REASONING in line:
            leaked.append(name)
    assert not leaked, f"loggers used by the run that do not redact: {leaked}"
