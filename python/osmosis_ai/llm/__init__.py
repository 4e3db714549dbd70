"""THE LLM layer: every request to a model goes through here.

- :mod:`.providers`: provider -> key variable table, OpenAI-wire providers, :func:`resolve_endpoint`.
- :mod:`.transport`: the client interface; :mod:`.openai_http` (direct, on the :mod:`.http1` client) and
  :mod:`.litellm_transport` (LiteLLM, imported on first use) implement it.
- :mod:`.retry`: the one retry policy and failure classification (also used by the rollout callback client).
- :mod:`.usage`: token and attempt accounting; :mod:`.chat`: the per-run client agents receive;
  :mod:`.sync`: blocking calls on a background loop; :mod:`.local_server`: the embedded local model.

Nothing here imports LiteLLM at import time.
"""
