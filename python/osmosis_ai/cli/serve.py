"""`osmosis serve`: serve an agent loop to TrainGate (the remote rollout server)."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import click

from osmosis_ai.errors import CLIError
from osmosis_ai.stop_signals import exit_code_of, stop_word

if TYPE_CHECKING:
    from osmosis_ai.rollout.serve import ServeEvents, ServeStart
    from osmosis_ai.rollout.validator import ValidationResult

_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


@click.command("serve")
@click.option(
    "-m", "--module", "module_path", required=True, help="The agent loop, as module.path:attribute."
)
@click.option(
    "-p", "--port", type=click.IntRange(1, 65535), default=9000, show_default=True, help="TCP port."
)
@click.option(
    "-H", "--host", default="127.0.0.1", show_default=True, help="Interface to bind (0.0.0.0 for all)."
)
@click.option("--no-validate", is_flag=True, help="Skip the agent loop checks before serving.")
@click.option("--reload", is_flag=True, help="Restart when code in the current directory changes.")
@click.option("--log-level", type=click.Choice(_LOG_LEVELS), default="info", show_default=True)
@click.option("--skip-register", is_flag=True, help="Serve without registering with the Osmosis platform.")
@click.option(
    "--local", "--local-debug", "local_debug", is_flag=True, help="No API key auth; loopback addresses only."
)
@click.option(
    "--api-key",
    envvar="OSMOSIS_ROLLOUT_API_KEY",
    default=None,
    help="Key TrainGate must send as a bearer token (or OSMOSIS_ROLLOUT_API_KEY); generated if omitted.",
)
@click.option(
    "--log",
    "log_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write per-rollout event logs here.",
)
def serve(
    module_path: str,
    port: int,
    host: str,
    no_validate: bool,
    reload: bool,
    log_level: str,
    skip_register: bool,
    local_debug: bool,
    api_key: str | None,
    log_dir: str | None,
) -> int:
    """Serve an agent loop to TrainGate: /v1/rollout/init, /health, /platform/health.

    The server registers with the Osmosis platform once it is up (log in first with `osmosis auth login`);
    --skip-register serves without registering (API key auth), --local serves on loopback without auth.
    """
    from osmosis_ai.rollout.loader import load_agent_loop
    from osmosis_ai.rollout.serve import serve_agent_loop

    platform_url = None
    if not (skip_register or local_debug):
        from osmosis_ai.cli.platform_context import platform_settings

        platform_url = platform_settings().url  # the root --platform / --env-file options apply here too

    click.echo(f"Loading agent: {module_path}")
    agent_loop = load_agent_loop(module_path)
    click.echo(f"  Agent name: {agent_loop.name}")
    try:
        stopped_by = serve_agent_loop(
            agent_loop,
            host=host,
            port=port,
            validate=not no_validate,
            log_level=log_level,
            reload=reload,
            skip_register=skip_register,
            api_key=api_key,
            local_debug=local_debug,
            debug_dir=log_dir,
            module_path=module_path,
            platform_url=platform_url,
            events=_make_events(),
        )
    except ImportError as exc:
        raise CLIError(str(exc)) from exc
    if stopped_by in (signal.SIGTERM, signal.SIGINT):
        code = exit_code_of(stopped_by)
        click.echo(f"RolloutServer {stop_word(code, ctrl_c='interrupted (Ctrl+C)')}.", err=True)
        return code
    click.echo("RolloutServer stopped.")
    return 0


def _make_events() -> ServeEvents:
    from osmosis_ai.rollout.serve import ServeEvents

    class PrintedEvents(ServeEvents):
        """The validation report, the start-up panel and registration news, printed."""

        def validated(self, result: ValidationResult) -> None:
            from osmosis_ai.cli.validate import print_validation

            print_validation(result)

        def starting(self, start: ServeStart) -> None:
            from osmosis_ai.redact import remember

            if start.key_source == "provided":
                remember([start.api_key])
            key_note = {
                "disabled": "(disabled - local debug)",
                "provided": "(provided)",
                "generated": f"{start.api_key}\n                (generated; TrainGate must send "
                "'Authorization: Bearer <key>')",
            }[start.key_source]
            click.echo("RolloutServer")
            click.echo(f"  Agent:        {start.agent_name}")
            click.echo(f"  Address:      http://{start.host}:{start.port}")
            click.echo(f"  API Key:      {key_note}")
            click.echo(f"  Registration: {start.registration}")
            if start.debug_dir:
                click.echo(f"  Debug Log:    {start.debug_dir}/")
            # Shown once, above, so it can be given to TrainGate; masked in everything printed after.
            remember([start.api_key])

        def message(self, text: str, problem: bool) -> None:
            click.echo(text, err=problem)

    return PrintedEvents()
