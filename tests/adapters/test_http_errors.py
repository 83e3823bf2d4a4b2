"""The shared status ladder (``agentlab.adapters.http_errors``) and what both translators feed it."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from agentlab.adapters.anthropic_messages._errors import translate as anthropic_translate
from agentlab.adapters.http_errors import retry_after_seconds, status_error
from agentlab.adapters.openai_responses._errors import translate as openai_translate
from agentlab.errors import OverloadedError, ProviderAPIError, ProviderServerError, RateLimitError


@pytest.mark.parametrize(
    ("status", "etype", "expected"),
    [
        (400, None, ProviderAPIError),
        (404, "not_found_error", ProviderAPIError),
        (429, None, RateLimitError),
        (500, None, ProviderServerError),
        (503, None, OverloadedError),
        (529, None, OverloadedError),
        (400, "overloaded_error", OverloadedError),
    ],
)
def test_ladder(status: int, etype: str | None, expected: type[ProviderAPIError]) -> None:
    err = status_error(
        status, "m", provider="p", error_type=etype, code="c", request_id="r", headers={"retry-after": "3"},
        overloaded_types={"overloaded_error"},
    )  # fmt: skip
    assert type(err) is expected and err.status == status and err.code == "c" and err.request_id == "r"
    assert err.retry_after == 3.0 and err.retryable == (status >= 429 or etype == "overloaded_error")


def test_retry_after_prefers_milliseconds_and_ignores_dates() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds(None) is None


def test_a_response_that_breaks_the_schema_is_a_provider_api_error_on_both() -> None:
    """Before: Anthropic said ProviderAPIError, OpenAI a bare ProviderError."""
    resp = httpx2.Response(200, request=httpx2.Request("POST", "https://api.example/v1"))
    o = openai_translate(openai.APIResponseValidationError(response=resp, body=None))
    a = anthropic_translate(anthropic.APIResponseValidationError(response=resp, body=None))
    assert type(o) is ProviderAPIError and type(a) is ProviderAPIError
    assert o.status == a.status == 200
