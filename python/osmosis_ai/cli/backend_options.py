"""The execution-backend options every engine command shares: ``--backend``, ``--ray-address``, ``--ray-workers``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import click

from osmosis_ai.errors import CLIError

__all__ = ["backend_from_options", "backend_options"]


def backend_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the options (stored as ``backend``, ``ray_address``, ``ray_workers``)."""
    options = [
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help="Where runs execute: this process, or Ray actors (pip install 'osmosis-ai[ray]').",
        ),
        click.option(
            "--ray-address",
            default=None,
            metavar="ADDR",
            help="Ray cluster for --backend ray (default: $RAY_ADDRESS, else auto; 'local' starts a head here).",
        ),
        click.option(
            "--ray-workers",
            type=click.IntRange(min=1),
            default=None,
            metavar="N",
            help="Ray actors for --backend ray (default: one per CPU of the cluster).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def backend_from_options(backend: str, ray_address: str | None, ray_workers: int | None) -> Any:
    """The library's :class:`BackendOptions`; refuses ``ray`` without Ray installed (cheap, before any work)."""
    from osmosis_ai.runs.backends import BackendOptions

    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise CLIError("--backend ray needs Ray, which is not installed: pip install 'osmosis-ai[ray]'")
    if backend != "ray" and (ray_address or ray_workers):
        raise CLIError("--ray-address and --ray-workers apply to --backend ray only.")
    return BackendOptions(backend, ray_address=ray_address, ray_workers=ray_workers)
