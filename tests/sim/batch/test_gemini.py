"""Gemini batch mode on the simulator, through the official google-genai SDK over the in-process transport."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest
from google.genai import errors

from agentlab import sim
from agentlab.sim import SimTransport
from tests.sim.helpers import raw_post

KEY = {"x-goog-api-key": "sim-test-key"}
ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")
NO_THINKING = {"thinking_config": {"thinking_budget": 0}}  # the live route refuses it on Gemini 3


def _client(seconds: float = 0.2) -> tuple[Any, SimTransport]:
    t = SimTransport()
    t.simulator.batches.seconds = seconds
    return sim.gemini_client(transport=t), t


def _req(key: str, **kw: Any) -> dict[str, Any]:
    text = f"What is 2+2? ({key})"
    return {"contents": [{"role": "user", "parts": [{"text": text}]}], "metadata": {"key": key}, **kw}


def _wait(client: Any, name: str) -> tuple[Any, list[str]]:
    seen = []
    for _ in range(200):
        job = client.batches.get(name=name)
        seen.append(job.state.name)
        if job.state.name in ENDED:
            return job, seen
        time.sleep(0.02)
    raise AssertionError(seen)


def _raw_get(t: SimTransport, path: str) -> Any:
    import httpx2

    with httpx2.Client(transport=t, base_url="http://sim.agentlab.local") as c:
        return c.get(path, headers=KEY)


def test_lifecycle_inlined_responses_and_the_live_error() -> None:
    client, t = _client()
    job = client.batches.create(
        model="sim-gemini",
        src=[_req("a"), _req("b"), _req("c", config=NO_THINKING)],
        config={"display_name": "t"},
    )
    assert job.name.startswith("batches/") and job.state.name == "JOB_STATE_PENDING"
    assert job.display_name == "t" and job.model == "models/sim-gemini"
    done, seen = _wait(client, job.name)
    assert "JOB_STATE_RUNNING" in seen and done.state.name == "JOB_STATE_SUCCEEDED" and done.end_time
    out = done.dest.inlined_responses
    assert [r.metadata for r in out] == [{"key": "a"}, {"key": "b"}, {"key": "c"}]
    assert out[0].response.text == "2+2 = 4" and out[0].error is None
    with pytest.raises(errors.ClientError) as live:
        client.models.generate_content(model="sim-gemini", contents="What is 2+2? (c)", config=NO_THINKING)
    assert out[2].response is None and out[2].error.code == 3  # google.rpc.Code INVALID_ARGUMENT
    assert out[2].error.message == live.value.message
    op = _raw_get(t, f"/v1beta/{job.name}").json()
    assert op["done"] is True and op["metadata"]["state"] == "BATCH_STATE_SUCCEEDED"
    assert op["metadata"]["batchStats"] == {
        "requestCount": "3",
        "successfulRequestCount": "2",
        "failedRequestCount": "1",
    }
    assert op["response"]["@type"].endswith("GenerateContentBatchOutput")


@pytest.mark.parametrize(
    ("inlined", "field"),
    [
        ([], "batch.input_config.requests.requests"),
        ([{"metadata": {"key": "a"}}], "batch.input_config.requests.requests[0].request"),
        ([{"request": {"contents": [], "temprature": 1}}], "batch.input_config.requests.requests[0].request"),
        ([{"request": {"model": "models/sim-gemini-legacy", "contents": []}}],
         "batch.input_config.requests.requests[0].request.model"),
    ],
)  # fmt: skip
def test_create_validation_is_a_typed_400_naming_the_field(inlined: list[Any], field: str) -> None:
    _, t = _client()
    body = {"batch": {"displayName": "t", "inputConfig": {"requests": {"requests": inlined}}}}
    r = raw_post(t, "/v1beta/models/sim-gemini:batchGenerateContent", body, KEY)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    assert err["details"][0]["fieldViolations"][0]["field"] == field
    assert not t.simulator.batches.jobs


def test_unknown_model_and_unknown_batch() -> None:
    client, _ = _client()
    with pytest.raises(errors.ClientError) as exc:
        client.batches.create(model="no-such-model", src=[_req("a")])
    assert exc.value.code == 404
    with pytest.raises(errors.ClientError) as exc:
        client.batches.get(name="batches/nope")
    assert exc.value.code == 404 and exc.value.status == "NOT_FOUND"


def test_cancel_then_expiry() -> None:
    client, t = _client(seconds=5.0)
    job = client.batches.create(model="sim-gemini", src=[_req("a"), _req("b")])
    client.batches.cancel(name=job.name)
    t.simulator.batches.seconds = 0.2
    done, _ = _wait(client, job.name)
    assert done.state.name == "JOB_STATE_CANCELLED" and done.dest is None
    assert _raw_get(t, f"/v1beta/{job.name}").json()["error"]["code"] == 1  # google.rpc.Code CANCELLED
    with pytest.raises(errors.ClientError) as exc:
        client.batches.cancel(name=job.name)
    assert exc.value.status == "FAILED_PRECONDITION"
    t.simulator.batches.expire_ids = {"b"}
    job = client.batches.create(model="sim-gemini", src=[_req("a"), _req("b")])
    done, _ = _wait(client, job.name)
    assert done.state.name == "JOB_STATE_EXPIRED" and done.dest is None


def test_list_pages_and_delete() -> None:
    client, t = _client(seconds=0.0)
    names = [client.batches.create(model="sim-gemini", src=[_req(f"r{i}")]).name for i in range(3)]
    ant = sim.anthropic_sync_client(transport=t)
    assert ant.messages.batches.list().data == []  # one store, but each API lists only its own batches
    pager = client.batches.list(config={"page_size": 2})
    assert [j.name for j in pager.page] == names[::-1][:2]
    assert [j.name for j in pager] == names[::-1]
    client.batches.delete(name=names[0])
    with pytest.raises(errors.ClientError):
        client.batches.get(name=names[0])
    assert [j.name for j in client.batches.list()] == names[:0:-1]


def _jsonl(*lines: dict[str, Any]) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(x) + "\n" for x in lines).encode())


def _line(key: str, **kw: Any) -> dict[str, Any]:
    request = {"contents": [{"role": "user", "parts": [{"text": f"What is 2+2? ({key})"}]}], **kw}
    return {"key": key, "request": request}


def test_file_input_and_responses_file() -> None:
    client, t = _client()
    bad = {"generation_config": NO_THINKING}
    upload = client.files.upload(
        file=_jsonl(_line("a"), _line("b", **bad)), config={"mime_type": "application/jsonl"}
    )
    assert upload.name.startswith("files/") and upload.source.name == "UPLOADED" and upload.size_bytes > 0
    assert client.files.get(name=upload.name).size_bytes == upload.size_bytes
    job = client.batches.create(model="sim-gemini", src=upload.name)
    done, _ = _wait(client, job.name)
    assert done.state.name == "JOB_STATE_SUCCEEDED" and done.dest.file_name.startswith("files/batch-")
    rows = [json.loads(x) for x in client.files.download(file=done.dest.file_name).decode().splitlines()]
    assert [r["key"] for r in rows] == ["a", "b"]
    assert rows[0]["response"]["candidates"][0]["content"]["parts"][0]["text"] == "2+2 = 4"
    assert rows[1]["error"]["code"] == 3 and "response" not in rows[1]
    meta = _raw_get(t, f"/v1beta/{job.name}").json()["metadata"]
    assert meta["inputConfig"] == {"fileName": upload.name}
    assert meta["output"] == {"responsesFile": done.dest.file_name}
    with pytest.raises(errors.ClientError) as exc:
        client.files.download(file=upload.name)  # only generated files are served
    assert exc.value.code == 400


def test_file_input_failures() -> None:
    client, t = _client()
    with pytest.raises(errors.ClientError) as exc:
        client.batches.create(model="sim-gemini", src="files/nope")
    assert exc.value.status == "PERMISSION_DENIED"
    unknown_field = {"key": "a", "request": {"contnts": []}}
    upload = client.files.upload(file=_jsonl(unknown_field), config={"mime_type": "application/jsonl"})
    job = client.batches.create(model="sim-gemini", src=upload.name)
    done, _ = _wait(client, job.name)
    assert done.state.name == "JOB_STATE_FAILED" and done.dest is None
    error = _raw_get(t, f"/v1beta/{job.name}").json()["error"]
    assert error["code"] == 3 and 'Unknown name "contnts"' in error["message"]
    import httpx2

    with httpx2.Client(
        transport=t, base_url="http://sim.agentlab.local"
    ) as c:  # no key: the id is the credential
        r = c.post(
            "/upload/v1beta/files?upload_id=nope", content=b"x", headers={"x-goog-upload-command": "upload"}
        )
        assert r.status_code == 404
        r = c.post("/upload/v1beta/files", json={}, headers={"x-goog-upload-protocol": "resumable"})
        assert r.status_code == 403  # starting an upload needs a key


async def test_async_client_creates_and_polls() -> None:
    import asyncio

    client, _ = _client()
    job = await client.aio.batches.create(model="sim-gemini-legacy", src=[_req("a")])
    for _ in range(200):
        job = await client.aio.batches.get(name=job.name)
        if job.state.name in ENDED:
            break
        await asyncio.sleep(0.02)
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    assert job.dest.inlined_responses[0].response.text == "2+2 = 4"
