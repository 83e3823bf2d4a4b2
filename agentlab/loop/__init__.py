"""The tool loop: a run pinned to one provider, and everything it keeps while it runs.

Its steps, tools, checkpoint and transient continuation, the result it returns, and comparisons of
runs across providers.
"""
