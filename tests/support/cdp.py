"""Drive headless Chromium over the DevTools protocol (CDP) with a plain websocket: no browser download.

Playwright would fetch its own browser build; these tests use Debian's ``/usr/bin/chromium`` and
talk to it directly: ``--remote-debugging-port=0`` (Chromium writes the port it chose into
``DevToolsActivePort`` in its fresh ``--user-data-dir``), one page target, ``Runtime.evaluate`` for
the DOM, ``Page.captureScreenshot`` for PNGs, and the ``Network.webSocketFrame*`` events for what the
page itself sends and receives on its websockets (the kernel channel of JupyterLab), with the
browser's own timestamps. Events arriving while a command waits for its reply are kept in
:attr:`Page.events`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

#: The flags of tests/notebook/test_browser.py, plus the remote-debugging port chosen by Chromium.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--no-first-run",
    "--metrics-recording-only",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
)


class CDPError(RuntimeError):
    """A CDP command failed, or the page's script threw."""


class Page:
    """One page target: send commands, keep events, evaluate JavaScript."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self._next = 0

    def send(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.05, deadline - time.monotonic())))
            if msg.get("id") == ident:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds: float) -> None:
        """Collect events for ``seconds`` (nothing else to wait for)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                return
            if "method" in msg:
                self.events.append(msg)

    def js(self, expression: str, timeout: float = 60) -> Any:
        """Evaluate ``expression`` (awaiting a promise) and return its JSON value."""
        got = self.send(
            "Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in got:
            raise CDPError(
                f"page script threw: {got['exceptionDetails'].get('exception', {}).get('description')}"
            )
        return got.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60, what: str = "") -> Any:
        """Poll ``expression`` until truthy; return its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.js(expression)
            except CDPError:
                value = None
            if value:
                return value
            self.pump(0.2)
        raise TimeoutError(f"waited {timeout:.0f} s for {what or expression}")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


class Chromium:
    """A headless Chromium process with one page, closed with :meth:`close`."""

    def __init__(self, binary: str, profile: Path, *, width: int = 1280, height: int = 1000) -> None:
        args = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        self.size = (width, height)
        self.proc = subprocess.Popen(
            [*args, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise CDPError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])
        self._stack = contextlib.ExitStack()
        try:
            self._connect()
        except Exception:
            self.close()
            raise

    def _connect(self) -> None:
        targets = json.loads(
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10).read()
        )
        page = next(t for t in targets if t["type"] == "page")
        ws = self._stack.enter_context(connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10))
        self.page = Page(ws)
        self.page.send("Page.enable")
        self.page.send("Runtime.enable")
        self.page.send("Network.enable")
        self.page.send("Emulation.setFocusEmulationEnabled", enabled=True)
        self.page.send(
            "Emulation.setDeviceMetricsOverride",
            width=self.size[0],
            height=self.size[1],
            deviceScaleFactor=1,
            mobile=False,
        )

    def close(self) -> None:
        stack = getattr(self, "_stack", None)
        if stack is not None:
            stack.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def kernel_messages(events: list[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """(browser timestamp, message) for every frame the page received on a kernel channel websocket.

    JupyterLab 4 speaks the binary ``v1.kernel.websocket.jupyter.org`` protocol when the server offers
    it (offsets, channel, header, parent header, metadata, content, buffers) and JSON text otherwise;
    both are parsed. One websocket frame is one kernel message in either.
    """
    kernel_ws = {
        e["params"]["requestId"]
        for e in events
        if e["method"] == "Network.webSocketCreated" and "/channels" in e["params"]["url"]
    }
    out: list[tuple[float, dict[str, Any]]] = []
    for e in events:
        if e["method"] != "Network.webSocketFrameReceived" or e["params"]["requestId"] not in kernel_ws:
            continue
        frame = e["params"]["response"]
        msg = (
            _v1(base64.b64decode(frame["payloadData"]))
            if frame["opcode"] == 2
            else json.loads(frame["payloadData"])
        )
        out.append((float(e["params"]["timestamp"]), msg))
    return out


def _v1(raw: bytes) -> dict[str, Any]:
    n = int.from_bytes(raw[:8], "little")
    offsets = [int.from_bytes(raw[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(n)]
    parts = [raw[offsets[i] : offsets[i + 1]] for i in range(n - 1)]
    channel = parts[0].decode()
    header, parent, metadata, content = (json.loads(p) for p in parts[1:5])
    return {
        "channel": channel,
        "header": header,
        "msg_type": header.get("msg_type"),
        "parent_header": parent,
        "metadata": metadata,
        "content": content,
    }
