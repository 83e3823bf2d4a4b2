"""The adapter contract, shared by every provider adapter: the registry of cases and the helpers.

``test_contract.py`` runs the same scenarios for each registered case against the in-process
simulator (``agentlab.sim``) behind the provider's real SDK. Adding a provider is one ``register``
line at the bottom of this file: a name, a simulated model, and how to build the adapter on a given
transport with a given ``max_retries``. A provider whose far side is not the simulator passes its
own ``serve`` (anything with ``bodies`` and ``last_json`` that takes the scenarios' fault options)
and may run the scenarios from its own test module with its own ``case`` fixture
(``tests/providers/test_toy.py``).

What every adapter promises (asserted by the suite):

* ``stream`` yields display events, then exactly one ``ResponseCompletedEvent`` last; on failure it
  raises a typed ``agentlab.errors.ProviderError`` subclass and yields no completed event.
* Portable items carry ``turn_id`` (the response id) and ``index`` (position in the output).
* ``ModelResponse.reasoning`` holds the opaque items; sent back as the request's ``continuation``
  they reach the wire unchanged (the parsed payload appears as-is in the next request body).
* Reasoning deltas of a call arrive before its answer text; usage is populated
  (``reasoning_source="reported"`` on the simulator's reporting models).
* A continuation item made by another provider is never sent: it is dropped with a
  ``DiagnosticEvent(code="reasoning_item_dropped")`` and counted in ``reasoning_items_dropped``.
* One policy per fact (``agentlab.assembly.assembler``): tool-call arguments that are not a JSON
  object are kept with one ``invalid_tool_arguments`` diagnostic; unknown stream events are
  ignored with one ``unsupported_content`` diagnostic per kind; dropped reasoning items are one
  ``reasoning_item_dropped`` per reason per request, payload ``{count, reason, provider}``.
* Status errors map to ``RateLimitError`` (with ``retry_after``), ``ProviderServerError``,
  ``OverloadedError``, ``ProviderAPIError``, status by status the same on every adapter
  (``STATUS_LADDER``); a cut or reset stream to ``StreamInterruptedError``.
* ``aclose`` closes only what the adapter created: a client (or far side) the caller injected stays
  open, and the adapter keeps answering on it (``agentlab.adapters.sdk_adapter``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2

from agentlab.adapters.base import Adapter
from agentlab.assembly.assembler import Assembler
from agentlab.neutral.events import AdapterEvent, ModelResponse, ResponseCompletedEvent
from agentlab.neutral.request import ToolSpec
from agentlab.sim import SimTransport

__all__ = [
    "CASES",
    "STATUS_LADDER",
    "WEATHER",
    "WEATHER_OPEN",
    "AdapterCase",
    "Recorder",
    "RecordingTransport",
    "StatusTransport",
    "collect",
    "completed",
    "contains",
    "register",
]

#: The weather tool the adapter tests ask for, with a closed schema (``additionalProperties: false``:
#: what strict tool schemas need) and with an open one (what a hand-written tool often sends).
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
WEATHER_OPEN = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


class RecordingTransport(SimTransport):
    """The simulator's transport, keeping every request body and response header set it handled."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(await request.aread())
        response = await super().handle_async_request(request)
        self.headers.append(dict(response.headers))
        return response

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])


