"""Section 2: the same bytes over loopback to the raw SDKs, agentlab, LiteLLM and pydantic-ai.

A server process (:mod:`bench._server`) replies to every client with the same recorded-shape stream
(a request carrying a tool result gets the short final answer), one HTTP chunk per SSE event as real
APIs flush and as section 1's socket delivery, so every ratio is read on one delivery. Figures are
client process CPU time per event (median over rounds), and each is reported as a ratio to the raw
SDK's typed stream on the same socket. Tool loops (agentlab ``Run``, pydantic-ai ``Agent``) make two
requests, the big stream and the short answer; their CPU is divided by the events of both.

Four protocols: OpenAI Responses, Anthropic Messages, Gemini (``streamGenerateContent?alt=sse``, CRLF
framed) and Chat Completions in the DeepSeek dialect (``reasoning_content`` deltas, ``[DONE]``); the
server picks the body by the request path. Each protocol has its floor (async ``httpx2`` lines +
``json.loads``), its raw SDK typed stream (``openai`` Responses, ``anthropic`` Messages,
google-genai's ``generate_content_stream``, ``openai`` ``chat.completions``), agentlab's adapter and
``Run``, and the peers below.

Peers come from the ``bench`` extra (``pip install -e '.[bench]'``); without them the section says
so and skips. LiteLLM paths measured: ``acompletion`` on Anthropic (chat-completions chunks),
``acompletion`` on ``openai/responses/`` (the Responses bridge), ``aresponses`` (Responses
pass-through), ``acompletion`` on ``gemini/`` (its Gemini route, ``api_base`` = the server's
``/v1beta``) and on ``deepseek/`` (its DeepSeek route). pydantic-ai: the bare model stream
(``direct.model_request_stream``) and the agent (``Agent.run_stream_events``) with
``OpenAIResponsesModel``, ``AnthropicModel``, ``GoogleModel`` (``GoogleProvider(base_url=...)``) and
``OpenAIChatModel`` (``DeepSeekProvider(base_url=...)``). Thinking is enabled on every peer that takes
a setting for it (``deepseek-reasoner`` thinks without one).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from ._server import serving
from ._util import Section, Target, cpu_rounds, median
from .streams import (
    GEMINI_MODEL,
    anthropic_final,
    anthropic_stream,
    chat_final,
    chat_stream,
    gemini_final,
    gemini_stream,
    openai_final,
    openai_stream,
)

TASK = "What is the weather in Paris?"
CHAT_MODEL = "deepseek-reasoner"
"""The model every Chat Completions consumer names: DeepSeek's thinking model (pydantic-ai thinks on it
by default); the bytes served are the same whatever the request names."""
PROTOCOLS = ("openai", "anthropic", "gemini", "chat")
FLOOR = "floor (httpx2 lines + json.loads)"
SDK = "raw SDK typed stream"
ADAPTER, RUN = "agentlab adapter", "agentlab Run (tool loop)"


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return "18 C, rain"


def agentlab_runners(
    port: int, opened: list[Any] | None = None
) -> dict[str, dict[str, Callable[[], Awaitable[Any]]]]:
    """Floor, raw SDK, agentlab adapter and ``Run`` per protocol; ``opened`` collects the HTTP clients.

    The bench process exits with its clients open; a test closes those ``opened`` lists.
    """
    import anthropic
    import openai

    import agentlab as al
    from agentlab.adapters.anthropic_messages import AnthropicMessagesAdapter
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    tool = al.tool(get_weather)
    oai = openai.AsyncOpenAI(
        api_key="sk-bench",
        base_url=f"http://127.0.0.1:{port}/v1",
        http_client=_client(opened),
        max_retries=0,
    )
    ant = anthropic.AsyncAnthropic(
        api_key="sk-ant-bench",
        base_url=f"http://127.0.0.1:{port}",
        http_client=_client(opened),
        max_retries=0,
    )
    out: dict[str, dict[str, Callable[[], Awaitable[Any]]]] = {}

    floor_http = _client(opened)

    async def floor(url: str) -> None:
        await _floor(floor_http, url)

    async def oai_floor() -> None:
        await floor(f"http://127.0.0.1:{port}/v1/responses")

    async def ant_floor() -> None:
        await floor(f"http://127.0.0.1:{port}/v1/messages")

    async def oai_sdk() -> None:
        s = await oai.responses.create(
            model="gpt-5", input=TASK, stream=True, reasoning={"effort": "high", "summary": "auto"}
        )
        async for _ in s:
            pass

    async def ant_sdk() -> None:
        s = await ant.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=16000,
            messages=[{"role": "user", "content": TASK}],
            thinking={"type": "enabled", "budget_tokens": 8000},
            stream=True,
        )
        async for _ in s:
            pass

    def adapter_pair(provider: str) -> tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]:
        model = "gpt-5" if provider == "openai" else "claude-sonnet-4-5"

        def make() -> Any:
            if provider == "openai":
                return OpenAIResponsesAdapter(model, client=oai, max_retries=0)
            return AnthropicMessagesAdapter(model, client=ant, max_retries=0)

        request = ModelRequest(model=model, items=(UserItem(text=TASK),), tools=(tool.spec,))

        async def adapter() -> None:
            async for _ in make().stream(request):
                pass

        async def loop() -> None:
            r = al.Run(f"{provider}:{model}", TASK, tools=[tool], adapter=make(), event_log=al.EventLog())
            res = await r.arun()
            assert res.status == "completed" and res.steps == 2, (res.status, res.steps)

        return adapter, loop

    oa, ol = adapter_pair("openai")
    aa, al_ = adapter_pair("anthropic")
    out["openai"] = {FLOOR: oai_floor, SDK: oai_sdk, "agentlab adapter": oa, "agentlab Run (tool loop)": ol}
    out["anthropic"] = {
        FLOOR: ant_floor,
        SDK: ant_sdk,
        "agentlab adapter": aa,
        "agentlab Run (tool loop)": al_,
    }
    out.update(agentlab_gemini_chat_runners(port, opened))
    return out


def _client(opened: list[Any] | None) -> Any:
    import httpx2

    http = httpx2.AsyncClient()
    if opened is not None:
        opened.append(http)
    return http


async def _floor(http: Any, url: str) -> None:
    """The async floor: ``httpx2`` lines, one ``json.loads`` per ``data:`` line (``[DONE]`` ends Chat)."""
    async with http.stream("POST", url, content=b"{}") as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])


def _agentlab_pair(make: Callable[[], Any], model: str, tool: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
    """The agentlab adapter's stream and its two-request ``Run`` over adapters from ``make``."""
    import agentlab as al
    from agentlab.neutral.items import UserItem
    from agentlab.neutral.request import ModelRequest

    request = ModelRequest(model=model.split(":", 1)[1], items=(UserItem(text=TASK),), tools=(tool.spec,))

    async def adapter() -> None:
        async for _ in make().stream(request):
            pass

    async def loop() -> None:
        r = al.Run(model, TASK, tools=[tool], adapter=make(), event_log=al.EventLog())
        res = await r.arun()
        assert res.status == "completed" and res.steps == 2, (res.status, res.steps)

    return {ADAPTER: adapter, RUN: loop}


