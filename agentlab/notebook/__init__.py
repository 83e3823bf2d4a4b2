"""agentlab's Jupyter surface: the IPython extension, reasoning panels, run and compare views, charts.

Importing this package loads nothing heavy; each submodule imports ipywidgets/IPython/matplotlib
only when it is imported itself (``import agentlab`` never does; ``tests/test_import.py``).
"""

from __future__ import annotations
