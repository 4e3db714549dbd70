"""THE LLM layer: every request to a model goes through here.

- :mod:`.providers`: provider -> key variable table, OpenAI-wire providers, :func:`resolve_endpoint`.
- :mod:`.transport`: the client interface; :mod:`.openai_http` (direct, on the :mod:`.http1` client) and
  :mod:`.litellm_transport` (LiteLLM, imported on first use) implement it.
- :mod:`.retry`: the one retry policy and failure classification (also used by the rollout callback client).
- :mod:`.usage`: token and attempt accounting; :mod:`.sync`: blocking calls on a background loop;
  :mod:`.local_server`: the embedded local model.

Nothing here imports LiteLLM at import time, nor anything of the layers above (``runs``, the run kinds,
``rollout``, ``cli``): the per-run client agents receive is :mod:`osmosis_ai.eval.llm_client`.
"""
