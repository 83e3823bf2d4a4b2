"""The scan for the simulator's opaque items finds real ones wherever they are saved, and nothing else."""

from __future__ import annotations

import base64
import html
import json
import os

import agentlab as al
from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.sim import gemini_client, openai_client
from tests.support.opaque import (
    RecordingTransport,
    gemini_signatures_in,
    is_sim_gemini_signature,
    sim_opaque_tokens,
)


@al.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": "24 C", "Rome": "21 C"}.get(city, "no data")


def _live_signatures() -> list[str]:
    wire = RecordingTransport()
    adapter = GoogleGeminiAdapter("sim-gemini", client=gemini_client(transport=wire))
    al.run("google:sim-gemini", "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter)
    sigs = [s for body in wire.bodies for s in gemini_signatures_in(json.loads(body))]
    assert sigs
    return sigs


def test_live_gemini_signatures_are_found_however_they_are_saved() -> None:
    for sig in _live_signatures():
        std = base64.b64encode(base64.urlsafe_b64decode(sig.replace("+", "-").replace("/", "_"))).decode()
        urlsafe = std.replace("+", "-").replace("/", "_")
        assert is_sim_gemini_signature(std) and is_sim_gemini_signature(urlsafe)
        for saved in (
            json.dumps({"outputs": [{"text": f"part {{'thoughtSignature': '{sig}'}}"}]}),  # a notebook output
            html.escape(f"<pre>{urlsafe}</pre>"),  # an exported page
            f"data={std};",
        ):
            assert sim_opaque_tokens(saved), saved


def test_openai_encrypted_content_is_found() -> None:
    from agentlab.adapters.openai_responses import OpenAIResponsesAdapter

    wire = RecordingTransport()
    adapter = OpenAIResponsesAdapter("sim-reasoner", client=openai_client(transport=wire))
    al.run("openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather], adapter=adapter)
    second = json.loads(wire.bodies[1])
    tokens = [i["encrypted_content"] for i in second["input"] if i.get("type") == "reasoning"]
    assert tokens and all(sim_opaque_tokens(json.dumps(t)) == [t] for t in tokens)


def test_lookalikes_are_not_found() -> None:
    sig = _live_signatures()[0]
    raw = bytearray(base64.b64decode(sig))
    raw[-1] ^= 1  # a forged tag
    png = base64.b64encode(os.urandom(3000)).decode()
    for text in (
        base64.b64encode(bytes(raw)).decode(),
        base64.b64encode(os.urandom(53)).decode(),
        png,
        "x" * 80,
    ):
        assert sim_opaque_tokens(text) == []
    assert sim_opaque_tokens(sig, secret=b"another simulator") == []
