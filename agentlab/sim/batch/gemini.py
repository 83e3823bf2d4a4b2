"""Gemini batch mode on the simulator: ``models/{model}:batchGenerateContent`` and ``batches/{id}``.

Why through :func:`agentlab.sim.app.handle`: each request is answered by the very code the live
``generateContent`` runs (signatures, function-response pairing, thinking config, faults), so a
request that breaks a rule gets the live error's canonical code and message as its error (a
``google.rpc.Status``: ``{"code": 3, "message": ...}``; the live ``details`` are left out because
the SDK's ``JobError`` only takes strings there).

Wire shape, as the API sends it (protobuf JSON: zero counts and ``done: false`` are omitted):
create answers a long-running ``Operation`` ``{"name": "batches/<id>", "metadata": <batch>}``;
``GET batches/<id>`` the same operation, with ``done: true`` and ``response`` once it ends; the
batch (``@type`` ``...v1main.GenerateContentBatch``) carries ``model``, ``displayName``,
``inputConfig.fileName`` (file input only), ``createTime`` / ``updateTime`` / ``endTime``,
``batchStats`` (int64 counts as strings) and ``state`` ``BATCH_STATE_PENDING`` -> ``RUNNING`` ->
``SUCCEEDED`` / ``FAILED`` / ``CANCELLED`` / ``EXPIRED`` (the SDK shows them as ``JOB_STATE_*``) on
the shared clock of :class:`~agentlab.sim.batch.store.BatchStore`.

Input: inlined requests (``{"request", "metadata"}``, up to 20 MB) or an uploaded JSONL file
(:mod:`agentlab.sim.gemini.files`; lines ``{"key", "request"}``). Output, in request order:
``inlinedResponses`` (``{"response" | "error", "metadata"}``) or a generated ``responsesFile``
(``files/batch-<id>``, lines ``{"key", "response" | "error"}``). A cancelled batch ends with
``error.code`` 1 (``CANCELLED``) and an expired one (the store's expiry knobs; the custom id is
``metadata.key`` / the line's ``key``) with no results, as the docs say; a file line that cannot
be parsed fails the whole batch (``FAILED``, read when it runs).

Strict like the API's protobuf parser: the whole create body (inlined requests included) is read
with :mod:`agentlab.sim.gemini.schema`, so an unknown field anywhere is the synchronous 400 naming
its path; an empty ``requests`` list, a missing ``request``, both or neither input sources, an
unknown file and a request naming another model are typed 400s (403 for the file) too.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from agentlab.sim.app import PATH_HEADER, QUERY_HEADER
from agentlab.sim.batch.routes import add_job, cancel_once, finish_once, job_of, live_answer, newest_first
from agentlab.sim.batch.routes import query as _query
from agentlab.sim.batch.routes import store as _store
from agentlab.sim.batch.store import BatchStore, Job
from agentlab.sim.core import SimReply
from agentlab.sim.errors import SimError
from agentlab.sim.gemini import errors as GE
from agentlab.sim.gemini import files as gemini_files
from agentlab.sim.gemini import schema as S
from agentlab.sim.gemini.request import read_request
from agentlab.sim.protocols import Route, RouteCall, versioned

BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
#: ``google.rpc.Code`` of each status name the live errors use.
RPC_CODES = {
    "CANCELLED": 1, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
    "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9, "INTERNAL": 13,
    "UNAVAILABLE": 14, "UNAUTHENTICATED": 16,
}  # fmt: skip
MAX_INLINE_BYTES = 20 * 1024 * 1024
_PAGE = 50
_ENDED = ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED")

# The batch messages, as the API's JSON parser reads them (camelCase or snake_case, unknown names
# refused): registered into the shared table so the create body is checked like any other request.
S.MESSAGES.setdefault("BatchGenerateContentRequest", {"batch": ("GenerateContentBatch", False)})
S.MESSAGES.setdefault(
    "GenerateContentBatch",
    {
        "model": (S.SCALAR, False),
        "name": (S.SCALAR, False),
        "displayName": (S.SCALAR, False),
        "inputConfig": ("InputConfig", False),
        "output": (S.ANY, False),
        "createTime": (S.SCALAR, False),
        "endTime": (S.SCALAR, False),
        "updateTime": (S.SCALAR, False),
        "batchStats": (S.ANY, False),
        "state": (S.SCALAR, False),
        "priority": (S.SCALAR, False),
    },
)
S.MESSAGES.setdefault("InputConfig", {"fileName": (S.SCALAR, False), "requests": ("InlinedRequests", False)})
S.MESSAGES.setdefault("InlinedRequests", {"requests": ("InlinedRequest", True)})
S.MESSAGES.setdefault(
    "InlinedRequest", {"request": ("GenerateContentRequest", False), "metadata": (S.ANY, False)}
)


def _bad(field: str, message: str) -> SimError:
    return GE.invalid_argument(message, [{"field": field, "description": message}])


def _json(obj: dict[str, Any]) -> SimReply:
    return SimReply(
        200, {"content-type": "application/json; charset=UTF-8"}, json.dumps(obj, indent=2).encode()
    )


def _stamp(t: float) -> str:
    """RFC 3339, UTC, ``Z`` (the API writes nanoseconds; microseconds parse the same)."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


