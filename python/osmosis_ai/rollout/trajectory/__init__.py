"""Trajectory documents in ATIF (the Agent Trajectory Interchange Format of the Harbor framework, version
``ATIF-v1.7``, as the established package writes them), every trajectory file's one home: :mod:`.build`
makes a document from a rollout's conversation, per-call metrics and platform context; :mod:`.report` reads
a controller's per-call report; :mod:`.save` writes the rollout server's archive
``<artifact root>/<rollout id>/trajectory.json`` and the JSON text of every trajectory file (``osmosis eval
run``'s ``rollout_trials/<rollout id>/trajectory.json`` too). :mod:`osmosis_ai.atif` checks them.
"""

from osmosis_ai.rollout.trajectory.build import ATIF_VERSION, PRODUCER, build_trajectory
from osmosis_ai.rollout.trajectory.report import (
    CallReport,
    as_call_report,
    read_call_report,
    report_from_response,
)
from osmosis_ai.rollout.trajectory.save import default_artifact_root, save_trajectory, trajectory_json

__all__ = [
    "ATIF_VERSION",
    "PRODUCER",
    "CallReport",
    "as_call_report",
    "build_trajectory",
    "default_artifact_root",
    "read_call_report",
    "report_from_response",
    "save_trajectory",
    "trajectory_json",
]
