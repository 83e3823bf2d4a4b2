"""agentlab: tool loops on reasoning models from several providers, side by side, in Jupyter.

The public API is re-exported here *lazily*: ``import agentlab`` loads no SDK, pandas, matplotlib or
ipywidgets (and not even pydantic models) until a name is first used. ``_EXPORTS`` maps each public
name to the module that holds it; ``__all__`` is that list, sorted, and a test keeps them in step.
"""

from __future__ import annotations

from typing import Any

from ._lazy import lazy_exports
from .frontend import install_when as _install_when

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # items
    "AssistantTextItem": "agentlab.items",
    "PortableItem": "agentlab.items",
    "ProviderReasoningItem": "agentlab.items",
    "SummaryItem": "agentlab.items",
    "SystemItem": "agentlab.items",
    "ToolCallItem": "agentlab.items",
    "ToolResultItem": "agentlab.items",
    "UserItem": "agentlab.items",
    # requests
    "CacheHints": "agentlab.request",
    "ModelRequest": "agentlab.request",
    "ReasoningSettings": "agentlab.request",
    "ToolSpec": "agentlab.request",
    # events
    "DiagnosticEvent": "agentlab.events",
    "ErrorEvent": "agentlab.events",
    "ModelCallCompletedEvent": "agentlab.events",
    "ModelCallStartedEvent": "agentlab.events",
    "ModelResponse": "agentlab.events",
    "ReasoningDeltaEvent": "agentlab.events",
    "ResponseCompletedEvent": "agentlab.events",
    "RunCompletedEvent": "agentlab.events",
    "RunStartedEvent": "agentlab.events",
    "TextDeltaEvent": "agentlab.events",
    "ToolCallDeltaEvent": "agentlab.events",
    "ToolCallEvent": "agentlab.events",
    "ToolResultEvent": "agentlab.events",
    # usage
    "CallUsage": "agentlab.usage",
    # adapters
    "Adapter": "agentlab.adapters.base",
    "AnthropicMessagesAdapter": "agentlab.adapters.anthropic_messages",
    "ModelRef": "agentlab.adapters.base",
    "OpenAIResponsesAdapter": "agentlab.adapters.openai_responses",
    "create_adapter": "agentlab.adapters.base",
    "parse_model": "agentlab.adapters.base",
    # runs, tools, continuity
    "Run": "agentlab.runner",
    "Session": "agentlab.runner",
    "arun": "agentlab.runner",
    "run": "agentlab.runner",
    "run_sync": "agentlab.runner",
    "RunResult": "agentlab.result",
    "RunUsage": "agentlab.result",
    "CallRecord": "agentlab.result",
    "Tool": "agentlab.tools",
    "tool": "agentlab.tools",
    "Checkpoint": "agentlab.checkpoint",
    "Continuation": "agentlab.continuation",
    "live_continuations": "agentlab.continuation",
    "release_all": "agentlab.continuation",
    # durable records, privacy
    "EventLog": "agentlab.eventlog",
    "MemoryStore": "agentlab.memory",
    # usage and cost
    "Cost": "agentlab.pricing",
    "Price": "agentlab.pricing",
    "UnpricedModelWarning": "agentlab.pricing",
    "get_price": "agentlab.pricing",
    "price_call": "agentlab.pricing",
    "prices_override": "agentlab.pricing",
    "set_price": "agentlab.pricing",
    "usage_by": "agentlab.frames",
    "usage_frame": "agentlab.frames",
    "usage_from_anthropic": "agentlab.usage",
    "usage_from_openai": "agentlab.usage",
    # comparing models, notebooks
    "Comparison": "agentlab.comparison",
    "acompare": "agentlab.comparison",
    "compare": "agentlab.comparison",
    # sweeps and continuity experiments
    "Setting": "agentlab.sweeps.runner",
    "SweepReport": "agentlab.sweeps.runner",
    "Task": "agentlab.sweeps.tasks",
    "asweep": "agentlab.sweeps.runner",
    "continuity_settings": "agentlab.sweeps.runner",
    "load_results": "agentlab.sweeps.analysis",
    "load_tasks": "agentlab.sweeps.tasks",
    "summarize_sweep": "agentlab.sweeps.analysis",
    "sweep": "agentlab.sweeps.runner",
    # errors
    "AgentlabError": "agentlab.errors",
    "BudgetExceededError": "agentlab.errors",
    "ConfigError": "agentlab.errors",
    "ContinuityError": "agentlab.errors",
    "InvalidSettingsError": "agentlab.errors",
    "LimitError": "agentlab.errors",
    "MissingApiKeyError": "agentlab.errors",
    "ModelBehaviorError": "agentlab.errors",
    "OverloadedError": "agentlab.errors",
    "PrivacyError": "agentlab.errors",
    "ProviderAPIError": "agentlab.errors",
    "ProviderConnectionError": "agentlab.errors",
    "ProviderError": "agentlab.errors",
    "ProviderServerError": "agentlab.errors",
    "RateLimitError": "agentlab.errors",
    "StepLimitError": "agentlab.errors",
    "StorageError": "agentlab.errors",
    "StreamInterruptedError": "agentlab.errors",
    "ToolDefinitionError": "agentlab.errors",
    "ToolExecutionError": "agentlab.errors",
    "UnknownModelError": "agentlab.errors",
    "UserError": "agentlab.errors",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("agentlab", _EXPORTS, globals())

# The one line that wires the Jupyter edge to core: once IPython is loaded, the first run installs
# agentlab.notebook.hookup (live views, cell-scope extension); core itself never imports it.
_install_when("IPython", "agentlab.notebook.hookup:JupyterFrontend")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentlab``: release provider continuations after every cell."""
    from .notebook.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.extension import unload_ipython_extension as _unload

    _unload(ipython)
