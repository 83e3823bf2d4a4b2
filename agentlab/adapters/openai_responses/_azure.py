"""Azure OpenAI Responses, v1 API (``azure:<deployment>``, ``base_url`` = ``https://<resource>.openai.azure.com/openai/v1``).

The v1 API takes the ``openai`` SDK as is (bearer key, ``AZURE_OPENAI_API_KEY``); ``model`` is the
deployment name, judged by OpenAI's model table (a deployment named after its model is a reasoning
model when the model is). Azure stores responses by default: ``store: false`` is sent.

``encrypted_content`` is a Fernet token (``gAAAAA...``), re-encrypted each time it is serialised (the
``response.completed`` copy differs from the ``output_item.done`` one); it may come back ``null``,
and an item with a null payload is never sent as if it carried state (dropped, with a
``no_encrypted_content`` diagnostic). ``content_filters`` are extra response fields, ignored.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from agentlab.adapters.openai_responses._dialect import OPENAI
from agentlab.adapters.openai_responses._request import check_options as _check
from agentlab.adapters.wire_dialect import Host

__all__ = ["AZURE", "check_options"]

AZURE = replace(OPENAI, name="azure", label="Azure OpenAI", host=Host(None, "AZURE_OPENAI_API_KEY"))
"""OpenAI's dialect under Azure's name and key (``base_url`` is the resource's, always given)."""


check_options = partial(_check, dialect=AZURE)
"""The shared Responses checks (``ProviderSpec.check_options``), under this dialect's name."""