#: One request of a batch: its custom id (``metadata.key`` / the line's ``key``; else its index),
#: the ``GenerateContentRequest`` and what its response repeats (``metadata`` or ``key``).
_Item = tuple[str, dict[str, Any], dict[str, Any]]


def _other_model(request: dict[str, Any], model: str) -> bool:
    """Drop a request's own ``model`` (the route names it); True when it names another one."""
    named = request.pop("model", None)
    return named is not None and str(named).removeprefix("models/") != model


def _inlined(reqs: Any, model: str) -> list[_Item]:
    """The inlined requests of a create body, each checked for what the parser cannot check."""
    where = "batch.input_config.requests.requests"
    if not isinstance(reqs, list) or not reqs:
        raise _bad(where, "At least one request is required.")
    items: list[_Item] = []
    for i, item in enumerate(reqs):
        if not isinstance(item, dict) or not isinstance(item.get("request"), dict):
            raise _bad(f"{where}[{i}].request", "The request is required.")
        meta = item.get("metadata", {})
        if not isinstance(meta, dict):
            raise _bad(f"{where}[{i}].metadata", "metadata must be an object (google.protobuf.Struct).")
        request = dict(item["request"])
        if _other_model(request, model):
            raise _bad(f"{where}[{i}].request.model", "Every request in a batch must use the batch's model.")
        key = meta["key"] if isinstance(meta.get("key"), str) else str(i)
        items.append((key, request, {"metadata": meta}))
    return items


