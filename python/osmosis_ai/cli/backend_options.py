"""The execution-backend options every engine command shares: ``--backend``, ``--ray-address``, ``--ray-workers``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

__all__ = ["backend_options"]


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
