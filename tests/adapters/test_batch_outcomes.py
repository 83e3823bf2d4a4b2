"""Each provider's batch result lines -> the live-equivalent body or the same typed error as live.

The lines are in the providers' documented result formats (OpenAI output/error file lines,
Anthropic results JSONL, Gemini inlined responses). What is held: a success gives the body a live
non-streaming call returns; a request the provider refused is the live error type, not retryable;
a line the batch never answered (expired, cancelled) is retryable, so the run tries it again in the
next round; no error text quotes the request.
"""

from __future__ import annotations

import json

import pytest

from agentlab.adapters.anthropic_messages._batch import _outcome as anthropic_outcome
from agentlab.adapters.google_gemini._batch import _outcome as gemini_outcome
from agentlab.adapters.openai_responses._batch import _outcome as openai_outcome
from agentlab.errors import ProviderAPIError, ProviderError, RateLimitError


def test_openai_lines() -> None:
    ok = openai_outcome(json.dumps({
        "id": "batch_req_1", "custom_id": "run_a_1",
        "response": {"status_code": 200, "request_id": "req_1", "body": {"id": "resp_1", "output": []}},
        "error": None,
    }).encode())
    assert ok.custom_id == "run_a_1" and ok.error is None and json.loads(ok.body or b"")["id"] == "resp_1"
    assert ok.request_id == "req_1"
    refused = openai_outcome(json.dumps({
        "custom_id": "run_a_2",
        "response": {"status_code": 400, "request_id": "req_2",
                     "body": {"error": {"message": "Invalid 'input'.", "type": "invalid_request_error",
                                        "code": "invalid_value"}}},
        "error": None,
    }).encode())
    assert isinstance(refused.error, ProviderAPIError) and refused.error.status == 400
    assert not refused.error.retryable and refused.error.code == "invalid_value"
    limited = openai_outcome(json.dumps({
        "custom_id": "run_a_3", "response": {"status_code": 429, "body": {"error": {"message": "slow"}}},
    }).encode())
    assert isinstance(limited.error, RateLimitError) and limited.error.retryable
    expired = openai_outcome(json.dumps({
        "custom_id": "run_a_4", "response": None,
        "error": {"code": "batch_expired", "message": "This request could not be executed before the "
                  "completion window expired."},
    }).encode())
    assert isinstance(expired.error, ProviderError) and expired.error.retryable
    assert expired.error.code == "batch_expired"


@pytest.mark.parametrize(("kind", "retryable"), [("canceled", True), ("expired", True)])
def test_anthropic_unanswered_lines_are_retryable(kind: str, retryable: bool) -> None:
    out = anthropic_outcome(json.dumps({"custom_id": "run_b_1", "result": {"type": kind}}).encode())
    assert isinstance(out.error, ProviderError) and out.error.retryable is retryable
    assert out.error.code == f"batch_{kind}"


def test_anthropic_lines() -> None:
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m",
           "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}}
    ok = anthropic_outcome(json.dumps({"custom_id": "run_b_2",
                                       "result": {"type": "succeeded", "message": msg}}).encode())
    assert ok.error is None and json.loads(ok.body or b"") == msg
    err = anthropic_outcome(json.dumps({
        "custom_id": "run_b_3",
        "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "invalid_request_error", "message": "messages.1: bad"}}},
    }).encode())
    assert isinstance(err.error, ProviderAPIError) and err.error.status == 400 and not err.error.retryable
    assert err.error.error_type == "invalid_request_error"
    over = anthropic_outcome(json.dumps({
        "custom_id": "run_b_4",
        "result": {"type": "errored", "error": {"type": "error", "error": {"type": "overloaded_error",
                                                                           "message": "Overloaded"}}},
    }).encode())
    assert isinstance(over.error, ProviderError) and over.error.retryable


def test_gemini_lines() -> None:
    ok = gemini_outcome({"response": {"candidates": [], "modelVersion": "m"}, "metadata": {"key": "run_c_1"}})
    assert ok.custom_id == "run_c_1" and ok.error is None
    bad = gemini_outcome({"error": {"code": 3, "message": "Invalid value"}, "metadata": {"key": "run_c_2"}})
    assert isinstance(bad.error, ProviderAPIError) and bad.error.status == 400 and not bad.error.retryable
    gone = gemini_outcome({"error": {"code": 1, "message": "cancelled"}, "metadata": {"key": "run_c_3"}})
    assert isinstance(gone.error, ProviderError) and gone.error.retryable
    busy = gemini_outcome({"error": {"code": 8, "message": "quota"}, "metadata": {"key": "run_c_4"}})
    assert isinstance(busy.error, RateLimitError)
