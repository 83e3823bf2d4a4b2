"""AWS Bedrock Converse's registry entry (``bedrock:<model id>``). Imports no SDK."""

from __future__ import annotations

from agentlab.adapters.option_rules import OptionRules
from agentlab.adapters.registry import ProviderSpec

__all__ = ["SPEC"]

OPTIONS = OptionRules(
    owned={
        "messages": "the full history on every call",
        "modelId": "the run's model",
        "system": "SystemItem in the history",
        "toolConfig": "the run's tools and tool_choice",
        "inferenceConfig": "max_output_tokens, temperature, top_p and stop_sequences",
    },
    types={
        "additionalModelRequestFields": dict,
        "guardrailConfig": dict,
        "performanceConfig": dict,
        "promptVariables": dict,
        "requestMetadata": dict,
        "additionalModelResponseFieldPaths": list,
        "serviceTier": dict,
    },
    nested_owned={"additionalModelRequestFields": frozenset({"thinking", "reasoning_effort"})},
    neutral={"requestMetadata": "metadata"},
)

SPEC = ProviderSpec(
    name="bedrock",
    api="converse",
    label="AWS Bedrock",
    adapter="agentlab.adapters.bedrock_converse._adapter:BedrockConverseAdapter",
    usage="agentlab.adapters.bedrock_converse._usage:usage_from_converse",
    sdk_module="boto3",
    sdk_loggers=("botocore", "boto3", "urllib3"),
    api_key_env="AWS_BEARER_TOKEN_BEDROCK",
    reasoning_block_type="reasoningText",
    drop_with_reasoning=False,
    drop_refusal=(
        "with thinking on, Claude on Bedrock requires the current tool loop's reasoning blocks to go "
        "back unmodified (ValidationException otherwise)"
    ),
    drop_rule="agentlab.adapters.bedrock_converse._request:drop_rule",  # per family: Claude refuses
    options=OPTIONS,
    check_options="agentlab.adapters.bedrock_converse._request:check_options",
    simulated_models="agentlab.sim:BEDROCK_MODELS",
    simulator="agentlab.sim:bedrock_client",
    price_provider="aws",
    otel_name="aws.bedrock",
)
