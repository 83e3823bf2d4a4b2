"""DeepSeek on the Responses format (``deepseek_responses:<model>``, ``https://api.deepseek.com/responses``).

Named ``deepseek_responses`` because ``deepseek:`` is DeepSeek's Chat Completions dialect
(``reasoning_content``), which stays the default for DeepSeek models.

Reasoning arrives as a reasoning item whose ``content`` is ``[{type: reasoning_text, text}]``
(``summary`` empty); streams use ``response.reasoning_text.delta``. ``encrypted_content`` is absent
unless asked for, and then it is a reference into DeepSeek's storage (``"<response id>-0"``), not
ciphertext, so agentlab never asks for it (``encrypted="reference"``): the item goes back verbatim,
its ``reasoning_text`` content being the state (the recorded accepted request carries the same id,
content and summary, plus ``encrypted_content: null``), and the ``function_call`` after it without
its item id, as recorded. Ids are bare UUIDs; messages carry ``phase``,
kept and sent back. Usage is OpenAI's shape (``cached_tokens``, ``reasoning_tokens``).
"""

from __future__ import annotations

from functools import partial

from agentlab.adapters.openai_responses._dialect import ResponsesDialect
from agentlab.adapters.openai_responses._request import check_options as _check
from agentlab.adapters.wire_dialect import DEEPSEEK_HOST

__all__ = ["DEEPSEEK_RESPONSES", "check_options"]

DEEPSEEK_RESPONSES = ResponsesDialect(
    name="deepseek_responses",
    label="DeepSeek (Responses)",
    host=DEEPSEEK_HOST,
    encrypted="reference",
    replayed_call_ids=False,
)


check_options = partial(_check, dialect=DEEPSEEK_RESPONSES)
"""The shared Responses checks (``ProviderSpec.check_options``), under this dialect's name."""