class StatusTransport(RecordingTransport):
    """Answers every request with one HTTP error status and a provider-neutral error envelope.

    The envelope is ``{"error": {"type", "message"}}``, which both providers' bodies follow.
    """

    def __init__(
        self, status: int, error_type: str = "some_error", message: str | None = None, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.status = status
        self.error_type = error_type
        self.message = message or f"status {status}"

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(await request.aread())
        body = {"type": "error", "error": {"type": self.error_type, "message": self.message}}
        return httpx2.Response(
            self.status,
            json=body,
            headers={"retry-after": "2", "x-request-id": "req_c", "request-id": "req_c"},
        )


STATUS_LADDER: dict[int, str] = {
    400: "ProviderAPIError",
    401: "ProviderAPIError",
    403: "ProviderAPIError",
    404: "ProviderAPIError",
    409: "ProviderAPIError",
    413: "ProviderAPIError",
    422: "ProviderAPIError",
    429: "RateLimitError",
    500: "ProviderServerError",
    502: "ProviderServerError",
    503: "OverloadedError",
    504: "ProviderServerError",
    529: "OverloadedError",
}
"""The one status -> error type ladder (``agentlab.adapters.http_errors``), the same for every adapter."""


class Recorder(Protocol):
    """The provider's far side as the scenarios see it: every request body it received."""

    bodies: list[bytes]

    @property
    def last_json(self) -> Any: ...


@dataclass(frozen=True)
class AdapterCase:
    """One adapter under the contract.

    ``build(far_side, max_retries, model)`` returns a ready adapter talking to ``far_side``, which
    ``serve(**options)`` builds from a scenario's fault options (``default_fault=``, ``retry_after_ms=``); by
    default the simulator's transport. ``provider`` names the registry entry the adapter belongs to (default:
    ``name``).
    """

    name: str
    model: str
    build: Callable[[Any, int, str], Adapter]
    notes: dict[str, Any] = field(default_factory=dict)
    serve: Callable[..., Recorder] = RecordingTransport
    provider: str | None = None
    answer: Callable[[int, str, str | None], Recorder] = StatusTransport
    unknown_event_type: str = "sim_unknown_event"
    """(Part of) the wire type name the far side's ``unknown_event`` fault injects."""
    """The far side answering every request with one error status (retry-after 2 s, request id
    ``req_c``) and message (default ``"status N"``); a provider without HTTP transports supplies its own."""
    assembler: Callable[[], Assembler] | None = None
    """A fresh assembler of this adapter (``model=self.model``), for the wire-level policy cases."""
    tool_call_wire: Callable[[str], list[str]] | None = None
    """The SSE ``data`` payloads of one complete answer holding one tool call with these raw arguments."""
    reasoning_text: bool = True
    """Whether the far side streams reasoning text for ``model``; OpenRouter's Gemini-backed models send
    only ``reasoning.encrypted`` details (opaque, no display text), so the scenario expects none."""
    unreported_usage: tuple[str, ...] = ()
    """``CallUsage`` fields the far side does not report for ``model`` (local servers send no
    ``reasoning_tokens`` and no cached-token count): the usage scenario asserts each is ``None``
    (unknown, never 0), and ``reasoning_source="unknown"`` when ``reasoning_tokens`` is among them;
    every other figure must be reported."""

    def adapter(
        self, *, max_retries: int = 0, model: str | None = None, **transport_options: Any
    ) -> tuple[Adapter, Any]:
        far_side = self.serve(**transport_options)
        return self.build(far_side, max_retries, model or self.model), far_side

    def answering(
        self, status: int, error_type: str = "some_error", message: str | None = None
    ) -> tuple[Adapter, Recorder]:
        """An adapter (no SDK retries) whose every request is answered with ``status`` (and ``message``)."""
        far_side = self.answer(status, error_type, message)
        return self.build(far_side, 0, self.model), far_side


CASES: dict[str, AdapterCase] = {}


def register(case: AdapterCase) -> AdapterCase:
    if case.name in CASES:
        raise ValueError(f"adapter case {case.name!r} registered twice")
    CASES[case.name] = case
    return case


async def collect(adapter: Adapter, request: Any) -> list[AdapterEvent]:
    return [ev async for ev in adapter.stream(request)]


def completed(events: list[AdapterEvent]) -> ModelResponse:
    """The one completed response, checked to be the last event."""
    done = [e for e in events if isinstance(e, ResponseCompletedEvent)]
    assert len(done) == 1, f"expected exactly one ResponseCompletedEvent, got {len(done)}"
    assert events[-1] is done[0], "ResponseCompletedEvent must be the last event"
    return done[0].response


def contains(tree: Any, needle: Any) -> bool:
    """Whether ``needle`` (a parsed JSON value) occurs as a whole sub-value of ``tree``."""
    if tree == needle:
        return True
    if isinstance(tree, dict):
        return any(contains(v, needle) for v in tree.values())
    if isinstance(tree, list):
        return any(contains(v, needle) for v in tree)
    return False


# ---------------------------------------------------------------- the registered adapters


def _openai(transport: RecordingTransport, max_retries: int, model: str) -> Adapter:
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.sim import openai_client

    return OpenAIResponsesAdapter(model, client=openai_client(transport=transport), max_retries=max_retries)


def _openai_assembler() -> Assembler:
    from agentlab.adapters.openai_responses._stream import ResponseAssembler

    return ResponseAssembler(model="sim-reasoner", base_url=None)


def _openai_tool_call(arguments: str) -> list[str]:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather"}
    done = {**call, "arguments": arguments, "status": "completed"}
    usage = {"input_tokens": 5, "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0}}
    final = {"id": "resp_1", "status": "completed", "output": [done], "usage": usage}
    return [
        json.dumps(e)
        for e in (
            {"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.added", "output_index": 0, "item": {**call, "arguments": ""}},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": arguments},
            {"type": "response.output_item.done", "output_index": 0, "item": done},
            {"type": "response.completed", "response": final},
        )
    ]


register(
    AdapterCase(
        "openai", "sim-reasoner", _openai, assembler=_openai_assembler, tool_call_wire=_openai_tool_call
    )
)


def _anthropic(transport: RecordingTransport, max_retries: int, model: str) -> Adapter:
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.sim import anthropic_client

    client = anthropic_client(transport=transport, max_retries=max_retries)
    return AnthropicMessagesAdapter(model, client=client)


def _anthropic_assembler() -> Assembler:
    from agentlab.adapters.anthropic_messages import MessageAssembler

    return MessageAssembler(model="sim-thinker", base_url=None)


def _anthropic_tool_call(arguments: str) -> list[str]:
    usage = {"input_tokens": 5, "output_tokens": 1}
    block = {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {}}
    return [
        json.dumps(e)
        for e in (
            {"type": "message_start", "message": {"id": "msg_1", "model": "sim-thinker", "usage": usage}},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": arguments},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
        )
    ]


register(
    AdapterCase(
        "anthropic",
        "sim-thinker",
        _anthropic,
        assembler=_anthropic_assembler,
        tool_call_wire=_anthropic_tool_call,
    )
)


def _anthropic_platform(platform: str) -> Callable[[Any, int, str], Adapter]:
    """Claude on Bedrock or Vertex: the platform's SDK client on the simulator's platform routes."""

    def build(transport: RecordingTransport, max_retries: int, model: str) -> Adapter:
        import agentlab.sim as sim
        from agentlab.adapters import anthropic_platforms as ap

        if platform == "bedrock":
            client = sim.anthropic_bedrock_client(transport=transport, max_retries=max_retries)
            return ap.AnthropicBedrockAdapter(model, client=client)
        vertex = sim.anthropic_vertex_client(transport=transport, max_retries=max_retries)
        return ap.AnthropicVertexAdapter(model, client=vertex)

    return build


def _anthropic_platform_assembler(platform: str) -> Callable[[], Assembler]:
    def make() -> Assembler:
        from agentlab.adapters.anthropic_platforms import _adapter

        cls = _adapter.BedrockMessageAssembler if platform == "bedrock" else _adapter.VertexMessageAssembler
        return cls(model="sim-thinker", base_url=None)

    return make


for _platform in ("bedrock", "vertex"):
    register(
        AdapterCase(
            f"anthropic_{_platform}",
            "sim-thinker",
            _anthropic_platform(_platform),
            assembler=_anthropic_platform_assembler(_platform),
            tool_call_wire=_anthropic_tool_call,
        )
    )


def _gemini_simulated() -> bool:
    """Whether ``agentlab.sim`` serves Gemini yet (then the case runs on it, like the other two)."""
    import agentlab.sim

    return hasattr(agentlab.sim, "gemini_client")


def _google(far_side: Any, max_retries: int, model: str) -> Adapter:
    import agentlab.sim
    from agentlab.adapters.google_gemini import GoogleGeminiAdapter
    from tests.adapters.google_gemini.gemini_support import client_on

    if isinstance(far_side, httpx2.AsyncBaseTransport) and _gemini_simulated():
        client = agentlab.sim.gemini_client(transport=far_side)
    else:  # a scripted MockTransport handler (tests/adapters/google_gemini/gemini_scripted.py)
        client = client_on(far_side)
    return GoogleGeminiAdapter(model, client=client, max_retries=max_retries)


def _google_assembler() -> Assembler:
    from agentlab.adapters.google_gemini import GeminiAssembler

    return GeminiAssembler(model="sim-gemini", base_url=None)


def _google_tool_call(arguments: str) -> list[str]:
    # Gemini's args is an object on the wire; raw text that is not one arrives as a string, kept as is.
    call = {"name": "get_weather", "args": arguments, "id": "call_1"}
    cand = {"content": {"role": "model", "parts": [{"functionCall": call}]}, "finishReason": "STOP"}
    usage = {"promptTokenCount": 5, "candidatesTokenCount": 3}
    return [json.dumps({"candidates": [cand], "usageMetadata": usage, "responseId": "resp_1"})]


def _google_serve(**options: Any) -> Recorder:
    # The simulator once it serves Gemini; until then a scripted Gemini far side.
    if _gemini_simulated():
        return RecordingTransport(**options)
    from tests.adapters.google_gemini.gemini_scripted import GeminiScripted

    return GeminiScripted(**options)


def _google_answer(status: int, error_type: str, message: str | None = None) -> Recorder:
    # Google's error envelope ({"error": {"code", "message", "status"}}), not the neutral one.
    from tests.adapters.google_gemini.gemini_scripted import GeminiStatus

    return GeminiStatus(status, error_type, message)


register(
    AdapterCase(
        "google",
        "sim-gemini",
        _google,
        serve=_google_serve,
        answer=_google_answer,
        assembler=_google_assembler,
        tool_call_wire=_google_tool_call,
        unknown_event_type="sim_unknown",  # the simulator's unknown chunk field, or the script's
    )
)


# Chat Completions dialects (agentlab/adapters/openai_chat) on their simulated hosts: DeepSeek,
# OpenRouter once per backing model family, Kimi (no reasoning count in its usage), GLM, xAI, and
# the local servers, whose usage reports no reasoning or cached tokens (unreported_usage: unknown,
# never 0).
def _chat(cls_name: str, sim_dialect: str) -> Callable[[Any, int, str], Adapter]:
    def build(transport: RecordingTransport, max_retries: int, model: str) -> Adapter:
        from agentlab.adapters import openai_chat
        from agentlab.sim import chat_client

        client = chat_client(sim_dialect, transport=transport)
        adapter: Adapter = getattr(openai_chat, cls_name)(model, client=client, max_retries=max_retries)
        return adapter

    return build


def _chat_assembler(dialect: str, model: str) -> Callable[[], Assembler]:
    def make() -> Assembler:
        from agentlab.adapters.openai_chat import ChatAssembler
        from agentlab.adapters.openai_chat._adapter import ChatCompletionsAdapter

        known = {c.dialect.name: c.dialect for c in ChatCompletionsAdapter.__subclasses__()}
        return ChatAssembler(dialect=known[dialect], model=model, base_url=None)

    return make


def _chat_tool_call(arguments: str) -> list[str]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    more = {"index": 0, "function": {"arguments": arguments}}
    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]})

    return [
        chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk({"tool_calls": [more]}),
        chunk({}, "tool_calls"),
        json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage}),
        "[DONE]",
    ]


