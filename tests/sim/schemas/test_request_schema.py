"""The simulator refuses bodies that do not match the providers' published request schemas.

Unknown, mistyped and missing fields (top level and nested) are a 400 on the real APIs, with the
texts and ``param`` paths quoted in each test (from public reports of real API errors); everything
recorded as accepted by the real APIs (``../shared/fixtures``) validates clean.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentlab import sim
from agentlab.sim.errors import SimError
from agentlab.sim.schemas.dialects import (
    ANTHROPIC_ORDER,
    LEGACY_ANTHROPIC_VERSION,
    OPENAI_ORDER,
    SNAPSHOT,
    anthropic_schema,
    anthropic_schema_name,
    check_anthropic_request,
    check_openai_request,
    compile_from_sdks,
    openai_schema,
    sdk_versions,
    snapshot_drift,
    snapshot_sdk_versions,
    snapshot_text,
)
from agentlab.sim.schemas.validator import Issue, ListNode, MapNode, Node, ObjectNode, Order, UnionNode
from tests.sim.helpers import ANTHROPIC_WEATHER, OPENAI_WEATHER, TEMPS, raw_post
from tests.support.cassettes import fixture_files, fixtures_dir, load_cassette

TASK = "Is it warmer in Paris or Rome?"
AV = {"anthropic-version": "2023-06-01"}
NEW_AV = {"anthropic-version": "2026-10-21"}


def _oai_error(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    r = raw_post(sim.SimTransport(), "/v1/responses", body)
    return r.status_code, r.json().get("error", {})


def _ant_error(body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    r = raw_post(sim.SimTransport(), "/v1/messages", body, headers or AV)
    err = r.json().get("error", {})
    return r.status_code, f"{err.get('type')}: {err.get('message')}"


def _oai(**kw: Any) -> dict[str, Any]:
    return {"model": "sim-reasoner", "input": TASK, "tools": [OPENAI_WEATHER], "store": False, **kw}


def _ant(**kw: Any) -> dict[str, Any]:
    return {"model": "sim-thinker", "max_tokens": 4000, "messages": [{"role": "user", "content": TASK}], **kw}


_CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
_OUT = {"type": "function_call_output", "call_id": "call_1", "output": "18 C"}


# --- OpenAI Responses --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (
            _oai(input=[{"role": "user", "content": TASK}, {**_CALL, "parsed_arguments": {}}, _OUT]),
            "input[1].parsed_arguments",
        ),
        (_oai(reasoning_effort="high"), "reasoning_effort"),
        (_oai(extra_body={"x": 1}), "extra_body"),
        (_oai(reasoning={"effort": "low", "Effort": "high"}), "reasoning.Effort"),
        (
            _oai(input=[{"role": "user", "content": TASK, "reasoning_details": []}]),
            "input[0].reasoning_details",
        ),
    ],
)
def test_openai_unknown_parameter(body: dict[str, Any], param: str) -> None:
    status, err = _oai_error(body)
    assert (status, err["type"], err["code"], err["param"]) == (
        400,
        "invalid_request_error",
        "unknown_parameter",
        param,
    )
    assert err["message"] == f"Unknown parameter: '{param}'."


def test_openai_invalid_type() -> None:
    status, err = _oai_error(_oai(temperature="0.5"))
    assert (status, err["code"], err["param"]) == (400, "invalid_type", "temperature")
    assert err["message"] == "Invalid type for 'temperature': expected a decimal, but got a string instead."
    _, err = _oai_error(_oai(input=7))
    assert err["message"] == (
        "Invalid type for 'input': expected one of a string or array of input items, "
        "but got an integer instead."
    )
    _, err = _oai_error(_oai(parallel_tool_calls="yes"))
    assert (
        err["message"]
        == "Invalid type for 'parallel_tool_calls': expected a boolean, but got a string instead."
    )


def test_openai_temperature_range_as_recorded() -> None:
    """The recorded 400 for ``temperature: -1`` (pydantic-ai cassette), body and error as sent."""
    [ex] = load_cassette(
        fixtures_dir() / "errors" / "pydantic-ai__openai_400_invalid_temperature_stream_request.yaml"
    )
    assert ex.request_json is not None
    status, err = _oai_error({**ex.request_json, "model": "sim-reasoner"})
    assert (status, err) == (ex.status, ex.response_payload["error"])


def test_openai_missing_required_parameter() -> None:
    call = {k: v for k, v in _CALL.items() if k != "call_id"}
    status, err = _oai_error(_oai(input=[{"role": "user", "content": TASK}, call, _OUT]))
    assert (status, err["code"], err["param"]) == (400, "missing_required_parameter", "input[1].call_id")
    assert err["message"] == "Missing required parameter: 'input[1].call_id'."


def test_openai_invalid_value() -> None:
    status, err = _oai_error(_oai(reasoning={"summary": "verbose"}))
    assert (status, err["code"], err["param"]) == (400, "invalid_value", "reasoning.summary")
    assert (
        err["message"] == "Invalid value: 'verbose'. Supported values are: 'auto', 'concise', and 'detailed'."
    )
    # An item of no known type names the item itself (param "input[1]"), types sorted.
    _, err = _oai_error(_oai(input=[{"role": "user", "content": TASK}, {"type": "tool", "content": "x"}]))
    assert (err["code"], err["param"]) == ("invalid_value", "input[1]")
    assert err["message"].startswith("Invalid value: 'tool'. Supported values are: 'additional_tools', ")
    assert err["message"].endswith(", and 'web_search_call'.")


@pytest.mark.parametrize(
    ("item", "prefix"),
    [
        ({**_CALL, "id": "item_c270d5511c7129adc7475632"}, "fc"),
        ({"type": "reasoning", "id": "item_df7e40c3f04fc8ade5c3800e", "summary": []}, "rs"),
        (
            {
                "type": "message",
                "role": "assistant",
                "id": "019f629b",
                "status": "completed",
                "content": [{"type": "output_text", "text": "hi", "annotations": []}],
            },
            "msg",
        ),
    ],
)
def test_openai_item_id_prefix(item: dict[str, Any], prefix: str) -> None:
    status, err = _oai_error(_oai(input=[{"role": "user", "content": TASK}, item, _OUT]))
    assert (status, err["code"], err["param"]) == (400, "invalid_id_prefix", "input[1].id")
    assert (
        err["message"]
        == f"Invalid 'input[1].id': '{item['id']}'. Expected an ID that begins with '{prefix}'."
    )


# --- Anthropic Messages ------------------------------------------------------------------------


def _ant_turn() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A thinking turn that called a tool, and the body that sends its result back."""
    body = _ant(thinking={"type": "enabled", "budget_tokens": 2048}, tools=[ANTHROPIC_WEATHER])
    r = raw_post(sim.SimTransport(), "/v1/messages", body, AV)
    assert r.status_code == 200, r.text
    content = r.json()["content"]
    results = [
        {"type": "tool_result", "tool_use_id": b["id"], "content": TEMPS[b["input"]["city"]]}
        for b in content
        if b["type"] == "tool_use"
    ]
    msgs = [
        body["messages"][0],
        {"role": "assistant", "content": content},
        {"role": "user", "content": results},
    ]
    return content, {**body, "messages": msgs}


