"""The final answer's requested shape, in provider-neutral terms: a named JSON schema.

``Run(output_type=...)`` turns a pydantic model class (or a JSON schema dict with a name) into an
``OutputSpec`` on every ``ModelRequest``; each adapter maps it to its provider's field (OpenAI
``text.format`` of type ``json_schema``, Anthropic ``output_config.format``) with that provider's
schema rules, and the run validates the final answer against the same type
(``agentlab.loop.output``).

``schema`` is the schema as the user's type describes it (pydantic's ``model_json_schema()``, or the
dict as given); ``from_type`` says whether agentlab generated it, in which case adapters may rewrite
it the way the provider's own SDK helper does (``responses.parse``, ``messages.parse``); a schema the
user wrote by hand is sent as written, and one a provider cannot take is refused before sending.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentlab.neutral._shapes import ShapedRepr

__all__ = ["NAME_PATTERN", "OutputSpec"]

NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""What OpenAI accepts as ``text.format.name`` (the stricter of the two providers)."""


class OutputSpec(ShapedRepr, BaseModel):
    """A named JSON schema the final answer must follow.

    ``strict`` asks the provider to guarantee the schema (OpenAI ``strict: true``; Anthropic's
    structured outputs are always constrained). The repr shows the name and flags, the schema as its
    size only.
    """

    _repr_shown = frozenset({"name", "strict", "from_type"})

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    json_schema: dict[str, Any]
    strict: bool = True
    description: str | None = None
    """What the answer is for (OpenAI ``text.format.description``; Anthropic has no such field)."""
    from_type: bool = False
    """True when agentlab generated ``json_schema`` from a pydantic type (adapters may then apply
    their provider SDK's transformation); False for a schema given by hand (sent as written)."""
