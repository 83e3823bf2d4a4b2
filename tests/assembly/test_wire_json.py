"""``wire_json.loads`` (msgspec, the stdlib where msgspec says no) gives what ``json.loads`` gives.

The edge cases are in ``test_hot_path.py``; here, generated documents: every JSON value (any text,
any escape, numbers near a double's and int64's limits, nesting), serialized the ways providers do
(compact or spaced, ASCII-escaped or raw UTF-8), and bytes that are not JSON. Values are compared by
``repr``, which tells ``-0.0`` from ``0.0``, ``1`` from ``1.0`` and ``True`` from ``1``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlab.assembly import wire_json

_numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e-300, max_value=1e-300),
)
# Lone surrogates too (``Cs``): escaped as ``\\ud800`` ASCII-only, or as bytes that are not UTF-8.
_texts = st.one_of(st.text(), st.text(st.characters(categories=["Cs", "Cc", "L", "N", "P", "S", "Zs"])))
_scalars = st.one_of(st.none(), st.booleans(), _numbers, _texts)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(_texts, inner, max_size=6)),
    max_leaves=40,
)
_SETTINGS = settings(
    derandomize=True,
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _same(doc: bytes) -> None:
    try:
        want: Any = json.loads(doc)
    except (ValueError, RecursionError) as e:
        try:
            wire_json.loads(doc)
        except (ValueError, RecursionError) as got:
            assert type(got) is type(e) and str(got) == str(e)
            return
        raise AssertionError(f"json.loads refuses {doc!r}; wire_json.loads read it") from None
    assert repr(wire_json.loads(doc)) == repr(want)


@_SETTINGS
@given(_values, st.booleans(), st.booleans())
def test_every_json_value_decodes_as_the_stdlib_decodes_it(
    value: Any, ascii_only: bool, compact: bool
) -> None:
    sep = (",", ":") if compact else (", ", ": ")
    _same(json.dumps(value, ensure_ascii=ascii_only, separators=sep).encode("utf-8", "surrogatepass"))


@_SETTINGS
@given(st.floats(allow_nan=False), st.integers(min_value=-400, max_value=400))
def test_every_number_form_decodes_as_the_stdlib_decodes_it(x: float, exponent: int) -> None:
    mantissa = repr(abs(x)) if math.isfinite(x) else "1"
    whole = int(abs(x)) if math.isfinite(x) else 0
    _same(f"[{mantissa}e{exponent}, -{mantissa}E+{exponent}, {whole}]".encode())


@_SETTINGS
@given(st.binary(max_size=64))
def test_any_bytes_decode_or_fail_as_the_stdlib_does(doc: bytes) -> None:
    _same(doc)


@_SETTINGS
@given(_values, st.binary(min_size=1, max_size=3), st.integers(min_value=0))
def test_a_corrupted_document_decodes_or_fails_as_the_stdlib_does(value: Any, junk: bytes, at: int) -> None:
    doc = json.dumps(value, separators=(",", ":")).encode()
    cut = at % (len(doc) + 1)
    _same(doc[:cut] + junk + doc[cut:])


def test_no_decoded_string_value_is_kept_by_the_decoder() -> None:
    """Answer and reasoning text must not outlive its event in a process-wide cache (keys may)."""
    doc = b'{"k":"secret","l":["secret"]}'
    one, two = wire_json.loads(doc), wire_json.loads(doc)
    assert one == two
    assert one["k"] is not two["k"] and one["l"][0] is not two["l"][0]
