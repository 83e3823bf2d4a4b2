"""AWS wire pieces shared by the simulated AWS protocols (Bedrock Converse, Claude on Bedrock)."""
