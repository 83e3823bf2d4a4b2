"""Google Gemini's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``google:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

SPEC = ProviderSpec(
    name="google",
    aliases=("gemini",),
    api="generate_content",
    label="Google Gemini",
    adapter="agentlab.adapters.google_gemini._adapter:GoogleGeminiAdapter",
    usage="agentlab.adapters.google_gemini._usage:usage_from_gemini",
    sdk_module="google.genai",
    sdk_loggers=("google_genai", "google.auth"),
    api_key_env="GEMINI_API_KEY",
    reasoning_term="thinking",
    reasoning_block_type="thought_signature",
    # Gemini 3 answers a tool loop whose functionCall parts lack their thought signatures with 400
    # INVALID_ARGUMENT; the honest ablation is thinking off (where the model allows it).
    drop_with_reasoning=False,
    drop_refusal=(
        "Gemini 3 models require each functionCall part's thought signature back, unchanged, within "
        "the current tool loop (the API answers 400 INVALID_ARGUMENT otherwise)"
    ),
    check_options="agentlab.adapters.google_gemini._request:check_options",
    simulated_models="agentlab.sim:GEMINI_MODELS",
    price_provider="google",
)