def test_thinking_block_without_signature_is_a_schema_error() -> None:
    """Not the homemade "Invalid `signature`" text: the field is missing, pydantic says so."""
    content, body = _ant_turn()
    assert content[0]["type"] == "thinking"
    del body["messages"][1]["content"][0]["signature"]
    t = sim.SimTransport()
    r = raw_post(t, "/v1/messages", body, AV)
    assert r.status_code == 400
    assert r.json()["error"] == {
        "type": "invalid_request_error",
        "message": "messages.1.content.0.thinking.signature: Field required",
    }


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda b: b.update(reasoning_details=[]), "reasoning_details: Extra inputs are not permitted"),
        (lambda b: b.update(extra_body={}), "extra_body: Extra inputs are not permitted"),
        (
            lambda b: b["messages"][0].update(reasoning_details=[]),
            "messages.0.reasoning_details: Extra inputs are not permitted",
        ),
        (
            lambda b: b["messages"][1]["content"][1].update(text="x"),
            "messages.1.content.1.tool_use.text: Extra inputs are not permitted",
        ),
        (lambda b: b.update(max_tokens="4000"), "max_tokens: Input should be a valid integer"),
        (
            lambda b: b["messages"][0].update(role="tool"),
            "messages.0.role: Input should be 'user', 'assistant' or 'system'",
        ),
    ],
)
def test_anthropic_schema_errors(edit: Any, message: str) -> None:
    _, body = _ant_turn()
    edit(body)
    assert _ant_error(body) == (400, f"invalid_request_error: {message}")


