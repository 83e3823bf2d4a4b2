"""OpenAI Files + Batches on the simulator: JSONL upload, batch lifecycle, output and error files.

Why through :func:`agentlab.sim.app.handle`: each line's body is answered by the very code the live
``POST /v1/responses`` runs (validation, continuity rules, faults), non-streaming, so a line that
breaks a rule gets the same status and body in the error file as the live call's 400.
"""

from __future__ import annotations

import json
import time
from email.parser import BytesParser
from email.policy import default as email_policy
from typing import Any

from agentlab.sim.batch.routes import add_job, cancel_once, finish_once, job_of, live_answer, newest_first
from agentlab.sim.batch.routes import store as _store
from agentlab.sim.batch.store import BatchStore, Job
from agentlab.sim.core import SimReply
from agentlab.sim.errors import SimError
from agentlab.sim.protocols import Route, RouteCall
from agentlab.sim.routes import json_reply

_SHOWN = frozenset({"validating", "in_progress", "finalizing"})
_ENDED = ("completed", "expired", "cancelled")


def _bad(message: str, param: str | None = None) -> SimError:
    return SimError(400, "invalid_request_error", message, param)


def _not_found(kind: str, oid: str) -> SimError:
    return SimError(404, "invalid_request_error", f"No such {kind}: '{oid}'", None)


def _multipart(call: RouteCall) -> dict[str, tuple[str | None, bytes]]:
    ctype = call.headers.get("content-type", "")
    if not ctype.startswith("multipart/form-data"):
        raise _bad("Content-Type must be multipart/form-data.", "file")
    head = b"Content-Type: " + ctype.encode() + b"\r\n\r\n"
    msg = BytesParser(policy=email_policy).parsebytes(head + call.raw)
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            out[name] = (part.get_filename(), payload)
    return out


def _check_line(n: int, line: dict[str, Any], seen: set[str], models: set[str]) -> None:
    cid = line.get("custom_id")
    if not isinstance(cid, str) or not cid:
        raise _bad(f"Line {n}: 'custom_id' must be a non-empty string.", "custom_id")
    if cid in seen:
        raise _bad(f"Line {n}: duplicate custom_id '{cid}'.", "custom_id")
    seen.add(cid)
    if line.get("method") != "POST":
        raise _bad(f"Line {n}: 'method' must be 'POST'.", "method")
    if line.get("url") != "/v1/responses":
        raise _bad(f"Line {n}: 'url' must be '/v1/responses'.", "url")
    body = line.get("body")
    if not isinstance(body, dict):
        raise _bad(f"Line {n}: 'body' must be an object.", "body")
    if body.get("stream"):
        raise _bad(f"Line {n}: streaming is not supported in batches.", "body.stream")
    models.add(str(body.get("model")))
    if len(models) > 1:
        raise _bad(f"Line {n}: all requests in a batch file must use the same model.", "body.model")


