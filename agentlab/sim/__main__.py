"""``python -m agentlab.sim serve [--port N] [--seed S] [--fault SPEC]``, or ``bench`` (events/s)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from agentlab.sim.core import Simulator
from agentlab.sim.server import serve


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return the exit status instead of exiting.

    ``argv`` lets tests drive it in process; a port that cannot be bound returns 2 with the reason on
    stderr rather than a traceback, since a busy port is the usual way ``serve`` fails.
    """
    parser = argparse.ArgumentParser(prog="python -m agentlab.sim", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="serve both simulated APIs on 127.0.0.1")
    p.add_argument("--port", type=int, default=8765, help="port (0 = pick a free one); default 8765")
    p.add_argument("--seed", type=int, default=0, help="seed for ids and obfuscation strings")
    p.add_argument("--fault", default=None, help="default fault spec for requests that name none")
    p.add_argument("--retry-after-ms", type=int, default=20, help="what 429 replies ask clients to wait")
    p.add_argument(
        "--real-models",
        action="store_true",
        help="also answer real model names (gpt-5.5, claude-opus-4-6, ...) with the simulated model that "
        "behaves like each, labelled simulated (x-agentlab-simulated header, model field)",
    )
    b = sub.add_parser("bench", help="measure in-process throughput (events per second)")
    b.add_argument("--seconds", type=float, default=2.0, help="how long to run each measurement")
    args = parser.parse_args(argv)
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
        print(f"agentlab.sim serving on http://127.0.0.1:{port}", flush=True)
        print(
            f"  OpenAI    base_url=http://127.0.0.1:{port}/v1  models: sim-reasoner, sim-reasoner-mini",
            flush=True,
        )
        print(
            f"  Anthropic base_url=http://127.0.0.1:{port}     models: sim-thinker, sim-thinker-legacy",
            flush=True,
        )
        print("  any non-empty API key is accepted", flush=True)
        if args.real_models:
            print("  real model names answered as simulated (x-agentlab-simulated header)", flush=True)

    try:
        asyncio.run(serve(args.port, sim=sim, on_ready=ready))
    except OSError as exc:
        print(f"agentlab.sim: cannot serve on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 2
    print("agentlab.sim stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
