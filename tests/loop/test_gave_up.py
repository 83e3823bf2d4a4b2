"""A call that exhausts its retries ends with one line that says how many and what the last answer was."""

from __future__ import annotations

import pytest

import agentlab as al
from agentlab.adapters.base import create_adapter
from agentlab.errors import OverloadedError, ProviderError, RateLimitError

MODEL = "anthropic:sim-thinker+fault=529x10"


def test_the_runs_own_retries_are_counted() -> None:
    """SDK retries off: the run retries the 529 itself, twice, then gives up."""
    adapter = create_adapter(MODEL, max_retries=0)
    with pytest.raises(OverloadedError) as info:
        al.run(MODEL, "hi", adapter=adapter, retries=2, retry_delay=0)
    msg = str(info.value)
    assert msg.startswith("[anthropic 529 overloaded_error] gave up after 2 retries; last answer: "), msg
    assert "\n" not in msg and info.value.retries == 2 and info.value.status == 529


@pytest.mark.slow
def test_the_sdks_retries_are_counted() -> None:
    """SDK retries on (the default): it retried the 529 itself; the run says how often."""
    adapter = create_adapter(MODEL, max_retries=1)
    with pytest.raises(OverloadedError) as info:
        r = al.Run(MODEL, "hi", adapter=adapter, retry_delay=0)
        al.run_sync(r.arun())
    assert str(info.value).startswith("[anthropic 529 overloaded_error] gave up after 1 retry; last answer: ")
    assert r.result is not None and r.result.error is not None
    assert "gave up after 1 retry" in r.result.error  # the recorded error text says it too


def test_a_first_failure_keeps_its_message() -> None:
    """Not retried (retries=0, no SDK retries): no count to give, the provider's message as it was."""
    adapter = create_adapter(MODEL, max_retries=0)
    with pytest.raises(OverloadedError) as info:
        al.run(MODEL, "hi", adapter=adapter, retries=0)
    assert str(info.value).startswith("[anthropic 529 overloaded_error] ") and info.value.retries is None


def test_gave_up_formats() -> None:
    e = RateLimitError("slow down", provider="openai", status=429, error_type="rate_limit_exceeded")
    want = "[openai 429 rate_limit_exceeded] gave up after 1 retry; last answer: slow down"
    assert str(e.gave_up(1)) == want
    bare = ProviderError("connection reset", provider="gemini", request_id="r1")
    want = "[gemini] gave up after 3 retries; last answer: connection reset (request id r1)"
    assert str(bare.gave_up(3)) == want
