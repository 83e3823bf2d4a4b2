"""agentlab: tool loops on reasoning models from several providers, side by side, in Jupyter.

The public API is re-exported here *lazily*: ``import agentlab`` loads no SDK, pandas, matplotlib or
ipywidgets (and not even pydantic models) until a name is first used. ``_EXPORTS`` maps each public
name to the module that holds it; ``__all__`` is that list, sorted, and a test keeps them in step.
"""

from __future__ import annotations

from typing import Any

from agentlab._lazy import lazy_exports
from agentlab.frontend import install_when as _install_when

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # items
    "AssistantTextItem": "agentlab.neutral.items",
    "PortableItem": "agentlab.neutral.items",
    "ProviderReasoningItem": "agentlab.neutral.items",
    "SummaryItem": "agentlab.neutral.items",
    "SystemItem": "agentlab.neutral.items",
    "ToolCallItem": "agentlab.neutral.items",
    "ToolResultItem": "agentlab.neutral.items",
    "UserItem": "agentlab.neutral.items",
    # requests
    "CacheHints": "agentlab.neutral.request",
    "ModelRequest": "agentlab.neutral.request",
    "ReasoningSettings": "agentlab.neutral.request",
    "ToolSpec": "agentlab.neutral.request",
    # events
    "DiagnosticEvent": "agentlab.neutral.events",
    "ErrorEvent": "agentlab.neutral.events",
    "ModelCallCompletedEvent": "agentlab.neutral.events",
    "ModelCallStartedEvent": "agentlab.neutral.events",
    "ModelResponse": "agentlab.neutral.events",
    "ReasoningDeltaEvent": "agentlab.neutral.events",
    "ResponseCompletedEvent": "agentlab.neutral.events",
    "RunCompletedEvent": "agentlab.neutral.events",
    "RunStartedEvent": "agentlab.neutral.events",
    "TextDeltaEvent": "agentlab.neutral.events",
    "ToolCallDeltaEvent": "agentlab.neutral.events",
    "ToolCallEvent": "agentlab.neutral.events",
    "ToolResultEvent": "agentlab.neutral.events",
    # usage
    "CallUsage": "agentlab.neutral.usage",
    # adapters
    "Adapter": "agentlab.adapters.base",
    "AnthropicMessagesAdapter": "agentlab.adapters.anthropic_messages",
    "ModelRef": "agentlab.adapters.base",
    "OpenAIResponsesAdapter": "agentlab.adapters.openai_responses",
    "create_adapter": "agentlab.adapters.base",
    "parse_model": "agentlab.adapters.base",
    # providers
    "ProviderSpec": "agentlab.adapters.registry",
    "get_provider": "agentlab.adapters.registry",
    "register_provider": "agentlab.adapters.registry",
    # runs, tools, continuity
    "Run": "agentlab.loop.runner",
    "Session": "agentlab.loop.session",
    "arun": "agentlab.loop.runner",
    "run": "agentlab.loop.runner",
    "run_sync": "agentlab.loop.sync",
    "RunResult": "agentlab.loop.result",
    "RunUsage": "agentlab.loop.result",
    "CallRecord": "agentlab.loop.result",
    "Tool": "agentlab.loop.tools",
    "tool": "agentlab.loop.tools",
    "Checkpoint": "agentlab.loop.checkpoint",
    "Continuation": "agentlab.loop.continuation",
    "live_continuations": "agentlab.loop.continuation",
    "release_all": "agentlab.loop.continuation",
    # durable records, privacy
    "EventLog": "agentlab.records.eventlog",
    "MemoryStore": "agentlab.records.memory",
    # usage and cost
    "Cost": "agentlab.costs.pricing",
    "Price": "agentlab.costs.pricing",
    "UnpricedModelWarning": "agentlab.costs.pricing",
    "get_price": "agentlab.costs.pricing",
    "price_call": "agentlab.costs.pricing",
    "prices_override": "agentlab.costs.pricing",
    "set_price": "agentlab.costs.pricing",
    "usage_by": "agentlab.costs.frames",
    "usage_frame": "agentlab.costs.frames",
    "usage_from_anthropic": "agentlab.adapters.anthropic_messages._usage",
    "usage_from_openai": "agentlab.adapters.openai_responses._usage",
    # comparing models, notebooks
    "Comparison": "agentlab.loop.comparison",
    "acompare": "agentlab.loop.comparison",
    "compare": "agentlab.loop.comparison",
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
    from agentlab.notebook.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from agentlab.notebook.extension import unload_ipython_extension as _unload

    _unload(ipython)
