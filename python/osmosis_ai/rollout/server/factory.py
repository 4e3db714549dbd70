"""The app factory ``osmosis serve --reload`` hands uvicorn (reload needs an import string, not an object)."""

from __future__ import annotations

import json
import os

from fastapi import FastAPI

from osmosis_ai.rollout.loader import load_agent_loop
from osmosis_ai.rollout.serve import ServeError
from osmosis_ai.rollout.server.app import create_app
from osmosis_ai.rollout.server.graceful import RELOAD_SPEC_ENV

__all__ = ["app_from_environment"]


def app_from_environment() -> FastAPI:
    """Builds the app from the spec ``serve_agent_loop`` put in ``OSMOSIS_ROLLOUT_SERVE_SPEC``."""
    raw = os.environ.get(RELOAD_SPEC_ENV)
    if not raw:
        raise ServeError(f"{RELOAD_SPEC_ENV} is not set: this factory is started by 'osmosis serve --reload'")
    spec = json.loads(raw)
    return create_app(
        load_agent_loop(spec["module"]), api_key=spec.get("api_key"), debug_dir=spec.get("debug_dir")
    )
