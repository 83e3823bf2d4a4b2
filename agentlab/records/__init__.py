"""What outlives a run: the durable event log, long-term memory, the one append-only JSONL writer,
atomic report files and structured logs. Nothing transient is written here.
"""
