"""`osmosis eval upload RUN_DIR`, and the upload step of `osmosis eval run --upload`.

The run directory is checked locally first (a run that is not finished is refused before any login is
needed), then imported under the run's lock. The platform remembers what already landed, so an
interrupted upload (Ctrl+C, a dropped connection) resumes where it stopped when the command runs again.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.output import STATE, emit_operation, is_interactive, status
from osmosis_ai.cli.platform_context import current_login, platform_session, platform_settings

if TYPE_CHECKING:
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.platform.eval_import import ImportFile, ImportPlan, ImportState


def retry_command(run_dir: Path) -> str:
    """The command that resumes (or retries) the upload of ``run_dir``."""
    return f"osmosis eval upload {shlex.quote(str(run_dir))}"


def check_upload_ready() -> None:
    """Fails at once when an upload could not start (no workspace, no login): `eval run --upload` asks
    before running anything, not after the last item."""
    from osmosis_ai.platform.workspace import resolve_workspace

    settings = platform_settings()
    resolve_workspace()
    current_login(settings)


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


def import_with_progress(client: PlatformClient, plan: ImportPlan) -> tuple[ImportState, int]:
    """Imports ``plan`` showing progress on stderr; returns the final state and how many files were sent.

    A bar in bytes on a terminal; elsewhere a line before and after (nothing in ``--json`` mode).
    """
    from osmosis_ai.platform.eval_import import import_run, total_bytes

    sent: list[ImportFile] = []
    bar: Any = None  # click's progress bar (its class is not public)

    def on_pending(files: list[ImportFile]) -> None:
        nonlocal bar
        sent.extend(files)
        already = len(plan.files) - len(files)
        if not files:
            status(f"All {len(plan.files)} files are on the platform already; finalizing...")
            return
        note = f" ({already} already on the platform)" if already else ""
        status(f"Uploading {len(files)} of {len(plan.files)} files, {_size(total_bytes(files))}{note}...")
        if STATE.mode == "rich" and is_interactive():
            bar = click.progressbar(length=total_bytes(files), label="Uploading", file=sys.stderr)
            bar.__enter__()

    try:
        state = import_run(
            client,
            plan,
            on_pending=on_pending,
            progress=lambda path, n: bar.update(n) if bar is not None else None,
        )
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    return state, len(sent)


def upload_run(run_dir: Path, *, locked: bool) -> dict[str, Any]:
    """Checks and imports ``run_dir``; returns the result resource.

    Args:
        locked: The caller holds the run's lock (`eval run --upload`); otherwise it is taken here.

    Raises:
        LocalEvalUploadError: The run cannot be imported (incomplete, unfinished, changed).
        PlatformError: No login or workspace, or the platform refused or answered wrongly.
        KeyboardInterrupt: After saying how to resume.
    """
    from osmosis_ai.eval.run_dir import RunDirectory
    from osmosis_ai.eval.run_upload import build_upload_plan

    run_dir = Path(run_dir).expanduser().absolute()
    holder = None if locked else RunDirectory(run_dir.parent, run_dir.name)
    if holder is not None:
        holder.lock()
    try:
        plan = build_upload_plan(run_dir)
        with platform_session() as session:
            try:
                state, sent = import_with_progress(session.client, plan)
            except KeyboardInterrupt as exc:
                from osmosis_ai.stop_signals import stop_word

                status(
                    f"Upload {stop_word(getattr(exc, 'exit_code', 130))}: nothing is lost. "
                    f"Resume with `{retry_command(run_dir)}` "
                    "(files already uploaded are not sent again)."
                )
                raise
    finally:
        if holder is not None:
            holder.unlock()
    return {
        **state.as_dict(),
        "local_run_id": plan.local_run_id,
        "local_run_path": str(run_dir),
        "platform_url": state.platform_url,
        "sent_files": sent,
        **session.context(),
    }


@click.command("upload")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def eval_upload(run_dir: Path) -> None:
    """Import a finished local eval run (a directory `osmosis eval run` wrote) into the platform.

    An interrupted upload resumes where it stopped when run again: files already on the platform are not
    sent twice. Run it inside the workspace's repository, logged in.

    \b
    osmosis eval upload .osmosis/evals/calc-1
    """
    resource = upload_run(run_dir, locked=False)
    name = resource["eval_run_name"]
    steps = [(f"osmosis eval info {name}", {"action": "eval_info", "name": name})]
    if resource["platform_url"]:
        steps.append(
            (f"View: {resource['platform_url']}", {"action": "open_url", "url": resource["platform_url"]})
        )
    emit_operation(
        "eval.upload",
        message=f"Uploaded local evaluation {resource['local_run_path']} as {name}.",
        resource=resource,
        lines=[("Files", f"{resource['uploaded_files']} ({resource['sent_files']} sent now)")],
        next_steps=steps,
    )
