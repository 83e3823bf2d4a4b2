"""Google Gemini's registry entry: what the rest of agentlab needs to know about this provider.

Imports no SDK (the registry reads this module to route ``google:*`` model strings).
"""

from __future__ import annotations

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

_HISTORY = "the full history on every call"

OPTIONS = OptionRules(
    owned={
        **dict.fromkeys(("contents", "systemInstruction", "tools", "toolConfig"), _HISTORY),
        "cachedContent": "an explicit cache is CacheHints(mode='explicit')",
        "generationConfig": "add to it with google_generation_config",
    },
    types={"generation_config": dict, "safetySettings": list, "labels": dict},
    nested_owned={
        "generation_config": frozenset({"thinkingConfig", "responseJsonSchema", "responseMimeType"})
    },
    neutral={
        "generation_config.maxOutputTokens": "max_output_tokens",
        "generation_config.temperature": "temperature",
        "generation_config.topP": "top_p",
        "generation_config.stopSequences": "stop_sequences",
        "generation_config.responseSchema": "output",
    },
)

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
    # INVALID_ARGUMENT, but documents a dummy signature for calls whose signatures are not available;
    # under "drop" the adapter sends it (Gemini 3 only; 2.5 accepts missing ones), so every Gemini
    # model can run the ablation with thinking on (see _stand_in): drop_with_reasoning keeps its default.
    options=OPTIONS,
    check_options="agentlab.adapters.google_gemini._request:check_options",
    simulated_models="agentlab.sim:GEMINI_MODELS",
    simulator="agentlab.sim:gemini_client",
    price_provider="google",
    batch="agentlab.adapters.google_gemini._batch:GeminiBatchAPI",
    otel_name="gcp.gemini",
)
