"""LLM access: the LiteLLM client, retry policy and usage accounting, and the embedded local model server.

Nothing here imports LiteLLM at import time.
"""
