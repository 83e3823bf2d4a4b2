"""The one deterministic tokenizer behind every simulated token count.

Why one tokenizer: input, cached, output and reasoning counts must agree with each other and with the
text a client actually received, so usage tests can check arithmetic (a 128-token cache block is 128
of the same tokens that ``count_tokens`` counts). A token is a run of word characters, or one other
non-space character, each carrying the whitespace that precedes it. Joining the tokens of a text
gives the text back, which is how streams split text into deltas without losing a byte.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(?:\w{1,8}|[^\w\s])|\s+$", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens; ``"".join(tokenize(t)) == t`` always holds."""
    return _TOKEN.findall(text)


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (long words count one token per 8 characters)."""
    return len(_TOKEN.findall(text))


def truncate_tokens(text: str, limit: int) -> str:
    """The first ``limit`` tokens of ``text``, joined back into a string."""
    if limit <= 0:
        return ""
    return "".join(tokenize(text)[:limit])


def chunks(text: str, tokens_per_chunk: int = 3) -> list[str]:
    """Split text into stream deltas of a few tokens each (concatenation is the text)."""
    toks = tokenize(text)
    return ["".join(toks[i : i + tokens_per_chunk]) for i in range(0, len(toks), tokens_per_chunk)]
