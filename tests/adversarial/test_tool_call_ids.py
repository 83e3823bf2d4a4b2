"""Tool-call ids: the simulator's Anthropic ids and grammar are the real ones; a Session carries any id.

A Session that switches provider carries every provider's id format to every other provider.

The real Messages API validates ``tool_use.id`` and ``tool_result.tool_use_id`` against
``^[a-zA-Z0-9_-]+$`` and answers ``invalid_request_error`` "messages.N.content.M.tool_use.id: String
should match pattern '^[a-zA-Z0-9_-]+$'" (the message reported by many clients that replayed a Kimi
``functions.NAME:0`` or a composite ``call_...|fc_...`` id). The simulator is as strict, so the
Session test passes only if the adapter renders foreign ids in the API's grammar, calls and results
alike.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import agentlab as al
from agentlab.adapters.registry import get_provider, provider_names
from agentlab.neutral.items import ToolCallItem, ToolResultItem
from agentlab.sim import anthropic_client

FIXTURES = Path(os.environ.get("AGENTLAB_FIXTURES", Path(__file__).parents[3] / "shared" / "fixtures"))
GRAMMAR = "^[a-zA-Z0-9_-]+$"
TASK = "Is it warmer in Paris or Rome?"

#: Ids as each provider mints them (real recorded shapes: see /work/shared/fixtures).
FOREIGN_IDS = {
    "openai_responses": "call_CWXgs68YprAjp6t0371hiPOI",
    "responses_composite": "call_CWXgs68YprAjp6t0371hiPOI|fc_68c3509faff0819e96f6d45e6faf7849",
    "anthropic": "toolu_01Js4AMfx5qpTLhwTusnvT68",
    "deepseek": "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
    "gemini_on_chat": "tool_get_weather_kZJN6iFNozVOBiXBMA2Y",
    "vllm": "chatcmpl-tool-57d26e7b64e450a64399",
    "kimi": "functions.get_weather:0",
    "numeric": "call_-7807252050131023498",
}


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "18 C, cloudy", "Rome": "24 C, sunny"}.get(city, "20 C, clear")


def _targets() -> list[str]:
    """One simulated model per provider family (the Chat hosts share one simulator)."""
    out = []
    for name in provider_names():
        models = get_provider(name).simulated_model_names() or ()
        if models and name not in ("llamacpp", "ollama", "chat"):
            out.append(f"{name}:{models[0]}")
    return out


def test_simulated_tool_use_ids_have_the_recorded_shape() -> None:
    """``toolu_01`` + 22 base58 characters, as in every recorded Anthropic tool loop."""
    if not (FIXTURES / "anthropic").is_dir():
        pytest.skip(f"recorded fixtures not found at {FIXTURES}")
    text = "".join(p.read_text(errors="replace") for p in (FIXTURES / "anthropic").glob("*.yaml"))
    recorded = set(re.findall(r"toolu_01[A-Za-z0-9]+", text))
    assert recorded, "control: the fixtures hold tool_use ids"
    shape = re.compile(r"^toolu_01[1-9A-HJ-NP-Za-km-z]{22}$")
    assert all(shape.match(r) for r in recorded), sorted(r for r in recorded if not shape.match(r))
    result = al.run("anthropic:sim-thinker", TASK, tools=[get_weather])
    ids = [it.call_id for it in result.history if isinstance(it, ToolCallItem)]
    assert ids and all(shape.match(i) and re.match(GRAMMAR, i) for i in ids), ids


async def test_simulator_refuses_a_foreign_tool_use_id_like_the_real_api() -> None:
    """A Kimi id in a tool_use block: the real 400, naming the block and the pattern."""
    import anthropic

    client = anthropic_client()
    KIMI = FOREIGN_IDS["kimi"]
    messages = [
        {"role": "user", "content": TASK},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": KIMI, "name": "get_weather", "input": {"city": "Paris"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": KIMI, "content": "18 C"}]},
    ]
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = [{"name": "get_weather", "input_schema": schema}]
    with pytest.raises(anthropic.BadRequestError) as info:
        await client.messages.create(model="sim-thinker", max_tokens=256, messages=messages, tools=tools)  # type: ignore[arg-type]
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "error", body
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": f"messages.1.content.0.tool_use.id: String should match pattern '{GRAMMAR}'",
    }
    messages[1]["content"][0]["id"] = "toolu_01Js4AMfx5qpTLhwTusnvT68"  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError) as info:
        await client.messages.create(model="sim-thinker", max_tokens=256, messages=messages, tools=tools)  # type: ignore[arg-type]
    assert "messages.2.content.0.tool_result.tool_use_id: String should match pattern" in str(info.value)


def _with_ids(history: tuple[object, ...], fmt: str) -> list[object]:
    """The history with each tool call id (and its result's) replaced by ``fmt``'s shape, numbered."""
    mapping: dict[str, str] = {}
    out: list[object] = []
    for it in history:
        if isinstance(it, ToolCallItem | ToolResultItem):
            new = mapping.setdefault(it.call_id, f"{FOREIGN_IDS[fmt]}{len(mapping) or ''}")
            it = it.model_copy(update={"call_id": new})
        out.append(it)
    assert mapping, "control: the first run made tool calls"
    return out


@pytest.mark.parametrize("mid_loop", [False, True], ids=["next_task", "mid_loop"])
@pytest.mark.parametrize("fmt", sorted(FOREIGN_IDS))
@pytest.mark.parametrize("target", _targets())
async def test_a_session_moves_foreign_tool_call_ids_to_every_provider(
    target: str, fmt: str, mid_loop: bool
) -> None:
    """A history begun elsewhere (ids in ``fmt``'s shape) continues on ``target``: completed, no 400.

    ``next_task``: a finished tool loop, then a new task on ``target`` (the old calls go as tool
    calls); ``mid_loop``: the session moves after step 1 (the dangling exchange is recovered).
    """
    first_model = "deepseek:sim-deepseek" if not target.startswith("deepseek") else "openai:sim-reasoner"
    first = await al.Session().arun(first_model, TASK, tools=[get_weather], max_steps=1 if mid_loop else 20)
    assert first.status == ("step_limit" if mid_loop else "completed")
    session = al.Session(history=_with_ids(first.history, fmt))  # type: ignore[arg-type]
    task = None if mid_loop else "And which of the two is cloudier?"
    try:
        result = await session.arun(target, task, tools=[get_weather], retries=0)
    except al.ProviderAPIError as err:  # pragma: no cover - the failure this test exists for
        pytest.fail(f"{target} with {fmt} ids: {err}")
    assert result.status == "completed", (target, fmt, result.error)
    carried = [it.call_id for it in result.history if isinstance(it, ToolCallItem)]
    assert any(c.startswith(FOREIGN_IDS[fmt]) for c in carried), "the portable history keeps the original ids"
