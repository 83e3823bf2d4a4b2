"""Simulated reasoning providers: OpenAI Responses, Anthropic Messages and Gemini, offline and deterministic.

Why: agentlab's main job (tool loops on reasoning models, side by side) must run and be tested
without API keys, and the tests that matter must fail here for the same reasons they would fail
against the real APIs. The simulator speaks the real wire protocols behind the official SDKs, in
process (:class:`SimTransport`, an ``httpx2`` transport) or on loopback
(``python -m agentlab.sim serve --port N``).

Models: OpenAI ``sim-reasoner``, ``sim-reasoner-mini``; Anthropic ``sim-thinker``,
``sim-thinker-legacy`` (omits ``usage.output_tokens_details.thinking_tokens``). Any other name gets
the provider's real "model not found" error (OpenAI 400 ``model_not_found``, Anthropic 404
``not_found_error``); a real model name is served by the loopback server (``serve``, unless
``--sim-names-only``) and in process only when asked (``real_models=True``), by the simulated model
that behaves like it and labelled simulated in every reply (see :mod:`agentlab.sim.real_models`).

HTTP surface (as the real hosts): exact paths only (``POST /v1/responses``, ``POST /v1/messages``,
``POST /v1/responses/input_tokens``, ``GET``/``DELETE /v1/responses/{id}``,
``POST /v1/messages/count_tokens``, ``GET /v1/models[/{id}]``); any other path or method is the
provider's 404, as a misconfigured ``base_url`` gets in production. A key is required (OpenAI
``Authorization: Bearer``, Anthropic ``x-api-key``; any non-empty value, never checked or kept) and
Anthropic requests need ``anthropic-version`` (see :mod:`agentlab.sim.access`); the clients below
send a placeholder key.

Task family (see :mod:`agentlab.sim.reasoner`): comparisons over tool outputs ("Is it warmer in
Paris or Rome?"), aggregates (total/sum/average/difference/product of a tool's numbers for several
names), lookups ("What's the weather in Florence, Italy?"), arithmetic expressions (through a
calculator-like tool when given one). Answers are computed from the tool results the request
carries. Independent calls are made in parallel unless parallel tool use is disabled.

Rules enforced (the point of it):

* Anthropic (thinking on): the latest assistant message holding ``tool_use`` must start with its
  thinking/redacted_thinking blocks, unmodified, in their original order and positions (HMAC
  signatures over content + position); invalid signature, modified block, ``budget_tokens`` < 1024
  or >= ``max_tokens``, more than 4 ``cache_control`` breakpoints or one on a thinking block, and an
  assistant message ending in thinking all get the real 400 texts.
* OpenAI: ``encrypted_content`` is authenticated (tampered/foreign: 400
  ``invalid_encrypted_content``); a reasoning item by id only with ``store: false`` is a 404; a
  reasoning item without the item that followed it is a 400; ``previous_response_id`` must name a
  stored response (never with ``store: false``); ``temperature`` is refused.
* Both: tool calls and tool results must pair (the real "No tool output found ..." / "`tool_use` ids
  were found without `tool_result` blocks ..." texts).
* Each endpoint rejects the other provider's opaque items (wrong block/item type, or a signature /
  token that does not verify with that provider's key).
* Continuity effect (OpenAI, Gemini): when a request carries the current loop's tool calls but not the
  reasoning items that planned them (on Gemini: a documented dummy ``thoughtSignature``, or none on
  ``sim-gemini-legacy``), the model has lost its plan: its reasoning gains a re-planning
  paragraph (more reasoning tokens) and it repeats its most recent batch of tool calls once (same
  arguments, new call ids) before answering. The response header ``x-sim-plan`` says ``known`` or
  ``lost``.
* Anthropic triggers: ``thinking.display: "omitted"`` -> empty thinking text with a signature; the
  real API's magic string ``ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E...`` in the
  user text -> thinking, ``redacted_thinking``, thinking; the ``interleaved-thinking-2025-05-14``
  beta header or adaptive thinking -> a thinking block before each further ``tool_use`` of a turn.
* Usage: one tokenizer (:mod:`agentlab.sim.tokenizer`); reasoning tokens are part of output tokens;
  ``reasoning.effort`` (none/minimal/low/medium/high/xhigh) and ``budget_tokens`` /
  ``output_config.effort`` change how long it reasons; ``max_output_tokens`` (status
  ``incomplete``, ``response.incomplete``) and ``max_tokens`` (``stop_reason: "max_tokens"``) cut
  the output. Prompt caching: see :mod:`agentlab.sim.caching`.
* Determinism: same request + same seed -> byte-identical reply (on a fresh simulator, since the
  prompt cache remembers earlier requests).

Gemini (:mod:`agentlab.sim.gemini.generate`): ``sim-gemini`` (Gemini 3: ``thinkingLevel``, thought signatures
required back on function calls, checked by HMAC over call and position) and ``sim-gemini-legacy``
(Gemini 2.5: ``thinkingBudget``) at ``/{v1,v1beta,v1alpha}/models/{model}:generateContent`` /
``:streamGenerateContent`` / ``:countTokens`` and ``GET .../models[/{model}]``, key in
``x-goog-api-key`` or ``key=``; :func:`gemini_client` wires a ``google.genai.Client`` to it.

Claude on AWS Bedrock and Google Vertex AI (:mod:`agentlab.sim.anthropic.platforms`): the same
``sim-thinker`` models at Bedrock's ``/model/{model}/invoke[-with-response-stream]`` (AWS event
stream, AWS JSON errors, no ``model`` in the body, ``anthropic_version: "bedrock-2023-05-31"``) and
Vertex's ``/v1/projects/{p}/locations/{r}/publishers/anthropic/models/{model}:rawPredict`` /
``:streamRawPredict`` (``vertex-2023-10-16``); thinking signatures are keyed per platform, so one
platform's blocks are refused ("Invalid `signature`") on the others. :func:`anthropic_bedrock_client`
and :func:`anthropic_vertex_client` wire the SDK's platform clients to it.

Chat Completions (:mod:`agentlab.sim.chat.completions`): six dialects as profiles behind
the ``openai`` SDK's ``chat.completions``: ``sim-deepseek`` (DeepSeek thinking mode; a tool-call
assistant message without its ``reasoning_content`` is the real 400), ``sim-router-gemini`` /
``-claude`` / ``-openai`` (OpenRouter ``reasoning_details``; Gemini's dropped or altered item and
Claude's signature are refused with the real bodies, OpenAI's is lenient), ``sim-local`` /
``sim-local-reasoning`` (llama.cpp/vLLM/Ollama, lenient, no key), ``sim-kimi`` (Kimi: a tool-call
message without its ``reasoning_content`` is its real 400), ``sim-glm`` (Z.AI, at ``/api/paas/v4``)
and ``sim-xai-chat`` (xAI, usage without reasoning in ``completion_tokens``), the last two lenient;
:func:`chat_client` wires an
``openai.AsyncOpenAI`` to one dialect (see :mod:`agentlab.sim.chat.rules` for the rules).

Bedrock Converse (:mod:`agentlab.sim.bedrock.converse`): ``/model/{modelId}/converse`` and
``/converse-stream`` (AWS's binary event stream, :mod:`agentlab.sim.aws.eventstream`), SigV4 or bearer
credentials checked for shape; ``sim-bedrock-claude`` (signed ``reasoningText``; a modified, reordered or
missing block is the real ``ValidationException``), ``sim-bedrock-openai`` (``redactedContent`` only;
``reasoningText`` sent back is refused), ``sim-bedrock-kimi`` (unsigned ``reasoningText``);
:func:`bedrock_client` wires boto3's ``bedrock-runtime`` client to it.

Protocols: one table (:mod:`agentlab.sim.protocols`) says which protocol serves which path, with
its models, handler, routes (path patterns such as ``/v1/models/{model_id}``) and error shape. The
built-ins are OpenAI Responses (``POST /v1/responses``) and Anthropic Messages (``POST
/v1/messages``); a provider package adds its simulated protocol with one
``register_protocol(SimProtocol(...))`` call.

Faults (header ``x-sim-fault`` or model option ``sim-reasoner+fault=<spec>``; see
:mod:`agentlab.sim.faults`)::

    spec  := fault ("," fault)*
    fault := ("429" | "500" | "529" | "cut" | "malformed" | "reset" | "unknown_event" | "slow:" MS) ["x" N]

``xN`` faults only the first N attempts of the same request (same spec, path and body), so a
retrying SDK sees N failures then a success.

Layout: the shared core at this level (:mod:`~agentlab.sim.app` dispatch, :mod:`~agentlab.sim.protocols`
table, :mod:`~agentlab.sim.routes`, :mod:`~agentlab.sim.transport`, :mod:`~agentlab.sim.server`,
:mod:`~agentlab.sim.faults`, :mod:`~agentlab.sim.pacing`, :mod:`~agentlab.sim.signing`,
:mod:`~agentlab.sim.caching`, :mod:`~agentlab.sim.reasoner`, :mod:`~agentlab.sim.tokenizer`, ...), one
subpackage per wire protocol (``openai/``, ``anthropic/``, ``gemini/``, ``chat/``), ``batch/`` (the
three batch APIs over one store) and ``schemas/`` (request-body validation). Inside the simulator,
modules import each other directly, never this facade (so no import cycle runs through it), and
nothing imports from agentlab outside ``agentlab.sim`` (``tests/sim/test_leaf.py``).

Public surface: code outside ``agentlab/sim`` uses only the names in ``__all__`` below; the modules
under it are internal and may move. The clients and base URLs (:mod:`agentlab.sim.clients`),
``SIM_API_KEY``, the simulated model tables (``OPENAI_MODELS``, ``ANTHROPIC_MODELS``,
``GEMINI_MODELS``, ``CHAT_MODELS`` and ``RESPONSES_MODELS``: dialect -> names), the transport and simulator
(``SimTransport``, ``Simulator``), the protocol table (``SimProtocol``, ``Route``,
``register_protocol``, ...), and the parsers of a model's ``+`` options, so a caller can refuse a bad
option before anything is sent: ``parse_model_options(model)`` (``(name, fault spec or None,
pace)``, :class:`PaceError` on a bad ``tps``/``ttft``) and ``parse_faults(spec)``
(:class:`FaultSpecError`). Importing this package imports no SDK (the clients import theirs on
first call).
"""