_LOCAL_UNREPORTED = ("reasoning_tokens", "cache_read_tokens")
for _case, _name, _cls, _sim, _model, _unreported, _text in (
    ("deepseek", "deepseek", "DeepSeekAdapter", "deepseek", "sim-deepseek", (), True),
    ("openrouter", "openrouter", "OpenRouterAdapter", "openrouter", "sim-router-claude", (), True),
    ("openrouter-gemini", "openrouter", "OpenRouterAdapter", "openrouter", "sim-router-gemini", (), False),
    ("openrouter-openai", "openrouter", "OpenRouterAdapter", "openrouter", "sim-router-openai", (), True),
    ("vllm", "vllm", "VLLMAdapter", "local", "sim-local", _LOCAL_UNREPORTED, True),
    ("ollama", "ollama", "OllamaAdapter", "local", "sim-local-reasoning", _LOCAL_UNREPORTED, True),
    ("moonshot", "moonshot", "MoonshotAdapter", "moonshot", "sim-kimi", ("reasoning_tokens",), True),
    ("zai", "zai", "ZAIAdapter", "zai", "sim-glm", (), True),
    ("xai_chat", "xai_chat", "XAIChatAdapter", "xai_chat", "sim-xai-chat", (), True),
):
    register(
        AdapterCase(
            _case,
            _model,
            _chat(_cls, _sim),
            provider=_name,
            assembler=_chat_assembler(_name, _model),
            tool_call_wire=_chat_tool_call,
            unknown_event_type="sim_unknown",  # the simulator's unknown chunk field
            unreported_usage=_unreported,
            reasoning_text=_text,
        )
    )


