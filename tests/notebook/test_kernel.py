"""A real Jupyter kernel: cell-scoped continuations, interrupt mid-stream, resume; frontend message count.

One kernel for the whole module (a kernel start costs ~1-2 s). Cells run through jupyter_client
exactly as a frontend sends them; the interrupt is a real SIGINT while the simulated provider is
streaming slowly (``x-sim-fault: slow:<ms>``).
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]


class Cell:
    def __init__(self) -> None:
        self.stdout = ""
        self.error: dict[str, Any] | None = None
        self.comm_msgs: list[dict[str, Any]] = []
        self.displays: list[dict[str, Any]] = []
        self.interrupted_at: float | None = None
        self.idle_at: float | None = None


class Kernel:
    def __init__(self) -> None:
        from jupyter_client.manager import start_new_kernel

        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT))

    def run(
        self, code: str, *, timeout: float = 60, on_iopub: Callable[[dict[str, Any]], bool] | None = None
    ) -> Cell:
        """Execute ``code``; ``on_iopub`` returning True interrupts the kernel (once)."""
        msg_id = self.kc.execute(code)
        cell = Cell()
        interrupted = False
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"cell timed out:\n{code}\nstdout so far:\n{cell.stdout}") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            t, content = msg["msg_type"], msg["content"]
            if t == "stream" and content["name"] == "stdout":
                cell.stdout += content["text"]
            elif t == "error":
                cell.error = content
            elif t == "comm_msg":
                cell.comm_msgs.append(content)
            elif t in ("display_data", "update_display_data"):  # in order: the last is what is saved
                cell.displays.append(content)
            if on_iopub is not None and not interrupted and on_iopub(msg):
                self.km.interrupt_kernel()
                interrupted = True
                cell.interrupted_at = time.monotonic()
            if t == "status" and content["execution_state"] == "idle":
                cell.idle_at = time.monotonic()
                return cell

    def ok(self, code: str, **kw: Any) -> Cell:
        cell = self.run(code, **kw)
        assert cell.error is None, "\n".join(cell.error["traceback"]) if cell.error else ""
        return cell

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    try:
        yield k
    finally:
        k.close()


SETUP = """
import agentlab
from agentlab.loop.continuation import live_continuations

@agentlab.tool
def get_weather(city: str) -> str:
    \"\"\"Current weather for a city.\"\"\"
    return {"Paris": "Paris: 24 C, sunny", "Rome": "Rome: 21 C, cloudy", "Oslo": "Oslo: 9 C, rain"}.get(
        city, f"{city}: 15 C"
    )

session = agentlab.Session()
r1 = session.run("anthropic:sim-thinker", "Is it warmer in Paris or Rome?", tools=[get_weather])
print("R1", r1.status, r1.steps, len(live_continuations()))
"""

INTERRUPTED = """
slow = agentlab.create_adapter("anthropic:sim-thinker", extra_headers={"x-sim-fault": "slow:40"})
run2 = session.start(
    "anthropic:sim-thinker", "What is the total of the temperatures in Paris, Rome and Oslo?",
    tools=[get_weather], adapter=slow,
)
from agentlab.notebook.live import live_run_view
view2 = live_run_view(run2)
agentlab.run_sync(run2.arun())
"""

COMPARE_INTERRUPTED = """
models = ["openai:sim-reasoner", "anthropic:sim-thinker"]
cmp = agentlab.compare(
    "What is the total of the temperatures in Paris, Rome and Oslo?", models, tools=[get_weather],
    adapters=[agentlab.create_adapter(m, extra_headers={"x-sim-fault": "slow:40"}) for m in models],
)
"""

PAUSED = """
paused = agentlab.Run("openai:sim-reasoner", "Is it warmer in Paris or Rome?", tools=[get_weather])
agen = paused.events()
async for ev in agen:
    if type(ev).__name__ == "ModelCallStartedEvent" and ev.step == 2:
        break_here = True
        break