from __future__ import annotations

from agentlab.sim.anthropic import messages as anthropic_messages
from agentlab.sim.anthropic import platforms as anthropic_platforms
from agentlab.sim.bedrock import converse as bedrock_converse
from agentlab.sim.bedrock.client import bedrock_client
from agentlab.sim.chat import completions as chat_completions
from agentlab.sim.clients import (
    ANTHROPIC_BASE_URL,
    BEDROCK_BASE_URL,
    DEEPSEEK_BASE_URL,
    GEMINI_BASE_URL,
    LOCAL_BASE_URL,
    OPENAI_BASE_URL,
    OPENROUTER_BASE_URL,
    SIM_API_KEY,
    VERTEX_BASE_URL,
    anthropic_bedrock_client,
    anthropic_client,
    anthropic_sync_client,
    anthropic_vertex_client,
    chat_client,
    gemini_client,
    openai_client,
    openai_sync_client,
)
from agentlab.sim.core import ANTHROPIC_MODELS, CHAT_MODELS, GEMINI_MODELS, OPENAI_MODELS, Simulator
from agentlab.sim.faults import FaultSpecError
from agentlab.sim.faults import parse as parse_faults
from agentlab.sim.gemini import generate as gemini
from agentlab.sim.openai import responses as openai_responses
from agentlab.sim.openai.dialects import RESPONSES_MODELS
from agentlab.sim.pacing import PaceError
from agentlab.sim.pacing import parse_options as parse_model_options
from agentlab.sim.protocols import Route, SimProtocol, protocols, register_protocol, unregister_protocol
from agentlab.sim.transport import SimTransport

