"""The public surface of agentlab.sim: light import, no secrets in reprs, client factories, bench."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentlab import sim
from agentlab.sim import faults
from agentlab.sim.bench import run_bench


def test_import_is_light_and_agentlab_does_not_load_it() -> None:
    code = (
        "import sys, agentlab, agentlab.sim; "
        "print(sorted(m for m in ('openai', 'anthropic', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    out = subprocess.run(
        [sys.executable, "-c", "import sys, agentlab; print('agentlab.sim' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_secrets_never_in_reprs() -> None:
    secret = b"super-secret-signing-key"
    t = sim.SimTransport(secret=secret)
    for obj in (t, t.simulator, t.simulator.signer):
        assert "super-secret" not in repr(obj)
    client = sim.openai_sync_client(transport=t)
    assert client.api_key == "sim-key" and str(client.base_url) == "http://sim.agentlab.local/v1/"


def test_options_go_to_the_transport_not_the_sdk() -> None:
    client = sim.anthropic_sync_client(seed=5, max_retries=0)
    assert client.max_retries == 0
    with pytest.raises(TypeError, match="beside transport"):
        sim.openai_client(transport=sim.SimTransport(), seed=1)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("429x2", [faults.Fault("429", 2)]),
        ("slow:15,unknown_event", [faults.Fault("slow", None, 15), faults.Fault("unknown_event")]),
        ("cut", [faults.Fault("cut")]),
    ],
)
def test_fault_grammar(spec: str, expected: list[faults.Fault]) -> None:
    assert faults.parse(spec) == expected


def test_fault_grammar_rejects_unknown() -> None:
    with pytest.raises(faults.FaultSpecError, match="'timeout'"):
        faults.parse("timeout")


def test_bench_measures_every_path(capsys: pytest.CaptureFixture[str]) -> None:
    rates = run_bench(0.05)
    assert set(rates) == {
        "openai simulator",
        "openai httpx2",
        "anthropic simulator",
        "anthropic httpx2",
        "openai SDK",
        "anthropic SDK",
    }
    assert all(r > 0 for r in rates.values())
    assert "events/s" in capsys.readouterr().out
