"""The provider-neutral vocabulary every layer speaks.

Portable items, the request, stream events, usage. Values only; nothing here talks to a provider or
does I/O.
"""
