"""The simulated Gemini Files API, as far as batch mode needs it: upload, get, download, delete.

Why: a Gemini batch too big to inline (over 20 MB) reads its requests from an uploaded JSONL file
(``inputConfig.fileName``) and writes its responses to a generated one
(``output.responsesFile``, downloaded with ``files/{id}:download?alt=media``). The google-genai
SDK's ``client.files.upload`` speaks the resumable protocol: a ``start`` request (``POST
upload/{v}/files`` with ``X-Goog-Upload-Protocol: resumable`` and the ``File`` metadata) answered
with an ``x-goog-upload-url`` header, then the bytes to that URL (``X-Goog-Upload-Command: upload,
finalize``), answered with ``x-goog-upload-status: final`` and ``{"file": File}``. The session URL
carries an ``upload_id`` and no key, as the real one does; an unknown id is a 404.

Files live in the simulator's :class:`~agentlab.sim.batch.store.BatchStore` (``files/<id>`` keys,
apart from OpenAI's ``file-...`` ids), in memory only; there is no upload size cap besides the
store's memory and no 48 h expiry. ``files.list`` is not served: ``GET /v1/files`` without the
Gemini key header is another protocol's unknown URL (the wire corpus pins that 404).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from agentlab.sim.app import QUERY_HEADER
from agentlab.sim.batch.store import BatchStore
from agentlab.sim.core import SimReply
from agentlab.sim.errors import SimError
from agentlab.sim.gemini import errors as GE
from agentlab.sim.protocols import Route, RouteCall

EXPIRY_S = 48 * 3600


def stamp(t: float) -> str:
    """RFC 3339, UTC, ``Z``."""
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def json_reply(obj: dict[str, Any], headers: dict[str, str] | None = None) -> SimReply:
    """A 200 in the API's pretty-printed JSON."""
    rh = {"content-type": "application/json; charset=UTF-8", **(headers or {})}
    return SimReply(200, rh, json.dumps(obj, indent=2).encode())


def not_found(name: str) -> SimError:
    """A file name with no file under it (the API does not tell missing from forbidden)."""
    fid = name.removeprefix("files/")
    return SimError(
        403, "PERMISSION_DENIED", f"You do not have permission to access the File {fid} or it may not exist."
    )


def _store(call: RouteCall) -> BatchStore:
    return call.sim.batches


def _query(call: RouteCall) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(call.headers.get(QUERY_HEADER, "")).items()}


def resource(
    name: str, data: bytes, mime: str, display: str | None, *, generated: bool, base: str
) -> dict[str, Any]:
    """A ``File`` resource as ``files.get`` shows it (a generated file also has a ``downloadUri``)."""
    now = time.time()
    fid = name.removeprefix("files/")
    out: dict[str, Any] = {"name": name}
    if display:
        out["displayName"] = display
    out |= {
        "mimeType": mime, "sizeBytes": str(len(data)), "createTime": stamp(now), "updateTime": stamp(now),
        "expirationTime": stamp(now + EXPIRY_S),
        "sha256Hash": base64.b64encode(hashlib.sha256(data).hexdigest().encode()).decode(),
        "uri": f"{base}/v1beta/files/{fid}", "state": "ACTIVE",
        "source": "GENERATED" if generated else "UPLOADED",
    }  # fmt: skip
    if generated:
        out["downloadUri"] = f"{base}/download/v1beta/files/{fid}:download?alt=media"
    return out


def put_file(store: BatchStore, name: str, data: bytes, meta: dict[str, Any]) -> None:
    """Keep a file's bytes and resource (an upload, or a batch's responses file)."""
    with store.lock:
        store.files[name] = {"obj": meta, "lines": [], "content": data}


def get_file(store: BatchStore, name: str) -> dict[str, Any]:
    """The stored file ``files/<id>``, or the API's refusal."""
    f = store.files.get(name) if name.startswith("files/") else None
    if f is None:
        raise not_found(name)
    return f


def base_url(call: RouteCall) -> str:
    """Scheme and host the client called, for the absolute URLs a resource shows."""
    return f"http://{call.headers.get('host') or 'sim.agentlab.local'}"


