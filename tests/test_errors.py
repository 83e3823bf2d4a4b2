"""Every provider error is one line, whichever class and whatever text the provider sent."""

from __future__ import annotations

import pytest

from agentlab import errors
from agentlab.errors import ProviderError, one_line


def _subclasses(cls: type[ProviderError]) -> list[type[ProviderError]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _subclasses(sub)
    return found


@pytest.mark.parametrize("cls", _subclasses(ProviderError), ids=lambda c: c.__name__)
def test_every_provider_error_class_is_one_line(cls: type[ProviderError]) -> None:
    err = cls("first\n  second\r\n\tthird\u2028fourth\n", provider="p", status=400, request_id="req\n1")
    assert str(err) == "[p 400] first second third fourth (request id req 1)"
    assert err.message == "first second third fourth"


def test_one_line_folds_every_line_break_and_keeps_other_spacing() -> None:
    assert one_line("a  b\n\n  c\x85d\x0be") == "a  b c d e"
    assert one_line("plain") == "plain" and errors.one_line is one_line
