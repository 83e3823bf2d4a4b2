"""The tool loop: a run pinned to one provider, its steps, tools, checkpoint and transient
continuation, the result it returns, and comparisons of runs across providers.
"""