def _upload(call: RouteCall) -> SimReply:
    """``POST /v1/files`` (purpose ``batch``): a JSONL of Responses requests, each line checked."""
    parts = _multipart(call)
    purpose = parts.get("purpose", (None, b""))[1].decode()
    if purpose != "batch":
        raise _bad("Only purpose 'batch' is simulated.", "purpose")
    if "file" not in parts:
        raise _bad("Missing required parameter: 'file'.", "file")
    filename, data = parts["file"]
    seen: set[str] = set()
    models: set[str] = set()
    lines: list[dict[str, Any]] = []
    for n, raw in enumerate(data.decode("utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            raise _bad(f"Line {n} is not valid JSON.", "file") from None
        if not isinstance(line, dict):
            raise _bad(f"Line {n} must be a JSON object.", "file")
        _check_line(n, line, seen, models)
        lines.append(line)
    if not lines:
        raise _bad("The batch file has no requests.", "file")
    store = _store(call)
    fid = store.next_id("file-")
    obj = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
           "filename": filename or "batch.jsonl", "purpose": "batch", "status": "processed"}
    with store.lock:
        store.files[fid] = {"obj": obj, "lines": lines, "content": data}
    return json_reply(obj)


def _file(call: RouteCall) -> dict[str, Any]:
    f = _store(call).files.get(call.params["file_id"])
    if f is None:
        raise _not_found("file", call.params["file_id"])
    return f


def _get_file(call: RouteCall) -> SimReply:
    return json_reply(_file(call)["obj"])


def _file_content(call: RouteCall) -> SimReply:
    return SimReply(200, {"content-type": "application/jsonl"}, bytes(_file(call)["content"]))


def _delete_file(call: RouteCall) -> SimReply:
    fid = call.params["file_id"]
    _file(call)
    with _store(call).lock:
        _store(call).files.pop(fid, None)
    return json_reply({"id": fid, "object": "file", "deleted": True})


def _answer(call: RouteCall, body: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    headers = {"authorization": call.headers.get("authorization", ""), "content-type": "application/json"}
    status, rh, answer = live_answer(call, "/v1/responses", body, headers)
    return status, answer, rh.get("x-request-id", "")


def _create(call: RouteCall) -> SimReply:
    """``POST /v1/batches``: every line answered now; the clock decides what polling shows."""
    body = call.body
    if body.get("endpoint") != "/v1/responses":
        raise _bad("endpoint must be '/v1/responses'.", "endpoint")
    if body.get("completion_window") != "24h":
        raise _bad("completion_window must be '24h'.", "completion_window")
    fid = str(body.get("input_file_id") or "")
    store = _store(call)
    f = store.files.get(fid)
    if f is None:
        raise _not_found("file", fid)
    results = []
    for line in f["lines"]:
        status, answer, rid = _answer(call, line["body"])
        reply = {"status_code": status, "request_id": rid, "body": answer}
        results.append(("ok" if status == 200 else "error", line["custom_id"], reply))
    bid = store.next_id("batch_")
    now = int(time.time())
    obj: dict[str, Any] = {
        "id": bid, "object": "batch", "endpoint": "/v1/responses", "errors": None, "input_file_id": fid,
        "completion_window": "24h", "status": "validating", "output_file_id": None, "error_file_id": None,
        "created_at": now, "in_progress_at": None, "expires_at": now + 86400, "finalizing_at": None,
        "completed_at": None, "failed_at": None, "expired_at": None, "cancelling_at": None,
        "cancelled_at": None, "request_counts": {"total": len(results), "completed": 0, "failed": 0},
        "metadata": body.get("metadata"),
    }
    add_job(store, Job(bid, time.time(), obj, results, expire_all=store.expire_all))
    return json_reply(obj)


def _lines(store: BatchStore, job: Job) -> tuple[list[str], list[str], int]:
    ok, bad, n_ok = [], [], 0
    for i, (kind, cid, resp) in enumerate(job.results):
        final = store.outcome(job, i, kind, cid)
        rec: dict[str, Any] = {"id": f"batch_req_{job.id[6:]}_{i}", "custom_id": cid}
        if final == "ok":
            n_ok += 1
            ok.append(json.dumps({**rec, "response": resp, "error": None}))
        elif final == "error":
            bad.append(json.dumps({**rec, "response": resp, "error": None}))
        else:
            code = "batch_expired" if final == "expired" else "batch_cancelled"
            msg = f"This request could not be executed before the batch was {final}."
            bad.append(json.dumps({**rec, "response": None, "error": {"code": code, "message": msg}}))
    return ok, bad, n_ok


def _finish(store: BatchStore, job: Job) -> None:
    obj, now = job.obj, int(time.time())
    ok, bad, n_ok = _lines(store, job)
    for key, lines in (("output_file_id", ok), ("error_file_id", bad)):
        if lines:
            fid = store.next_id("file-")
            data = ("\n".join(lines) + "\n").encode()
            meta = {"id": fid, "object": "file", "bytes": len(data), "created_at": now,
                    "filename": f"{job.id}_{key[:-8]}.jsonl", "purpose": "batch_output",
                    "status": "processed"}
            store.files[fid] = {"obj": meta, "lines": [], "content": data}
            obj[key] = fid
    obj["request_counts"] = {"total": len(job.results), "completed": n_ok, "failed": len(job.results) - n_ok}
    expired = job.expire_all or any(cid in store.expire_ids for _, cid, _ in job.results)
    status = "cancelled" if job.cancelled_at is not None else ("expired" if expired else "completed")
    obj["status"] = status
    obj[f"{status}_at"] = now


def _refresh(store: BatchStore, job: Job) -> dict[str, Any]:
    obj = job.obj
    if obj["status"] in _ENDED:
        return obj
    phase = store.phase(job)
    now = int(time.time())
    finish_once(store, job, phase, lambda: obj["status"] in _ENDED, _finish)  # output files written once
    if phase in _SHOWN:
        obj["status"] = phase
        if obj.get(f"{phase}_at") is None:
            obj[f"{phase}_at"] = now
        done = int(store.progress(job) * len(job.results))
        obj["request_counts"] = {"total": len(job.results), "completed": done, "failed": 0}
    return obj


def _job(call: RouteCall) -> Job:
    bid = call.params["batch_id"]
    return job_of(call, bid, "openai", _not_found("batch", bid))


def _retrieve(call: RouteCall) -> SimReply:
    return json_reply(_refresh(_store(call), _job(call)))


def _cancel(call: RouteCall) -> SimReply:
    store, job = _store(call), _job(call)
    obj = _refresh(store, job)
    if obj["status"] in ("completed", "expired", "cancelled", "failed"):
        raise SimError(409, "invalid_request_error", f"Cannot cancel a batch with status '{obj['status']}'.")
    obj["status"], obj["cancelling_at"] = "cancelling", int(cancel_once(store, job))
    return json_reply(obj)


def _list(call: RouteCall) -> SimReply:
    store = _store(call)
    data = [_refresh(store, j) for j in newest_first(store, "openai")]
    first = data[0]["id"] if data else None
    last = data[-1]["id"] if data else None
    return json_reply({"object": "list", "data": data, "first_id": first, "last_id": last, "has_more": False})


ROUTES = (
    Route("POST", "/v1/files", _upload),
    Route("GET", "/v1/files/{file_id}", _get_file),
    Route("GET", "/v1/files/{file_id}/content", _file_content),
    Route("DELETE", "/v1/files/{file_id}", _delete_file),
    Route("POST", "/v1/batches", _create),
    Route("GET", "/v1/batches", _list),
    Route("GET", "/v1/batches/{batch_id}", _retrieve),
    Route("POST", "/v1/batches/{batch_id}/cancel", _cancel),
)
