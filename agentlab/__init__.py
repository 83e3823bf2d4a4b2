"""agentlab: tool loops on reasoning models from several providers, side by side, in Jupyter.

The public API is re-exported here *lazily*: ``import agentlab`` loads no SDK, pandas, matplotlib or
ipywidgets (and not even pydantic models) until a name is first used. ``_EXPORTS`` maps each public
name to the module that holds it; ``__all__`` is that list, sorted, and a test keeps them in step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentlab._lazy import lazy_exports
from agentlab.frontend import install_when as _install_when
from agentlab.loop.observers import observe_when as _observe_when

# For type checkers only: the names of the lazy table below, so that `from agentlab import tool` is
# typed (PEP 562's __getattr__ alone makes every public name Any to mypy and to editors).
# tests/test_import.py keeps the two in step; `X as X` marks an explicit re-export.
if TYPE_CHECKING:
    # isort: off
    from agentlab.adapters.anthropic_messages import (
        AnthropicMessagesAdapter as AnthropicMessagesAdapter,
    )
    from agentlab.adapters.base import (
        Adapter as Adapter,
        ModelRef as ModelRef,
        create_adapter as create_adapter,
        parse_model as parse_model,
    )
    from agentlab.adapters.openai_responses import (
        OpenAIResponsesAdapter as OpenAIResponsesAdapter,
    )
    from agentlab.costs.frames import (
        usage_by as usage_by,
        usage_frame as usage_frame,
    )
    from agentlab.costs.pricing import (
        Cost as Cost,
        Price as Price,
        UnpricedModelWarning as UnpricedModelWarning,
        get_price as get_price,
        price_call as price_call,
        prices_override as prices_override,
        set_price as set_price,
    )
    from agentlab.errors import (
        AgentlabError as AgentlabError,
        BudgetExceededError as BudgetExceededError,
        ConfigError as ConfigError,
        ContinuityError as ContinuityError,
        ContinuityViolation as ContinuityViolation,
        InvalidSettingsError as InvalidSettingsError,
        LimitError as LimitError,
        MissingApiKeyError as MissingApiKeyError,
        ModelBehaviorError as ModelBehaviorError,
        OutputValidationError as OutputValidationError,
        OverloadedError as OverloadedError,
        PrivacyError as PrivacyError,
        ProviderAPIError as ProviderAPIError,
        ProviderConnectionError as ProviderConnectionError,
        ProviderError as ProviderError,
        ProviderServerError as ProviderServerError,
        RateLimitError as RateLimitError,
        StepLimitError as StepLimitError,
        StorageError as StorageError,
        StreamInterruptedError as StreamInterruptedError,
        ToolDefinitionError as ToolDefinitionError,
        ToolExecutionError as ToolExecutionError,
        UnknownModelError as UnknownModelError,
        UserError as UserError,
    )
    from agentlab.loop.checkpoint import (
        Checkpoint as Checkpoint,
    )
    from agentlab.sweeps.compare import (
        Comparison as Comparison,
        acompare as acompare,
        compare as compare,
    )
    from agentlab.loop.continuation import (
        Continuation as Continuation,
        live_continuations as live_continuations,
        release_all as release_all,
    )
    from agentlab.loop.result import (
        CallRecord as CallRecord,
        RunResult as RunResult,
        RunUsage as RunUsage,
    )
    from agentlab.loop.runner import (
        Run as Run,
        arun as arun,
        run as run,
    )
    from agentlab.loop.session import (
        Session as Session,
    )
    from agentlab.loop.settings import (
        RunSettings as RunSettings,
    )
    from agentlab.loop.sync import (
        run_sync as run_sync,
    )
    from agentlab.loop.tools import (
        Tool as Tool,
        tool as tool,
    )
    from agentlab.neutral.events import (
        DiagnosticEvent as DiagnosticEvent,
        ErrorEvent as ErrorEvent,
        ModelCallCompletedEvent as ModelCallCompletedEvent,
        ModelCallStartedEvent as ModelCallStartedEvent,
        ModelResponse as ModelResponse,
        ReasoningDeltaEvent as ReasoningDeltaEvent,
        ResponseCompletedEvent as ResponseCompletedEvent,
        RunCompletedEvent as RunCompletedEvent,
        RunStartedEvent as RunStartedEvent,
        TextDeltaEvent as TextDeltaEvent,
        ToolCallDeltaEvent as ToolCallDeltaEvent,
        ToolCallEvent as ToolCallEvent,
        ToolResultEvent as ToolResultEvent,
    )
    from agentlab.neutral.items import (
        AssistantTextItem as AssistantTextItem,
        PortableItem as PortableItem,
        ProviderReasoningItem as ProviderReasoningItem,
        SummaryItem as SummaryItem,
        SystemItem as SystemItem,
        ToolCallItem as ToolCallItem,
        ToolResultItem as ToolResultItem,
        UserItem as UserItem,
    )
    from agentlab.neutral.request import (
        CacheHints as CacheHints,
        CallOptions as CallOptions,
        ModelRequest as ModelRequest,
        ReasoningSettings as ReasoningSettings,
        ToolSpec as ToolSpec,
    )
    from agentlab.adapters.anthropic_messages._usage import (
        usage_from_anthropic as usage_from_anthropic,
    )
    from agentlab.assembly.reducer import (
        CallSnapshot as CallSnapshot,
        accumulate as accumulate,
    )
    from agentlab.adapters.registry import (
        ProviderSpec as ProviderSpec,
        get_provider as get_provider,
        register_provider as register_provider,
    )
    from agentlab.adapters.openai_responses._usage import (
        usage_from_openai as usage_from_openai,
    )
    from agentlab.neutral.usage import (
        CallUsage as CallUsage,
    )
    from agentlab.records.eventlog import (
        EventLog as EventLog,
    )
    from agentlab.records.memory import (
        MemoryStore as MemoryStore,
    )
    from agentlab.sweeps.analysis import (
        load_results as load_results,
        summarize_sweep as summarize_sweep,
    )
    from agentlab.sweeps.report import SweepReport as SweepReport
    from agentlab.sweeps.runner import asweep as asweep, sweep as sweep
    from agentlab.sweeps.settings import Setting as Setting, continuity_settings as continuity_settings
    from agentlab.sweeps.tasks import (
        Task as Task,
        load_tasks as load_tasks,
    )
    from agentlab.costs.usage_view import (
        UsageFrame as UsageFrame,
    )
    from agentlab.evals.dataset import (
        Dataset as Dataset,
        EvalTask as EvalTask,
        load_dataset as load_dataset,
    )
    from agentlab.evals.judge import (
        judge as judge,
    )
    from agentlab.evals.run import (
        EvalResult as EvalResult,
        aevaluate as aevaluate,
        evaluate as evaluate,
        load_eval as load_eval,
        rescore as rescore,
    )
    from agentlab.evals.results import (
        ResultsFormError as ResultsFormError,
        as_results as as_results,
        plot_costs as plot_costs,
    )
    from agentlab.evals.scorers import (
        Score as Score,
        Scorer as Scorer,
    )
    from agentlab.errors import (
        MissingExtraError as MissingExtraError,
    )
    from agentlab.evals.export import (
        export_frames as export_frames,
        report_html as report_html,
        save_report as save_report,
    )
    from agentlab.evals.run_tables import (
        plot_timeline as plot_timeline,
        timeline_frame as timeline_frame,
        tool_frame as tool_frame,
    )
    from agentlab.tracking.mlflow_log import (
        log_comparison as log_comparison,
        log_sweep as log_sweep,
    )
    from agentlab.evals.stats import (
        holm_adjust as holm_adjust,
        model_means as model_means,
        paired_tests as paired_tests,
        state_finding as state_finding,
        tasks_needed as tasks_needed,
        tasks_needed_observed as tasks_needed_observed,
    )
    # isort: on

from agentlab._version import __version__ as __version__

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
    "CallOptions": "agentlab.neutral.request",
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
    # the live state of one model call, folded from its events
    "CallSnapshot": "agentlab.assembly.reducer",
    "accumulate": "agentlab.assembly.reducer",
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
    "RunSettings": "agentlab.loop.settings",
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
    "Comparison": "agentlab.sweeps.compare",
    "acompare": "agentlab.sweeps.compare",
    "compare": "agentlab.sweeps.compare",
    # timelines, tool tables, export
    "MissingExtraError": "agentlab.errors",
    "UsageFrame": "agentlab.costs.usage_view",
    "export_frames": "agentlab.evals.export",
    "plot_timeline": "agentlab.evals.run_tables",
    "report_html": "agentlab.evals.export",
    "save_report": "agentlab.evals.export",
    "timeline_frame": "agentlab.evals.run_tables",
    "tool_frame": "agentlab.evals.run_tables",
    # sweeps and continuity experiments
    "Setting": "agentlab.sweeps.settings",
    "SweepReport": "agentlab.sweeps.report",
    "Task": "agentlab.sweeps.tasks",
    "asweep": "agentlab.sweeps.runner",
    "continuity_settings": "agentlab.sweeps.settings",
    "load_results": "agentlab.sweeps.analysis",
    "load_tasks": "agentlab.sweeps.tasks",
    "summarize_sweep": "agentlab.sweeps.analysis",
    "sweep": "agentlab.sweeps.runner",
    # evaluations: datasets, scorers, judge
    "Dataset": "agentlab.evals.dataset",
    "EvalResult": "agentlab.evals.run",
    "EvalTask": "agentlab.evals.dataset",
    "Score": "agentlab.evals.scorers",
    "Scorer": "agentlab.evals.scorers",
    "aevaluate": "agentlab.evals.run",
    "evaluate": "agentlab.evals.run",
    "judge": "agentlab.evals.judge",
    "load_dataset": "agentlab.evals.dataset",
    "load_eval": "agentlab.evals.run",
    "rescore": "agentlab.evals.run",
    # one results model: every form (compare, sweep, evaluation, file, frame) for what reads results
    "ResultsFormError": "agentlab.evals.results",
    "as_results": "agentlab.evals.results",
    "plot_costs": "agentlab.evals.results",
    # experiment tracking (the `mlflow` extra; MLflow is imported on the first call only)
    "log_comparison": "agentlab.tracking.mlflow_log",
    "log_sweep": "agentlab.tracking.mlflow_log",
    # paired statistics between models on the same tasks (Miller 2024; scipy loads on the first call)
    "holm_adjust": "agentlab.evals.stats",
    "model_means": "agentlab.evals.stats",
    "paired_tests": "agentlab.evals.stats",
    "state_finding": "agentlab.evals.stats",
    "tasks_needed": "agentlab.evals.stats",
    "tasks_needed_observed": "agentlab.evals.stats",
    # errors
    "AgentlabError": "agentlab.errors",
    "BudgetExceededError": "agentlab.errors",
    "ConfigError": "agentlab.errors",
    "ContinuityError": "agentlab.errors",
    "ContinuityViolation": "agentlab.errors",
    "InvalidSettingsError": "agentlab.errors",
    "LimitError": "agentlab.errors",
    "MissingApiKeyError": "agentlab.errors",
    "ModelBehaviorError": "agentlab.errors",
    "OutputValidationError": "agentlab.errors",
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
# Tracing follows every run once OpenTelemetry is loaded and a real tracer provider is configured
# (agentlab/telemetry); a script that never imports OpenTelemetry pays one dict lookup per run.
_observe_when("opentelemetry.trace", "agentlab.telemetry:observe_if_configured")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentlab``: release provider continuations after every cell."""
    from agentlab.notebook.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from agentlab.notebook.extension import unload_ipython_extension as _unload

    _unload(ipython)


def _warm_in_kernel() -> None:
    """``import agentlab`` in a Jupyter kernel: warm the SDKs while it idles (agentlab/notebook/warmup.py)."""
    import sys

    if "ipykernel" in sys.modules:  # a dict lookup: a script imports nothing more here
        from agentlab.notebook.warmup import start

        start()


_warm_in_kernel()
