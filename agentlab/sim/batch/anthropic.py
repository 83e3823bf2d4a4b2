"""Anthropic Message Batches on the simulator: create, retrieve, list, cancel, delete, results.

Why through :func:`agentlab.sim.app.handle`: each request's ``params`` is answered by the very code
the live ``POST /v1/messages`` runs (schema, thinking signatures, tool pairing, faults), without
streaming, so a request that breaks a rule ends ``errored`` with the live 400's body
(``{"type": "error", "error": {...}, "request_id"}``) as its ``result.error``. As on the real API,
``params`` is validated when the batch is processed, not at create; create refuses (typed 400
naming the field) only what its own envelope gets wrong: ``requests`` missing, empty or over
100,000; an item that is not ``{custom_id, params}``; a ``custom_id`` off the pattern
``^[a-zA-Z0-9_-]{1,64}$`` or used twice; ``params`` not an object or asking to stream. A body over
256 MB is the API's 413 ``request_too_large``.

Wire shape (the SDK's ``MessageBatch``): ``processing_status`` ``in_progress`` -> (``canceling``)
-> ``ended`` on the shared clock of :class:`~agentlab.sim.batch.store.BatchStore`;
``request_counts`` is all ``processing`` until the batch ends, then ``succeeded`` / ``errored`` /
``canceled`` / ``expired``; ``results_url`` (absolute, on the host the client called) appears when
it ends. Results are JSONL lines ``{"custom_id", "result": {"type": ...}}``; a canceled batch keeps
the results of the requests done before the cancel.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import Any

from agentlab.sim.batch.routes import add_job, cancel_once, finish_once, job_of, live_answer, newest_first
from agentlab.sim.batch.routes import query as _query
from agentlab.sim.batch.routes import store as _store
from agentlab.sim.batch.store import BatchStore, Job
from agentlab.sim.core import SimReply
from agentlab.sim.errors import SimError
from agentlab.sim.protocols import Route, RouteCall
from agentlab.sim.routes import json_reply

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000
MAX_BYTES = 256 * 1024 * 1024
DAY_S = 86400
_COUNT_KEYS = ("processing", "succeeded", "errored", "canceled", "expired")
_KIND = {"ok": "succeeded", "error": "errored", "expired": "expired", "canceled": "canceled"}


def _bad(message: str) -> SimError:
    return SimError(400, "invalid_request_error", message)


def _not_found(bid: str) -> SimError:
    return SimError(404, "not_found_error", f"No message batch found with id '{bid}'.")


def stamp(t: float) -> str:
    """RFC 3339 with microseconds and ``Z``, as the API writes every ``*_at``."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _check_item(n: int, item: Any, seen: dict[str, int]) -> None:
    where = f"requests.{n}"
    if not isinstance(item, dict):
        raise _bad(f"{where}: Input should be a valid dictionary")
    extra = sorted(set(item) - {"custom_id", "params"})
    if extra:
        raise _bad(f"{where}.{extra[0]}: Extra inputs are not permitted")
    for key in ("custom_id", "params"):
        if key not in item:
            raise _bad(f"{where}.{key}: Field required")
    cid = item["custom_id"]
    if not isinstance(cid, str):
        raise _bad(f"{where}.custom_id: Input should be a valid string")
    if not CUSTOM_ID.match(cid):
        raise _bad(f"{where}.custom_id: String should match pattern '{CUSTOM_ID.pattern}'")
    if cid in seen:
        raise _bad(f"{where}.custom_id: must be unique within the batch (also used by requests.{seen[cid]})")
    seen[cid] = n
    params = item["params"]
    if not isinstance(params, dict):
        raise _bad(f"{where}.params: Input should be a valid dictionary")
    if params.get("stream") not in (None, False):
        raise _bad(f"{where}.params.stream: Input should be False")


def _requests(body: dict[str, Any]) -> list[dict[str, Any]]:
    extra = sorted(set(body) - {"requests"})
    if extra:
        raise _bad(f"{extra[0]}: Extra inputs are not permitted")
    if "requests" not in body:
        raise _bad("requests: Field required")
    reqs = body["requests"]
    if not isinstance(reqs, list):
        raise _bad("requests: Input should be a valid list")
    if not reqs:
        raise _bad("requests: List should have at least 1 item after validation, not 0")
    if len(reqs) > MAX_REQUESTS:
        n = len(reqs)
        raise _bad(f"requests: List should have at most {MAX_REQUESTS} items after validation, not {n}")
    seen: dict[str, int] = {}
    for n, item in enumerate(reqs):
        _check_item(n, item, seen)
    return reqs


