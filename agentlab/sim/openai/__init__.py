"""The simulated OpenAI Responses protocol (``POST /v1/responses`` and its routes)."""
