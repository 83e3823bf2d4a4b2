"""Evaluations: paired statistics between models (:mod:`agentlab.evals.stats`)."""
