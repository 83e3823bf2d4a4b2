"""What a simulated provider still holds of a batch sweep (its files and batches)."""

from __future__ import annotations

from agentlab.sim.batch.store import BatchStore


def left_at_provider(store: BatchStore) -> list[str]:
    """OpenAI files, Anthropic and Gemini batches, and OpenAI batches still running.

    OpenAI has no endpoint to delete a batch object (it holds ids, counts and metadata only), so an
    OpenAI batch counts only while it runs; its files (the input holds the loop's
    ``encrypted_content`` items, the output the answers) count until deleted.
    """
    with store.lock:
        files = [f"openai file {fid}" for fid in store.files]
        jobs = [f"{j.api} batch {j.id}" for j in store.jobs.values() if j.api != "openai"]
        running = [
            f"openai batch {j.id} ({j.obj['status']})"
            for j in store.jobs.values()
            if j.api == "openai" and j.cancelled_at is None and j.obj["status"] != "completed"
        ]
    return files + jobs + running