print("HELD", len(paused.checkpoint.provider_continuation or ()), len(live_continuations()))
"""


def _step2_streaming(msg: dict[str, Any]) -> bool:
    if msg["msg_type"] not in ("comm_msg", "comm_open"):  # a step's title is created "streaming…"
        return False
    state = msg["content"].get("data", {}).get("state", {})
    return "Step 2" in str(state.get("value", "")) and "streaming" in str(state.get("value", ""))


def _prompt_and_one_line(cell: Cell) -> None:
    """The interrupted cell ended within ~2 s and shows one line, not agentlab's frames."""
    assert cell.interrupted_at is not None and cell.idle_at is not None
    assert cell.idle_at - cell.interrupted_at < 2.5, f"{cell.idle_at - cell.interrupted_at:.2f} s"
    assert cell.error is not None
    shown = "\n".join(cell.error["traceback"]).splitlines()
    assert len(shown) == 1 and shown[0].startswith("KeyboardInterrupt: "), shown


def test_interrupt_pause_and_resume_across_cells(kernel: Kernel) -> None:
    c1 = kernel.ok(SETUP)
    assert "R1 completed 2 0" in c1.stdout  # loop ended: nothing left held
    assert c1.comm_msgs, "the run streamed into a live view (comm messages)"
    assert any("application/vnd.jupyter.widget-view+json" in d["data"] for d in c1.displays)

    c2 = kernel.run(INTERRUPTED, on_iopub=_step2_streaming, timeout=90)
    assert c2.error is not None and c2.error["ename"] == "KeyboardInterrupt", c2.stdout
    _prompt_and_one_line(c2)

    # An interrupted comparison: Ctrl-C cancels every run (their worker thread ends).
    c2b = kernel.run(COMPARE_INTERRUPTED, on_iopub=_step2_streaming, timeout=90)
    assert c2b.error is not None and c2b.error["ename"] == "KeyboardInterrupt", c2b.stdout
    _prompt_and_one_line(c2b)
    c2c = kernel.ok(
        "import threading; print('THREADS', sum(t.name == 'agentlab-run' for t in threading.enumerate()))"
    )
    assert "THREADS 0" in c2c.stdout

    # A loop paused (not finished) at the end of a cell: its continuation held opaque items then.
    c3 = kernel.ok(PAUSED)
    held = int(c3.stdout.split()[1])
    assert held >= 1, c3.stdout

    c4 = kernel.ok(
        """
import json
print(json.dumps({
    "live": len(live_continuations()),
    "run2": [run2.result.status, run2.checkpoint.provider_continuation is None],
    "paused": paused.checkpoint.provider_continuation is None,
    "history_tail": [type(i).__name__ for i in session.history[-3:]],
}))
"""
    )
    state = json.loads(c4.stdout.strip().splitlines()[-1])
    assert state["live"] == 0
    assert state["run2"] == ["cancelled", True]
    assert state["paused"] is True

    # Resuming from portable items only (the interrupted loop's tool calls/results are in history,
    # its thinking blocks are gone): no provider 400.
    c5 = kernel.ok(
        """
r3 = session.run("anthropic:sim-thinker", "Please finish the previous question.", tools=[get_weather])
print("R3", r3.status, r3.error_type, repr(r3.output)[:120])
print("LIVE", len(live_continuations()))
"""
    )
    assert "R3 completed None" in c5.stdout, c5.stdout
    assert "LIVE 0" in c5.stdout


def test_frontend_messages_for_5000_deltas(kernel: Kernel) -> None:
    """Measured in a real kernel: comm messages on iopub for a 5,000-delta stream (~1 s long)."""
    cell = kernel.ok(
        """
import time
from IPython.display import display
from agentlab.neutral.events import ReasoningDeltaEvent
from agentlab.notebook.panel import ReasoningPanel
p = ReasoningPanel("measure")
display(p)
t0 = time.monotonic()
for i in range(5000):
    p.feed(ReasoningDeltaEvent(text=f"tok{i} ", block="0", step=1))
    if i % 25 == 24:
        time.sleep(0.004)
p.end()
print("ELAPSED", time.monotonic() - t0, "TEXT", len(p.text))
"""
    )
    words = cell.stdout.split()
    elapsed, text_len = float(words[1]), int(words[3])
    updates = [m for m in cell.comm_msgs if m.get("data", {}).get("method") == "update"]
    out = ROOT / "out" / "measurements"
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernel_panel_5000.json").write_text(
        json.dumps(
            {"deltas": 5000, "elapsed_s": elapsed, "comm_msgs": len(cell.comm_msgs), "updates": len(updates)}
        )
    )
    print(f"real kernel: 5,000 deltas over {elapsed:.2f} s -> {len(cell.comm_msgs)} comm messages")
    assert text_len == sum(len(f"tok{i} ") for i in range(5000))
    # One budget for the whole frontend: <= 20 msgs/s (+1 burst) from every widget together while
    # streaming, +1 for the final render after p.end(), + the cell-end collapse (sent at once, outside
    # the budget: the header, the toggle's layout, the panel's children and the closing live text).
    assert len(cell.comm_msgs) <= 20 * elapsed + 1 + 1 + 4
    assert len(cell.comm_msgs) >= 5