def agentlab_gemini_chat_runners(
    port: int, opened: list[Any] | None = None
) -> dict[str, dict[str, Callable[[], Awaitable[Any]]]]:
    """Gemini and Chat (DeepSeek dialect): floor, raw SDK typed stream, agentlab adapter and ``Run``."""
    import openai
    from google import genai
    from google.genai import types

    import agentlab as al
    from agentlab.adapters.google_gemini import GoogleGeminiAdapter
    from agentlab.adapters.openai_chat import DeepSeekAdapter

    base = f"http://127.0.0.1:{port}"
    tool = al.tool(get_weather)
    options = types.HttpOptions(base_url=base, httpx_async_client=_client(opened))
    gem = genai.Client(api_key="bench-key", http_options=options)
    chat = openai.AsyncOpenAI(
        api_key="sk-bench", base_url=f"{base}/v1", http_client=_client(opened), max_retries=0
    )
    floor_http = _client(opened)
    thinking = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))

    async def gem_floor() -> None:
        await _floor(floor_http, f"{base}/v1beta/models/{GEMINI_MODEL}:streamGenerateContent?alt=sse")

    async def chat_floor() -> None:
        await _floor(floor_http, f"{base}/v1/chat/completions")

    async def gem_sdk() -> None:
        s = await gem.aio.models.generate_content_stream(model=GEMINI_MODEL, contents=TASK, config=thinking)
        async for _ in s:
            pass

    async def chat_sdk() -> None:
        s = await chat.chat.completions.create(
            model=CHAT_MODEL,
            messages=[{"role": "user", "content": TASK}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in s:
            pass

    def make_gem() -> Any:
        return GoogleGeminiAdapter(GEMINI_MODEL, client=gem, max_retries=0)

    def make_chat() -> Any:
        return DeepSeekAdapter(CHAT_MODEL, client=chat, max_retries=0)

    return {
        "gemini": {
            FLOOR: gem_floor,
            SDK: gem_sdk,
            **_agentlab_pair(make_gem, f"google:{GEMINI_MODEL}", tool),
        },
        "chat": {
            FLOOR: chat_floor,
            SDK: chat_sdk,
            **_agentlab_pair(make_chat, f"deepseek:{CHAT_MODEL}", tool),
        },
    }


def _pydantic_ai_models(port: int) -> dict[str, tuple[Any, Any]]:
    """Each protocol's pydantic-ai model, pointed at the loopback server, and its thinking settings."""
    from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
    from pydantic_ai.models.google import GoogleModel, GoogleModelSettings
    from pydantic_ai.models.openai import (
        OpenAIChatModel,
        OpenAIChatModelSettings,
        OpenAIResponsesModel,
        OpenAIResponsesModelSettings,
    )
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.deepseek import DeepSeekProvider
    from pydantic_ai.providers.google import GoogleProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    base = f"http://127.0.0.1:{port}"
    return {
        "openai": (
            OpenAIResponsesModel("gpt-5", provider=OpenAIProvider(base_url=f"{base}/v1", api_key="sk-bench")),
            OpenAIResponsesModelSettings(openai_reasoning_effort="high", openai_reasoning_summary="detailed"),
        ),
        "anthropic": (
            AnthropicModel(
                "claude-sonnet-4-5", provider=AnthropicProvider(base_url=base, api_key="sk-bench")
            ),
            AnthropicModelSettings(
                anthropic_thinking={"type": "enabled", "budget_tokens": 8000}, max_tokens=16000
            ),
        ),
        "gemini": (
            GoogleModel(GEMINI_MODEL, provider=GoogleProvider(base_url=base, api_key="bench-key")),
            GoogleModelSettings(google_thinking_config={"include_thoughts": True}),
        ),
        "chat": (
            OpenAIChatModel(CHAT_MODEL, provider=DeepSeekProvider(base_url=f"{base}/v1", api_key="sk-bench")),
            OpenAIChatModelSettings(),  # deepseek-reasoner thinks without a setting
        ),
    }


def pydantic_ai_runners(port: int) -> dict[str, dict[str, Callable[[], Awaitable[Any]]]]:
    from pydantic_ai import Agent
    from pydantic_ai.direct import model_request_stream
    from pydantic_ai.messages import ModelRequest

    out: dict[str, dict[str, Callable[[], Awaitable[Any]]]] = {}
    for provider, (model, settings) in _pydantic_ai_models(port).items():
        agent = Agent(model, tools=[get_weather], model_settings=settings)

        async def bare(model: Any = model, s: Any = settings) -> None:
            async with model_request_stream(
                model, [ModelRequest.user_text_prompt(TASK)], model_settings=s
            ) as st:
                async for _ in st:
                    pass

        async def agent_loop(agent: Any = agent) -> None:
            async with agent.run_stream_events(TASK) as st:
                async for _ in st:
                    pass

        out[provider] = {"pydantic-ai model stream": bare, "pydantic-ai Agent (tool loop)": agent_loop}
    return out


def litellm_runners(port: int) -> dict[str, dict[str, Callable[[], Awaitable[Any]]]]:
    import litellm

    litellm.suppress_debug_info = True
    base_o, base_a = f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}"
    msgs = [{"role": "user", "content": TASK}]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]

    async def drain(make: Callable[[], Awaitable[Any]]) -> None:
        s = await make()
        async for _ in s:
            pass

    async def ant_completion() -> None:
        await drain(
            lambda: litellm.acompletion(
                model="anthropic/claude-sonnet-4-5",
                messages=msgs,
                tools=tools,
                stream=True,
                api_base=base_a,
                api_key="sk-bench",
                thinking={"type": "enabled", "budget_tokens": 8000},
                max_tokens=16000,
            )
        )

    async def oai_bridge() -> None:
        await drain(
            lambda: litellm.acompletion(
                model="openai/responses/gpt-5",
                messages=msgs,
                tools=tools,
                stream=True,
                api_base=base_o,
                api_key="sk-bench",
                reasoning_effort="high",
            )
        )

    async def oai_responses() -> None:
        await drain(
            lambda: litellm.aresponses(
                model="openai/gpt-5",
                input=TASK,
                stream=True,
                api_base=base_o,
                api_key="sk-bench",
                reasoning={"effort": "high", "summary": "auto"},
            )
        )

    async def gemini_completion() -> None:
        await drain(
            lambda: litellm.acompletion(
                model=f"gemini/{GEMINI_MODEL}",
                messages=msgs,
                tools=tools,
                stream=True,
                api_base=f"{base_a}/v1beta",
                api_key="bench-key",
                reasoning_effort="high",
            )
        )

    async def deepseek_completion() -> None:
        await drain(
            lambda: litellm.acompletion(
                model=f"deepseek/{CHAT_MODEL}",
                messages=msgs,
                tools=tools,
                stream=True,
                api_base=base_o,
                api_key="sk-bench",
                stream_options={"include_usage": True},
            )
        )

    return {
        "openai": {
            "LiteLLM acompletion (openai/responses bridge)": oai_bridge,
            "LiteLLM aresponses": oai_responses,
        },
        "anthropic": {"LiteLLM acompletion": ant_completion},
        "gemini": {"LiteLLM acompletion (gemini/)": gemini_completion},
        "chat": {"LiteLLM acompletion (deepseek/)": deepseek_completion},
    }


