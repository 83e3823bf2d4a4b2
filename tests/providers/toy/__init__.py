"""A toy provider, built by following README's "How to add a provider" and nothing else.

* :mod:`.provider`: ``SPEC``, its one registry entry (``agentlab.register_provider(SPEC)``).
* :mod:`._adapter`: ``ToyAdapter``, which maps a ``ModelRequest`` onto the toy wire format and opens
  the answer; its ``stream`` is the shared driver ``agentlab.assembly.assembler.assemble`` (imported
  on first use, like a real adapter and its SDK).
* :mod:`._stream`: ``ToyAssembler``, an ``agentlab.assembly.assembler.Assembler`` mapping the toy
  events onto agentlab's.
* :mod:`._usage`: the usage normalizer.
* :mod:`.server`: the toy's remote side, a scripted in-process service (a real provider has the
  network there, and ``agentlab.sim`` for offline runs).

``tests/providers/test_toy.py`` registers it and runs it through the shared adapter contract and
``agentlab.run("toy:toy-1", ...)`` with a tool call.
"""
