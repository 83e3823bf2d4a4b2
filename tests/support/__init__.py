"""Test helpers shared by several test modules (not part of the agentlab package)."""
