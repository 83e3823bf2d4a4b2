"""agentlab's Anthropic adapter stays stateless: it never asks the server to hold the conversation.

Message threads (beta ``message-threads-2026-08-12``) keep a conversation (system, tools, messages,
thinking) on Anthropic's servers for up to an hour and are not ZDR-eligible. agentlab sends the full
history on every call and keeps the loop's thinking blocks in its own continuation, so
``continuation_policy`` ablations and the dropped-item accounting mean what they say; a thread
would silently hand the server's copy of the thinking back. So ``thread`` is a field agentlab owns,
like ``messages``: the escape hatch cannot set it.
"""

from __future__ import annotations

import pytest

from agentlab.adapters.anthropic_messages._request import build_request
from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest


@pytest.mark.parametrize(
    "thread", [{"type": "create"}, {"type": "continue", "previous_message_id": "msg_01x"}]
)
def test_provider_options_cannot_open_a_message_thread(thread: dict[str, str]) -> None:
    request = ModelRequest(
        model="sim-thinker", items=(UserItem(text="hi"),), provider_options={"anthropic_thread": thread}
    )
    with pytest.raises(InvalidSettingsError, match="thread"):
        build_request(request, base_url=None)
