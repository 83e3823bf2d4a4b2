"""The Gemini API's request messages, as its protobuf JSON parser reads them.

Why a table of messages and not a JSON schema: the Gemini API is a protobuf service. Its JSON
parser accepts each field in camelCase or in its proto (snake_case) name, rejects an unknown name
with ``Invalid JSON payload received. Unknown name "foo" at 'contents[0].parts[0]': Cannot find
field.`` (the path in proto names, map entries as ``properties[0].value``), and treats ``Struct`` /
``Value`` fields (``args``, ``response``, ``parametersJsonSchema``) as free JSON. :func:`normalize`
does the same and hands the handler one spelling (camelCase), so the rules below it never look
for two.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: A free JSON field (``google.protobuf.Struct`` / ``Value``): anything goes, nothing is renamed.
ANY = "*"
#: A scalar field (string, number, bool, enum, bytes): its value is not a message.
SCALAR = "."
#: Numeric scalars the handler computes with: a value of another type is the parser's 400
#: (``Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), "abc"``), never a crash.
INT32 = "TYPE_INT32"
FLOAT = "TYPE_FLOAT"
_API = "type.googleapis.com/google.ai.generativelanguage.v1beta."

# message -> {camelCase field: (kind, repeated)}; kind is a message name, ANY or SCALAR;
# "map:<message>" is a map<string, message>.
_Field = tuple[str, bool]
MESSAGES: dict[str, dict[str, _Field]] = {
    "GenerateContentRequest": {
        "model": (SCALAR, False),
        "contents": ("Content", True),
        "systemInstruction": ("Content", False),
        "tools": ("Tool", True),
        "toolConfig": ("ToolConfig", False),
        "safetySettings": ("SafetySetting", True),
        "generationConfig": ("GenerationConfig", False),
        "cachedContent": (SCALAR, False),
        "labels": (ANY, False),
        "serviceTier": (SCALAR, False),
        "store": (SCALAR, False),
    },
    "CountTokensRequest": {
        "contents": ("Content", True),
        "generateContentRequest": ("GenerateContentRequest", False),
    },
    "Content": {"parts": ("Part", True), "role": (SCALAR, False)},
    "Part": {
        "text": (SCALAR, False),
        "inlineData": ("Blob", False),
        "fileData": ("FileData", False),
        "functionCall": ("FunctionCall", False),
        "functionResponse": ("FunctionResponse", False),
        "executableCode": (ANY, False),
        "codeExecutionResult": (ANY, False),
        "thought": (SCALAR, False),
        "thoughtSignature": (SCALAR, False),
        "videoMetadata": (ANY, False),
        "partMetadata": (ANY, False),
        "mediaResolution": (ANY, False),
    },
    "Blob": {"mimeType": (SCALAR, False), "data": (SCALAR, False), "displayName": (SCALAR, False)},
    "FileData": {"mimeType": (SCALAR, False), "fileUri": (SCALAR, False), "displayName": (SCALAR, False)},
    "FunctionCall": {"id": (SCALAR, False), "name": (SCALAR, False), "args": (ANY, False)},
    "FunctionResponse": {
        "id": (SCALAR, False),
        "name": (SCALAR, False),
        "response": (ANY, False),
        "parts": (ANY, True),
        "willContinue": (SCALAR, False),
        "scheduling": (SCALAR, False),
    },
    "Tool": {
        "functionDeclarations": ("FunctionDeclaration", True),
        "googleSearchRetrieval": (ANY, False),
        "codeExecution": (ANY, False),
        "googleSearch": (ANY, False),
        "urlContext": (ANY, False),
        "computerUse": (ANY, False),
        "fileSearch": (ANY, False),
        "googleMaps": (ANY, False),
    },
    "FunctionDeclaration": {
        "name": (SCALAR, False),
        "description": (SCALAR, False),
        "parameters": ("Schema", False),
        "parametersJsonSchema": (ANY, False),
        "response": ("Schema", False),
        "responseJsonSchema": (ANY, False),
        "behavior": (SCALAR, False),
    },
    "Schema": {
        "type": (SCALAR, False),
        "format": (SCALAR, False),
        "title": (SCALAR, False),
        "description": (SCALAR, False),
        "nullable": (SCALAR, False),
        "enum": (SCALAR, True),
        "maxItems": (SCALAR, False),
        "minItems": (SCALAR, False),
        "properties": ("map:Schema", False),
        "required": (SCALAR, True),
        "minProperties": (SCALAR, False),
        "maxProperties": (SCALAR, False),
        "minLength": (SCALAR, False),
        "maxLength": (SCALAR, False),
        "pattern": (SCALAR, False),
        "example": (ANY, False),
        "anyOf": ("Schema", True),
        "propertyOrdering": (SCALAR, True),
        "default": (ANY, False),
        "items": ("Schema", False),
        "minimum": (SCALAR, False),
        "maximum": (SCALAR, False),
    },
    "ToolConfig": {
        "functionCallingConfig": ("FunctionCallingConfig", False),
        "retrievalConfig": (ANY, False),
    },
    "FunctionCallingConfig": {"mode": (SCALAR, False), "allowedFunctionNames": (SCALAR, True)},
    "SafetySetting": {"category": (SCALAR, False), "threshold": (SCALAR, False), "method": (SCALAR, False)},
    "GenerationConfig": {
        "stopSequences": (SCALAR, True),
        "responseMimeType": (SCALAR, False),
        "responseSchema": ("Schema", False),
        "responseJsonSchema": (ANY, False),
        "responseModalities": (SCALAR, True),
        "candidateCount": (INT32, False),
        "maxOutputTokens": (INT32, False),
        "temperature": (FLOAT, False),
        "topP": (FLOAT, False),
        "topK": (INT32, False),
        "seed": (INT32, False),
        "presencePenalty": (FLOAT, False),
        "frequencyPenalty": (FLOAT, False),
        "responseLogprobs": (SCALAR, False),
        "logprobs": (INT32, False),
        "enableEnhancedCivicAnswers": (SCALAR, False),
        "speechConfig": (ANY, False),
        "thinkingConfig": ("ThinkingConfig", False),
        "imageConfig": (ANY, False),
        "mediaResolution": (SCALAR, False),
    },
    "ThinkingConfig": {
        "includeThoughts": (SCALAR, False),
        "thinkingBudget": (INT32, False),
        "thinkingLevel": (SCALAR, False),
    },
}

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    """``thoughtSignature`` -> ``thought_signature``: the proto name the API's paths use."""
    return _UPPER.sub("_", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


@dataclass(frozen=True)
class Violation:
    """One field the parser refused: its path (proto names) and the API's description."""

    field: str
    description: str


def _unknown(name: str, path: str) -> Violation:
    where = f" at '{path}'" if path else ""
    return Violation(path, f'Invalid JSON payload received. Unknown name "{name}"{where}: Cannot find field.')


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def normalize(message: str, value: Any, path: str = "") -> tuple[Any, list[Violation]]:
    """``value`` read as ``message``: every known field in camelCase, plus what was refused.

    A value that is not a JSON object cannot be the message: the parser's "Invalid value" names it.
    """
    if not isinstance(value, dict):
        return value, [_invalid(path, _API + message, value)]
    spec = MESSAGES[message]
    out: dict[str, Any] = {}
    bad: list[Violation] = []
    for key, item in value.items():
        name = key if key in spec else _camel(key)
        if name not in spec:
            bad.append(_unknown(key, path))
            continue
        kind, repeated = spec[name]
        here = _join(path, snake(name))
        out[name], sub = _field(kind, repeated, item, here)
        bad += sub
    return out, bad


def _field(kind: str, repeated: bool, item: Any, path: str) -> tuple[Any, list[Violation]]:
    """One field's value: a message, a list of them, a map of them, or left as sent."""
    if kind in (SCALAR, ANY) or item is None:
        return item, []
    if kind in (INT32, FLOAT):
        return item, [] if _numeric(kind, item) else [_invalid(path, kind, item)]
    if kind.startswith("map:") and isinstance(item, dict):
        out: dict[str, Any] = {}
        bad: list[Violation] = []
        for i, (k, v) in enumerate(item.items()):
            out[k], sub = normalize(kind[4:], v, f"{path}[{i}].value")
            bad += sub
        return out, bad
    if repeated and isinstance(item, list):
        items, bad = [], []
        for i, v in enumerate(item):
            n, sub = normalize(kind, v, f"{path}[{i}]")
            items.append(n)
            bad += sub
        return items, bad
    if kind.startswith("map:"):
        return item, []
    return normalize(kind, item, path)


_INT = re.compile(r"-?[0-9]+")


def _numeric(kind: str, value: Any) -> bool:
    """Whether protobuf's JSON parser reads ``value`` as this number (a numeric string is one too)."""
    if isinstance(value, bool):
        return False
    if kind == FLOAT:
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                return False
            return True
        return isinstance(value, int | float)
    if isinstance(value, str):
        value = int(value) if _INT.fullmatch(value) else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and -(2**31) <= value < 2**31


def _invalid(path: str, type_name: str, value: Any) -> Violation:
    """The parser's refusal of a value of the wrong type, quoting it as the API does."""
    shown = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return Violation(path, f"Invalid value at '{path}' ({type_name}), {shown}")
