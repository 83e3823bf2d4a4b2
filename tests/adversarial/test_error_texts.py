"""A provider's error text never carries a value the request sent (issue 29 item 5).

Providers quote what they refused: Google's protobuf parser (``Base64 decoding failed for "<the
signature>"``), OpenAI (``The encrypted content gAAA... could not be verified``), vLLM (pydantic's
``'input': ...``), an upstream's JSON relayed by OpenRouter. Every adapter's error translation passes
the provider's message through one scrubber (:func:`agentlab.neutral.error_text.provider_text`).

Covered here as an attacker would try it:

* Gemini, end to end: the simulator refuses a thought signature that is not base64 exactly as Google
  does, quoting it; a canary in that signature must reach none of ``str(err)``, ``repr(err)``,
  ``RunResult.error``, the event log, the sweep's results file, tracebacks formatted with locals (rich,
  IPython, ``traceback``) or the span status. (OpenAI Responses, Anthropic and the Chat dialects get
  the same through the fault x sink matrix: the ``http400echo`` fault of ``support``.)
* Every family, at the adapter: a 400 quoting a tool argument back; the provider's own words stay.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

import agentlab as al
from agentlab import sim
from agentlab.neutral.items import ToolCallItem, ToolResultItem, UserItem
from agentlab.neutral.request import ModelRequest
from tests.adapters.google_gemini.gemini_support import sse as gemini_sse
from tests.adversarial import chat_wire
from tests.adversarial.support import (
    TASK,
    Canaries,
    Outcome,
    echo_400,
    format_exception_sinks,
    get_weather,
    report,
    scan,
    traced_spans,
)


class _FirstStepScripted(httpx2.AsyncBaseTransport):
    """Answers the first call with a scripted step; every later call goes to the Gemini simulator."""

    def __init__(self, first: bytes) -> None:
        self.first: bytes | None = first
        self.sim = sim.SimTransport()
        self.answers: list[bytes] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.first is not None:
            body, self.first = self.first, None
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)
        resp = await self.sim.handle_async_request(request)
        content = await resp.aread()
        self.answers.append(content)
        return httpx2.Response(resp.status_code, headers=resp.headers, content=content)


def _first_step(signature: str) -> bytes:
    """A Gemini 3 step calling the tool, its signature on the call (the signature is the attacker's)."""
    part = {"functionCall": {"id": "c0ffee01", "name": "get_weather", "args": {"city": "Paris"}}}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [{**part, "thoughtSignature": signature}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 10, "totalTokenCount": 30},
        "modelVersion": "sim-gemini",
    }  # fmt: skip
    return gemini_sse([chunk])


def _gemini_adapter(signature: str, transports: list[_FirstStepScripted]) -> Any:
    from agentlab.adapters.google_gemini import GoogleGeminiAdapter

    transport = _FirstStepScripted(_first_step(signature))
    transports.append(transport)
    return GoogleGeminiAdapter("sim-gemini", client=sim.gemini_client(transport=transport), max_retries=0)


def _gemini_scenario(tmp: Path, signature: str) -> tuple[Outcome, list[_FirstStepScripted]]:
    out = Outcome("google", "http400echo", Canaries.fresh())
    transports: list[_FirstStepScripted] = []
    events = tmp / "events.jsonl"

    async def main() -> None:
        with traced_spans(out):
            run = al.Run(
                "google:sim-gemini", TASK, tools=[get_weather],
                adapter=_gemini_adapter(signature, transports), event_log=events, retries=0, retry_delay=0.0,
            )  # fmt: skip
            try:
                await run.arun()
            except al.AgentlabError as e:
                out.raised = e
            if run.result is not None:
                out.add("RunResult.error", f"{run.result.error_type}: {run.result.error}")
                out.add("RunResult model_dump_json", run.result.model_dump_json())
            results = tmp / "sweep.jsonl"
            await al.asweep(
                [TASK], ["google:sim-gemini"], results=results, tools=[get_weather], retries=0,
                retry_delay=0.0, adapter_factory=lambda ref: _gemini_adapter(signature, transports),
                progress=None, fsync=False,
            )  # fmt: skip
            out.add("sweep results file", results.read_bytes())
        out.add("event log file", events.read_bytes())

    asyncio.run(main())
    assert out.raised is not None, "the run failed on the refused signature"
    out.add("exception str/repr", f"{out.raised!s}\n{out.raised!r}")
    for name, text in format_exception_sinks(out.raised).items():
        out.add(name, text)
    return out, transports


