"""``python -m agentlab.sim serve [--port N] [--seed S] [--fault SPEC] [--sim-names-only]``, or ``bench``.

The loopback server answers real model names by default (labelled simulated, see
:mod:`agentlab.sim.real_models`): it exists for clients that only know a ``base_url``, and such a
client should run unchanged with its real-model profile. ``--sim-names-only`` turns that off. The
in-process ``Simulator()`` keeps it off, since agentlab's own code never needs real names there.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from agentlab.sim.core import Simulator
from agentlab.sim.server import serve


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentlab.sim", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="serve both simulated APIs on 127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="port (0 = pick a free one); default 8765")
    p.add_argument("--seed", type=int, default=0, help="seed for ids and obfuscation strings")
    p.add_argument("--fault", default=None, help="default fault spec for requests that name none")
    p.add_argument("--retry-after-ms", type=int, default=20, help="what 429 replies ask clients to wait")
    names = p.add_mutually_exclusive_group()
    names.add_argument(
        "--sim-names-only",
        dest="real_models",
        action="store_false",
        help="answer only the simulated names (sim-reasoner, sim-thinker, ...); a real name is then the "
        "provider's 'model not found'. By default real model names (gpt-5.5, claude-opus-4-6, ...) are "
        "answered by the simulated model that behaves like each, labelled simulated "
        "(x-agentlab-simulated header, model field)",
    )
    names.add_argument(
        "--real-models",
        dest="real_models",
        action="store_true",
        help="answer real model names too (the default; kept for scripts written when it was opt-in)",
    )
    p.set_defaults(real_models=True)
    b = sub.add_parser("bench", help="measure in-process throughput (events per second)")
    b.add_argument("--seconds", type=float, default=2.0, help="how long to run each measurement")
    s = sub.add_parser("schemas", help="compare (or rewrite) the request schemas with the installed SDKs")
    s.add_argument("--write", action="store_true", help="rewrite the snapshot from the installed SDKs")
    return parser


def _banner(port: int, *, real_models: bool) -> list[str]:
    """What ``serve`` prints once it listens: every protocol's base URL and its simulated models."""
    u = f"http://127.0.0.1:{port}"
    return [
        f"agentlab.sim serving on {u}",
        f"  OpenAI    base_url={u}/v1  models: sim-reasoner, sim-reasoner-mini",
        f"  Anthropic base_url={u}     models: sim-thinker, sim-thinker-legacy",
        f"  Claude on Bedrock base_url={u} (AnthropicBedrock), on Vertex base_url={u}/v1 (AnthropicVertex)"
        "  models: sim-thinker, sim-thinker-legacy",
        f"  Chat Completions: DeepSeek base_url={u} (sim-deepseek), OpenRouter {u}/api/v1 "
        f"(sim-router-gemini/-claude/-openai), local {u}/v1 (sim-local, sim-local-reasoning)",
        f"  Chat Completions: Kimi and xAI base_url={u}/v1 (sim-kimi, sim-xai-chat), Z.AI {u}/api/paas/v4"
        " (sim-glm)",
        f"  Responses hosts: base_url={u}/v1 (xAI sim-grok, DeepSeek sim-deepseek-responses, Azure sim-azure,"
        " Bedrock Mantle sim-mantle, local sim-local-responses)",
        f"  Bedrock Converse: boto3 endpoint_url={u}"
        " (sim-bedrock-claude, sim-bedrock-openai, sim-bedrock-kimi)",
        "  any non-empty API key is accepted",
        "  real model names answered as simulated (x-agentlab-simulated header)"
        if real_models
        else "  simulated model names only (--sim-names-only)",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return the exit status instead of exiting.

    ``argv`` lets tests drive it in process; a port that cannot be bound returns 2 with the reason on
    stderr rather than a traceback, since a busy port is the usual way ``serve`` fails.
    """
    args = _parser().parse_args(argv)
    if args.command == "schemas":
        return _schemas(write=args.write)
    if args.command == "bench":
        from agentlab.sim.bench import run_bench

        run_bench(args.seconds)
        return 0
    sim = Simulator(
        seed=args.seed,
        default_fault=args.fault,
        retry_after_ms=args.retry_after_ms,
        real_models=args.real_models,
    )

    def ready(port: int) -> None:
        for line in _banner(port, real_models=args.real_models):
            print(line, flush=True)

    try:
        asyncio.run(serve(args.port, sim=sim, on_ready=ready))
    except OSError as exc:
        print(f"agentlab.sim: cannot serve on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 2
    print("agentlab.sim stopped", flush=True)
    return 0



def _schemas(*, write: bool) -> int:
    """``schemas``: 0 when the snapshot is the installed SDKs' request types, else 1 and the drift.

    Importing both SDKs takes seconds, so it is a command of its own, never done while serving.
    """
    from agentlab.sim.schemas import dialects as schemas

    if write:
        print(f"wrote {schemas.write_snapshot()} from {schemas.sdk_versions()}")
        return 0
    drift = schemas.snapshot_drift()
    print("\n".join(drift) if drift else f"request schemas unchanged ({schemas.sdk_versions()})")
    if drift:
        print(f"regenerate: {schemas.REGENERATE}")
    return 1 if drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
