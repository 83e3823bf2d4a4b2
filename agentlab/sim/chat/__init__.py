"""The simulated Chat Completions hosts (DeepSeek, OpenRouter, local servers) as strict dialects."""