def _answer(call: RouteCall, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``("ok", message)`` or ``("error", live error body)`` from the live ``/v1/messages``."""
    status, _, body = live_answer(call, "/v1/messages", params)
    return ("ok" if status == 200 else "error"), body


def _counts(processing: int = 0, **done: int) -> dict[str, int]:
    return {k: (processing if k == "processing" else done.get(k, 0)) for k in _COUNT_KEYS}


def _create(call: RouteCall) -> SimReply:
    """``POST /v1/messages/batches``: every request answered now; the clock decides what polling shows."""
    if len(call.raw) > MAX_BYTES:
        raise SimError(413, "request_too_large", "Request exceeds the maximum size of 256 MB.")
    reqs = _requests(call.body)
    results = []
    for item in reqs:
        kind, reply = _answer(call, item["params"])
        results.append((kind, item["custom_id"], reply))
    store = _store(call)
    bid = store.next_id("msgbatch_")
    now = time.time()
    obj: dict[str, Any] = {
        "id": bid, "type": "message_batch", "processing_status": "in_progress",
        "request_counts": _counts(len(results)), "ended_at": None, "created_at": stamp(now),
        "expires_at": stamp(now + DAY_S), "archived_at": None, "cancel_initiated_at": None,
        "results_url": None,
    }  # fmt: skip
    host = call.headers.get("host") or "sim.agentlab.local"
    job = Job(bid, now, obj, results, expire_all=store.expire_all, api="anthropic", base_url=f"http://{host}")
    add_job(store, job)
    return json_reply(obj)


def _lines(store: BatchStore, job: Job) -> tuple[list[str], dict[str, int]]:
    lines, tally = [], dict.fromkeys(_KIND.values(), 0)
    for i, (kind, cid, reply) in enumerate(job.results):
        final = _KIND[store.outcome(job, i, kind, cid)]
        tally[final] += 1
        result: dict[str, Any] = {"type": final}
        if final == "succeeded":
            result["message"] = reply
        elif final == "errored":
            result["error"] = reply
        lines.append(json.dumps({"custom_id": cid, "result": result}, separators=(",", ":")))
    return lines, tally


def _finish(store: BatchStore, job: Job) -> None:
    obj = job.obj
    lines, tally = _lines(store, job)
    job.output = ("\n".join(lines) + "\n").encode()
    obj["request_counts"] = _counts(0, **tally)
    obj["processing_status"] = "ended"
    obj["ended_at"] = stamp(time.time())
    obj["results_url"] = f"{job.base_url}/v1/messages/batches/{job.id}/results"


def _refresh(store: BatchStore, job: Job) -> dict[str, Any]:
    obj = job.obj
    if obj["processing_status"] == "ended":
        return obj
    finish_once(store, job, store.phase(job), lambda: obj["processing_status"] == "ended", _finish)
    return obj


def _job(call: RouteCall) -> Job:
    bid = call.params["batch_id"]
    return job_of(call, bid, "anthropic", _not_found(bid))


def _retrieve(call: RouteCall) -> SimReply:
    return json_reply(_refresh(_store(call), _job(call)))


def _cancel(call: RouteCall) -> SimReply:
    """``POST .../cancel``: ``canceling`` now; what was not yet done ends ``canceled``."""
    store, job = _store(call), _job(call)
    obj = _refresh(store, job)
    if obj["processing_status"] != "in_progress":
        raise _bad(f"Batch cannot be canceled: its processing_status is '{obj['processing_status']}'.")
    at = cancel_once(store, job)
    with store.lock:
        obj["processing_status"] = "canceling"
        obj["cancel_initiated_at"] = stamp(at)
    return json_reply(obj)


def _delete(call: RouteCall) -> SimReply:
    """``DELETE``: only an ended batch (the API asks to cancel one in progress first)."""
    store, job = _store(call), _job(call)
    if _refresh(store, job)["processing_status"] != "ended":
        raise _bad("Message Batches can only be deleted once they have finished processing; cancel it first.")
    with store.lock:
        store.jobs.pop(job.id, None)
    return json_reply({"id": job.id, "type": "message_batch_deleted"})


def _results(call: RouteCall) -> SimReply:
    """``GET .../results``: the JSONL the ended batch's ``results_url`` names."""
    store, job = _store(call), _job(call)
    obj = _refresh(store, job)
    if obj["processing_status"] != "ended" or job.output is None:
        status = obj["processing_status"]
        raise _bad(f"Batch results are not available until processing has ended (status '{status}').")
    return SimReply(200, {"content-type": "application/binary"}, job.output)


def _limit(q: dict[str, str]) -> int:
    raw = q.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise _bad("limit: Input should be greater than or equal to 1 and less than or equal to 1000")
    return int(raw)


def _list(call: RouteCall) -> SimReply:
    """``GET /v1/messages/batches``: newest first; ``after_id`` pages to older, ``before_id`` to newer."""
    q, store = _query(call), _store(call)
    limit = _limit(q)
    jobs = newest_first(store, "anthropic")
    ids = [j.id for j in jobs]
    for key in ("after_id", "before_id"):
        if key in q and q[key] not in ids:
            raise _bad(f"{key}: no message batch found with this id")
    if "before_id" in q:
        end = ids.index(q["before_id"])
        page, more = jobs[max(0, end - limit) : end], end - limit > 0
    else:
        start = ids.index(q["after_id"]) + 1 if "after_id" in q else 0
        page, more = jobs[start : start + limit], start + limit < len(jobs)
    data = [_refresh(store, j) for j in page]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return json_reply({"data": data, "has_more": more, "first_id": first, "last_id": last})


ROUTES = (
    Route("POST", "/v1/messages/batches", _create),
    Route("GET", "/v1/messages/batches", _list),
    Route("GET", "/v1/messages/batches/{batch_id}", _retrieve),
    Route("POST", "/v1/messages/batches/{batch_id}/cancel", _cancel),
    Route("DELETE", "/v1/messages/batches/{batch_id}", _delete),
    Route("GET", "/v1/messages/batches/{batch_id}/results", _results),
)
