"""Provider adapters: map a ``ModelRequest`` onto an official SDK and its stream back onto events.

Adapters load lazily (their SDKs are heavy); ``create_adapter`` routes a ``provider:model`` string.
"""

from agentlab.adapters.base import Adapter, ModelRef, create_adapter, parse_model

__all__ = ["Adapter", "ModelRef", "create_adapter", "parse_model"]
