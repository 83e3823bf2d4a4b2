"""Gemini ``usageMetadata`` -> ``CallUsage``: the buckets, and when an absent thought count is a zero.

The API writes usage as proto3 JSON, which leaves zero counts out. An absent ``thoughtsTokenCount``
is a *reported* 0 only when ``totalTokenCount`` proves it; otherwise it is derived (``estimated``)
or unknown, never a silent 0. Checked against every recorded response in ../shared/fixtures/gemini.
"""

from __future__ import annotations

import pytest

from agentlab.adapters.google_gemini._usage import usage_from_gemini
from tests.support.cassettes import fixture_files, load_cassette


def test_absent_thoughts_with_a_total_that_proves_zero_is_a_reported_zero() -> None:
    u = usage_from_gemini({"promptTokenCount": 146, "candidatesTokenCount": 12, "totalTokenCount": 158})
    assert (u.reasoning_tokens, u.reasoning_source, u.output_tokens) == (0, "reported", 12)


def test_absent_thoughts_without_a_total_is_unknown_not_zero() -> None:
    u = usage_from_gemini({"promptTokenCount": 3, "candidatesTokenCount": 2})
    assert (u.reasoning_tokens, u.reasoning_source) == (None, "unknown")
    assert u.output_tokens is None  # reasoning is part of output: unknown makes the sum unknown
    assert u.input_tokens == 3


def test_absent_thoughts_with_a_larger_total_is_derived_and_marked_estimated() -> None:
    u = usage_from_gemini({"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 40})
    assert (u.reasoning_tokens, u.reasoning_source, u.output_tokens) == (25, "estimated", 30)


def test_tool_use_prompt_tokens_are_input_and_count_in_the_total_check() -> None:
    u = usage_from_gemini(
        {"promptTokenCount": 10, "toolUsePromptTokenCount": 7, "candidatesTokenCount": 5,
         "totalTokenCount": 22}
    )  # fmt: skip
    assert u.input_tokens == 17
    assert (u.reasoning_tokens, u.reasoning_source) == (0, "reported")
    assert u.total_tokens == 22


def test_modality_breakdowns_are_tolerated_and_add_nothing() -> None:
    details = [{"modality": "TEXT", "tokenCount": 60}, {"modality": "IMAGE", "tokenCount": 40}]
    u = usage_from_gemini(
        {"promptTokenCount": 100, "cachedContentTokenCount": 60, "candidatesTokenCount": 20,
         "thoughtsTokenCount": 3, "totalTokenCount": 123, "promptTokensDetails": details,
         "cacheTokensDetails": details[:1],
         "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": 20}],
         "toolUsePromptTokensDetails": []}
    )  # fmt: skip
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (100, 60, 23, 3)


def _usages() -> list[tuple[str, dict[str, int]]]:
    out = []
    for path in fixture_files("gemini"):
        for i, ex in enumerate(load_cassette(path)):
            chunks = ex.sse_events if ex.response_kind == "sse" else [ex.response_payload]
            metas = [c["usageMetadata"] for c in chunks if isinstance(c, dict) and "usageMetadata" in c]
            if metas:
                out.append((f"{path.stem}[{i}]", metas[-1]))
    return out


@pytest.mark.fixtures
def test_recorded_usage_always_adds_up_and_never_reports_an_unproven_zero() -> None:
    usages = _usages()
    assert usages
    absent = 0
    for where, meta in usages:
        u = usage_from_gemini(meta)
        assert u.total_tokens == meta["totalTokenCount"], where
        if "thoughtsTokenCount" not in meta:
            absent += 1
            # Recorded: a 2.5 call and a Gemini 3 call that answered a tool result without thinking.
            assert (u.reasoning_tokens, u.reasoning_source) == (0, "reported"), where
        else:
            assert u.reasoning_tokens == meta["thoughtsTokenCount"], where
    assert absent >= 2  # the recordings do hold calls without the field
