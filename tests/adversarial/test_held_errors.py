"""What a held exception keeps alive, and which loggers a real-socket run actually uses.

* A notebook keeps the last exception (``sys.last_value``) and users keep errors in lists. After a
  failed run its opaque reasoning items are released; a held error must not keep them (or the raw
  payload bytes, or reasoning text) alive through its frames or chain.
* Log redaction is attached by logger name. Every logger that emits a record during a run over a real
  socket (the SDK, ``httpx2``, ``httpcore2``...) must be one that redaction covers.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator

import pytest

import agentlab as al
from agentlab.neutral.items import ProviderReasoningItem
from tests.adversarial import chat_wire
from tests.adversarial.support import (
    MODELS,
    PROVIDERS,
    TASK,
    Canaries,
    HostileTransport,
    adapter_on,
    debug_logging,
    get_weather,
    report,
    responder_for,
    scan,
    strip_harness,
)
from tests.support.loopback import serving


async def _failed_runs(provider: str, fault: str, n: int, c: Canaries) -> list[BaseException]:
    errors: list[BaseException] = []
    for _ in range(n):
        adapter = adapter_on(
            provider, HostileTransport(provider, responder_for(provider, fault, c)), c.key_for(provider)
        )
        run = al.Run(f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, retries=0)
        try:
            await run.arun()
        except Exception as e:
            errors.append(e)
        finally:
            await adapter._client.close()
    return errors


@pytest.mark.parametrize("fault", ["malformed", "http500"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_held_errors_keep_no_opaque_item_alive(provider: str, fault: str) -> None:
    c = Canaries.fresh()
    errors = asyncio.run(_failed_runs(provider, fault, 20, c))
    assert len(errors) == 20 and all(isinstance(e, al.AgentlabError) for e in errors), errors[:1]
    for e in errors:
        strip_harness(e)  # only agentlab's frames stay referenced
    mine = [m.encode() for m in c.opaque.values()]

    def alive() -> int:
        gc.collect()
        return sum(
            1
            for o in gc.get_objects()
            if isinstance(o, ProviderReasoningItem)
            and any(m in (getattr(o, "_payload", b"") or b"") for m in mine)
        )

    held = alive()
    del errors
    by_errors = held - alive()  # what dropping the errors frees (pytest's log capture may hold a record)
    assert by_errors == 0, (
        f"{provider}/{fault}: {by_errors} released opaque reasoning item(s) kept alive only by the held "
        "errors of 20 failed runs (through their tracebacks' frames or chains)"
    )


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    """The simulator on a real loopback socket (``python -m agentlab.sim serve --port 0``)."""
    with serving() as url:
        yield url


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_logger_used_over_a_real_socket_is_redacted(provider: str, loopback: str) -> None:
    import anthropic
    import httpx2
    import openai

    from agentlab.adapters.registry import get_provider
    from agentlab.records.logs import SDK_LOGGERS

    c = Canaries.fresh()
    key = c.key_for(provider)
    names: set[str] = set()

    async def go() -> None:
        http = httpx2.AsyncClient()
        model = MODELS[provider]
        adapter: al.Adapter
        if provider in chat_wire.CHAT:
            adapter, model = chat_wire.sim_adapter(provider, loopback, key, http)
        elif provider == "openai":
            oc = openai.AsyncOpenAI(base_url=f"{loopback}/v1", api_key=key, max_retries=0, http_client=http)
            adapter = al.OpenAIResponsesAdapter(MODELS[provider], client=oc, max_retries=0)
        else:
            ac = anthropic.AsyncAnthropic(base_url=loopback, api_key=key, max_retries=0, http_client=http)
            adapter = al.AnthropicMessagesAdapter(MODELS[provider], client=ac)
        try:
            await al.Run(f"{provider}:{model}", TASK, tools=[get_weather], adapter=adapter).arun()
        finally:
            await http.aclose()

    with debug_logging() as logs:
        import logging

        class Names(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                names.add(record.name)

        h = Names(logging.DEBUG)
        logging.getLogger().addHandler(h)
        try:
            asyncio.run(go())
        finally:
            logging.getLogger().removeHandler(h)
    covered = ("agentlab", *SDK_LOGGERS, *get_provider(provider).sdk_loggers)
    # the standard library's loggers (asyncio's "Using selector") carry no request data
    third_party = {n for n in names if n.split(".")[0] not in sys.stdlib_module_names}
    uncovered = sorted(n for n in third_party if not any(n == p or n.startswith(p + ".") for p in covered))
    assert len(names) > 2, f"DEBUG logging really captured records: {names}"
    assert not uncovered, (
        f"loggers that emitted during a real-socket {provider} run but are not covered by log redaction "
        f"(agentlab.records.logs.SDK_LOGGERS = {SDK_LOGGERS}): {uncovered}"
    )
    hits = scan("DEBUG logs over a real socket", "\n".join(logs.lines), {f"{provider} api key": key})
    assert not hits, report(hits)
