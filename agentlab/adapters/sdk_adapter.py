"""The base of the adapters that speak through a provider's SDK client: what they all share, once.

Why a base: construction from a model string and options, the choice between an injected client, the
in-process simulator and a real client, the placeholder key for a simulator served over HTTP, log
redaction of the client's stack and ``aclose`` were written out in every adapter, and a fix made in one
was missed in the others. Here they are one rule each, so every adapter behaves the same:

* ``client=``: an SDK client (``client_type``) used as is; tests inject transports the way the SDK
  takes them (``openai.AsyncOpenAI(http_client=httpx2.AsyncClient(transport=...))``,
  ``anthropic.AsyncAnthropic(http_client=...)``, ``genai.Client(http_options=...)``). It stays the
  caller's: :meth:`SDKAdapter.aclose` never closes it.
* a ``sim-*`` model without ``base_url``: the in-process simulator's client, made by the function the
  provider's spec names (``ProviderSpec.simulator``, a ``"module:attr"`` string), so no adapter
  imports the simulator.
* any other: a real client (``_real_client``, the one piece each adapter writes), keyed by
  :meth:`SDKAdapter._key` (a ``sim-*`` name served at ``base_url`` gets the simulator's placeholder key,
  never one from the environment).

``aclose`` closes only a client the adapter made. ``stream`` is the shared driver
(:func:`agentlab.assembly.assembler.assemble`) on the adapter's ``build``, ``_open`` and
``assembler_class``. A new adapter writes ``client_type``, ``assembler_class``, ``_real_client``,
``build`` and ``_open``; the hooks below only where its SDK differs.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Generic, TypedDict, TypeVar

from agentlab.adapters._simulated import in_process, is_simulated, simulator_key
from agentlab.adapters.built_request import BuiltRequest, check_adapter_args
from agentlab.adapters.registry import get_provider
from agentlab.assembly.assembler import Assembler, WireCall, assemble, assembler_for
from agentlab.errors import ConfigError
from agentlab.neutral.continuity import ContinuityLayout
from agentlab.neutral.events import AdapterEvent
from agentlab.neutral.request import ModelRequest
from agentlab.records.logs import install_redaction, stack_loggers

__all__ = ["AdapterOptions", "SDKAdapter"]

ClientT = TypeVar("ClientT")
SelfT = TypeVar("SelfT", bound="SDKAdapter[Any]")


class AdapterOptions(TypedDict, Generic[ClientT], total=False):
    """The constructor options every SDK adapter takes (an adapter's own come before them)."""

    client: ClientT | None
    api_key: str | None
    base_url: str | None
    max_retries: int
    timeout: float | None
    extra_headers: Mapping[str, str] | None


class SDKAdapter(Generic[ClientT]):
    """An adapter on one SDK client; subclasses set ``provider``, ``api``, ``client_type``.

    ``max_retries``/``timeout``/``extra_headers`` apply to every request the adapter sends (how is
    the subclass's: per-request options or the client's own settings). The key is never in ``repr``.
    """

    provider: str
    api: str
    client_type: ClassVar[type[Any]]
    """The SDK client class ``client=`` must be (checked before anything else)."""
    assembler_class: ClassVar[type[Assembler]]
    """The call's assembler: maps the answer's wire events onto agentlab's."""
    continuity_layout: ContinuityLayout | None = None
    """Where this adapter's wire body carries opaque items (data for the continuity guard, which
    then checks every body of a live loop before it is sent); ``None``: the neutral check only."""

    def __init__(
        self,
        model: str,
        *,
        client: ClientT | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
        timeout: float | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        check_adapter_args(
            self.provider, model, max_retries=max_retries, timeout=timeout, extra_headers=extra_headers,
            client=client, client_type=self.client_type, api_key=api_key, base_url=base_url,
        )  # fmt: skip
        self.model = model
        self.max_retries = max_retries
        self.timeout = timeout
        self._headers: dict[str, str] = dict(extra_headers or {})
        self._owns_client = client is None
        if client is None:
            client = self._new_client(api_key, base_url)
        self._client: ClientT = client
        self.base_url: str | None = self._connect()

    def _new_client(self, api_key: str | None, base_url: str | None) -> ClientT:
        if in_process(self.model, base_url):
            return self._simulator_client(api_key)
        return self._real_client(api_key, base_url)

    def _simulator_client(self, api_key: str | None) -> ClientT:
        """The in-process simulator's client, from the function the provider's spec names."""
        make = get_provider(self.provider).simulator_client()
        if make is None:
            raise ConfigError(
                f"{self.provider}: no in-process simulator serves {self.model!r}; "
                "pass base_url= (a served simulator) or client="
            )
        client: ClientT = make(*self._simulator_args(), **self._simulator_options(api_key))
        return client

    def _simulator_args(self) -> tuple[Any, ...]:
        """Positional arguments of the simulator's client function (Chat: the dialect)."""
        return ()

    def _simulator_options(self, api_key: str | None) -> dict[str, Any]:
        """Keyword arguments of the simulator's client function: the caller's key, if any."""
        return {"api_key": api_key} if api_key else {}

    def _real_client(self, api_key: str | None, base_url: str | None) -> ClientT:
        """A new SDK client for a real host (or a simulator served at ``base_url``)."""
        raise NotImplementedError(f"{type(self).__name__} must define _real_client")

    def _key(self, api_key: str | None, *env: str) -> str | None:
        """The key for a new client: the caller's, else the first of ``env`` set.

        A ``sim-*`` name here is the simulator served at ``base_url``: its placeholder key, never one
        from the environment (a real provider key has no business going to a simulator).
        """
        if is_simulated(self.model):
            return simulator_key(api_key)
        return api_key or next((os.environ[name] for name in env if os.environ.get(name)), None)

    def _connect(self) -> str | None:
        """Set up around the client in use; return the ``base_url`` items and records are tagged with.

        Redaction covers the loggers this client can really reach.
        """
        install_redaction(*stack_loggers(self._client))
        return str(getattr(self._client, "base_url", "")).rstrip("/") or None

    @property
    def client(self) -> ClientT:
        """The SDK client in use (e.g. to share its connection pool)."""
        return self._client

    def build(self, request: ModelRequest) -> BuiltRequest[Any]:
        """The wire body this adapter would send for ``request`` (no I/O); raises on bad settings."""
        raise NotImplementedError(f"{type(self).__name__} must define build")

    async def _open(self, built: BuiltRequest[Any], request: ModelRequest) -> WireCall:
        """Send the body through the SDK; the raw answer back (SDK errors translated, never chained)."""
        raise NotImplementedError(f"{type(self).__name__} must define _open")

    def stream(self, request: ModelRequest) -> AsyncIterator[AdapterEvent]:
        """Send one request; yield display events and diagnostics, then one ``ResponseCompletedEvent``.

        The shared driver (:func:`agentlab.assembly.assembler.assemble`) does the streaming; the
        adapter only builds the body, opens the HTTP answer (``_open``) and maps its events.
        """
        return assemble(request, self.build, self._open, self._new_assembler, self.continuity_layout)

    def _new_assembler(
        self, built: BuiltRequest[Any], request: ModelRequest, call: WireCall, started: float
    ) -> Assembler:
        make = assembler_for(self.assembler_class, model=self.model, base_url=self.base_url)
        return make(built, request, call, started)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} model={self.model!r} base_url={self.base_url!r}>"

    async def aclose(self) -> None:
        """Close the SDK client if this adapter created it (an injected client stays the caller's)."""
        if self._owns_client:
            await self._close_client()

    async def _close_client(self) -> None:
        close: Any = getattr(self._client, "close")  # noqa: B009 - the client type is the subclass's
        await close()

    async def __aenter__(self: SelfT) -> SelfT:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
