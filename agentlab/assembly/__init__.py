"""The neutral assembly layer: provider streams to neutral events, and neutral events to a call's state.

* :mod:`.sse`: Server-Sent Events framing, written once (both providers stream SSE).
* :mod:`.assembler`: the ``Assembler`` base (decoded wire event in, neutral events out, timings and
  the final ``ModelResponse`` in one place) and ``assemble``, the one streaming driver.
* :mod:`.reducer`: ``accumulate(snapshot, event) -> snapshot``, the live state of one model call,
  shared by the run's consumers and the notebook views.
"""
