"""``provider_text``: the one scrubber for providers' error messages (issue 29 item 5).

What a provider says stays readable (its words, parameter paths, field and enum names, model names,
its own object ids); what it quotes back of the request goes (replaced by its length), whichever
quoting it uses. The real texts below come from ``../shared/fixtures/errors`` and public reports.
"""

from __future__ import annotations

import pytest

from agentlab.neutral.error_text import provider_text

KEPT = [
    "messages.25.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
    "messages.1.content.0: Invalid `signature` in `thinking` block",
    "Unsupported parameter: 'temperature' is not supported with this model.",
    "Invalid value: 'xhigh'. Supported values are: 'low', 'medium', and 'high'.",
    'Invalid value for parameter "reasoning.effort": "xhigh".',
    "Missing `reasoning_content` field in the assistant message at message index 1. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    "Function call is missing a thought_signature in functionCall parts. Additional data, function "
    "call `default_api:read_files` , position 2. please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
    "Item with id 'rs_0de7178170ebf7c1016932eaf3248c8193ba477393a000306e' not found.",
    "The model 'Qwen/Qwen3-8B' does not exist; don't retry, it's gone. Try gpt-4o-2024-08-06.",
    "Cached content is too small. total_token_count=100, min_total_token_count=1024",
    "CachedContent not found (or permission denied)",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_providers_own_words_stay(text: str) -> None:
    assert provider_text(text) == text


REMOVED = [
    (
        "Invalid value at 'contents[2].parts[0].thought_signature' (TYPE_BYTES), Base64 decoding failed "
        'for "Es4DCssDAb4+9vufInTOSGG8DZ4dS7MeeW9FffNRfZ9Es5TdJ2hBHCp"',
        "Invalid value at 'contents[2].parts[0].thought_signature' (TYPE_BYTES), Base64 decoding failed "
        'for "<55 chars>"',
    ),
    (
        "The encrypted content gAAAAABpQ9rX3kLmN0pQrStUvWxYz012345abcDEF= could not be verified.",
        "The encrypted content <42 chars> could not be verified.",
    ),
    (
        "1 validation error: {'loc': ('body', 'messages', 1, 'reasoning_content'), 'input': 'I think Rome'}",
        "1 validation error: {'loc': ('body', 'messages', 1, 'reasoning_content'), 'input': '<12 chars>'}",
    ),
    ('bad arguments `{"city": "Paris"}`', "bad arguments `<17 chars>`"),
    ("signature 'cnyANsig0a1b2c3d4e5f-1' is invalid", "signature '<22 chars>' is invalid"),
    ("Incorrect API key provided: sk-proj-abcdefghijklmnop1234.", "Incorrect API key provided: [REDACTED]."),
]


@pytest.mark.parametrize(("text", "want"), REMOVED)
def test_quoted_values_and_base64_runs_go(text: str, want: str) -> None:
    assert provider_text(text) == want


@pytest.mark.parametrize("text", KEPT + [t for t, _ in REMOVED])
def test_it_is_idempotent(text: str) -> None:
    """Adapters scrub, and the shared status ladder scrubs again: a second pass changes nothing."""
    once = provider_text(text)
    assert provider_text(once) == once
