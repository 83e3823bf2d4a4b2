"""Section 9: the first cell in a fresh kernel, cold vs warmed SDKs, side by side.

Each sample is a new Jupyter kernel (``jupyter_client``): run ``%load_ext agentlab``, let the
kernel idle ``IDLE_S`` seconds (a reader between cells), then execute one cell that starts a run
on a real provider name, and time from sending ``execute_request`` to the first request reaching
a loopback server in this process (the SDK's ``*_BASE_URL`` points at it; it answers 400 so the
run ends at once). *Cold* sets ``AGENTLAB_WARMUP=0`` (the SDK is imported in the foreground by the
run); *warmed* is the default (``agentlab/notebook/warmup.py`` imports it while the kernel idles).
Samples alternate cold/warmed so load drift hits both alike.
"""

from __future__ import annotations

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ._util import Section, Target, median

ROOT = Path(__file__).resolve().parents[1]
IDLE_S = 6.0
LIMIT_S = 0.3
CASES = {
    "anthropic": ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
    "openai": ("openai:gpt-5.1", "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
}


class _Server(ThreadingHTTPServer):
    arrivals: list[float]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        self.server.arrivals.append(time.time())
        body = b'{"type":"error","error":{"type":"invalid_request_error","message":"bench"}}'
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


_CELL = "import agentlab as al\ntry:\n    al.run({model!r}, 'hi', max_steps=1)\nexcept Exception:\n    pass\n"


def _sample(provider: str, warm: bool, server: _Server, idle_s: float = IDLE_S) -> float:
    from jupyter_client.manager import start_new_kernel

    model, key_env, url_env, suffix = CASES[provider]
    port = server.server_address[1]
    env = {**os.environ, key_env: "sk-bench", url_env: f"http://127.0.0.1:{port}{suffix}"}
    env["AGENTLAB_WARMUP"] = "1" if warm else "0"
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
    try:
        kc.execute_interactive("%load_ext agentlab", timeout=120, output_hook=lambda m: None)
        time.sleep(idle_s)
        server.arrivals.clear()
        t0 = time.time()
        kc.execute(_CELL.format(model=model))
        deadline = t0 + 60
        while not server.arrivals and time.time() < deadline:
            time.sleep(0.002)
        if not server.arrivals:
            raise RuntimeError(f"no request reached the server from the {provider} cell")
        dt = server.arrivals[0] - t0
        kc.get_shell_msg(timeout=60)  # the cell's reply: the run ended
        return dt
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(quick: bool) -> Section:
    sec = Section("warm_start", "9. First cell in a fresh kernel: execute -> first request (s)")
    server = _Server(("127.0.0.1", 0), _Handler)
    server.arrivals = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    reps = 1 if quick else 3
    idle = 1.0 if quick else IDLE_S  # --quick: structure only (one provider, 1 s idle)
    cases = ["openai"] if quick else list(CASES)
    samples: dict[str, dict[str, list[float]]] = {p: {"cold": [], "warmed": []} for p in cases}
    try:
        for _ in range(reps):
            for provider in cases:
                for mode in ("cold", "warmed"):  # interleaved, side by side
                    samples[provider][mode].append(_sample(provider, mode == "warmed", server, idle))
    finally:
        server.shutdown()
    sec.figures = {"samples_s": samples, "idle_s": idle, "repetitions": reps}
    for provider, by in samples.items():
        cold, warmed = median(by["cold"]), median(by["warmed"])
        sec.figures[f"{provider}_cold_s"] = cold
        sec.figures[f"{provider}_warmed_s"] = warmed
        sec.row(f"{provider}: cold / warmed", f"{cold:.3f} s / {warmed:.3f} s ({cold / warmed:.1f}x)")
        sec.targets.append(
            Target(f"{provider} first request, warmed kernel idle {idle:.0f} s", warmed, LIMIT_S, "s")
        )
    return sec