def _frontend_sends(
    kernel: Kernel, comm_id: str, data: dict[str, Any], timeout: float = 30
) -> list[dict[str, Any]]:
    """Send a comm message as a frontend does (shell channel); return the iopub messages it caused."""
    msg = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    kernel.kc.shell_channel.send(msg)
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while True:
        m = kernel.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if m["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out
        out.append(m)


def test_show_reasoning_in_a_real_kernel_keeps_it_out_of_widget_state(kernel: Kernel) -> None:
    """The click arrives as a comm message; the text comes back as custom messages only."""
    c1 = kernel.ok(
        """
import json, uuid
import agentlab
import ipywidgets
from agentlab.testing import ScriptedAdapter, Step
from agentlab.notebook.panel import live_panels
CANARY = f"CANARY-{uuid.uuid4().hex}"
steps = [Step(reasoning=[f"think {CANARY}"], text="ok")]
r = agentlab.run("openai:sim-reasoner", "q", adapter=ScriptedAdapter(steps))
from agentlab.notebook._coalesce import wait_idle
wait_idle(30)  # the view's step widgets are made by the flusher thread, never on the run's thread
(shown,) = [p for p in live_panels() if CANARY in p.text]
print("IDS", CANARY, shown._toggle.model_id)
"""
    )
    canary, toggle = c1.stdout.split("IDS ")[1].split()
    assert canary not in json.dumps([m.get("data", {}).get("state") for m in c1.comm_msgs])
    replies = _frontend_sends(
        kernel, toggle, {"method": "update", "state": {"value": True}, "buffer_paths": []}
    )
    custom = [
        m for m in replies if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "custom"
    ]
    assert any(canary in json.dumps(m["content"]) for m in custom), "the text did not reach the page"
    states = [
        m["content"]["data"].get("state") for m in replies if m["msg_type"] in ("comm_open", "comm_msg")
    ]
    assert canary not in json.dumps(states)
    c2 = kernel.ok("print('STATE', json.dumps(ipywidgets.Widget.get_manager_state(), default=str))")
    assert "STATE" in c2.stdout and canary not in c2.stdout


HUNG_TOOL = """
import time
import agentlab
from agentlab.testing import ScriptedAdapter, Step

@agentlab.tool
def hang(city: str) -> str:
    \"\"\"Blocks like a stuck network call.\"\"\"
    print("TOOL_STARTED", flush=True)
    time.sleep(60)
    return "late"

hang_adapter = ScriptedAdapter([Step(tool_calls=[("hang", {"city": "Paris"})])] + [Step(text="x")] * 5)
hang_run = agentlab.Run("openai:sim-reasoner", "Weather?", tools=[hang], adapter=hang_adapter)
hang_run.run_sync()
"""


def _tool_started(msg: dict[str, Any]) -> bool:
    return msg["msg_type"] == "stream" and "TOOL_STARTED" in msg["content"].get("text", "")


def test_interrupt_during_a_hung_sync_tool_is_prompt_and_one_line(kernel: Kernel) -> None:
    """Kernel > Interrupt while a sync tool sleeps 60 s: the cell ends within ~2 s.

    Its error output is one line (no frames of agentlab's plumbing), the run is ``cancelled`` with the tool
    reported abandoned, and the model is not called again.
    """
    cell = kernel.run(HUNG_TOOL, on_iopub=_tool_started, timeout=90)
    assert cell.interrupted_at is not None, (cell.stdout, cell.error)
    assert cell.error is not None and cell.error["ename"] == "KeyboardInterrupt"
    _prompt_and_one_line(cell)
    after = kernel.ok(
        """
print("STATE", hang_run.result.status, hang_adapter.consumed,
      [e.data.get("tool") for e in hang_run.result.events if getattr(e, "code", None) == "tool_abandoned"])
"""
    )
    assert "STATE cancelled 1 ['hang']" in after.stdout, after.stdout