def test_anthropic_sampling_parameters_follow_the_api_version() -> None:
    """API version 2026-10-21 (the anthropic SDK 2.x default) removed temperature/top_p/top_k."""
    assert _ant_error(_ant(temperature=0.5), NEW_AV) == (
        400,
        "invalid_request_error: temperature: Extra inputs are not permitted",
    )
    assert raw_post(sim.SimTransport(), "/v1/messages", _ant(temperature=0.5), AV).status_code == 200
    assert _ant_error(_ant(top_k="5"), AV) == (
        400,
        "invalid_request_error: top_k: Input should be a valid integer",
    )


def test_anthropic_beta_fields_need_a_beta_header() -> None:
    body = _ant(context_management={"edits": []})
    assert _ant_error(body) == (
        400,
        "invalid_request_error: context_management: Extra inputs are not permitted",
    )
    check_anthropic_request(body, {**AV, "anthropic-beta": "context-management-2025-06-27"})


# --- recorded accepted traffic, and properties --------------------------------------------------


def _accepted_bodies() -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    out: list[tuple[str, str, dict[str, Any], dict[str, str]]] = []
    for provider in ("openai", "anthropic", "errors"):
        for path in fixture_files(provider):
            for i, ex in enumerate(load_cassette(path)):
                url = ex.url.split("?")[0]
                if ex.status != 200 or ex.request_json is None:
                    continue
                if url.endswith("/v1/responses"):
                    out.append(("openai", f"{path.name}#{i}", ex.request_json, {}))
                elif url.endswith("/v1/messages"):
                    beta = {"anthropic-beta": "recorded"} if "beta=true" in ex.url else {}
                    out.append(("anthropic", f"{path.name}#{i}", ex.request_json, {**AV, **beta}))
    return out


def test_every_recorded_accepted_request_validates_clean() -> None:
    fixtures_dir()
    bodies = _accepted_bodies()
    assert len(bodies) >= 30
    for provider, name, body, headers in bodies:
        try:
            if provider == "openai":
                check_openai_request(body)
            else:
                check_anthropic_request(body, headers)
        except SimError as err:  # pragma: no cover - the failure message names the body
            pytest.fail(f"{name}: {err}")


def _positions(
    node: Node, value: Any, path: tuple[Any, ...], order: Order
) -> list[tuple[Node, tuple[Any, ...]]]:
    """Every (typed node, path) of a valid ``value``: the places a mutation must be refused."""
    if isinstance(node, UnionNode):
        if isinstance(value, dict) and any(isinstance(m, MapNode) for m in node.members):
            return []  # an open form (a JSON schema beside its typed core) takes any key
        member = next((m for m in node.members if m.check(value, (), order) is None), None)
        return [] if member is None else _positions(member, value, path, order)
    out: list[tuple[Node, tuple[Any, ...]]] = [(node, path)]
    if isinstance(node, ObjectNode) and isinstance(value, dict):
        for k, v in value.items():
            if v is not None:
                out += _positions(node.fields[k][0], v, (*path, k), order)
    elif isinstance(node, ListNode) and isinstance(value, list):
        for i, v in enumerate(value):
            out += _positions(node.item, v, (*path, i), order)
    return out


