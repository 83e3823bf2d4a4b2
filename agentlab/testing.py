"""``ScriptedAdapter``: a strict, scripted stand-in for a provider adapter, for tests and docs.

Each model call consumes the next ``Step`` of the script and streams what it describes: reasoning
deltas, opaque reasoning items (tagged with the adapter's provider/API/model/endpoint, exactly like a
real adapter tags them), answer text, tool calls, usage, or an error. It is strict: a call with no
step left fails the run (``ScriptError``); ``assert_done()`` fails when steps were left unconsumed;
steps can assert on the request they receive, in particular on the continuation
(``expect_continuation_from=[0, 1]``: exactly the opaque items steps 0 and 1 produced, in order).

It is a testing helper, never a default: nothing in agentlab picks it unless you pass it as
``adapter=``.

    adapter = ScriptedAdapter([
        Step(reasoning=["Need the weather."], opaque=[b'{"sig":"a"}'],
             tool_calls=[("get_weather", {"city": "Paris"})]),
        Step(text="Paris is warmer.", expect_continuation_from=[0]),
    ])
    result = agentlab.run("openai:sim-reasoner", "Paris or Rome?", tools=[get_weather], adapter=adapter)
    adapter.assert_done()
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlab.adapters.registry import find_provider
from agentlab.assembly.assembler import Assembler, Completion
from agentlab.neutral.diagnostics import register_code
from agentlab.neutral.events import AdapterEvent, StopReason
from agentlab.neutral.items import AssistantTextItem, ProviderReasoningItem, ToolCallItem
from agentlab.neutral.request import ModelRequest
from agentlab.neutral.usage import CallUsage

__all__ = ["ScriptError", "ScriptedAdapter", "Step"]


register_code("scripted", "a diagnostic a test script asked for (Step.diagnostics)")


class _Script(Assembler):
    """The scripted call's assembler, so scripted runs exercise the same contract as real adapters.

    Events are built, stamped and timed by the shared base, like a real adapter's; only the completion
    comes from the script.
    """

    def __init__(self, provider: str, api: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.provider = provider
        self.api = api
        self.completion: Completion | None = None

    def complete(self, notes: list[AdapterEvent]) -> Completion:
        assert self.completion is not None
        return self.completion


class ScriptError(AssertionError):
    """The run did not follow the script (unexpected call, failed expectation, unconsumed steps)."""


# args: a dict, or a str of raw JSON (to script malformed arguments)
ToolCallSpec = tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str] | ToolCallItem


@dataclass
class Step:
    """One scripted model call.

    ``reasoning``: reasoning-delta texts (display only). ``opaque``: payloads of opaque reasoning
    items this call returns (``bytes``/``str``, or ready ``ProviderReasoningItem``s to simulate
    foreign ones). ``text``: answer text (a list streams as several deltas). ``tool_calls``:
    ``(name, args)`` or ``(name, args, call_id)`` or ``ToolCallItem``s (``args`` may be a str of raw
    JSON, to script malformed arguments). ``usage``: a ``CallUsage`` or a provider-neutral dict;
    default: a small deterministic figure. ``stop_reason``: default ``tool_use`` when there are tool
    calls, else ``end_turn``. ``error``: raised instead of completing, after ``error_after`` events
    have streamed. ``expect``: called with the ``ModelRequest`` (raise to fail).
    ``expect_continuation_from``: step indices whose opaque items must be exactly the request's
    continuation. ``reasoning_items_dropped``: reported by the "adapter" for this call.
    """

    reasoning: Sequence[str] = ()
    opaque: Sequence[bytes | str | ProviderReasoningItem] = ()
    text: str | Sequence[str] = ""
    tool_calls: Sequence[ToolCallSpec] = ()
    usage: CallUsage | dict[str, Any] | None = None
    stop_reason: StopReason | None = None
    error: BaseException | None = None
    error_after: int = 0
    expect: Callable[[ModelRequest], Any] | None = None
    expect_continuation_from: Sequence[int] | None = None
    reasoning_items_dropped: int = 0
    diagnostics: Sequence[str] = field(default_factory=tuple)


class ScriptedAdapter:
    """A strict scripted adapter (see the module docstring). Satisfies ``agentlab.adapters.Adapter``."""

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        provider: str = "openai",
        model: str = "sim-reasoner",
        api: str | None = None,
        base_url: str | None = "scripted://",
    ) -> None:
        spec = find_provider(provider)
        if api is None:
            if spec is None:
                raise ValueError(f"unknown provider {provider!r}; pass api= too")
            api = spec.api
        self.provider = provider
        self.api = api
        # opaque items carry the block type the provider's own adapter gives them
        self.block_type = spec.reasoning_block_type if spec is not None else "reasoning"
        self.model = model
        self.base_url = base_url
        self.max_retries = 0  # no SDK below: the run's own ``retries`` cover every scripted error
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []
        self.produced: dict[int, tuple[ProviderReasoningItem, ...]] = {}
        self.closed = False

    @property
    def consumed(self) -> int:
        """How many scripted steps were requested so far."""
        return len(self.requests)

    def assert_done(self) -> None:
        """Fail if some scripted steps were never requested."""
        left = len(self.steps) - len(self.requests)
        if left:
            raise ScriptError(f"{left} scripted step(s) were not consumed (got {len(self.requests)} call(s))")

    async def aclose(self) -> None:
        """Mark the adapter closed, so a test can check that its owner (e.g. a sweep) closed it."""
        self.closed = True

    def _opaque(self, i: int, step: Step, turn_id: str) -> tuple[ProviderReasoningItem, ...]:
        out = []
        for j, p in enumerate(step.opaque):
            if isinstance(p, ProviderReasoningItem):
                out.append(p)
                continue
            payload = p.encode() if isinstance(p, str) else p
            out.append(
                ProviderReasoningItem(
                    payload,
                    provider=self.provider,
                    api=self.api,
                    model=self.model,
                    block_type=self.block_type,
                    turn_id=turn_id,
                    index=j,
                    base_url=self.base_url,
                )
            )
        return tuple(out)

    def _check(self, i: int, step: Step, request: ModelRequest) -> None:
        if request.model != self.model:
            raise ScriptError(f"step {i}: request for model {request.model!r}, adapter serves {self.model!r}")
        for item in request.continuation:
            if not item.matches(
                provider=self.provider, api=self.api, model=self.model, base_url=self.base_url
            ):
                raise ScriptError(f"step {i}: continuation holds a foreign item {item!r}")
        if step.expect_continuation_from is not None:
            want: list[ProviderReasoningItem] = []
            for k in step.expect_continuation_from:
                if k not in self.produced:
                    raise ScriptError(f"step {i}: expect_continuation_from names step {k}, which has not run")
                want.extend(self.produced[k])
            got = list(request.continuation)
            if [w.fingerprint for w in want] != [g.fingerprint for g in got] or any(
                w is not g for w, g in zip(want, got, strict=False)
            ):
                raise ScriptError(
                    f"step {i}: continuation is {[g.fingerprint for g in got]}, expected exactly the items "
                    f"of steps {list(step.expect_continuation_from)}: {[w.fingerprint for w in want]}"
                )
        if step.expect is not None:
            step.expect(request)

    def _usage(self, step: Step, request: ModelRequest, text: str, n_reasoning: int) -> CallUsage:
        if isinstance(step.usage, CallUsage):
            return step.usage
        if isinstance(step.usage, dict):
            return CallUsage.model_validate(step.usage)
        prompt = sum(len(getattr(it, "text", "") or getattr(it, "output", "") or "") for it in request.items)
        reasoning = 8 * n_reasoning
        return CallUsage(
            input_tokens=20 + prompt // 4,
            cache_read_tokens=0,
            cache_write_tokens=0,
            cache_write_1h_tokens=0,
            output_tokens=reasoning + 5 + len(text) // 4,
            reasoning_tokens=reasoning,
            reasoning_source="reported",
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Replay the next scripted step as adapter events; ``ScriptError`` for a call not in the script."""
        i = len(self.requests)
        self.requests.append(request)
        if i >= len(self.steps):
            raise ScriptError(
                f"unexpected model call #{i + 1}: the script has only {len(self.steps)} step(s)"
            )
        step = self.steps[i]
        self._check(i, step, request)
        turn_id = f"scripted_{i}"
        opaque = self._opaque(i, step, turn_id)
        texts = [step.text] if isinstance(step.text, str) else list(step.text)
        texts = [t for t in texts if t]
        calls: list[ToolCallItem] = []
        base = len(opaque)
        pos = base + (1 if texts else 0)
        for k, c in enumerate(step.tool_calls):
            if isinstance(c, ToolCallItem):
                calls.append(c)
                continue
            name, args, *rest = c
            cid = rest[0] if rest else f"call_{i}_{k}"
            arguments = args if isinstance(args, str) else json.dumps(args)
            calls.append(
                ToolCallItem(call_id=cid, name=name, arguments=arguments, turn_id=turn_id, index=pos + k)
            )

        asm = _Script(
            self.provider,
            self.api,
            model=self.model,
            base_url=self.base_url,
            origin=request.origin,
            reasoning_dropped=step.reasoning_items_dropped,
        )
        events: list[AdapterEvent] = [asm.note("scripted", d) for d in step.diagnostics]
        events.extend(asm.reasoning(r, str(b)) for b, r in enumerate(step.reasoning))
        events.extend(asm.text(t) for t in texts)
        events.extend(asm.tool_delta(c.call_id, c.name, c.arguments) for c in calls)

        for n, ev in enumerate(events):
            if step.error is not None and n >= step.error_after:
                raise step.error
            yield ev
        if step.error is not None:
            raise step.error
        self.produced[i] = opaque
        items: list[AssistantTextItem | ToolCallItem] = []
        if texts:
            items.append(AssistantTextItem(text="".join(texts), turn_id=turn_id, index=base))
        items.extend(calls)
        asm.completion = Completion(
            items=tuple(items),
            reasoning=opaque,
            stop_reason=step.stop_reason or ("tool_use" if calls else "end_turn"),
            stop_detail=None,
            usage=self._usage(step, request, "".join(texts), len(step.reasoning)),
            response_id=f"resp_{i}",
        )
        for ev in asm.finish():
            yield ev

    def __repr__(self) -> str:
        return f"<ScriptedAdapter {self.provider}:{self.model} {self.consumed}/{len(self.steps)} steps>"
