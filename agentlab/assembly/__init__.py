"""The neutral assembly layer: wire framing and the one assembler contract every adapter is built on.

* :mod:`.sse`: Server-Sent Events framing, written once (both providers stream SSE).
* :mod:`.assembler`: the ``Assembler`` base (decoded wire event in, neutral events out, timings and
  the final ``ModelResponse`` in one place) and ``assemble``, the one streaming driver.
"""
