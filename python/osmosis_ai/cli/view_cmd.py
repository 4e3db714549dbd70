"""``osmosis view LOG [B]``: the report (or the comparison of two logs) served from 127.0.0.1, any size."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from osmosis_ai.errors import CLIError

__all__ = ["view_command"]


@click.command("view")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("other", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port; the URL is printed).")  # fmt: skip
@click.option("--metric", default=None, help="With two logs: the score name to compare (default: the first).")
@click.option(
    "--allow-partial", is_flag=True, help="With two logs: compare the shared rows of different datasets."
)
@click.option("--dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The dataset file for ground truths and fields (default: the one the log names).")  # fmt: skip
def view_command(
    results: Path,
    other: Path | None,
    port: int,
    metric: str | None,
    allow_partial: bool,
    dataset: Path | None,
) -> None:
    """Serve the report page of RESULTS (or compare RESULTS and OTHER) on 127.0.0.1 until Ctrl+C.

    The page is the one `osmosis report` writes, over a log of any size: the log is read once for its
    numbers and row index, and each run is read back from the file when its card is opened. Nothing
    listens beyond this machine and the page makes no request beyond this server.
    """
    from osmosis_ai.cli.output import STATE

    try:
        from osmosis_ai.report._view import compare_site, report_site, serve
    except ImportError as exc:  # pragma: no cover - the extras are in the dev environment
        raise CLIError(str(exc)) from exc
    quiet = STATE.mode == "json"
    if not quiet:
        click.echo(f"Reading {results}" + (f" and {other}" if other else "") + " ...")
    try:
        if other is None:
            site = report_site(results, dataset=dataset)
        else:
            site = compare_site(results, other, metric=metric, allow_partial=allow_partial, dataset=dataset)
    except ImportError as exc:
        raise CLIError(str(exc)) from exc

    def ready(bound: int) -> None:
        url = f"http://127.0.0.1:{bound}/"
        if quiet:
            from osmosis_ai.cli.output import emit_operation

            emit_operation("view", message=f"Serving {url}", resource={"url": url, "port": bound})
        else:
            click.echo(f"Serving {url} (Ctrl+C stops)")

    from osmosis_ai.stop_signals import Terminated

    try:
        asyncio.run(serve(site, port=port, ready=ready))
    except Terminated:
        raise  # SIGTERM: the CLI says so and exits 143
    except KeyboardInterrupt:
        pass  # Ctrl+C is how the page is closed: exit 0
    except OSError as exc:
        raise CLIError(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); choose another --port"
        ) from None
