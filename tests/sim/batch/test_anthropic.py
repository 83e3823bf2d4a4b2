"""Anthropic Message Batches on the simulator, through the official SDK over the in-process transport."""

from __future__ import annotations

import time
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

from agentlab import sim  # noqa: E402
from agentlab.sim import SimTransport  # noqa: E402
from tests.sim.helpers import raw_post  # noqa: E402

BAD = {"type": "enabled", "budget_tokens": 100}  # the live endpoint refuses budgets under 1024


def _client(seconds: float = 0.2) -> tuple[Any, SimTransport]:
    t = SimTransport()
    t.simulator.batches.seconds = seconds
    return sim.anthropic_sync_client(transport=t, max_retries=0), t


def _params(task: str, **kw: Any) -> dict[str, Any]:
    return {"model": "sim-thinker", "max_tokens": 2000, "messages": [{"role": "user", "content": task}], **kw}


def _req(cid: str, **kw: Any) -> dict[str, Any]:
    return {"custom_id": cid, "params": _params(f"What is 2+2? ({cid})", **kw)}


def _wait(client: Any, bid: str) -> tuple[Any, list[str]]:
    seen = []
    for _ in range(200):
        b = client.messages.batches.retrieve(bid)
        seen.append(b.processing_status)
        if b.processing_status == "ended":
            return b, seen
        time.sleep(0.02)
    raise AssertionError(seen)


def test_lifecycle_results_and_errored_request_gets_the_live_error() -> None:
    client, _ = _client()
    batch = client.messages.batches.create(requests=[_req("a"), _req("b"), _req("c", thinking=BAD)])
    assert batch.processing_status == "in_progress" and batch.results_url is None
    assert batch.request_counts.processing == 3 and batch.request_counts.succeeded == 0
    assert batch.id.startswith("msgbatch_") and batch.expires_at > batch.created_at
    done, seen = _wait(client, batch.id)
    assert "in_progress" in seen and done.ended_at is not None
    counts = done.request_counts
    assert (counts.processing, counts.succeeded, counts.errored) == (0, 2, 1)
    assert done.results_url == f"http://sim.agentlab.local/v1/messages/batches/{batch.id}/results"
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded" and results["a"].message.content[-1].text == "2+2 = 4"
    assert results["c"].type == "errored"
    with pytest.raises(anthropic.BadRequestError) as live:
        client.messages.create(**_params("What is 2+2? (c)", thinking=BAD))
    err = results["c"].error
    assert err.type == "error" and err.error.type == "invalid_request_error"
    assert err.error.message == live.value.body["error"]["message"]


@pytest.mark.parametrize(
    ("requests", "field"),
    [
        ([], "requests:"),
        ([_req("a"), _req("a")], "requests.1.custom_id:"),
        ([_req("has space")], "requests.0.custom_id:"),
        ([_req("x" * 65)], "requests.0.custom_id:"),
        ([{"custom_id": "a"}], "requests.0.params:"),
        ([{"custom_id": "a", "params": "hi"}], "requests.0.params:"),
        ([_req("a", stream=True)], "requests.0.params.stream:"),
        ([{**_req("a"), "extra": 1}], "requests.0.extra:"),
    ],
)
def test_create_validation_is_a_typed_400_naming_the_field(requests: list[Any], field: str) -> None:
    client, t = _client()
    with pytest.raises(anthropic.BadRequestError) as exc:
        client.messages.batches.create(requests=requests)
    assert exc.value.body["error"]["type"] == "invalid_request_error"
    assert exc.value.body["error"]["message"].startswith(field)
    assert not t.simulator.batches.jobs


def test_cancel_then_expiry() -> None:
    client, t = _client(seconds=5.0)
    batch = client.messages.batches.create(requests=[_req("a"), _req("b")])
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.delete(batch.id)  # in progress: cancel first
    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.cancel(batch.id)
    t.simulator.batches.seconds = 0.2
    done, _ = _wait(client, batch.id)
    assert done.request_counts.canceled == 2 and done.request_counts.succeeded == 0
    assert {r.result.type for r in client.messages.batches.results(batch.id)} == {"canceled"}
    t.simulator.batches.expire_ids = {"b"}
    batch = client.messages.batches.create(requests=[_req("a"), _req("b")])
    done, _ = _wait(client, batch.id)
    assert (done.request_counts.succeeded, done.request_counts.expired) == (1, 1)
    results = {r.custom_id: r.result.type for r in client.messages.batches.results(batch.id)}
    assert results == {"a": "succeeded", "b": "expired"}


def test_list_pages_newest_first_and_delete() -> None:
    client, t = _client(seconds=0.0)
    ids = [client.messages.batches.create(requests=[_req(f"r{i}")]).id for i in range(3)]
    oai = sim.openai_sync_client(transport=t)
    assert oai.batches.list().data == []  # one store, but each API lists only its own batches
    page = client.messages.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    assert page.first_id == ids[2] and page.last_id == ids[1]
    assert [b.id for b in client.messages.batches.list(limit=2)] == ids[::-1]  # auto-paging: after_id
    newer = client.messages.batches.list(before_id=ids[0], limit=1)
    assert [b.id for b in newer.data] == [ids[1]] and newer.has_more
    assert client.messages.batches.delete(ids[0]).type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve(ids[0])
    r = raw_post(t, f"/v1/messages/batches/{ids[1]}/cancel", {})
    assert r.status_code == 400 and r.headers["x-should-retry"] == "false"  # already ended


async def test_async_sdk_over_the_loopback_server_follows_results_url() -> None:
    import asyncio

    from tests.support.loopback import serving

    with serving() as url:
        async with anthropic.AsyncAnthropic(base_url=url, api_key="anything", max_retries=0) as client:
            batch = await client.messages.batches.create(requests=[_req("a"), _req("b", thinking=BAD)])
            for _ in range(200):
                batch = await client.messages.batches.retrieve(batch.id)
                if batch.processing_status == "ended":
                    break
                await asyncio.sleep(0.02)
            assert batch.results_url == f"{url}/v1/messages/batches/{batch.id}/results"
            results = await client.messages.batches.results(batch.id)
            kinds = {r.custom_id: r.result.type async for r in results}
    assert kinds == {"a": "succeeded", "b": "errored"}
