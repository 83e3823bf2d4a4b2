"""What SDK loggers pass as ``%`` arguments is made log-safe: bodies, header mappings, AWS secrets.

botocore logs at DEBUG a whole ``AWSPreparedRequest`` (headers with the session token, the body with
reasoning blocks), the raw response body as ``bytes``, its ``HeadersDict`` (a Mapping that is not a
dict, which was iterated as a tuple of its keys), the Converse params dict, and SigV4's canonical
request with the ``x-amz-security-token`` line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from agentlab.neutral.redaction import redact_secrets
from agentlab.records.logs import RedactionFilter


class _Headers(Mapping[str, str]):
    def __init__(self, d: dict[str, str]) -> None:
        self._d = d

    def __getitem__(self, k: str) -> str:
        return self._d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)


class AWSPreparedRequest:
    def __repr__(self) -> str:
        headers = "{'X-Amz-Security-Token': b'tok'}"
        return f"<AWSPreparedRequest headers={headers}, body=b'{{\"thinking\": \"secret plan\"}}'>"


def _formatted(msg: str, *args: Any) -> str:
    record = logging.LogRecord("botocore.endpoint", logging.DEBUG, __file__, 1, msg, args, None)
    RedactionFilter().filter(record)
    return record.getMessage()


def test_a_non_dict_mapping_argument_is_formatted_as_a_mapping() -> None:
    out = _formatted(
        "Response headers: %r", _Headers({"x-amzn-requestid": "abc", "x-amz-security-token": "t0ken"})
    )
    assert "x-amzn-requestid" in out and "abc" in out and "t0ken" not in out


def test_bytes_bodies_and_whole_requests_are_named_not_shown() -> None:
    body = b'{"reasoningText": "my plan"}'
    assert _formatted("Response body:\n%r", body) == f"Response body:\n'<{len(body)} bytes redacted>'"
    assert "secret plan" not in _formatted("Sending http request: %s", AWSPreparedRequest())


def test_converse_params_lose_their_reasoning_blocks() -> None:
    params = {
        "body": {"messages": [{"content": [{"reasoningContent": {"reasoningText": {"text": "my plan"}}}]}]}
    }
    assert "my plan" not in _formatted("Making request with params: %s", params)


def test_aws_secrets_in_text_are_redacted() -> None:
    text = (
        "x-amz-security-token:FwoGZXIvYXdzEJr//////////wEaDsessiontoken0123456789\n"
        "Authorization: Bearer ABSKQmVkcm9ja0FQSUtleS1zaW0+/secretpart0123456789==\n"
        "Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/bedrock/aws4_request"
    )
    out = redact_secrets(text)
    for secret in ("sessiontoken", "secretpart", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in out
