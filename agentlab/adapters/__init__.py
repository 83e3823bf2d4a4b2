"""Provider adapters: map a ``ModelRequest`` onto an official SDK and its stream back onto events.

Adapters load lazily (their SDKs are heavy); ``create_adapter`` routes a ``provider:model`` string
through the provider registry (``agentlab.adapters.registry``). This facade is lazy too: the
registry and the provider specs import it first, and must not pull in the adapter contract's models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import by_module, lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.base import Adapter as Adapter
    from agentlab.adapters.base import ModelRef as ModelRef
    from agentlab.adapters.base import create_adapter as create_adapter
    from agentlab.adapters.base import parse_model as parse_model
    from agentlab.adapters.registry import ProviderSpec as ProviderSpec
    from agentlab.adapters.registry import get_provider as get_provider
    from agentlab.adapters.registry import register_provider as register_provider
    from agentlab.adapters.sdk_adapter import SDKAdapter as SDKAdapter

_EXPORTS: dict[str, str] = by_module(
    {
        "agentlab.adapters.base": "Adapter ModelRef create_adapter parse_model",
        "agentlab.adapters.registry": "ProviderSpec get_provider register_provider",
        "agentlab.adapters.sdk_adapter": "SDKAdapter",
    }
)

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
