"""What ``eval run`` reads before it runs: the ``[evaluation]`` settings, the dataset file and its row
selection, the environment and secrets, and the provenance recorded in the run's manifest.

Messages name the options fields of :class:`~osmosis_ai.eval.run_session.EvalRunOptions` as ``{field}``
(``{dataset_file}``, ``{rows}``, ``{secrets_file}``); warnings go to the run's observer.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError
from osmosis_ai.runs.observer import RunObserver

__all__ = [
    "DATASET_EXTENSIONS",
    "RunSettings",
    "dataset_path",
    "environment",
    "normalized_rows",
    "parse_secrets_file",
    "provenance",
    "read_secrets_file",
    "selection",
    "settings",
]

DATASET_EXTENSIONS = (".jsonl", ".json", ".csv", ".parquet")
_DOTENV_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")

# Opens a platform client (logged in, in the workspace) for a dataset named on the platform.
PlatformOpener = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True)
class RunSettings:
    """``[evaluation]`` as the run uses it.

    Attributes:
        n: Runs per row (default 1).
        limit: At most this many rows (``--rows`` overrides it), or None.
        batch_size: Items in flight, or None for the rollout's own capacity.
        pass_threshold: A run passes at a reward >= this (default 1.0).
        agent_timeout: The workflow's budget in seconds, or None.
        grader_timeout: The grader's budget in seconds, or None.
    """

    n: int
    limit: int | None
    batch_size: int | None
    pass_threshold: float
    agent_timeout: float | None
    grader_timeout: float | None


def _number(config: Any, field: str) -> float | None:
    value = getattr(config.evaluation, field)
    if value is None:
        return None
    if not math.isfinite(float(value)):
        raise RunError(f"{config.where('evaluation.' + field)}: evaluation.{field} must be finite")
    return float(value)


def settings(config: Any) -> RunSettings:
    """``[evaluation]`` of ``config`` checked: n positive, the threshold and the timeouts finite."""
    ev = config.evaluation
    n = 1 if ev.n is None else ev.n
    if n < 1:
        raise RunError(f"{config.where('evaluation.n')}: evaluation.n must be a positive integer, got {n}")
    threshold = _number(config, "pass_threshold")
    return RunSettings(
        n=n,
        limit=ev.limit,
        batch_size=ev.batch_size,
        pass_threshold=1.0 if threshold is None else threshold,
        agent_timeout=_number(config, "agent_workflow_timeout_s"),
        grader_timeout=_number(config, "grader_timeout_s"),
    )


def dataset_path(
    config: Any,
    dataset_file: str | os.PathLike[str] | None,
    platform: PlatformOpener | None,
    observer: RunObserver,
) -> tuple[Path, str]:
    """The dataset file and its source: ``explicit`` (``dataset_file``, no login) or the platform's
    (``cache`` or ``download``, through a client ``platform`` opens)."""
    if dataset_file is None:
        from osmosis_ai.eval.run_dataset import resolve_platform_dataset

        name = config.experiment.dataset
        if platform is None:
            raise RunError(
                f"The config names the platform dataset '{name}': give {{dataset_file}} "
                "(or a platform client to download it with)",
                fields=("dataset_file",),
            )
        with platform() as client:
            path, source = resolve_platform_dataset(client, name)
        observer.message(
            f"dataset cache hit for '{name}'" if source == "cache" else f"downloaded dataset '{name}'"
        )
        _check_extension(path, path.name, ())
        return path.resolve(), source
    path = Path(dataset_file).expanduser()
    if not path.is_file():
        raise RunError(f"{{dataset_file}} {dataset_file}: no such file", fields=("dataset_file",))
    _check_extension(path, f"{{dataset_file}} {dataset_file}", ("dataset_file",))
    return path.resolve(), "explicit"


def _check_extension(path: Path, what: str, fields: tuple[str, ...]) -> None:
    if path.suffix.lower() not in DATASET_EXTENSIONS:
        raise RunError(f"{what}: expected one of {', '.join(DATASET_EXTENSIONS)}", fields=fields)


def parse_secrets_file(text: str, label: str) -> dict[str, str]:
    """Parses dotenv text (``NAME=value``, optional ``export``, ``#`` comments, one pair of quotes).

    Errors cite the source and line number only, never the line's content (it may hold a secret).

    Example:
        >>> parse_secrets_file("export A='x'\\n# c\\nB=y\\n", "f")
        {'A': 'x', 'B': 'y'}
    """
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _DOTENV_LINE.match(stripped)
        if match is None:
            raise RunError(f"{label}:{number}: expected NAME=value (the line's content is not shown)")
        value = match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[match.group(1)] = value
    return values


def read_secrets_file(secrets_file: str | os.PathLike[str] | None) -> dict[str, str]:
    """The values of a dotenv secrets file (``-`` reads standard input); empty without one."""
    if secrets_file is None:
        return {}
    if str(secrets_file) == "-":
        return parse_secrets_file(sys.stdin.read(), "<stdin>")
    if not Path(secrets_file).is_file():
        raise RunError(f"{{secrets_file}} {secrets_file}: no such file", fields=("secrets_file",))
    return parse_secrets_file(Path(secrets_file).read_text(encoding="utf-8"), str(secrets_file))


def environment(
    config: Any, secrets_file: str | os.PathLike[str] | None, observer: RunObserver
) -> tuple[dict[str, str], tuple[str, ...]]:
    """``[env]`` and the secrets file into this process's environment, never overriding what is set.

    Returns the rollout's environment as resolved here (for Ray workers) and the names holding secrets.
    """
    from osmosis_ai.redact import remember

    values: dict[str, str] = {**config.env, **read_secrets_file(secrets_file)}
    # Masked in logs.txt, the results log and every file of the run, whatever prints them.
    names = dict.fromkeys([*values, *config.secrets])  # every name the rollout gets, in order
    secret_names = tuple(key for key in names if key not in config.env or key in config.secrets)
    for key, value in values.items():
        os.environ.setdefault(key, value)
    remember(os.environ.get(key) for key in secret_names)  # from the file or, else, the environment
    missing = [name for name in config.secrets if not os.environ.get(name)]
    if missing:
        observer.warning(
            "SECRETS",
            f"[secrets] not set locally: {', '.join(missing)} (pass --secrets-file or export them)",
        )
    return {key: os.environ[key] for key in names if os.environ.get(key)}, secret_names


def selection(path: Path, rows: str | None, limit: int | None) -> tuple[list[int] | None, int, int]:
    """``(rows indices or None, rows selected, rows in the file)``; a selector past the end is an error."""
    from osmosis_ai.datasets import count_rows
    from osmosis_ai.eval.run_rows import parse_rows_selector

    total = count_rows(path)
    if rows is None:
        selected = min(limit, total) if limit is not None and limit > 0 else total
        return None, selected, total
    try:
        indices = parse_rows_selector(rows)
    except ValueError as exc:
        raise RunError(str(exc)) from exc
    beyond = [i for i in indices if i >= total]
    if beyond:
        raise RunError(
            f"{{rows}}: {', '.join(map(str, beyond[:10]))} out of range (the file has rows 0-{total - 1})",
            fields=("rows",),
        )
    return indices, len(indices), total


def normalized_rows(
    path: Path, indices: list[int] | None, limit: int | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(position, work-item row)`` of each selected row, checked by the reader's ``eval_run`` contract."""
    from osmosis_ai.eval.run_rows import item_row, select_rows

    for position, (source, row) in enumerate(select_rows(path, indices, limit)):
        yield position, item_row(source, row)


def provenance(config: Any, root: Path, observer: RunObserver) -> dict[str, Any]:
    """SDK version, the config's branch/commit and ``[advanced]``, and the worktree's git state."""
    from osmosis_ai._version import __version__
    from osmosis_ai.platform.workspace import git_state

    git = git_state(root)
    experiment = config.experiment
    if config.advanced:
        observer.warning(
            "ADVANCED",
            f"[advanced] keys are kept as provenance but not used by eval run: {', '.join(sorted(config.advanced))}",
        )
    pinned_commit = experiment.commit_sha and git.get("git_head") and experiment.commit_sha != git["git_head"]
    pinned_branch = experiment.branch and git.get("git_branch") and experiment.branch != git["git_branch"]
    if pinned_commit or pinned_branch:
        observer.warning(
            "WORKTREE", "the config pins a branch or commit; eval run executes the workspace as it is"
        )
    return {
        "sdk_version": __version__,
        "config_branch": experiment.branch,
        "config_commit_sha": experiment.commit_sha,
        "advanced": dict(config.advanced) or None,
        **git,
    }
