"""Agent-framework integrations for 0.3 workflows (each behind its own extra)."""
