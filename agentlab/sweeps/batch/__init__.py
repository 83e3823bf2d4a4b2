"""The batch backend of ``sweep``: provider batch APIs, one tool-loop step per round.

See :mod:`agentlab.sweeps.batch.driver` for how runs advance and what survives a restart.
"""
