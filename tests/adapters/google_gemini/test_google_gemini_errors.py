"""The Gemini API's authentication refusals (400 / 401 / 403), translated once into agentlab's tree.

The bodies are the simulator's renderings of the API's real shapes (``agentlab.sim.gemini.errors``:
an invalid key is 400 ``INVALID_ARGUMENT`` with a ``google.rpc.ErrorInfo`` ``API_KEY_INVALID``, no
credential 403 ``PERMISSION_DENIED``, a bad OAuth token 401 ``UNAUTHENTICATED``), served through the
real SDK client. What a caller needs: the HTTP status, the API status name, the ErrorInfo reason as
``code`` (as OpenAI's ``invalid_api_key``), never retryable, the key never in the message or repr,
and no SDK exception chained.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials

from agentlab.adapters.google_gemini import GoogleGeminiAdapter
from agentlab.errors import ProviderAPIError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.sim.errors import SimError
from agentlab.sim.gemini import errors as GE
from tests.adapters.google_gemini.gemini_support import FAKE_KEY, Replay, Served, adapter_on
from tests.support.cassettes import fixtures_dir

MODEL = "gemini-3-flash-preview"


def _refused(err: SimError, *, vertex: bool = False) -> ProviderAPIError:
    status, headers, body = GE.GEMINI.render(err, b"")
    replay = Replay([Served(status, body, headers["content-type"])])
    adapter = _vertex(replay) if vertex else adapter_on(replay, MODEL)
    request = ModelRequest(model=MODEL, items=(UserItem(text="q"),))

    async def go() -> None:
        async for _ in adapter.stream(request):
            pass

    with pytest.raises(ProviderAPIError) as info:
        asyncio.run(go())
    exc = info.value
    assert exc.__cause__ is None and exc.__context__ is None
    assert FAKE_KEY not in str(exc) and FAKE_KEY not in repr(exc)
    return exc


@pytest.mark.parametrize(
    ("err", "reason"),
    [
        (
            SimError(400, "INVALID_ARGUMENT", GE.BAD_KEY, details=[GE.error_info("API_KEY_INVALID")]),
            "API_KEY_INVALID",
        ),
        (SimError(403, "PERMISSION_DENIED", GE.NO_KEY), None),
        (
            SimError(
                401, "UNAUTHENTICATED", GE.BAD_TOKEN, details=[GE.error_info("ACCESS_TOKEN_TYPE_UNSUPPORTED")]
            ),
            "ACCESS_TOKEN_TYPE_UNSUPPORTED",
        ),
    ],
    ids=["400-api-key-invalid", "403-permission-denied", "401-unauthenticated"],
)
def test_auth_refusals_keep_status_name_and_reason_and_are_not_retried(
    err: SimError, reason: str | None
) -> None:
    exc = _refused(err)
    assert type(exc) is ProviderAPIError
    assert (exc.status, exc.error_type, exc.code) == (err.status, err.type, reason)
    assert not exc.retryable and exc.retry_after is None
    assert err.message.split(".")[0] in str(exc)


def test_a_field_violation_wins_over_an_error_info_reason() -> None:
    """INVALID_ARGUMENT naming a field: the field is the code (what to fix), whatever else is attached."""
    details = [
        GE.error_info("SOME_REASON"),
        {
            "@type": GE.RPC + "BadRequest",
            "fieldViolations": [{"field": "contents[1].parts[0]", "description": "x"}],
        },
    ]
    exc = _refused(SimError(400, "INVALID_ARGUMENT", "Invalid value.", details=details))
    assert exc.code == "contents[1].parts[0]"


def _vertex(replay: Replay) -> GoogleGeminiAdapter:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(replay))
    client = genai.Client(
        vertexai=True, project="p1", location="global", credentials=Credentials(token="ya29.test"),  # type: ignore[no-untyped-call]
        http_options=types.HttpOptions(httpx_async_client=http),
    )  # fmt: skip
    return GoogleGeminiAdapter(MODEL, client=client, max_retries=0)


def _errors_file(name: str) -> Any:
    path = Path(fixtures_dir()) / "errors" / name
    if not path.exists():
        pytest.skip(f"../shared/fixtures/errors/{name} is absent")
    return json.loads(path.read_text())


VERTEX_MISSING = "issue__openrouter_400_gemini_reasoning_details_required.error_object.json"
COVERED = {
    "issue__gemini_400_missing_thought_signature.json",  # test_google_gemini_stream.py
    "issue__openrouter_400_gemini_thought_signature_not_valid.json",  # test_google_gemini_stream.py
    VERTEX_MISSING,  # here
}


def test_the_quoted_vertex_missing_signature_400_is_an_api_error_on_the_vertex_endpoint() -> None:
    """Vertex AI's wording of the missing-signature 400, as OpenRouter quoted the upstream body."""
    raw = _errors_file(VERTEX_MISSING)["metadata"]["raw"]
    upstream = json.loads(raw.split("Upstream error: ", 1)[1])
    err = upstream["error"]
    exc = _refused(SimError(err["code"], err["status"], err["message"]), vertex=True)
    assert (exc.status, exc.error_type, exc.retryable) == (400, "INVALID_ARGUMENT", False)
    assert "is missing a `thought_signature`" in str(exc)


def test_every_gemini_error_body_in_the_shared_errors_is_replayed_by_a_test() -> None:
    root = Path(fixtures_dir()) / "errors"
    if not root.exists():
        pytest.skip("../shared/fixtures/errors is absent")
    gemini = {p.name for p in root.iterdir() if "gemini" in p.name.lower()}
    assert gemini == COVERED, "a new Gemini error body: replay it through the adapter"
