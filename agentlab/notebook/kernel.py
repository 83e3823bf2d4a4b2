"""Whether this process is a Jupyter kernel that shows widgets: the one question asked everywhere.

A module of its own, importing nothing of agentlab: the warm-up (started by the IPython extension),
the live views (which load that extension) and the hook-up all ask it, and would otherwise import
each other in a circle.
"""

from __future__ import annotations

import os
import sys

__all__ = ["in_kernel"]


def in_kernel() -> bool:
    """True inside a Jupyter kernel (a frontend that can show widgets), False in scripts and IPython TUI.

    ``AGENTLAB_NO_WIDGETS=1`` turns live widgets off (static HTML results still render).
    """
    if os.environ.get("AGENTLAB_NO_WIDGETS", "").lower() in {"1", "true", "yes"}:
        return False
    if "IPython" not in sys.modules or "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None
