"""The Gemini API's authentication refusals (400 / 401 / 403), translated once into agentlab's tree.

The bodies are the simulator's renderings of the API's real shapes (``agentlab.sim.gemini_errors``:
an invalid key is 400 ``INVALID_ARGUMENT`` with a ``google.rpc.ErrorInfo`` ``API_KEY_INVALID``, no
credential 403 ``PERMISSION_DENIED``, a bad OAuth token 401 ``UNAUTHENTICATED``), served through the
real SDK client. What a caller needs: the HTTP status, the API status name, the ErrorInfo reason as
``code`` (as OpenAI's ``invalid_api_key``), never retryable, the key never in the message or repr,
and no SDK exception chained.
"""

from __future__ import annotations

import asyncio

import pytest

from agentlab.errors import ProviderAPIError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest
from agentlab.sim import gemini_errors as GE
from agentlab.sim.errors import SimError
from tests.adapters.gemini_support import FAKE_KEY, Replay, Served, adapter_on

MODEL = "gemini-3-flash-preview"


def _refused(err: SimError) -> ProviderAPIError:
    status, headers, body = GE.GEMINI.render(err, b"")
    adapter = adapter_on(Replay([Served(status, body, headers["content-type"])]), MODEL)
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
        (SimError(400, "INVALID_ARGUMENT", GE.BAD_KEY, details=[GE.error_info("API_KEY_INVALID")]), "API_KEY_INVALID"),
        (SimError(403, "PERMISSION_DENIED", GE.NO_KEY), None),
        (
            SimError(401, "UNAUTHENTICATED", GE.BAD_TOKEN, details=[GE.error_info("ACCESS_TOKEN_TYPE_UNSUPPORTED")]),
            "ACCESS_TOKEN_TYPE_UNSUPPORTED",
        ),
    ],
    ids=["400-api-key-invalid", "403-permission-denied", "401-unauthenticated"],
)
def test_auth_refusals_keep_status_name_and_reason_and_are_not_retried(err: SimError, reason: str | None) -> None:
    exc = _refused(err)
    assert type(exc) is ProviderAPIError
    assert (exc.status, exc.error_type, exc.code) == (err.status, err.type, reason)
    assert not exc.retryable and exc.retry_after is None
    assert err.message.split(".")[0] in str(exc)


def test_a_field_violation_wins_over_an_error_info_reason() -> None:
    """INVALID_ARGUMENT naming a field: the field is the code (what to fix), whatever else is attached."""
    details = [
        GE.error_info("SOME_REASON"),
        {"@type": GE.RPC + "BadRequest", "fieldViolations": [{"field": "contents[1].parts[0]", "description": "x"}]},
    ]
    exc = _refused(SimError(400, "INVALID_ARGUMENT", "Invalid value.", details=details))
    assert exc.code == "contents[1].parts[0]"
