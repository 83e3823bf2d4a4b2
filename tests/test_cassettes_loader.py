"""The fixture loader reads every recorded file (so fixture-based tests can trust it)."""

from __future__ import annotations

from tests.support.cassettes import fixture_files, fixtures_dir, load_cassette, load_chunks


def test_every_cassette_loads_with_a_status_and_payload() -> None:
    root = fixtures_dir()
    files = fixture_files("anthropic") + fixture_files("openai") + fixture_files("errors")
    assert len(files) >= 25, f"expected the recorded cassettes under {root}"
    for path in files:
        exchanges = load_cassette(path)
        assert exchanges, path.name
        for ex in exchanges:
            assert ex.status in (200, 400, 401, 404), (path.name, ex.status)
            assert ex.request_json is not None, path.name
            if ex.response_kind == "sse":
                assert ex.response_payload, path.name
                # Responses and Messages events name their type; Chat Completions chunks do not (each
                # is a completion chunk, or an error object in the stream).
                chat = "/chat/completions" in ex.url
                key = ("choices", "error") if chat else ("type",)
                assert all(any(k in e for k in key) for e in ex.response_payload), path.name


def test_chunk_file_groups_responses() -> None:
    root = fixtures_dir()
    groups = load_chunks(root / "errors" / "vercel-ai__openai_responses_in_stream_error_event.chunks.txt")
    assert groups and groups[0][0]["type"] == "response.created"
    assert groups[-1][-1]["type"] == "response.failed"
