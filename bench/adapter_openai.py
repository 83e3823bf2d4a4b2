"""CPU per streamed event for the OpenAI adapter alone: floor, raw SDK typed stream, adapter, run step.

Folded into ``python -m bench`` (section 1, :mod:`bench.adapters`): the same recorded-shape stream
(:mod:`bench.streams`), over the loopback socket (one chunk per event) and in process, the same
consumers and the same medians, for one provider, with an exit
status for its targets (0 met, 1 missed). Run: ``.venv/bin/python bench/adapter_openai.py``
(``--rounds 9`` for steadier medians; ``--reasoning N --text M`` for the stream's size).
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
    return cli("openai", argv, reasoning_flag="--reasoning")


if __name__ == "__main__":
    raise SystemExit(main())
