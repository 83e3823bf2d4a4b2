r"""CPU per streamed event for the Gemini adapter alone: floor, raw google-genai stream, adapter, run step.

Folded into ``python -m bench`` (section 1, :mod:`bench.adapters`): the same recorded-shape
``streamGenerateContent?alt=sse`` stream (:func:`bench.streams.gemini_stream`: thought-summary chunks,
answer-text chunks, a signed ``functionCall`` chunk, each event a whole ``GenerateContentResponse``
ended by ``\r\n\r\n``), over the loopback socket (one HTTP chunk per event, as the API flushes) and in
process (16 KiB reads), the same consumers and medians as the other two providers, with an exit status
for its targets (0 met, 1 missed). The raw SDK consumer is ``client.aio.models.generate_content_stream``
(typed chunks); the adapter posts through the same ``google.genai.Client``.
Run: ``.venv/bin/python bench/adapter_gemini.py`` (``--rounds 9``; ``--thoughts N --text M``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.adapters import cli


def main(argv: list[str] | None = None) -> int:
    warnings.simplefilter("ignore", DeprecationWarning)  # SDK model-deprecation notices
    return cli("gemini", argv, reasoning_flag="--thoughts")


if __name__ == "__main__":
    raise SystemExit(main())
