"""Execution backends for 0.3 rollouts: the base contract and the in-process :class:`LocalBackend`."""

from osmosis_ai.rollout.backend.base import ExecutionBackend
from osmosis_ai.rollout.backend.local import LocalBackend

__all__ = ["ExecutionBackend", "LocalBackend"]