def _start(call: RouteCall, version: str) -> SimReply:
    """The ``start`` request: a session for the announced size, its URL in ``x-goog-upload-url``."""
    if call.headers.get("x-goog-upload-protocol") != "resumable":
        raise GE.invalid_argument("Only the resumable upload protocol is simulated.")
    try:
        body = json.loads(call.raw or b"{}")
    except ValueError:
        raise GE.invalid_argument("Invalid JSON payload received.") from None
    meta = (body.get("file") or {}) if isinstance(body, dict) else {}
    size = call.headers.get("x-goog-upload-header-content-length", "")
    if not size.isdigit():
        raise GE.invalid_argument("X-Goog-Upload-Header-Content-Length must be the file's size in bytes.")
    store = _store(call)
    uid = store.next_id("")
    mime = (
        call.headers.get("x-goog-upload-header-content-type") or meta.get("mimeType") or meta.get("mime_type")
    )
    session = {
        "size": int(size), "mime": mime or "application/octet-stream", "data": b"",
        "display": meta.get("displayName") or meta.get("display_name"), "name": meta.get("name"),
    }  # fmt: skip
    with store.lock:
        store.uploads[uid] = session
    url = f"{base_url(call)}/upload/{version}/files?upload_id={uid}&upload_protocol=resumable"
    return json_reply({}, {"x-goog-upload-url": url, "x-goog-upload-status": "active"})


def _chunk(call: RouteCall, uid: str) -> SimReply:
    """``upload`` / ``upload, finalize`` to a session: bytes appended at their offset; final: the File."""
    store = _store(call)
    session = store.uploads.get(uid)
    if session is None:
        raise SimError(404, "NOT_FOUND", "Upload session not found.")
    command = {c.strip() for c in call.headers.get("x-goog-upload-command", "").split(",")}
    offset = call.headers.get("x-goog-upload-offset", "0")
    if "upload" not in command or not offset.isdigit() or int(offset) != len(session["data"]):
        raise GE.invalid_argument("X-Goog-Upload-Offset does not match the bytes received so far.")
    session["data"] += call.raw
    if "finalize" not in command:
        return SimReply(200, {"x-goog-upload-status": "active"}, b"")
    with store.lock:
        store.uploads.pop(uid, None)
    if len(session["data"]) != session["size"]:
        raise GE.invalid_argument("The uploaded bytes do not match X-Goog-Upload-Header-Content-Length.")
    name = str(session["name"] or f"files/{store.next_id('')}")
    name = name if name.startswith("files/") else f"files/{name}"
    data: bytes = session["data"]
    meta = resource(name, data, session["mime"], session["display"], generated=False, base=base_url(call))
    put_file(store, name, data, meta)
    return json_reply({"file": meta}, {"x-goog-upload-status": "final"})


def _upload(call: RouteCall) -> SimReply:
    uid = _query(call).get("upload_id")
    version = call.headers.get(":path", "/upload/v1beta/").split("/")[2]
    return _chunk(call, uid) if uid else _start(call, version)


def _get(call: RouteCall) -> SimReply:
    return json_reply(get_file(_store(call), f"files/{call.params['file_id']}")["obj"])


def _download(call: RouteCall) -> SimReply:
    """``files/{id}:download?alt=media``: the bytes of a generated file (uploaded ones are not served)."""
    name = f"files/{call.params['file_id']}"
    f = get_file(_store(call), name)
    if f["obj"].get("source") != "GENERATED":
        raise GE.invalid_argument("Only generated files can be downloaded.")
    return SimReply(200, {"content-type": f["obj"]["mimeType"]}, bytes(f["content"]))


def _delete(call: RouteCall) -> SimReply:
    name = f"files/{call.params['file_id']}"
    store = _store(call)
    get_file(store, name)
    with store.lock:
        store.files.pop(name, None)
    return json_reply({})


def routes(versions: tuple[str, ...]) -> tuple[Route, ...]:
    """The Files routes on each API version (``:download`` before the plain ``files/{id}``)."""
    out: list[Route] = []
    for v in versions:
        out += [
            Route("POST", f"/upload/{v}/files", _upload, raw_body=True),
            Route("GET", f"/{v}/files/{{file_id}}:download", _download),
            Route("GET", f"/download/{v}/files/{{file_id}}:download", _download),
            Route("GET", f"/{v}/files/{{file_id}}", _get),
            Route("DELETE", f"/{v}/files/{{file_id}}", _delete),
        ]
    return tuple(out)