def _file_items(store: BatchStore, name: Any, model: str) -> tuple[list[_Item], str | None]:
    """The lines of an uploaded JSONL (``{"key", "request"}``), or why the batch will fail.

    The file is read when the batch runs, so a line it cannot parse fails the whole batch
    (``BATCH_STATE_FAILED``) instead of refusing the create.
    """
    f = gemini_files.get_file(store, str(name))
    items: list[_Item] = []
    for n, raw in enumerate(bytes(f["content"]).decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            if not isinstance(line, dict) or not isinstance(line.get("request"), dict):
                return [], f"Line {n} of the input file is not an object with a 'request'."
            request = read_request(dict(line["request"]))
            if _other_model(request, model):
                return [], f"Line {n} of the input file names another model than the batch's."
        except ValueError:
            return [], f"Line {n} of the input file is not valid JSON."
        except SimError as err:
            return [], f"Line {n} of the input file: {err.message}"
        key = line["key"] if isinstance(line.get("key"), str) else str(len(items))
        items.append((key, request, {"key": key}))
    return (items, None) if items else ([], "The input file has no requests.")


def _source(store: BatchStore, batch: dict[str, Any], model: str) -> tuple[list[_Item], str | None]:
    source = batch.get("inputConfig")
    if not isinstance(source, dict) or ("fileName" in source) == ("requests" in source):
        message = "Exactly one of input_config.file_name or input_config.requests must be set."
        raise _bad("batch.input_config", message)
    if "fileName" in source:
        return _file_items(store, source["fileName"], model)
    return _inlined((source.get("requests") or {}).get("requests"), model), None


def _answer(call: RouteCall, path: str, request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``("ok", GenerateContentResponse)`` or ``("error", google.rpc.Status)`` from the live route."""
    query = call.headers.get(QUERY_HEADER, "")  # ``key=`` auth, if the client sent it that way
    status, _, body = live_answer(call, f"{path}?{query}" if query else path, request)
    if status == 200:
        return "ok", body
    err = body.get("error") or {}
    return "error", {"code": RPC_CODES.get(str(err.get("status")), 2), "message": str(err.get("message", ""))}


def _answers(call: RouteCall, model: str, items: list[_Item]) -> list[tuple[str, str, dict[str, Any]]]:
    version = call.headers.get(PATH_HEADER, "/v1beta/").split("/")[1]
    path = f"/{version}/models/{model}:generateContent"
    results = []
    for key, request, echo in items:
        kind, reply = _answer(call, path, request)
        results.append((kind, key, {"reply": reply, **echo}))
    return results


def _create(call: RouteCall) -> SimReply:
    """``POST models/{model}:batchGenerateContent``: every request answered now; the clock does the rest."""
    model = call.params["model"].removeprefix("models/")
    if call.served(model) is None:
        raise GE.GEMINI.model_not_found(model)
    if len(call.raw) > MAX_INLINE_BYTES:
        raise _bad("batch.input_config.requests", "Inlined requests are limited to 20 MB; use file input.")
    body = read_request(dict(call.body), "BatchGenerateContentRequest")
    batch = body.get("batch")
    if not isinstance(batch, dict):
        raise _bad("batch", "batch is required.")
    store = _store(call)
    items, failure = _source(store, batch, model)
    results = _answers(call, model, items)
    name = "batches/" + store.next_id("")
    now = time.time()
    meta: dict[str, Any] = {"@type": BATCH_TYPE, "model": f"models/{model}"}
    if batch.get("displayName"):
        meta["displayName"] = batch["displayName"]
    if "fileName" in batch["inputConfig"]:
        meta["inputConfig"] = {"fileName": batch["inputConfig"]["fileName"]}
    meta |= {
        "createTime": _stamp(now), "updateTime": _stamp(now), "batchStats": _stats(len(results), 0, 0),
        "state": "BATCH_STATE_PENDING", "name": name,
    }  # fmt: skip
    job = Job(name, now, {"name": name, "metadata": meta}, results, expire_all=store.expire_all, api="gemini")
    job.failure, job.base_url = failure, gemini_files.base_url(call)
    add_job(store, job)
    return _json(job.obj)


def _stats(total: int, ok: int, failed: int) -> dict[str, str]:
    """``BatchStats`` as protobuf JSON writes it: int64 as strings, zeros left out."""
    counts = {"requestCount": total, "successfulRequestCount": ok, "failedRequestCount": failed,
              "pendingRequestCount": total - ok - failed}  # fmt: skip
    return {k: str(v) for k, v in counts.items() if v}


def _output(store: BatchStore, job: Job) -> dict[str, Any]:
    """``GenerateContentBatchOutput``: inlined responses, or a generated file for file input."""
    if "inputConfig" not in job.obj["metadata"]:
        lines = [{("response" if k == "ok" else "error"): rec["reply"], "metadata": rec["metadata"]}
                 for k, _, rec in job.results]  # fmt: skip
        return {"inlinedResponses": {"inlinedResponses": lines}}
    rows = [
        {"key": rec["key"], ("response" if k == "ok" else "error"): rec["reply"]} for k, _, rec in job.results
    ]
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
    name = "files/batch-" + job.id.removeprefix("batches/")
    meta = gemini_files.resource(name, data, "application/jsonl", None, generated=True, base=job.base_url)
    gemini_files.put_file(store, name, data, meta)
    return {"responsesFile": name}


def _finish(store: BatchStore, job: Job) -> None:
    op, meta, now = job.obj, job.obj["metadata"], time.time()
    outcomes = [store.outcome(job, i, kind, key) for i, (kind, key, _) in enumerate(job.results)]
    if job.failure is not None:
        meta["state"] = "BATCH_STATE_FAILED"
        op["error"] = {"code": RPC_CODES["INVALID_ARGUMENT"], "message": job.failure}
    elif job.cancelled_at is not None:
        meta["state"] = "BATCH_STATE_CANCELLED"
        op["error"] = {"code": RPC_CODES["CANCELLED"], "message": "The batch was cancelled."}
    elif "expired" in outcomes:
        meta["state"] = "BATCH_STATE_EXPIRED"
        op["error"] = {
            "code": RPC_CODES["DEADLINE_EXCEEDED"],
            "message": "The batch expired before it finished.",
        }
    else:
        output = _output(store, job)
        meta["output"] = output
        op["response"] = {"@type": OUTPUT_TYPE, **output}
        meta["state"] = "BATCH_STATE_SUCCEEDED"
        ok = outcomes.count("ok")
        meta["batchStats"] = _stats(len(job.results), ok, len(job.results) - ok)
    meta["endTime"] = meta["updateTime"] = _stamp(now)
    op["done"] = True


def _refresh(store: BatchStore, job: Job) -> dict[str, Any]:
    op, meta = job.obj, job.obj["metadata"]
    if meta["state"] in _ENDED:
        return op
    phase = store.phase(job)
    finish_once(store, job, phase, lambda: meta["state"] in _ENDED, _finish)
    if phase not in ("ended", "validating") and meta["state"] == "BATCH_STATE_PENDING":
        meta["state"] = "BATCH_STATE_RUNNING"
        meta["updateTime"] = _stamp(time.time())
    if meta["state"] == "BATCH_STATE_RUNNING":
        done = int(store.progress(job) * len(job.results))
        kinds = [k for k, _, _ in job.results[:done]]
        meta["batchStats"] = _stats(len(job.results), kinds.count("ok"), kinds.count("error"))
    return op


def _job(call: RouteCall) -> Job:
    name = f"batches/{call.params['batch_id']}"
    return job_of(call, name, "gemini", SimError(404, "NOT_FOUND", "Requested entity was not found."))


def _get(call: RouteCall) -> SimReply:
    return _json(_refresh(_store(call), _job(call)))


def _cancel(call: RouteCall) -> SimReply:
    """``POST batches/{id}:cancel``: ``{}``; the batch ends ``CANCELLED`` shortly after."""
    store, job = _store(call), _job(call)
    state = _refresh(store, job)["metadata"]["state"]
    if state in _ENDED:
        raise SimError(400, "FAILED_PRECONDITION", f"The batch cannot be cancelled in state {state}.")
    cancel_once(store, job)
    return _json({})


def _delete(call: RouteCall) -> SimReply:
    """``DELETE batches/{id}``: ``{}``; the operation is gone (the API does not cancel it first)."""
    store, job = _store(call), _job(call)
    with store.lock:
        store.jobs.pop(job.id, None)
    return _json({})


def _list(call: RouteCall) -> SimReply:
    """``GET batches``: newest first, ``pageSize`` / ``pageToken`` paging (``nextPageToken``)."""
    store, q = _store(call), _query(call)
    jobs = newest_first(store, "gemini")
    raw_size = q.get("pageSize") or str(_PAGE)
    size = min(int(raw_size), 1000) if raw_size.isdigit() and int(raw_size) > 0 else _PAGE
    start = int(q["pageToken"]) if q.get("pageToken", "").isdigit() else 0
    out: dict[str, Any] = {}
    page = jobs[start : start + size]
    if page:
        out["operations"] = [_refresh(store, j) for j in page]
    if start + size < len(jobs):
        out["nextPageToken"] = str(start + size)
    return _json(out)


def routes(versions: tuple[str, ...]) -> tuple[Route, ...]:
    """The batch routes on each API version (the Gemini protocol lists them with its other routes)."""
    return versioned(
        versions,
        ("POST", "/models/{model}:batchGenerateContent", _create),
        ("GET", "/batches", _list),
        ("GET", "/batches/{batch_id}", _get),
        ("POST", "/batches/{batch_id}:cancel", _cancel),
        ("DELETE", "/batches/{batch_id}", _delete),
    )
