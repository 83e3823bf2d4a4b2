"""What outlives a run; nothing transient is written here.

The durable event log, long-term memory, the one append-only JSONL writer, atomic report files and
structured logs.
"""
