"""`osmosis validate`: check an agent loop the way the rollout server will use it."""

from __future__ import annotations

import click


@click.command("validate")
@click.option(
    "-m", "--module", "module_path", required=True, help="The agent loop, as module.path:attribute."
)
@click.option("-v", "--verbose", is_flag=True, help="Also list warnings.")
def validate(module_path: str, verbose: bool) -> int:
    """Validate an agent loop: name, tools (get_tools is called), async run. Exit 1 when invalid."""
    from osmosis_ai.rollout.loader import load_agent_loop
    from osmosis_ai.rollout.serve import validate_and_report

    agent_loop = load_agent_loop(module_path)
    return 0 if validate_and_report(agent_loop, verbose=verbose).valid else 1
