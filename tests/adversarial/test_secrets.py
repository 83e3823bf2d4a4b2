"""The fake API key never shows, and the SDK request that carried it is not reachable from the error.

The matrix (``test_sinks``) scans the key in every sink under every fault; this file adds what is
specific to secrets: the adapters' and clients' reprs, and an object walk from the raised agentlab
error (its attributes and chained errors, not its frames) for the SDK's ``httpx2.Request`` and
``httpx2.Response`` objects, whose headers hold ``Authorization`` / ``x-api-key``.
"""

from __future__ import annotations

import asyncio
import gc
import types
from typing import Any

import httpx2
import pytest

import agentlab as al
from tests.adversarial.support import (
    MODELS,
    PROVIDERS,
    TASK,
    Canaries,
    HostileTransport,
    adapter_on,
    get_weather,
    report,
    responder_for,
    scan,
)


def _objects_reachable(root: object, depth: int = 8) -> list[tuple[str, object]]:
    """(path, object) for every object reachable from the error's attributes (no frames)."""
    out: list[tuple[str, object]] = []
    seen: set[int] = set()
    level: list[tuple[str, object]] = [("error", root)]
    for _ in range(depth):
        nxt: list[tuple[str, object]] = []
        for path, obj in level:
            if id(obj) in seen or isinstance(
                obj, type | types.ModuleType | types.FunctionType | types.CodeType
            ):
                continue
            seen.add(id(obj))
            out.append((path, obj))
            if isinstance(obj, types.TracebackType | types.FrameType):
                continue
            if isinstance(obj, BaseException):
                for name in ("__cause__", "__context__"):
                    v = getattr(obj, name)
                    if v is not None:
                        nxt.append((f"{path}.{name}", v))
                for k, v in vars(obj).items():
                    nxt.append((f"{path}.{k}", v))
                nxt.append((f"{path}.args", obj.args))
                continue
            if isinstance(obj, dict):
                if "__builtins__" in obj:
                    continue
                nxt += [(f"{path}[{k!r}]", v) for k, v in obj.items()]
                continue
            nxt += [(f"{path}->{type(r).__name__}", r) for r in gc.get_referents(obj)]
        level = nxt
    return out


@pytest.mark.parametrize("fault", ["http401", "http500"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_sdk_request_with_auth_header_not_reachable_from_error(provider: str, fault: str) -> None:
    c = Canaries.fresh()
    err = asyncio.run(_failing(provider, fault, c))
    assert isinstance(err, al.ProviderError), repr(err)
    assert err.status == (401 if fault == "http401" else 500), "the status survives for debugging"
    held = [
        (path, type(o).__name__)
        for path, o in _objects_reachable(err)
        if isinstance(o, httpx2.Request | httpx2.Response | httpx2.Headers)
    ]
    assert not held, (
        f"{provider}/{fault}: the SDK request/response (auth header inside) is reachable from the raised "
        f"{type(err).__name__}: {held[:4]}"
    )


async def _failing(provider: str, fault: str, c: Canaries) -> BaseException:
    """A loop whose second call meets ``fault``; returns the raised error."""
    adapter = adapter_on(
        provider, HostileTransport(provider, responder_for(provider, fault, c)), c.key_for(provider)
    )
    run = al.Run(f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter, retries=0)
    try:
        await run.arun()
    except Exception as e:
        return e
    finally:
        await adapter._client.close()
    raise AssertionError("the run did not fail")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_key_not_in_any_repr_of_adapters_clients_runs_results(provider: str) -> None:
    c = Canaries.fresh()
    key = c.key_for(provider)
    adapter = adapter_on(provider, HostileTransport(provider, responder_for(provider, "none", c)), key)
    run = al.Run(f"{provider}:{MODELS[provider]}", TASK, tools=[get_weather], adapter=adapter)
    texts: dict[str, str] = {
        "repr/str(adapter)": repr(adapter) + str(adapter),
        "repr(vars(adapter))": repr({k: v for k, v in vars(adapter).items() if k != "_client"}),
        "repr/str(client)": repr(adapter._client) + str(adapter._client),
        "repr(run) before": repr(run),
    }
    result = asyncio.run(_arun_close(run, adapter))
    texts["repr(run) after"] = repr(run)
    texts["result reprs"] = repr(result) + str(result) + result._repr_html_() + result.model_dump_json()
    texts["events reprs"] = "\n".join(repr(e) for e in result.events)
    hits = [h for name, t in texts.items() for h in scan(name, t, {f"{provider} api key": key})]
    assert not hits, report(hits)


async def _arun_close(run: al.Run, adapter: Any) -> al.RunResult:
    try:
        return await run.arun()
    finally:
        await adapter._client.close()
