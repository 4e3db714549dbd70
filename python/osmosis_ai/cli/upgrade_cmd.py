"""`osmosis upgrade`: install the newest osmosis-ai release the way this copy was installed."""

from __future__ import annotations

import click

from osmosis_ai.cli.output import STATE, emit_operation, status


@click.command("upgrade")
@click.option("--check", is_flag=True, help="Only say whether a newer release exists; change nothing.")
def upgrade_command(check: bool) -> None:
    """Upgrade osmosis-ai to the newest release on the package index (uv tool, pipx or pip, as installed).

    The index is PyPI unless OSMOSIS_PACKAGE_INDEX_URL names another JSON API root. A copy built from a
    source checkout is left alone: the command says how to update the checkout.
    """
    from osmosis_ai.upgrade import plan_upgrade, run_upgrade

    status("Checking for updates...")
    plan = plan_upgrade()
    status(f"Installed version: {plan.installed}\nLatest version:    {plan.latest} ({plan.index})")
    if plan.up_to_date:
        emit_operation("upgrade", status_="no_update", message="Already up to date.", resource=plan.as_dict())
        return
    if check:
        how = (
            " ".join(plan.command)
            if plan.command
            else f"git -C {plan.location} pull && make -C {plan.location} build"
        )
        emit_operation(
            "upgrade",
            status_="update_available",
            message=f"osmosis-ai {plan.latest} is available (installed: {plan.installed}).",
            resource=plan.as_dict(),
            next_steps=[(how, {"action": "upgrade", "command": how})],
        )
        return
    if plan.command:
        status(f"Running: {' '.join(plan.command)}")
    done = run_upgrade(plan, capture=STATE.mode != "rich")
    resource = {**plan.as_dict(), "stdout": (done.stdout or "")[-2000:] or None}
    emit_operation("upgrade", message=f"Upgraded osmosis-ai to {plan.latest}.", resource=resource)
