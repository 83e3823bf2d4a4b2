"""Neutral assembly: provider streams to neutral events, and neutral events to a call's live state."""
