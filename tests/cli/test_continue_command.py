"""The printed "continue with" commands: the user's own arguments, minus what must not repeat, no secret."""

from __future__ import annotations

from pathlib import Path

from osmosis_ai.cli.run_log import continue_command, resume_command


def test_resume_swaps_the_log_for_resume_in_either_spelling_and_hides_the_key() -> None:
    argv = ["eval", "-m", "m.py:f", "--log=a.jsonl", "--api-key", "sk-live-1", "-d", "d.jsonl"]
    command = resume_command(Path("runs/a.jsonl"), argv)
    assert command == "osmosis eval -m m.py:f --api-key '<your API key>' -d d.jsonl --resume runs/a.jsonl"
    again = resume_command(Path("b.jsonl"), ["eval", "--resume", "old.jsonl", "--api-key=sk-live-2"])
    assert "sk-live" not in again and again.endswith("--resume b.jsonl") and "old.jsonl" not in again


def test_dropped_options_and_switches_go_and_additions_come_last() -> None:
    argv = ["--json", "eval", "run", "c.toml", "--name", "old", "--fresh", "-o", "my runs", "-y"]
    command = continue_command(
        argv, drop_options=("--name",), drop_switches=("--fresh",), add=("--name", "r1")
    )
    assert command == "osmosis --json eval run c.toml -o 'my runs' -y --name r1"
