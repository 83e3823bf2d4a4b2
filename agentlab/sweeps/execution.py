"""How a sweep carries out its runs, as one value.

The back end (live calls or batch APIs), the executor (this event loop or Ray) and their options.
Why one value: the four keywords depend on each other (batch options need the batch back end, Ray
options need the Ray executor, Ray cannot drive batch rounds), so they are checked together, once,
when the value is built, with a one-line ``ConfigError`` naming the bad field. ``asweep`` takes it
as ``execution=`` or builds it from its ``backend=``, ``batch=``, ``executor=``, ``ray_options=``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentlab.adapters.base import ModelRef
from agentlab.errors import ConfigError, MissingExtraError
from agentlab.sweeps.rows import RunConfig
from agentlab.sweeps.tasks import Task

if TYPE_CHECKING:
    from agentlab.sweeps.batch.driver import BatchOptions
    from agentlab.sweeps.ray_executor import RayExecutor

__all__ = ["BACKENDS", "EXECUTORS", "Backend", "ExecutionOptions", "Executor"]

Backend = Literal["asyncio", "batch"]
Executor = Literal["asyncio", "ray"]
BACKENDS: tuple[Backend, ...] = ("asyncio", "batch")
EXECUTORS: tuple[Executor, ...] = ("asyncio", "ray")


@dataclass(frozen=True)
class ExecutionOptions:
    """A sweep's back end and executor with their options, checked together when built.

    ``ExecutionOptions(backend="batch", batch={"poll_s": 5})`` or ``ExecutionOptions(executor="ray",
    ray_options={"num_cpus": 0.25})``; the default is live calls on this process's event loop.
    """

    backend: Backend = "asyncio"
    """``"asyncio"``: live calls; ``"batch"``: every model call through the provider's batch API."""
    batch: BatchOptions | Mapping[str, Any] | None = None
    """The batch back end's options (``runs``, ``poll_s``, ``poll_max_s``); held as ``BatchOptions``."""
    executor: Executor = "asyncio"
    """``"asyncio"``: every run on this event loop; ``"ray"``: each run inside one Ray task."""
    ray_options: Mapping[str, Any] | None = None
    """Passed to each Ray task (e.g. ``{"num_cpus": 0.25}``); ``executor="ray"`` only."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be 'asyncio' or 'batch', got {self.backend!r}")
        if self.executor not in EXECUTORS:
            known = ", ".join(map(repr, EXECUTORS))
            raise ConfigError(f"executor must be one of {known}, got {self.executor!r}")
        if self.backend == "batch":
            from agentlab.sweeps.batch.driver import batch_options

            object.__setattr__(self, "batch", batch_options(self.batch))
        elif self.batch is not None:
            raise ConfigError("batch= options need backend='batch'")
        if self.executor == "asyncio" and self.ray_options is not None:
            raise ConfigError("ray_options applies to executor='ray' only")
        if self.executor == "ray" and self.backend == "batch":
            raise ConfigError(
                "executor='ray' runs live calls, one run per Ray task; backend='batch' needs every run's "
                "calls in one driver process: use one or the other"
            )

    @classmethod
    def resolve(cls, given: object, **keywords: Any) -> ExecutionOptions:
        """``execution=`` when given, else the value the four keywords describe.

        Given both, the keywords must be left at their defaults: two sources for one choice is a
        mistake to refuse, not a precedence to guess.
        """
        if given is None:
            return cls(**keywords)
        if not isinstance(given, ExecutionOptions):
            raise ConfigError(f"execution must be an ExecutionOptions, got {type(given).__name__}")
        defaults = cls.__dataclass_fields__
        changed = sorted(k for k, v in keywords.items() if v != defaults[k].default)
        if changed:
            raise ConfigError(f"execution= already sets {', '.join(changed)}: give one or the other")
        return given

    @property
    def batch_options(self) -> BatchOptions | None:
        """The checked batch options (``None`` for live calls)."""
        from agentlab.sweeps.batch.driver import BatchOptions

        return self.batch if isinstance(self.batch, BatchOptions) else None

    def runs_in_flight(self, concurrency: int | Mapping[str, int]) -> int | Mapping[str, int]:
        """The per-provider runs in flight: the batch back end's ``runs``, else ``concurrency``.

        A batched run is cheap to hold while its batch waits, so the batch back end has its own bound.
        """
        opts = self.batch_options
        return opts.runs if opts is not None else concurrency

    def check_models(self, refs: Sequence[ModelRef]) -> None:
        """Refuse, before anything runs, a model whose provider has no batch API (batch back end)."""
        if self.backend == "batch":
            from agentlab.sweeps.batch.driver import check_batch_providers

            check_batch_providers(refs)

    def ray_executor(
        self, config: RunConfig, refs: Sequence[ModelRef], tasks: Sequence[Task]
    ) -> RayExecutor | None:
        """The Ray executor (``None``: asyncio); Ray's module is imported only when chosen."""
        if self.executor == "asyncio":
            return None
        if importlib.util.find_spec("ray") is None:
            raise MissingExtraError("The Ray executor (executor='ray')", "ray", "ray")
        from agentlab.sweeps.ray_executor import prepare

        return prepare(config, refs, tasks, self.ray_options)
