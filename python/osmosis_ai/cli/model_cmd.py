"""`osmosis model list|info|deploy|undeploy` and `osmosis rollout list`."""

from __future__ import annotations

import click

from osmosis_ai.cli.bounds import check_limit_all
from osmosis_ai.cli.output import (
    STATE,
    confirm,
    emit_detail,
    emit_list,
    emit_operation,
    emit_sectioned,
    help_without_subcommand,
)
from osmosis_ai.cli.platform_context import platform_session

_LIMIT = click.IntRange(1, 50)
_BASE_COLUMNS = [("model_name", "NAME"), ("base_model", "BASE"), ("created_at", "CREATED")]
_LORA_COLUMNS = [
    ("model_name", "NAME"),
    ("base_model", "BASE"),
    ("training_run_name", "RUN"),
    ("checkpoint_step", "STEP"),
    ("deployment_status", "DEPLOYED"),
]


@click.group("model", invoke_without_command=True)
@click.pass_context
def model_group(ctx: click.Context) -> None:
    """List, inspect and deploy the workspace's models."""
    help_without_subcommand(ctx)


@model_group.command("list")
@click.option("--type", "kind", type=click.Choice(["all", "base", "lora"]), default="all", show_default=True)
@click.option("--limit", type=_LIMIT, default=50, show_default=True)
@click.option("--all", "every", is_flag=True, help="Every model (all pages).")
def list_cmd(kind: str, limit: int, every: bool) -> None:
    """List base models and trained LoRA models."""
    from osmosis_ai.platform.models import list_models

    check_limit_all(limit, every)
    with platform_session() as session:
        pages = {
            k: list_models(session.client, k, limit=limit, every=every)
            for k in ("base", "lora")
            if kind in (k, "all")
        }
    lora = pages.get("lora")
    deployments = (
        {
            "active_deployments": lora.extra.get("active_deployments"),
            "max_active_deployments": lora.extra.get("max_active_deployments"),
        }
        if lora
        else {}
    )
    if kind != "all":
        page = pages[kind]
        emit_list(
            page.items,
            _BASE_COLUMNS if kind == "base" else _LORA_COLUMNS,
            total_count=page.total_count,
            has_more=page.has_more,
            next_offset=page.next_offset,
            extra={**session.context(), **deployments},
            empty="No models.",
        )
        return
    if STATE.mode == "json":  # the sectioned envelope: one list per model type
        sections = {
            f"{k}_models": {
                "items": p.items,
                "total_count": p.total_count,
                "has_more": p.has_more,
                "next_offset": p.next_offset,
            }
            for k, p in pages.items()
        }
        emit_sectioned(sections, {**session.context(), **deployments})
        return
    for k, columns in (("base", _BASE_COLUMNS), ("lora", _LORA_COLUMNS)):
        if STATE.mode == "rich":
            click.echo(f"{'Base' if k == 'base' else 'LoRA'} models")
        emit_list(pages[k].items, columns, total_count=pages[k].total_count, empty="  (none)")
        if STATE.mode == "rich":
            click.echo()


@model_group.command("info")
@click.argument("name")
def info_cmd(name: str) -> None:
    """Show a LoRA model: base, training run, checkpoint, deployment."""
    from osmosis_ai.platform.models import get_model

    with platform_session() as session:
        record = get_model(session.client, name)
    keys = [("model_name", "Name"), ("base_model", "Base"), ("training_run_name", "Training run"),
            ("checkpoint_step", "Step"), ("reward", "Reward"), ("deployment_status", "Deployment"),
            ("inference_model", "Inference model"), ("platform_url", "URL")]  # fmt: skip
    emit_detail({**record, **session.context()}, [(label, record.get(key)) for key, label in keys])


def _deploy_command(undeploy: bool) -> click.Command:
    verb = "undeploy" if undeploy else "deploy"

    @click.command(verb)
    @click.argument("name")
    @click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
    def command(name: str, yes: bool) -> None:
        from osmosis_ai.platform.models import deploy

        with platform_session() as session:
            if not confirm(
                f"{verb.capitalize()} model {name}?", yes=yes, summary={"model": name}, default=True
            ):
                emit_operation(f"model.{verb}", status_="cancelled", message="Cancelled.")
                return
            result = deploy(session.client, name, undeploy=undeploy)
        emit_operation(
            f"model.{verb}",
            message=f"Model {result.get('model_name', name)} is {result.get('status', 'updated')}.",
            resource={**result, **session.context()},
        )

    command.help = f"{verb.capitalize()} a LoRA model for inference (idempotent)."
    return command


model_group.add_command(_deploy_command(False))
model_group.add_command(_deploy_command(True))


@click.group("rollout", invoke_without_command=True)
@click.pass_context
def rollout_group(ctx: click.Context) -> None:
    """Create a rollout in this workspace; list the rollouts the platform synced from its repository."""
    help_without_subcommand(ctx)


@rollout_group.command("list")
@click.option("--branch", default=None, help="Rollouts synced from this branch.")
@click.option("--limit", type=_LIMIT, default=50, show_default=True)
@click.option("--all", "every", is_flag=True, help="Every rollout (all pages).")
def rollout_list(branch: str | None, limit: int, every: bool) -> None:
    """List rollouts (name, active, last synced commit)."""
    from osmosis_ai.platform.models import list_rollouts

    check_limit_all(limit, every)
    with platform_session() as session:
        page = list_rollouts(session.client, branch=branch, limit=limit, every=every)
    emit_list(
        page.items,
        [
            ("name", "NAME"),
            ("is_active", "ACTIVE"),
            ("last_synced_commit_sha", "COMMIT"),
            ("created_at", "CREATED"),
        ],
        total_count=page.total_count,
        has_more=page.has_more,
        next_offset=page.next_offset,
        extra=session.context(),
        empty="No rollouts synced yet: push the repository connected to the platform.",
    )


def _add_rollout_init() -> None:
    # `rollout init` is local scaffolding; it lives in its own module and only hangs from this group.
    from osmosis_ai.cli.rollout_init import rollout_init

    rollout_group.add_command(rollout_init)


_add_rollout_init()
