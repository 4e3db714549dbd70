"""``osmosis_ai.rollout.backend.harbor``: the established 0.3 Harbor backend is not part of this package.

Harbor runs each rollout's agent in a container pulled from a registry (its ``harbor`` extra brings the
container tooling). This package runs rollouts in-process (:class:`~osmosis_ai.rollout.LocalBackend`), on
Ray (``osmosis eval run --backend ray``), or behind ``create_rollout_server`` with any backend you write.
Importing this path raises ``ModuleNotFoundError`` (an ``ImportError``) that says so.
"""

raise ModuleNotFoundError(
    "osmosis_ai.rollout.backend.harbor (HarborBackend, TaskMode) is not part of this osmosis-ai: it runs "
    "agents in registry containers. Use osmosis_ai.rollout.LocalBackend, `osmosis eval run --backend ray`, "
    "or your own ExecutionBackend behind create_rollout_server.",
    name="osmosis_ai.rollout.backend.harbor",
)
