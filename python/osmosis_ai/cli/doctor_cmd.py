"""`osmosis doctor [PATH] [--fix]`: check a workspace; ``--fix`` adds missing directories and guide files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.errors import CLIError


@click.command("doctor")
@click.argument("path", default=".", type=click.Path(path_type=Path))
@click.option(
    "--fix", is_flag=True, help="Create missing directories (.gitkeep) and guide files; never overwrites."
)
def doctor_command(path: Path, fix: bool) -> None:
    """Check the workspace at PATH (default: the current directory): layout, guide files, configs, the
    origin remote."""
    from osmosis_ai.cli.output import STATE, emit_operation
    from osmosis_ai.cli.run_support import library_errors
    from osmosis_ai.doctor import diagnose

    with library_errors({}):
        report = diagnose(path, fix=fix)
    data = report.to_dict()
    if not report.valid:
        if (
            STATE.mode == "json"
        ):  # 0.3.0's scripts read the failed result on stdout; the error follows on stderr
            emit_operation(
                "doctor", status_="failed", message="Workspace doctor found problems.", resource=data
            )
        lines = [f"  - missing {m}" for m in report.missing] + [f"  - {p}" for p in report.config_problems]
        hint = "" if fix or not report.missing else "\nRun `osmosis doctor --fix` to add the missing paths."
        raise CLIError(
            f"Workspace {report.workspace_directory} has problems:\n" + "\n".join(lines) + hint,
            code="VALIDATION",
            details=data,
        )
    git = report.git or {}
    emit_operation(
        "doctor",
        message=f"Workspace {report.workspace_directory} is ready.",
        resource=data,
        lines=[
            ("Fixed", ", ".join(report.fixed) or None),
            ("Git", git.get("identity") or git.get("warning")),
            *network_lines(report.network),
        ],
    )


def network_lines(network: dict[str, Any]) -> list[tuple[str, Any]]:
    """The proxy and certificate settings in effect, as doctor's lines (values arrive masked)."""
    proxies = network.get("proxies") or {}
    lines: list[tuple[str, Any]] = [
        ("HTTPS proxy", proxies.get("https") or "none (direct)"),
        ("HTTP proxy", proxies.get("http") or "none (direct)"),
        ("NO_PROXY", ", ".join(network.get("no_proxy") or []) or None),
        ("Certificates", network.get("ca_source")),
    ]
    return lines + [("Network problem", problem) for problem in network.get("problems") or []]
