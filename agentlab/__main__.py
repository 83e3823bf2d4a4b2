"""``python -m agentlab demo``: run a tool loop offline and print the result and its usage frame.

The demo uses the simulated providers behind the real SDK adapters (``openai:sim-reasoner``,
``anthropic:sim-thinker``, ``google:sim-gemini``, ``deepseek:sim-deepseek``,
``openrouter:sim-router-claude``) when those modules are installed, and says so;
otherwise (or with ``--scripted``) it falls back to ``agentlab.testing.ScriptedAdapter`` and says that
instead. The default models run in one session, one after another: each switch of provider drops the
previous loop's opaque reasoning items visibly (a ``reasoning_item_dropped`` diagnostic) and keeps the
portable history.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_MODELS", "main"]

DEFAULT_MODELS = (
    "openai:sim-reasoner",
    "anthropic:sim-thinker",
    "google:sim-gemini",
    "deepseek:sim-deepseek",
    "openrouter:sim-router-claude",
)
"""One simulated model per hosted built-in provider (the Chat Completions dialects DeepSeek and
OpenRouter included; a local server needs a ``base_url``, so ``--model vllm:sim-local`` adds one),
run in this order in one session."""

TASK = "Is it warmer in Paris or Rome right now?"
WEATHER = {"paris": "18 C, light rain", "rome": "24 C, sunny"}


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _adapter_for(model: str, scripted: bool) -> tuple[Any, str]:
    """``(adapter or None, how)``: ``None`` lets the run create the real adapter for a sim model."""
    from agentlab.adapters.base import parse_model
    from agentlab.adapters.registry import get_provider

    ref = parse_model(model)
    spec = get_provider(ref.provider)
    module = spec.adapter.partition(":")[0]
    sdk_ok = spec.sdk_module is None or _have(spec.sdk_module)
    if not scripted and sdk_ok and _have(module) and _have("agentlab.sim"):
        return None, f"simulated provider behind the {spec.sdk_module or ref.provider} SDK ({module})"
    from agentlab.testing import ScriptedAdapter, Step

    steps = [
        Step(
            reasoning=["I need the weather in both cities.", " Calling the tool twice."],
            opaque=[b'{"scripted":"reasoning-1"}'],
            tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        ),
        Step(
            reasoning=["Rome 24 C vs Paris 18 C."],
            opaque=[b'{"scripted":"reasoning-2"}'],
            text="Rome is warmer: 24 C and sunny, against 18 C with light rain in Paris.",
            expect_continuation_from=[0],
        ),
    ]
    return ScriptedAdapter(steps, provider=ref.provider, model=ref.model), "ScriptedAdapter (testing helper)"


def demo(models: Sequence[str], scripted: bool = False) -> int:
    import agentlab as al
    from agentlab.loop.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name, e.g. "Paris".
        """
        return WEATHER.get(city.strip().lower(), f"no data for {city}")

    session = al.Session(system="You are a concise assistant. Use tools for facts.")
    results = []
    for model in models:
        adapter, how = _adapter_for(model, scripted)
        print(f"== {model}  via {how}")
        reasoning_chars = 0

        def count(ev: Any) -> None:
            nonlocal reasoning_chars
            if getattr(ev, "kind", None) == "reasoning_delta":
                reasoning_chars += len(ev.text)

        t0 = time.perf_counter()
        r = session.run(model, TASK, tools=[get_weather], adapter=adapter, on_event=count)
        dt = time.perf_counter() - t0
        results.append(r)
        print(f"status: {r.status}  steps: {r.steps}  wall: {dt:.2f}s  reasoning: {reasoning_chars} chars")
        print(f"output: {r.output}")
        u = r.usage
        rt = u.reasoning_tokens if u.reasoning_tokens is not None else "<NA>"
        cost = f"${u.cost.total:.6f}" if u.cost.known else "unknown (no price)"
        if u.provider_cost_usd is not None:
            cost += f" (provider reported ${u.provider_cost_usd:.6f})"
        print(
            f"tokens: input {u.input_tokens} (cache read {u.cache_read_tokens}, "
            f"write {u.cache_write_tokens}), output {u.output_tokens} (reasoning {rt})"
            f"  cost: {cost}  reasoning items dropped: {u.reasoning_items_dropped}"
        )
        for ev in r.events:
            if ev.kind == "diagnostic":
                print(f"diagnostic [{ev.code}]: {ev.message}")
        print()

    import pandas as pd

    frame = al.usage_frame(results)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        cols = [
            "run_id", "step", "provider", "model", "input_tokens", "cache_read_tokens", "output_tokens",
            "reasoning_tokens", "reasoning_items_dropped", "total_cost_usd", "provider_cost_usd",
            "stop_reason",
        ]  # fmt: skip
        print("usage frame (one row per model call; full frame has", len(frame.columns), "columns):")
        print(frame[cols].to_string(index=False))
    ok = all(r.status == "completed" for r in results)
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """The ``agentlab`` console script (``[project.scripts]``); returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="agentlab", description=__doc__.splitlines()[0] if __doc__ else None
    )
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="run a tool loop on the simulated providers and print the usage frame")
    d.add_argument(
        "--model",
        action="append",
        help="provider:model to run (repeatable; default: " + ", then ".join(DEFAULT_MODELS) + " in one "
        "session, which shows each provider switch dropping opaque items)",
    )
    d.add_argument("--scripted", action="store_true", help="use the ScriptedAdapter instead of the simulator")
    d.add_argument(
        "--no-report",
        action="store_true",
        help="skip the notebook report (by default the notebooks are executed headless on the "
        "simulated providers and an HTML report is written; its path is printed last)",
    )
    d.add_argument("--out", default="out/report", help="report directory (default: out/report)")
    d.add_argument("--keep-reasoning", action="store_true", help="keep reasoning text in the report's panels")
    args = parser.parse_args(argv)
    if args.command == "demo":
        code = demo(args.model or list(DEFAULT_MODELS), scripted=args.scripted)
        if args.no_report:
            return code
        from agentlab.notebook.report import main as report_main

        print("== notebooks: executing notebooks/*.ipynb headless on the simulated providers")
        sys.stdout.flush()
        report_args = ["--out", args.out] + (["--keep-reasoning"] if args.keep_reasoning else [])
        return report_main(report_args) or code
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
