"""Read the real recorded provider traffic in ``../shared/fixtures`` (never copied into the repo).

Formats are described in ``../shared/fixtures/README.md``: VCR.py cassettes (standard and the
pydantic-ai flavour with ``parsed_body``), go-vcr v2 cassettes, JSON-lines chunk files and plain
JSON bodies. ``load_cassette`` returns one ``Exchange`` per interaction; tests that need the
fixtures call ``fixtures_dir()``, which skips with a clear reason when ``../shared`` is absent.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"


_ABSENT = f"../shared/fixtures not present at {FIXTURES}: recorded-traffic tests need it"


def _required() -> bool:
    """CI has ../shared beside the clone: there a missing folder is a broken set-up, not a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def fixtures_dir() -> Path:
    """The fixtures folder, or skip the calling test with the reason (fail under CI)."""
    if not FIXTURES.is_dir():
        if _required():
            pytest.fail(_ABSENT + " (CI=true: failing instead of skipping)")
        pytest.skip(_ABSENT)
    return FIXTURES


def fixture_files(provider: str, suffix: str = ".yaml") -> list[Path]:
    """Recorded files of one folder (``anthropic``, ``openai``, ``errors``).

    [] when absent (parametrized tests then skip), an error under CI.
    """
    folder = FIXTURES / provider
    if not folder.is_dir() and _required():
        raise RuntimeError(_ABSENT + " (CI=true)")
    return sorted(folder.glob(f"*{suffix}")) if folder.is_dir() else []


@dataclass
class Exchange:
    """One recorded request/response pair."""

    method: str
    url: str
    request_json: dict[str, Any] | None
    request_text: str | None  # exact text sent, when the cassette kept it (not pydantic-ai flavour)
    status: int
    response_kind: Literal["json", "sse", "error"]
    response_payload: Any  # parsed JSON, or list of SSE data objects
    response_text: str | None  # raw body text (SSE bodies are raw in every format)
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def sse_events(self) -> list[dict[str, Any]]:
        assert self.response_kind == "sse"
        return list(self.response_payload)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Split an SSE body into its ``data:`` JSON objects (README: 'Reading the streamed bodies')."""
    events: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data:"):
                data = line[5:].strip()
                if data and data != "[DONE]":
                    events.append(json.loads(data))
    return events


def _headers(raw: dict[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in (raw or {}).items():
        out[k.lower()] = v[0] if isinstance(v, list) and v else str(v)
    return out


def _body_text(body: object, headers: dict[str, str]) -> str | None:
    if body is None:
        return None
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        if headers.get("content-encoding") == "gzip" or body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        return body.decode("utf-8")
    return body if isinstance(body, str) else None


def load_cassette(path: Path) -> list[Exchange]:
    """Every interaction of a VCR.py / pydantic-ai / go-vcr cassette, in call order."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    out: list[Exchange] = []
    for inter in doc["interactions"]:
        req, resp = inter["request"], inter["response"]
        if "parsed_body" in req:
            req_json, req_text = req["parsed_body"], None
        else:
            req_text = req.get("body")
            req_json = json.loads(req_text) if req_text else None
        status_raw = resp.get("status")
        status = int(resp["code"]) if "code" in resp else int(status_raw["code"])
        headers = _headers(resp.get("headers"))
        if "parsed_body" in resp:
            payload: Any = resp["parsed_body"]
            text = None
            kind: Literal["json", "sse", "error"] = "json"
        else:
            text = _body_text(resp.get("body"), headers)
            ctype = headers.get("content-type", "")
            if "event-stream" in ctype or (text or "").lstrip().startswith("event:"):
                payload, kind = parse_sse(text or ""), "sse"
            else:
                payload, kind = (json.loads(text) if text else None), "json"
        if status >= 400 and kind == "json":
            kind = "error"
        out.append(
            Exchange(
                method=req.get("method", "POST"),
                url=req.get("uri") or req.get("url", ""),
                request_json=req_json,
                request_text=req_text,
                status=status,
                response_kind=kind,
                response_payload=payload,
                response_text=text,
                response_headers=headers,
            )
        )
    return out


def load_chunks(path: Path) -> list[list[dict[str, Any]]]:
    """A ``*.chunks.txt`` file: its streamed events, one group per response."""
    groups: list[list[dict[str, Any]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj.get("type") == "response.created" or not groups:
            groups.append([])
        groups[-1].append(obj)
    return groups


def to_sse(events: list[dict[str, Any]]) -> bytes:
    """Serialize data objects back into an SSE body (``event:`` = the object's ``type``)."""
    parts = [f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n" for e in events]
    return "".join(parts).encode("utf-8")
