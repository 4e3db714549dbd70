"""Compatibility path ``osmosis_ai.rollout.eval`` (0.2.x): the local ``test``/``eval`` building blocks.

Re-exports only; the implementations live in :mod:`osmosis_ai.eval` and :mod:`osmosis_ai.datasets`.
"""
