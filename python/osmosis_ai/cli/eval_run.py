"""`osmosis eval run configs/eval/NAME.toml`: a 0.3 workspace's evaluation, locally, on the run engine.

The work is the library's :func:`osmosis_ai.eval.run_session.run_eval_run` (no rollout server, no login
for a local ``--dataset-file``; ``--name`` resumes). This module maps the click options to its
:class:`~osmosis_ai.eval.run_session.EvalRunOptions`, shows the steps, asks the cost question, opens the
platform client when the config's dataset must be downloaded, and renders the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.backend_options import backend_options
from osmosis_ai.cli.run_support import BACKEND_FLAGS, library_errors
from osmosis_ai.runs.observer import ProgressHook, RunObserver

if TYPE_CHECKING:
    from osmosis_ai.cli.platform_context import Session
    from osmosis_ai.platform.client import PlatformClient
    from osmosis_ai.runs.work import RunOutcome


@click.command("run")
@click.argument("config_path")
@click.option(
    "--name", default=None, metavar="NAME", help="Run name; running the same name again resumes it."
)
@click.option(
    "-o", "--output", default=None, metavar="DIR", help="Output root (default <workspace>/.osmosis/evals)."
)
@click.option(
    "--dataset-file",
    default=None,
    metavar="FILE",
    help="The dataset to run: .jsonl, .json, .csv or .parquet.",
)
@click.option(
    "--secrets-file",
    default=None,
    metavar="FILE",
    help="dotenv file (or - for stdin) with the [secrets] values and provider keys.",
)
@click.option(
    "--rows",
    default=None,
    metavar="SEL",
    help="Source rows to run, e.g. 3,7,10-20 (overrides [evaluation] limit).",
)
@click.option("--fresh", is_flag=True, help="Archive this name's existing run and start over.")
@click.option(
    "--retry-failed", is_flag=True, help="Also re-run items whose latest result failed or was skipped."
)
@click.option(
    "--max-in-flight",
    type=int,
    default=None,
    metavar="N",
    help="Items in flight at once (default: [evaluation] batch_size; 0 or less is ignored).",
)
@click.option("-y", "--yes", is_flag=True, help="Skip the cost confirmation.")
@click.option(
    "--eval-fn",
    "eval_fns",
    multiple=True,
    metavar="MODULE:FN",
    help="Scorer of a 0.2 RolloutAgentLoop entrypoint (a 0.3 workflow has its Grader).",
)
@click.option(
    "--base-url", default=None, metavar="URL", help="OpenAI-compatible server for the config's model_path."
)
@click.option(
    "--api-key",
    default=None,
    metavar="KEY",
    help="API key for the model (else the provider's environment variable).",
)
@click.option(
    "--rollout-port",
    type=click.IntRange(1, 65535),
    default=None,
    metavar="PORT",
    help="Fixed port of the local endpoint the workflow's model calls go to (default: an ephemeral one).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Print every line of the run's logs.txt (one per item) instead of a progress bar.",
)
@click.option(
    "--upload",
    is_flag=True,
    help="When the run is complete, import it into the platform (needs a login; resumable).",
)
@backend_options
@click.pass_context
def eval_run(ctx: click.Context, **o: Any) -> None:
    """Run an eval config locally over a dataset file; running the same --name again resumes it.

    \b
    osmosis eval run configs/eval/calc.toml --dataset-file data/calc.jsonl --name calc-1 -y
    """
    ctx.exit(run(o))


FLAGS = {
    **BACKEND_FLAGS,
    "rollout_port": "--rollout-port",
    "dataset_file": "--dataset-file",
    "secrets_file": "--secrets-file",
    "rows": "--rows",
    "output": "-o",
    "fresh": "--fresh",
    "name": "--name",
    "eval_fns": "--eval-fn",
}
# Click options that are not options of the run: how this command shows it and asks.
_CLI_ONLY = ("yes", "verbose", "upload", "ray_address", "ray_workers")


def run(o: dict[str, Any]) -> int:
    """Runs the command; returns the exit code (1 when the run is partial)."""
    from osmosis_ai.cli.eval_run_report import render
    from osmosis_ai.cli.output import status
    from osmosis_ai.cli.platform_context import platform_session
    from osmosis_ai.eval.run_session import EvalRunOptions, run_eval_run
    from osmosis_ai.runs.backends import BackendOptions

    def platform() -> AbstractContextManager[PlatformClient]:
        return _client_of(platform_session())

    with library_errors(FLAGS):
        fields = {k: v for k, v in o.items() if k not in _CLI_ONLY}
        fields["backend"] = BackendOptions(
            o["backend"], ray_address=o["ray_address"], ray_workers=o["ray_workers"]
        )
        options = EvalRunOptions(**fields, log_every_item=o["verbose"])
        if o["upload"]:
            _check_upload_ready(o["config_path"])
        result = run_eval_run(options, _Observer(yes=o["yes"], verbose=o["verbose"]), platform=platform)
    if result.status == "cancelled":
        status("Cancelled")
        return 0
    return render(result, upload=o["upload"])


def _check_upload_ready(config_path: str) -> None:
    """`--upload`: a missing login fails now, not after the last item (a misplaced config still first)."""
    from osmosis_ai.cli.eval_upload import check_upload_ready
    from osmosis_ai.workspace_layout import check_config_location, resolve_config_path

    check_config_location(resolve_config_path(config_path), "eval", "eval run")
    check_upload_ready()


@contextlib.contextmanager
def _client_of(session: AbstractContextManager[Session]) -> Iterator[PlatformClient]:
    with session as opened:
        yield opened.client


class _Observer(RunObserver):
    """Steps and warnings on stderr (none in JSON mode), the cost question, the progress bar; with
    ``verbose`` the run's log lines in place of the milestones and the bar."""

    def __init__(self, *, yes: bool, verbose: bool) -> None:
        self.yes, self.verbose = yes, verbose

    def message(self, text: str) -> None:
        from osmosis_ai.cli.output import status

        status(text)

    def milestone(self, text: str) -> None:
        if not self.verbose:  # --verbose prints it as a log line
            self.message(text)

    def notice(self, text: str) -> None:
        click.echo(text, err=True)

    def warning(self, code: str, text: str) -> None:
        from osmosis_ai.cli.output import warn

        warn(code, text)

    def log_line(self, text: str) -> None:
        if self.verbose:  # an item's line may quote the model or the agent's error
            from osmosis_ai.terminal_text import terminal_safe

            click.echo(terminal_safe(text), err=True)

    def confirm(self, question: str) -> bool:
        from osmosis_ai.cli.output import confirm

        return confirm(question, yes=self.yes)

    def progress(self, total: int, *, title: str | None = None) -> ProgressHook:
        from osmosis_ai.cli.output import STATE
        from osmosis_ai.runs.progress import Progress

        def extra(outcome: RunOutcome) -> list[str]:
            mean = outcome.running_mean()
            return [f"failed {outcome.failed}"] + ([f"mean reward {mean:.3f}"] if mean is not None else [])

        show = STATE.mode == "rich"
        if show and not self.verbose and title:
            self.message(title)
        return Progress(total, unit="rollouts", extra=extra, quiet=not show or self.verbose)