# Responses dialects (agentlab/adapters/openai_responses/_dialect.py) on their simulated hosts
# (agentlab/sim/openai/dialects.py): xAI, DeepSeek Responses, Azure, Bedrock Mantle and the local
# servers, whose usage reports no reasoning or cached tokens (unknown, never 0).
def _responses(cls_name: str) -> Callable[[Any, int, str], Adapter]:
    def build(transport: RecordingTransport, max_retries: int, model: str) -> Adapter:
        from agentlab.adapters.openai_responses import _adapter
        from agentlab.sim import openai_client

        client = openai_client(transport=transport)
        adapter: Adapter = getattr(_adapter, cls_name)(model, client=client, max_retries=max_retries)
        return adapter

    return build


def _responses_assembler(cls_name: str, model: str) -> Callable[[], Assembler]:
    def make() -> Assembler:
        from agentlab.adapters.openai_responses import _adapter
        from agentlab.adapters.openai_responses._stream import ResponseAssembler

        return ResponseAssembler(dialect=getattr(_adapter, cls_name).dialect, model=model, base_url=None)

    return make


_LOCAL_R = "sim-local-responses"
for _case, _name, _cls, _model, _unreported in (
    ("xai", "xai", "XAIAdapter", "sim-grok", ()),
    ("deepseek_responses", "deepseek_responses", "DeepSeekResponsesAdapter", "sim-deepseek-responses", ()),
    ("azure", "azure", "AzureAdapter", "sim-azure", ()),
    ("mantle", "mantle", "MantleAdapter", "sim-mantle", ()),
    ("vllm_responses", "vllm_responses", "VLLMResponsesAdapter", "sim-local-responses", _LOCAL_UNREPORTED),
    ("ollama_responses", "ollama_responses", "OllamaResponsesAdapter", _LOCAL_R, _LOCAL_UNREPORTED),
    ("lmstudio_responses", "lmstudio_responses", "LMStudioResponsesAdapter", _LOCAL_R, _LOCAL_UNREPORTED),
):
    register(
        AdapterCase(
            _case,
            _model,
            _responses(_cls),
            provider=_name,
            assembler=_responses_assembler(_cls, _model),
            tool_call_wire=_openai_tool_call,
            unreported_usage=_unreported,
            notes={"call_id": "resp_1:call_1"} if _name == "mantle" else {},
        )
    )
