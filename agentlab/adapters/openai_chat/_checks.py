"""Each dialect's ``ProviderSpec.check_options``: the request's knobs, checked when a run is built.

The same checks ``build_request`` runs, so a knob a dialect has no field for fails before anything is
sent or logged. Imports no SDK.
"""

from __future__ import annotations

from collections.abc import Callable

from agentlab.adapters.openai_chat._deepseek import DEEPSEEK
from agentlab.adapters.openai_chat._dialect import Dialect
from agentlab.adapters.openai_chat._local import CHAT, LLAMACPP, OLLAMA, VLLM
from agentlab.adapters.openai_chat._moonshot import MOONSHOT
from agentlab.adapters.openai_chat._openrouter import OPENROUTER
from agentlab.adapters.openai_chat._request import check_knobs
from agentlab.adapters.openai_chat._xai import XAI_CHAT
from agentlab.adapters.openai_chat._zai import ZAI
from agentlab.neutral.request import ModelRequest

__all__ = [
    "check_chat",
    "check_deepseek",
    "check_llamacpp",
    "check_moonshot",
    "check_ollama",
    "check_openrouter",
    "check_vllm",
    "check_xai_chat",
    "check_zai",
]


def _checker(dialect: Dialect) -> Callable[[ModelRequest, object | None], None]:
    """The ``check_options`` of one dialect's spec: the request's knobs against the dialect."""

    def check(request: ModelRequest, adapter: object | None = None) -> None:
        check_knobs(dialect, request)

    check.__doc__ = f"{dialect.label}'s knobs (``ProviderSpec.check_options``)."
    return check


check_deepseek = _checker(DEEPSEEK)
check_openrouter = _checker(OPENROUTER)
check_vllm = _checker(VLLM)
check_llamacpp = _checker(LLAMACPP)
check_ollama = _checker(OLLAMA)
check_chat = _checker(CHAT)
check_moonshot = _checker(MOONSHOT)
check_zai = _checker(ZAI)
check_xai_chat = _checker(XAI_CHAT)
