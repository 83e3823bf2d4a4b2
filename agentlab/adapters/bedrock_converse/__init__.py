"""AWS Bedrock's Converse API (``bedrock:<model id>``), on botocore through boto3.

Importing this package imports boto3 (seconds on a cold start); the registry reaches it only when a
``bedrock:`` adapter is built. See :mod:`._adapter` for the choice of client.
"""

from agentlab.adapters.bedrock_converse._adapter import BedrockConverseAdapter
from agentlab.adapters.bedrock_converse._stream import ConverseAssembler

__all__ = ["BedrockConverseAdapter", "ConverseAssembler"]