BEDROCK_MODELS = bedrock_converse.MODELS

__all__ = [
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODELS",
    "BEDROCK_BASE_URL",
    "BEDROCK_MODELS",
    "CHAT_MODELS",
    "DEEPSEEK_BASE_URL",
    "GEMINI_BASE_URL",
    "GEMINI_MODELS",
    "LOCAL_BASE_URL",
    "OPENAI_BASE_URL",
    "OPENAI_MODELS",
    "OPENROUTER_BASE_URL",
    "RESPONSES_MODELS",
    "SIM_API_KEY",
    "VERTEX_BASE_URL",
    "FaultSpecError",
    "PaceError",
    "Route",
    "SimProtocol",
    "SimTransport",
    "Simulator",
    "anthropic_bedrock_client",
    "anthropic_client",
    "anthropic_sync_client",
    "anthropic_vertex_client",
    "bedrock_client",
    "chat_client",
    "gemini_client",
    "openai_client",
    "openai_sync_client",
    "parse_faults",
    "parse_model_options",
    "protocols",
    "register_protocol",
    "unregister_protocol",
]

# The built-in protocols; the first registered answers requests that name none (OpenAI).
register_protocol(openai_responses.PROTOCOL)
register_protocol(anthropic_messages.PROTOCOL)
register_protocol(gemini.PROTOCOL)
register_protocol(chat_completions.PROTOCOL)
register_protocol(chat_completions.OPENROUTER_PROTOCOL)
register_protocol(chat_completions.ZAI_PROTOCOL)
register_protocol(anthropic_platforms.BEDROCK)
register_protocol(anthropic_platforms.VERTEX)
register_protocol(bedrock_converse.PROTOCOL)
