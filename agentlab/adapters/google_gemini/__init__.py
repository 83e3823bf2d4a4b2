"""The Google Gemini provider (``google:<model>``): one package holds everything Gemini-specific.

* :mod:`.provider`: the ``ProviderSpec`` the registry reads. It imports no SDK.
* :mod:`._adapter`: ``GoogleGeminiAdapter`` on the official ``google-genai`` SDK (Gemini API, and
  Vertex AI as a second endpoint of the same adapter), imported on first use.
* :mod:`._request`, :mod:`._stream`, :mod:`._errors`, :mod:`._usage`, :mod:`._models`: body building
  (thought signatures put back on their parts), stream mapping, error translation, usage
  normalization, the per-model capability table.

The package root is a lazy facade because the registry imports :mod:`.provider`, and importing a
submodule runs this file first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentlab._lazy import lazy_exports

if TYPE_CHECKING:
    from agentlab.adapters.google_gemini._adapter import GoogleGeminiAdapter as GoogleGeminiAdapter
    from agentlab.adapters.google_gemini._request import build_request as build_request
    from agentlab.adapters.google_gemini._stream import GeminiAssembler as GeminiAssembler

_EXPORTS: dict[str, str] = {
    "GeminiAssembler": "agentlab.adapters.google_gemini._stream",
    "GoogleGeminiAdapter": "agentlab.adapters.google_gemini._adapter",
    "build_request": "agentlab.adapters.google_gemini._request",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
