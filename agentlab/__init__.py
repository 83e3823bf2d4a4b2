"""agentlab: tool loops on reasoning models from several providers, side by side, in Jupyter.

The public API is re-exported here *lazily*: ``import agentlab`` loads no SDK, pandas, matplotlib or
ipywidgets (and not even pydantic models) until a name is first used. ``_EXPORTS`` maps each public
name to the module that holds it; ``__all__`` is that list, sorted, and a test keeps them in step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentlab._lazy import by_module, lazy_exports
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

_MODULES = {
    # items
    "agentlab.neutral.items": (
        "AssistantTextItem PortableItem ProviderReasoningItem SummaryItem SystemItem ToolCallItem "
        "ToolResultItem UserItem"
    ),
    # requests
    "agentlab.neutral.request": "CacheHints CallOptions ModelRequest ReasoningSettings ToolSpec",
    # events
    "agentlab.neutral.events": (
        "DiagnosticEvent ErrorEvent ModelCallCompletedEvent ModelCallStartedEvent ModelResponse "
        "ReasoningDeltaEvent ResponseCompletedEvent RunCompletedEvent RunStartedEvent TextDeltaEvent "
        "ToolCallDeltaEvent ToolCallEvent ToolResultEvent"
    ),
    # the live state of one model call, folded from its events
    "agentlab.assembly.reducer": "CallSnapshot accumulate",
    # usage
    "agentlab.neutral.usage": "CallUsage",
    # adapters
    "agentlab.adapters.base": "Adapter ModelRef create_adapter parse_model",
    "agentlab.adapters.anthropic_messages": "AnthropicMessagesAdapter",
    "agentlab.adapters.openai_responses": "OpenAIResponsesAdapter",
    # providers
    "agentlab.adapters.registry": "ProviderSpec get_provider register_provider",
    # runs, tools, continuity
    "agentlab.loop.runner": "Run arun run",
    "agentlab.loop.session": "Session",
    "agentlab.loop.settings": "RunSettings",
    "agentlab.loop.sync": "run_sync",
    "agentlab.loop.result": "RunResult RunUsage CallRecord",
    "agentlab.loop.tools": "Tool tool",
    "agentlab.loop.checkpoint": "Checkpoint",
    "agentlab.loop.continuation": "Continuation live_continuations release_all",
    # durable records, privacy
    "agentlab.records.eventlog": "EventLog",
    "agentlab.records.memory": "MemoryStore",
    # usage and cost
    "agentlab.costs.pricing": (
        "Cost Price UnpricedModelWarning get_price price_call prices_override set_price"
    ),
    "agentlab.costs.frames": "usage_by usage_frame",
    "agentlab.adapters.anthropic_messages._usage": "usage_from_anthropic",
    "agentlab.adapters.openai_responses._usage": "usage_from_openai",
    # comparing models, notebooks
    "agentlab.sweeps.compare": "Comparison acompare compare",
    # timelines, tool tables, export
    "agentlab.costs.usage_view": "UsageFrame",
    "agentlab.evals.export": "export_frames report_html save_report",
    "agentlab.evals.run_tables": "plot_timeline timeline_frame tool_frame",
    # sweeps and continuity experiments
    "agentlab.sweeps.settings": "Setting continuity_settings",
    "agentlab.sweeps.report": "SweepReport",
    "agentlab.sweeps.tasks": "Task load_tasks",
    "agentlab.sweeps.runner": "asweep sweep",
    "agentlab.sweeps.analysis": "load_results summarize_sweep",
    # evaluations: datasets, scorers, judge
    "agentlab.evals.dataset": "Dataset EvalTask load_dataset",
    "agentlab.evals.run": "EvalResult aevaluate evaluate load_eval rescore",
    "agentlab.evals.scorers": "Score Scorer",
    "agentlab.evals.judge": "judge",
    # one results model: every form (compare, sweep, evaluation, file, frame) for what reads results
    "agentlab.evals.results": "ResultsFormError as_results plot_costs",
    # experiment tracking (the `mlflow` extra; MLflow is imported on the first call only)
    "agentlab.tracking.mlflow_log": "log_comparison log_sweep",
    # paired statistics between models on the same tasks (Miller 2024; scipy loads on the first call)
    "agentlab.evals.stats": (
        "holm_adjust model_means paired_tests state_finding tasks_needed tasks_needed_observed"
    ),
    # errors
    "agentlab.errors": (
        "AgentlabError BudgetExceededError ConfigError ContinuityError ContinuityViolation "
        "InvalidSettingsError LimitError MissingApiKeyError MissingExtraError ModelBehaviorError "
        "OutputValidationError OverloadedError PrivacyError ProviderAPIError ProviderConnectionError "
        "ProviderError ProviderServerError RateLimitError StepLimitError StorageError "
        "StreamInterruptedError ToolDefinitionError ToolExecutionError UnknownModelError UserError"
    ),
}
"""Module -> its public names, each module named once (``by_module`` turns it into ``_EXPORTS``)."""
_EXPORTS = by_module(_MODULES)

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
