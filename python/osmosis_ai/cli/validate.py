"""`osmosis validate`: check an agent loop the way the rollout server will use it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from osmosis_ai.cli.output import emit_result, json_result

if TYPE_CHECKING:
    from osmosis_ai.rollout.validator import ValidationResult


def print_validation(result: ValidationResult, verbose: bool = False) -> None:
    """Prints the established validation report of an agent loop (success on stdout, failure on stderr)."""
    if result.valid:
        click.secho(f"Agent loop '{result.agent_name}' validated successfully.", fg="green")
        click.echo(f"  - Tools: {result.tool_count}")
        click.echo(f"  - Warnings: {len(result.warnings)}")
        if verbose:
            for warning in result.warnings:
                click.echo(f"    - {warning}")
        return
    click.secho(f"Agent loop validation failed with {len(result.errors)} error(s):", fg="red", err=True)
    for error in result.errors:
        click.echo(f"  - {error}", err=True)
    if verbose and result.warnings:
        click.echo(f"Warnings ({len(result.warnings)}):", err=True)
        for warning in result.warnings:
            click.echo(f"  - {warning}", err=True)


def validate_and_report(agent_loop: Any, verbose: bool = False) -> ValidationResult:
    """Validates an agent loop and prints the established report (0.2's ``osmosis_ai.rollout`` name).

    Example:
        >>> validate_and_report(my_agent, verbose=True)  # doctest: +SKIP
    """
    from osmosis_ai.rollout.validator import validate_agent_loop

    result = validate_agent_loop(agent_loop)
    print_validation(result, verbose)
    return result


@click.command("validate")
@click.option(
    "-m", "--module", "module_path", required=True, help="The agent loop, as module.path:attribute."
)
@click.option("-v", "--verbose", is_flag=True, help="Also list warnings.")
@json_result
def validate(module_path: str, verbose: bool) -> int:
    """Validate an agent loop: name, tools (get_tools is called), async run. Exit 1 when invalid."""
    from osmosis_ai.rollout.loader import load_agent_loop

    agent_loop = load_agent_loop(module_path)
    result = validate_and_report(agent_loop, verbose=verbose)
    emit_result(
        {
            "module": module_path,
            "valid": result.valid,
            "agent_name": result.agent_name,
            "tool_count": result.tool_count,
            "errors": [str(error) for error in result.errors],
            "warnings": [str(warning) for warning in result.warnings],
        }
    )
    return 0 if result.valid else 1