LOOPS = (RUN, "pydantic-ai Agent (tool loop)")


async def measure(port: int, rounds: int, n_reasoning: int, n_text: int) -> dict[str, Any]:
    groups = agentlab_runners(port)
    missing = [m for m in ("litellm", "pydantic_ai") if importlib.util.find_spec(m) is None]
    if "pydantic_ai" not in missing:
        for k, v in pydantic_ai_runners(port).items():
            groups[k].update(v)
    if "litellm" not in missing:
        for k, v in litellm_runners(port).items():
            groups[k].update(v)
    events = {
        "openai": (openai_stream(n_reasoning, n_text).events, openai_final().events),
        "anthropic": (anthropic_stream(n_reasoning, n_text).events, anthropic_final().events),
        "gemini": (gemini_stream(n_reasoning, n_text).events, gemini_final().events),
        "chat": (chat_stream(n_reasoning, n_text).events, chat_final().events),
    }
    out: dict[str, Any] = {"missing": missing}
    for provider, runners in groups.items():
        big, small = events[provider]
        samples = await cpu_rounds(runners, rounds)
        us = {k: median(v) / ((big + small) if k in LOOPS else big) * 1e6 for k, v in samples.items()}
        out[provider] = {"events": big, "loop_events": big + small, "us_per_event": us}
    return out