# AWS Bedrock Converse (agentlab/adapters/bedrock_converse) through boto3's real client, answered in
# process by the simulator's Converse protocol (botocore's ``before-send`` hook, no socket).
class BedrockFarSide:
    """The simulated Bedrock runtime, keeping every request body botocore sent (signed, serialized)."""

    def __init__(
        self, status: int | None = None, error_type: str = "", message: str = "", **options: Any
    ) -> None:
        self.transport = SimTransport(**options)
        self.bodies: list[bytes] = []
        self.status, self.error_type, self.message = status, error_type, message

    def client(self, max_retries: int) -> Any:
        import boto3  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]

        from agentlab.sim.bedrock.client import BEDROCK_ENDPOINT, SIM_ACCESS_KEY, SIM_SECRET_KEY, attach

        retries = {"total_max_attempts": max_retries + 1, "mode": "standard"}
        config = Config(retries=retries, signature_version="v4")
        client = boto3.client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=BEDROCK_ENDPOINT, config=config,
            aws_access_key_id=SIM_ACCESS_KEY, aws_secret_access_key=SIM_SECRET_KEY,
        )  # fmt: skip
        client.meta.events.register_first("before-send.bedrock-runtime", self._record)
        if self.status is None:
            return attach(client, self.transport)
        return client

    def _record(self, request: Any, **_: Any) -> Any:
        self.bodies.append(bytes(request.body or b""))
        if self.status is None:
            return None
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]

        from agentlab.sim.bedrock.client import _Raw

        headers = {
            "x-amzn-errortype": f"{self.error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-requestid": "req_c",
            "retry-after": "2",
            "content-type": "application/json",
        }
        body = httpx2.Response(self.status, content=json.dumps({"message": self.message}).encode())
        return AWSResponse(str(request.url), self.status, headers, _Raw(body))

    @property
    def last_json(self) -> Any:
        return json.loads(self.bodies[-1])


def _bedrock(far_side: BedrockFarSide, max_retries: int, model: str) -> Adapter:
    from agentlab.adapters.bedrock_converse import BedrockConverseAdapter

    return BedrockConverseAdapter(model, client=far_side.client(max_retries))


def _bedrock_answer(status: int, error_type: str, message: str | None = None) -> Recorder:
    return BedrockFarSide(status, error_type, message or f"status {status}")


def _bedrock_assembler() -> Assembler:
    from agentlab.adapters.bedrock_converse import ConverseAssembler

    return ConverseAssembler(model="sim-bedrock-claude", base_url=None)


def _bedrock_tool_call(arguments: str) -> list[str]:
    start = {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "call_1", "name": "get_weather"}}}
    usage = {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
    return [
        json.dumps(e)
        for e in (
            {"messageStart": {"role": "assistant"}},
            {"contentBlockStart": start},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": arguments}}}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "tool_use"}},
            {"metadata": {"usage": usage, "metrics": {"latencyMs": 1}}},
        )
    ]


register(
    AdapterCase(
        "bedrock",
        "sim-bedrock-claude",
        _bedrock,
        serve=BedrockFarSide,
        answer=_bedrock_answer,
        assembler=_bedrock_assembler,
        tool_call_wire=_bedrock_tool_call,
        unreported_usage=("reasoning_tokens",),  # Converse reports no reasoning-token count
    )
)
