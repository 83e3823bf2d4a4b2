"""The simulated Anthropic Messages protocol (``POST /v1/messages`` and its routes)."""
