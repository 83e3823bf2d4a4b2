"""The simulated Gemini API (``generateContent``, explicit caches, files and their errors)."""
