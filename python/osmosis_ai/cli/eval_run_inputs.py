"""What ``osmosis eval run`` reads before it runs: the ``[evaluation]`` settings, the dataset file and its row
selection, the environment and secrets, and the provenance recorded in the run's manifest."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import click

from osmosis_ai.errors import CLIError

__all__ = [
    "DATASET_EXTENSIONS",
    "dataset_path",
    "environment",
    "normalized_rows",
    "provenance",
    "selection",
    "settings",
]

DATASET_EXTENSIONS = (".jsonl", ".json", ".csv", ".parquet")


def _number(config: Any, field: str) -> float | None:
    value = getattr(config.evaluation, field)
    if value is None:
        return None
    if not math.isfinite(float(value)):
        raise CLIError(f"{config.where('evaluation.' + field)}: evaluation.{field} must be finite")
    return float(value)


def settings(config: Any) -> dict[str, Any]:
    """``[evaluation]`` as the run uses it: n, limit, batch_size, pass_threshold (default 1.0), both timeouts."""
    ev = config.evaluation
    n = 1 if ev.n is None else ev.n
    if n < 1:
        raise CLIError(f"{config.where('evaluation.n')}: evaluation.n must be a positive integer, got {n}")
    threshold = _number(config, "pass_threshold")
    return {
        "n": n,
        "limit": ev.limit,
        "batch_size": ev.batch_size,
        "pass_threshold": 1.0 if threshold is None else threshold,
        "agent_timeout": _number(config, "agent_workflow_timeout_s"),
        "grader_timeout": _number(config, "grader_timeout_s"),
    }


def dataset_path(config: Any, dataset_file: str | None) -> tuple[Path, str]:
    """The dataset file and its source: ``explicit`` (--dataset-file, no login) or the platform's."""
    if dataset_file is None:
        from osmosis_ai.cli.output import status
        from osmosis_ai.cli.platform_context import platform_session
        from osmosis_ai.eval.run_dataset import resolve_platform_dataset

        name = config.experiment.dataset
        with platform_session() as session:
            path, source = resolve_platform_dataset(session.client, name)
        status(f"dataset cache hit for '{name}'" if source == "cache" else f"downloaded dataset '{name}'")
        _check_extension(path, path.name)
        return path.resolve(), source
    path = Path(dataset_file).expanduser()
    if not path.is_file():
        raise CLIError(f"--dataset-file {dataset_file}: no such file")
    _check_extension(path, f"--dataset-file {dataset_file}")
    return path.resolve(), "explicit"


def _check_extension(path: Path, what: str) -> None:
    if path.suffix.lower() not in DATASET_EXTENSIONS:
        raise CLIError(f"{what}: expected one of {', '.join(DATASET_EXTENSIONS)}")


def environment(config: Any, secrets_file: str | None) -> tuple[dict[str, str], tuple[str, ...]]:
    """``[env]`` and the secrets file into this process's environment, never overriding what is set.

    Returns the rollout's environment as resolved here (for Ray workers) and the names holding secrets.
    """
    from osmosis_ai.cli.submit import parse_secrets_file

    values: dict[str, str] = dict(config.env)
    if secrets_file == "-":
        values.update(parse_secrets_file(click.get_text_stream("stdin").read(), "<stdin>"))
    elif secrets_file is not None:
        if not Path(secrets_file).is_file():
            raise CLIError(f"--secrets-file {secrets_file}: no such file")
        values.update(parse_secrets_file(Path(secrets_file).read_text(encoding="utf-8"), secrets_file))
    from osmosis_ai.redact import remember

    # Masked in logs.txt, the results log and every file of the run, whatever prints them.
    names = dict.fromkeys([*values, *config.secrets])  # every name the rollout gets, in order
    secret_names = tuple(key for key in names if key not in config.env or key in config.secrets)
    for key, value in values.items():
        os.environ.setdefault(key, value)
    remember(os.environ.get(key) for key in secret_names)  # from the file or, else, the environment
    missing = [name for name in config.secrets if not os.environ.get(name)]
    if missing:
        from osmosis_ai.cli.output import warn

        warn(
            "SECRETS", f"[secrets] not set locally: {', '.join(missing)} (pass --secrets-file or export them)"
        )
    return {key: os.environ[key] for key in names if os.environ.get(key)}, secret_names


def selection(path: Path, rows: str | None, limit: int | None) -> tuple[list[int] | None, int, int]:
    """``(--rows indices or None, rows selected, rows in the file)``; a selector past the end is an error."""
    from osmosis_ai.datasets import count_rows
    from osmosis_ai.eval.run_rows import parse_rows_selector

    total = count_rows(path)
    if rows is None:
        selected = min(limit, total) if limit is not None and limit > 0 else total
        return None, selected, total
    try:
        indices = parse_rows_selector(rows)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    beyond = [i for i in indices if i >= total]
    if beyond:
        raise CLIError(
            f"--rows: {', '.join(map(str, beyond[:10]))} out of range (the file has rows 0-{total - 1})"
        )
    return indices, len(indices), total


def normalized_rows(path: Path, indices: list[int] | None, limit: int | None) -> Any:
    """``(position, work-item row)`` of each selected row, checked by the reader's ``eval_run`` contract."""
    from osmosis_ai.eval.run_rows import normalize_row, select_rows

    for position, (source, row) in enumerate(select_rows(path, indices, limit)):
        yield position, normalize_row(source, row).as_item()


def provenance(config: Any, root: Path) -> dict[str, Any]:
    """SDK version, the config's branch/commit and ``[advanced]``, and the worktree's git state."""
    from osmosis_ai._version import __version__
    from osmosis_ai.cli.output import warn
    from osmosis_ai.platform.workspace import git_state

    git = git_state(root)
    experiment = config.experiment
    if config.advanced:
        warn(
            "ADVANCED",
            f"[advanced] keys are kept as provenance but not used by eval run: {', '.join(sorted(config.advanced))}",
        )
    pinned_commit = experiment.commit_sha and git.get("git_head") and experiment.commit_sha != git["git_head"]
    pinned_branch = experiment.branch and git.get("git_branch") and experiment.branch != git["git_branch"]
    if pinned_commit or pinned_branch:
        warn("WORKTREE", "the config pins a branch or commit; eval run executes the workspace as it is")
    return {
        "sdk_version": __version__,
        "config_branch": experiment.branch,
        "config_commit_sha": experiment.commit_sha,
        "advanced": dict(config.advanced) or None,
        **git,
    }
