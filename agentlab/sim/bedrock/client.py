"""boto3's ``bedrock-runtime`` client on the in-process simulator: botocore's real code, no socket.

Why a ``before-send`` handler: botocore has no transport seam like httpx's, but it emits
``before-send.bedrock-runtime.<Operation>`` with the fully built, *signed* request just before it
would open a connection, and uses the first response a handler returns (the hook its own Stubber and
moto use). Everything above it (parameter validation, serialization, SigV4 or bearer auth, retries,
error parsing, event-stream decoding) is botocore's own path, so what passes here passes against the
service. The reply's body is delivered chunk by chunk (one event-stream message per chunk), ``slow``
faults sleep the calling thread and ``reset`` raises urllib3's ``ProtocolError`` mid-body, as a
dropped connection does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from agentlab.sim.app import handle
from agentlab.sim.core import Simulator
from agentlab.sim.faults import Chunk, Reset, Sleep

BEDROCK_ENDPOINT = "http://bedrock-runtime.sim.agentlab.local"
#: Placeholder credentials the simulated client signs with (shape-checked, never verified).
SIM_ACCESS_KEY = "AKIASIMULATED0000000"
SIM_SECRET_KEY = "sim-secret-access-key"
SIM_REGION = "us-east-1"


class _Raw:
    """The urllib3-response face botocore reads a body through (``stream``, ``read``, ``close``)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = chunks
        self.closed = False

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        for c in self._chunks:
            if isinstance(c, Sleep):
                time.sleep(c.seconds)
            elif isinstance(c, Reset):
                from urllib3.exceptions import ProtocolError

                raise ProtocolError("Connection broken: simulated reset")
            elif c:
                yield c

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        return b"".join(self.stream())

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.closed = True


def attach(client: Any, simulator: Simulator) -> Any:
    """Answer every request ``client`` sends from ``simulator`` (in process); returns the client."""
    from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]

    def send(request: Any, **_: Any) -> AWSResponse:
        url = str(request.url)
        path = "/" + url.split("://", 1)[-1].partition("/")[2]
        body = request.body or b""
        if not isinstance(body, bytes):
            body = body.encode() if isinstance(body, str) else body.read()
        headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in request.headers.items()}
        status, out_headers, chunks = handle(simulator, request.method, path, headers, body)
        return AWSResponse(url, status, out_headers, _Raw(chunks))

    client.meta.events.register_first("before-send.bedrock-runtime", send)
    return client


def bedrock_client(**kw: Any) -> Any:
    """A boto3 ``bedrock-runtime`` client answered by the in-process simulator.

    Simulator options (``seed``, ``secret``, ``retry_after_ms``, ``default_fault``, ``real_models``,
    ``simulator``) go to the :class:`Simulator`; ``region_name``, ``config`` and the credentials
    (placeholders by default; ``aws_bearer_token`` is not a boto3 argument: set
    ``AWS_BEARER_TOKEN_BEDROCK``) to ``boto3.client``.
    """
    import boto3  # type: ignore[import-untyped]

    sim = kw.pop("simulator", None)
    sim_kw = {
        k: kw.pop(k) for k in ("seed", "secret", "retry_after_ms", "default_fault", "real_models") if k in kw
    }
    if sim is None:
        sim = Simulator(**sim_kw)
    elif sim_kw:
        raise TypeError(f"pass simulator options to Simulator, not beside simulator=: {sorted(sim_kw)}")
    from botocore.config import Config  # type: ignore[import-untyped]

    # SigV4 with the placeholder keys, whatever the environment holds: botocore would otherwise prefer
    # a real AWS_BEARER_TOKEN_BEDROCK, and a real key has no business going to a simulator.
    config = Config(signature_version="v4")
    kw["config"] = config.merge(kw["config"]) if kw.get("config") is not None else config
    kw.setdefault("region_name", SIM_REGION)
    kw.setdefault("endpoint_url", BEDROCK_ENDPOINT)
    if "aws_access_key_id" not in kw:
        kw["aws_access_key_id"], kw["aws_secret_access_key"] = SIM_ACCESS_KEY, SIM_SECRET_KEY
    return attach(boto3.client("bedrock-runtime", **kw), sim)
