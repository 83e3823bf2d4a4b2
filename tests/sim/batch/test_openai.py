"""OpenAI Files + Batches on the simulator, through the official SDK over the in-process transport."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest

openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

from agentlab.sim import SimTransport  # noqa: E402


def _client() -> tuple[Any, SimTransport]:
    t = SimTransport()
    t.simulator.batches.seconds = 0.2
    http = httpx2.Client(transport=t)
    return openai.OpenAI(api_key="sim-test-key", base_url="http://sim.agentlab.local/v1", http_client=http), t


def _jsonl(lines: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO("\n".join(json.dumps(x) for x in lines).encode())


def _line(cid: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    b = body or {"model": "sim-reasoner", "input": f"What is 2+2? ({cid})"}
    return {"custom_id": cid, "method": "POST", "url": "/v1/responses", "body": b}


def _wait(client: Any, bid: str) -> Any:
    seen = []
    for _ in range(100):
        b = client.batches.retrieve(bid)
        seen.append(b.status)
        if b.status in ("completed", "expired", "cancelled", "failed"):
            return b, seen
        time.sleep(0.02)
    raise AssertionError(seen)


def test_lifecycle_results_and_line_errors() -> None:
    client, _ = _client()
    bad = {"model": "sim-reasoner", "input": "x", "temperature": 9}
    lines = _jsonl([_line("a"), _line("b"), _line("c", bad)])
    f = client.files.create(file=("in.jsonl", lines), purpose="batch")
    batch = client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
    assert batch.status == "validating"
    done, seen = _wait(client, batch.id)
    assert "in_progress" in seen and done.status == "completed"
    counts = done.request_counts
    assert counts.total == 3 and counts.completed == 2 and counts.failed == 1
    out = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
    assert sorted(o["custom_id"] for o in out) == ["a", "b"]
    assert out[0]["response"]["status_code"] == 200 and out[0]["response"]["body"]["object"] == "response"
    err = [json.loads(x) for x in client.files.content(done.error_file_id).text.splitlines()]
    assert err[0]["custom_id"] == "c" and err[0]["response"]["status_code"] == 400
    assert err[0]["response"]["body"]["error"]["param"] == "temperature"


def test_file_validation_is_a_typed_400() -> None:
    client, _ = _client()
    with pytest.raises(openai.BadRequestError) as exc:
        client.files.create(file=("in.jsonl", _jsonl([_line("a"), _line("a")])), purpose="batch")
    assert exc.value.body["param"] == "custom_id"
    other = {"model": "sim-reasoner-mini", "input": "hi"}
    with pytest.raises(openai.BadRequestError) as exc:
        client.files.create(file=("in.jsonl", _jsonl([_line("a"), _line("b", other)])), purpose="batch")
    assert exc.value.body["param"] == "body.model"


def test_cancel_and_expiry() -> None:
    client, t = _client()
    t.simulator.batches.seconds = 5.0
    f = client.files.create(file=("in.jsonl", _jsonl([_line("a"), _line("b")])), purpose="batch")
    batch = client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
    assert client.batches.cancel(batch.id).status == "cancelling"
    started = t.simulator.batches.jobs[batch.id].cancelled_at
    time.sleep(0.05)  # a second cancel keeps the first one's time (the progress frozen at it)
    assert client.batches.cancel(batch.id).status == "cancelling"
    assert t.simulator.batches.jobs[batch.id].cancelled_at == started
    t.simulator.batches.seconds = 0.2
    done, _ = _wait(client, batch.id)
    assert done.status == "cancelled" and done.request_counts.completed == 0
    t.simulator.batches.expire_ids = {"b"}
    f = client.files.create(file=("in.jsonl", _jsonl([_line("a"), _line("b")])), purpose="batch")
    batch = client.batches.create(input_file_id=f.id, endpoint="/v1/responses", completion_window="24h")
    done, _ = _wait(client, batch.id)
    assert done.status == "expired" and done.request_counts.completed == 1
    err = json.loads(client.files.content(done.error_file_id).text)
    assert err["custom_id"] == "b" and err["error"]["code"] == "batch_expired"
