"""`osmosis validate`: check an agent loop the way the rollout server will use it."""

from __future__ import annotations

import click

from osmosis_ai.cli.output import emit_result, json_result


@click.command("validate")
@click.option(
    "-m", "--module", "module_path", required=True, help="The agent loop, as module.path:attribute."
)
@click.option("-v", "--verbose", is_flag=True, help="Also list warnings.")
@json_result
def validate(module_path: str, verbose: bool) -> int:
    """Validate an agent loop: name, tools (get_tools is called), async run. Exit 1 when invalid."""
    from osmosis_ai.rollout.loader import load_agent_loop
    from osmosis_ai.rollout.serve import validate_and_report

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