def run(quick: bool) -> Section:
    sec = Section("peers", "2. Peers on the same bytes (loopback server, CPU µs per event, ratio to raw SDK)")
    n_r, n_t, rounds = (300, 120, 2) if quick else (5000, 2000, 3)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
    warnings.simplefilter("ignore")  # peers' own deprecation/serializer warnings are not ours to judge
    with serving(n_r, n_t, per_event=True) as port:  # one HTTP chunk per SSE event, as section 1
        m = asyncio.run(measure(port, rounds, n_r, n_t))
    sec.figures = {"stream": {"reasoning_deltas": n_r, "text_deltas": n_t, "rounds": rounds}, **m}
    if m["missing"]:
        msg = (
            f"peers not installed ({', '.join(m['missing'])}): install the bench extra "
            "(`.venv/bin/pip install -e '.[bench]'`) to measure them"
        )
        sec.notes.append(msg)
        if len(m["missing"]) == 2:
            sec.skipped = msg
    for provider in PROTOCOLS:
        us = m[provider]["us_per_event"]
        sdk = us[SDK]
        for name, v in us.items():
            sec.row(f"{provider}: {name}", f"{v:.1f} µs ({v / sdk:.2f}x raw SDK)")
        ours = us[RUN]
        for name, v in us.items():
            if name.startswith("LiteLLM") or name == "pydantic-ai Agent (tool loop)":
                sec.targets.append(Target(f"{provider}: agentlab Run / {name}", ours / v, 1.0, "x"))
        sec.targets.append(Target(f"{provider}: agentlab Run / raw SDK (loopback)", ours / sdk, 1.5, "x"))
    return sec
