"""boto3's ``bedrock-runtime`` client on the in-process simulator: botocore's real code, no socket.

Why a ``before-send`` handler: botocore has no transport seam like httpx's, but it emits
``before-send.bedrock-runtime.<Operation>`` with the fully built, *signed* request just before it
would open a connection, and uses the first response a handler returns (the hook its own Stubber and
moto use). Everything above it (parameter validation, serialization, SigV4 or bearer auth, retries,
error parsing, event-stream decoding) is botocore's own path, so what passes here passes against the
service. The request is answered by the simulator's one in-process transport
(:class:`~agentlab.sim.transport.SimTransport`, as every other SDK client here), and its body read
chunk by chunk (one event-stream message per chunk): ``slow`` faults sleep the calling thread and a
``reset`` becomes urllib3's ``ProtocolError`` mid-body, as a dropped connection does under botocore.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentlab.sim.transport import SimTransport, split_options

BEDROCK_ENDPOINT = "http://bedrock-runtime.sim.agentlab.local"
#: Placeholder credentials the simulated client signs with (shape-checked, never verified).
SIM_ACCESS_KEY = "AKIASIMULATED0000000"
SIM_SECRET_KEY = "sim-secret-access-key"
SIM_REGION = "us-east-1"


class _Raw:
    """The urllib3-response face botocore reads a body through (``stream``, ``read``, ``close``)."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self.closed = False

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        import httpx2
        from urllib3.exceptions import ProtocolError

        try:
            yield from (c for c in self._response.stream if c)
        except httpx2.ReadError:
            raise ProtocolError("Connection broken: simulated reset") from None

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        return b"".join(self.stream())

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.closed = True


def attach(client: Any, transport: SimTransport) -> Any:
    """Answer every request ``client`` sends from ``transport`` (in process); returns the client."""
    import httpx2
    from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]

    def send(request: Any, **_: Any) -> AWSResponse:
        body = request.body or b""
        if not isinstance(body, bytes):
            body = body.encode() if isinstance(body, str) else body.read()
        headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()}
        sent = httpx2.Request(request.method, str(request.url), headers=headers, content=body)
        answer = transport.handle_request(sent)
        return AWSResponse(str(request.url), answer.status_code, dict(answer.headers), _Raw(answer))

    client.meta.events.register_first("before-send.bedrock-runtime", send)
    return client


def bedrock_client(**kw: Any) -> Any:
    """A boto3 ``bedrock-runtime`` client answered by the in-process simulator.

    Simulator options (``seed``, ``secret``, ``retry_after_ms``, ``default_fault``, ``real_models``,
    ``latency_ms``, ``simulator``) or ``transport=`` go to the transport; ``region_name``, ``config``,
    ``endpoint_url`` and the credentials (placeholders by default) to ``boto3.client``.
    """
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    transport, kw = split_options(kw)
    # SigV4 with the placeholder keys, whatever the environment holds: botocore would otherwise prefer
    # a real AWS_BEARER_TOKEN_BEDROCK, and a real key has no business going to a simulator.
    config = Config(signature_version="v4")
    kw["config"] = config.merge(kw["config"]) if kw.get("config") is not None else config
    kw.setdefault("region_name", SIM_REGION)
    kw.setdefault("endpoint_url", BEDROCK_ENDPOINT)
    if "aws_access_key_id" not in kw:
        kw["aws_access_key_id"], kw["aws_secret_access_key"] = SIM_ACCESS_KEY, SIM_SECRET_KEY
    return attach(boto3.client("bedrock-runtime", **kw), transport)
