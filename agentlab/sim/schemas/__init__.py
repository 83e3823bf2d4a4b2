"""Request-body validation compiled from the SDKs' request types, and each API's wording of it."""
