"""The simulated AWS Bedrock Converse protocol (``/model/{modelId}/converse`` and ``/converse-stream``)."""
