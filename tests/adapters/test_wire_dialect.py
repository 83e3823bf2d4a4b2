"""The dialects' hosts: one value per host, shared by the wire formats it serves."""

from __future__ import annotations

from agentlab.adapters.openai_chat import _deepseek, _local, _xai
from agentlab.adapters.openai_responses import _azure, _dialect
from agentlab.adapters.openai_responses import _deepseek as r_deepseek
from agentlab.adapters.openai_responses import _local as r_local
from agentlab.adapters.openai_responses import _xai as r_xai
from agentlab.adapters.registry import get_provider
from agentlab.adapters.wire_dialect import Host


def test_a_host_serving_both_wire_formats_is_one_value() -> None:
    pairs = [
        (_deepseek.DEEPSEEK, r_deepseek.DEEPSEEK_RESPONSES),
        (_xai.XAI_CHAT, r_xai.XAI),
        (_local.VLLM, r_local.VLLM_RESPONSES),
        (_local.OLLAMA, r_local.OLLAMA_RESPONSES),
    ]
    for chat, responses in pairs:
        assert chat.host is responses.host, (chat.name, responses.name)
        assert get_provider(chat.name).api_key_env == get_provider(responses.name).api_key_env


def test_a_key_is_required_exactly_where_a_key_variable_is_named() -> None:
    assert Host("https://api.example.com/v1", "EXAMPLE_API_KEY").key_required
    assert not Host("http://localhost:8000/v1").key_required
    assert not _local.CHAT.host.key_required and _local.CHAT.host.base_url is None
    assert _dialect.OPENAI.host == Host(None, "OPENAI_API_KEY")
    assert _azure.AZURE.host == Host(None, "AZURE_OPENAI_API_KEY")