def test_gemini_a_signature_quoted_back_by_the_api_reaches_no_sink(tmp_path: Path) -> None:
    canary = f"cnyGMsig{secrets.token_hex(6)}"
    signature = f"{canary} is not base64!"
    out, transports = _gemini_scenario(tmp_path, signature)
    quoted = b"".join(b for t in transports for b in t.answers)
    assert canary.encode() in quoted and b"Base64 decoding failed" in quoted, (
        "control: the simulated API quoted the signature back in its 400, as Google does"
    )
    assert isinstance(out.raised, al.ProviderAPIError) and out.raised.status == 400
    assert "Base64 decoding failed for" in str(out.raised), "the provider's own words are kept"
    assert "contents[1].parts[0].thought_signature" in str(out.raised), "the field path is kept"
    for sink in (
        "RunResult.error",
        "event log file",
        "sweep results file",
        "OpenTelemetry spans (content on)",
    ):
        assert out.sinks.get(sink, "").strip(), f"control: {sink} was filled"
    hits = [h for name, text in out.sinks.items() for h in scan(name, text, {"gemini signature": canary})]
    assert not hits, report(hits)


# ------------------------------------------------------------------ tool arguments, every family


FAMILIES = ("openai", "anthropic", "google", *chat_wire.CHAT)


def _quoting_handler(canary: str, family: str) -> Callable[[httpx2.Request], httpx2.Response]:
    """A 400 quoting back every request string that holds the canary, in the family's wording."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        values: list[str] = []

        def walk(v: Any) -> None:
            if isinstance(v, str) and canary in v:
                values.append(v)
            elif isinstance(v, dict | list):
                for x in v.values() if isinstance(v, dict) else v:
                    walk(x)

        walk(json.loads(request.content))
        assert values, "control: the tool arguments were in the request"
        if family == "google":
            text = "\n".join(
                f'Invalid JSON payload received. Unknown value "{v}" at '
                "'contents[1].parts[0].function_call.args'"
                for v in values
            )
            body: dict[str, Any] = {"error": {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}}
        else:
            body = echo_400(family, values)
        return httpx2.Response(400, json=body)

    return handler


def _adapter(family: str, handler: Callable[[httpx2.Request], httpx2.Response]) -> tuple[Any, str]:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    if family in chat_wire.CHAT:
        return chat_wire.adapter_for(family, http, "sk-test-not-a-key", 0), chat_wire.MODELS[family]
    if family == "openai":
        import openai

        oc = openai.AsyncOpenAI(
            api_key="sk-test", base_url="http://x.invalid/v1", max_retries=0, http_client=http
        )
        return al.OpenAIResponsesAdapter("gpt-5.1", client=oc, max_retries=0), "gpt-5.1"
    if family == "anthropic":
        import anthropic

        ac = anthropic.AsyncAnthropic(
            api_key="sk-ant-test", base_url="http://x.invalid", max_retries=0, http_client=http
        )
        return al.AnthropicMessagesAdapter("claude-sonnet-4-5", client=ac), "claude-sonnet-4-5"
    from google import genai
    from google.genai import types

    from agentlab.adapters.google_gemini import GoogleGeminiAdapter

    gc = genai.Client(api_key="AIza-test", http_options=types.HttpOptions(httpx_async_client=http))
    return GoogleGeminiAdapter("gemini-3-pro-preview", client=gc, max_retries=0), "gemini-3-pro-preview"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tool_argument_quoted_back_in_a_400_is_not_in_the_error(family: str) -> None:
    canary = f"cnyTOOLarg{secrets.token_hex(6)}"
    adapter, model = _adapter(family, _quoting_handler(canary, family))
    arguments = json.dumps({"city": f"{canary} (the user's private note)"})
    request = ModelRequest(
        model=model, reasoning=None,
        items=(UserItem(text=TASK), ToolCallItem(call_id="call_1", name="get_weather", arguments=arguments),
               ToolResultItem(call_id="call_1", name="get_weather", output="18 C")),
    )  # fmt: skip

    async def go() -> al.ProviderAPIError:
        with pytest.raises(al.ProviderAPIError) as info:
            async for _ in adapter.stream(request):
                pass
        return info.value

    err = asyncio.run(go())
    assert err.status == 400
    texts = {"str(err)": str(err), "repr(err)": repr(err), "err.message": err.message}
    hits = [
        h for name, text in texts.items() for h in scan(f"{family} {name}", text, {"tool argument": canary})
    ]
    assert not hits, report(hits)
