"""Integrations with agent frameworks: ``openai_agents`` (extra ``openai-agents``), ``strands`` (extra ``strands``)."""
