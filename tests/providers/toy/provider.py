"""The toy provider's registry entry. Imports nothing heavy: the registry may read it at routing."""

from __future__ import annotations

from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

SPEC = ProviderSpec(
    name="toy",
    api="script",
    label="Toy",
    adapter="tests.providers.toy._adapter:ToyAdapter",
    usage="tests.providers.toy._usage:usage_from_toy",
    # no SDK, no SDK loggers, no API key, no simulator: the defaults say so
    drop_with_reasoning=True,
)
