"""Gemini 3.1 Pro's thinking levels: ``low``/``medium``/``high`` (Gemini 3 Pro had ``low``/``high`` only).

The capability table (``agentlab/adapters/google_gemini/_models.py``) refuses a level a model cannot
take before sending; refusing one it can take would be as wrong. Source: the Gemini thinking guide's
per-model levels (3.1 Pro added ``medium``; ``minimal`` stays Flash-only; no Pro turns thinking off).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentlab.errors import InvalidSettingsError
from agentlab.neutral.items import UserItem
from agentlab.neutral.request import ModelRequest, ReasoningSettings
from tests.adapters.google_gemini.gemini_support import Replay, adapter_on


def _config(model: str, reasoning: ReasoningSettings) -> object:
    built = adapter_on(Replay([]), model).build(
        ModelRequest(model=model, items=(UserItem(text="q"),), reasoning=reasoning)
    )
    return json.loads(built.body).get("generationConfig", {}).get("thinkingConfig")


@pytest.mark.parametrize("model", ["gemini-3.1-pro-preview", "models/gemini-3.1-pro-preview-customtools"])
@pytest.mark.parametrize("level", ["low", "medium", "high"])
def test_gemini_31_pro_takes_low_medium_and_high(model: str, level: Any) -> None:
    assert _config(model, ReasoningSettings(effort=level, summary=None)) == {"thinkingLevel": level.upper()}


@pytest.mark.parametrize(
    ("model", "reasoning", "match"),
    [
        ("gemini-3.1-pro-preview", ReasoningSettings(effort="minimal"), "not a thinking level"),
        ("gemini-3.1-pro-preview", ReasoningSettings(enabled=False), "cannot turn thinking off"),
        ("gemini-3-pro-preview", ReasoningSettings(effort="medium"), "not a thinking level"),
    ],
)
def test_what_31_pro_and_3_pro_cannot_take_is_still_refused(
    model: str, reasoning: ReasoningSettings, match: str
) -> None:
    with pytest.raises(InvalidSettingsError, match=match):
        _config(model, reasoning)


def test_gemini_3_flash_minimal_is_a_level_not_off() -> None:
    assert _config("gemini-3-flash-preview", ReasoningSettings(effort="minimal", summary=None)) == {
        "thinkingLevel": "MINIMAL"
    }
    with pytest.raises(InvalidSettingsError, match=r"cannot turn thinking off.*'minimal'"):
        _config("gemini-3-flash-preview", ReasoningSettings(effort="none"))