def _at(body: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        body = body[p]
    return body


def _mutants(
    root: ObjectNode, body: dict[str, Any], order: Order, rng: random.Random
) -> list[dict[str, Any]]:
    """An unknown key in a typed object, a dropped required key, a string where an object goes."""
    positions = _positions(root, body, (), order)
    objects = [(n, p) for n, p in positions if isinstance(n, ObjectNode) and not isinstance(n, MapNode)]
    out = []
    for node, path in rng.sample(objects, min(6, len(objects))):
        extra = copy.deepcopy(body)
        _at(extra, path)["sim_unknown_field"] = 1
        out.append(extra)
        assert isinstance(node, ObjectNode)
        required = [k for k, (_, req) in node.fields.items() if req and k in _at(body, path)]
        if required:
            dropped = copy.deepcopy(body)
            del _at(dropped, path)[rng.choice(required)]
            out.append(dropped)
        if path:
            wrong = copy.deepcopy(body)
            _at(wrong, path[:-1])[path[-1]] = 12345
            out.append(wrong)
    return out


def test_mutated_accepted_bodies_are_refused() -> None:
    """Property: a recorded accepted body with an unknown key, a dropped key or a wrong type is refused."""
    fixtures_dir()
    rng = random.Random(14)
    checked = 0
    for provider, _, body, headers in _accepted_bodies():
        root = openai_schema() if provider == "openai" else anthropic_schema(headers)
        order = OPENAI_ORDER if provider == "openai" else ANTHROPIC_ORDER
        for mutant in _mutants(root, body, order, rng):
            issue: Issue | None = root.check(mutant, (), order)
            assert issue is not None, json.dumps(mutant)[:300]
            checked += 1
    assert checked > 100


def _locked_versions(*names: str) -> dict[str, str]:
    """Versions pinned in locks/dev.txt, the environment CI and ``make test`` install."""
    lock = (Path(__file__).resolve().parents[3] / "locks" / "dev.txt").read_text(encoding="utf-8")
    pins = dict(line.split(" ", 1)[0].split("==", 1) for line in lock.splitlines() if "==" in line[:60])
    return {n: pins[n] for n in names}


def test_the_snapshot_is_compiled_from_the_locked_sdks() -> None:
    """``make lock`` that moves an SDK must come with a regenerated snapshot (REGENERATE)."""
    assert snapshot_sdk_versions() == _locked_versions("openai", "anthropic")


def test_the_shipped_schemas_are_those_of_the_installed_sdks(record_property: Any) -> None:
    """On the locked SDKs the snapshot is their request types, compiled: any difference fails.

    On other releases (``make test-latest``) a difference is drift, not a failure here: it is recorded
    for the drift report, and what must still hold is checked: the types the installed SDK declares
    accept every request the real APIs were recorded accepting.
    """
    fresh = compile_from_sdks()
    drift = snapshot_drift(snapshot_text(fresh))
    if sdk_versions() == snapshot_sdk_versions():
        assert drift == []
        return
    if drift:
        record_property("schema_drift", "\n".join(drift))
    for provider, name, body, headers in _accepted_bodies():
        legacy = headers.get("anthropic-version") == LEGACY_ANTHROPIC_VERSION
        key = "openai" if provider == "openai" else anthropic_schema_name("anthropic-beta" in headers, legacy)
        root = fresh[key]
        assert isinstance(root, ObjectNode)
        issue = root.check(body, (), OPENAI_ORDER if provider == "openai" else ANTHROPIC_ORDER)
        assert issue is None, f"{name}: the installed SDK's types refuse a recorded accepted request"


def test_drift_names_the_values_a_literal_gained_and_lost() -> None:
    shipped = SNAPSHOT.read_text(encoding="utf-8")
    lines = shipped.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith('["literal",') and "gpt-5" in line)
    values = json.loads(lines[i].rstrip(","))[1]
    lines[i] = json.dumps(["literal", [*values[1:], "gpt-9-test"]]) + ("," if lines[i].endswith(",") else "")
    drift = snapshot_drift("\n".join(lines))
    assert drift[0].startswith("request schemas changed") and "1 of" in drift[0]
    assert drift[1] == f"  literal +gpt-9-test, -{values[0]}"
    assert snapshot_drift(shipped) == []


def test_the_simulator_never_imports_the_sdk_types() -> None:
    """Importing the SDK packages costs seconds: a served request must not pay it (snapshot only)."""
    code = (
        "import sys, json\n"
        "from agentlab.sim import app\n"
        "from agentlab.sim.core import Simulator\n"
        "s = Simulator()\n"
        "b = json.dumps({'model': 'sim-reasoner', 'input': 'hi'}).encode()\n"
        "assert app.handle(s, 'POST', '/v1/responses', {'authorization': 'Bearer sim-key'}, b)[0] == 200\n"
        "m = [{'role': 'user', 'content': 'hi'}]\n"
        "b = json.dumps({'model': 'sim-thinker', 'max_tokens': 50, 'messages': m})\n"
        "h = {'anthropic-version': '2023-06-01', 'x-api-key': 'sim-key'}\n"
        "assert app.handle(s, 'POST', '/v1/messages', h, b.encode())[0] == 200\n"
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    assert out.stdout.strip() == "[]"
