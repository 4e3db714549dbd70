"""Settings of the rollout client and server, read from ``OSMOSIS_ROLLOUT_*`` environment variables.

Every field can be set in code or by an environment variable named after its prefix and field
(``OSMOSIS_ROLLOUT_SERVER_MAX_CONCURRENT_ROLLOUTS=64``), also from a ``.env`` file in the current
directory (``_env_file=`` names another, ``None`` reads none); code wins over the environment, the
environment over the file. Out-of-range values are rejected with the variable's name, so a typo cannot
silently fall back to a default. Unknown keyword arguments are ignored, as the established settings
classes (pydantic-settings) did, so settings code written for them keeps working.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Annotated, Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from osmosis_ai.errors import ConfigError

__all__ = [
    "RolloutClientSettings",
    "RolloutServerSettings",
    "RolloutSettings",
    "configure",
    "get_settings",
    "reset_settings",
]


def _dotenv(path: str | os.PathLike[str] | None) -> dict[str, str]:
    if path is None or not Path(path).is_file():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


class _EnvSettings(BaseModel):
    """A settings model whose unset fields come from ``<env_prefix><FIELD>`` variables (env, then ``.env``)."""

    model_config = ConfigDict(validate_assignment=True, extra="ignore")
    env_prefix: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        merged = dict(data)
        env_file = merged.pop("_env_file", ".env")
        file_values = _dotenv(env_file)
        for name, info in cls.model_fields.items():
            nested = isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
            if name in merged:
                continue
            if nested:
                # A nested section reads the same file as its parent.
                merged[name] = cast(type[BaseModel], info.annotation)(_env_file=env_file)
                continue
            env_name = f"{cls.env_prefix}{name.upper()}"
            raw = os.environ.get(env_name, file_values.get(env_name))
            if raw is None or not raw.strip():
                continue
            try:
                annotated = (info.annotation, *info.metadata)
                field_type: Any = (
                    Annotated[annotated] if info.metadata else info.annotation
                )  # built at run time
                merged[name] = TypeAdapter(field_type).validate_python(raw.strip())
            except ValidationError as exc:
                problem = exc.errors(include_url=False)[0]["msg"]
                raise ValueError(f"environment variable {env_name}={raw.strip()!r}: {problem}") from None
        return merged


class RolloutClientSettings(_EnvSettings):
    """The TrainGate client: timeouts, retries, connection pool (prefix ``OSMOSIS_ROLLOUT_CLIENT_``)."""

    env_prefix: ClassVar[str] = "OSMOSIS_ROLLOUT_CLIENT_"

    timeout_seconds: float = Field(300.0, ge=1, le=3600)
    max_retries: int = Field(3, ge=0, le=10)
    complete_rollout_retries: int = Field(2, ge=0, le=10)
    retry_base_delay: float = Field(1.0, ge=0.01, le=60)
    retry_max_delay: float = Field(30.0, ge=0.01, le=300)
    max_connections: int = Field(100, ge=1, le=1000)
    max_keepalive_connections: int = Field(20, ge=1, le=1000)


class RolloutServerSettings(_EnvSettings):
    """The rollout server: concurrency, record TTL, timeouts (prefix ``OSMOSIS_ROLLOUT_SERVER_``)."""

    env_prefix: ClassVar[str] = "OSMOSIS_ROLLOUT_SERVER_"

    max_concurrent_rollouts: int = Field(100, ge=1, le=10000)
    # Rollouts accepted but waiting for a slot; beyond it /v1/rollout/init answers 429 with Retry-After.
    max_queued_rollouts: int = Field(10000, ge=1, le=1_000_000)
    max_request_body_bytes: int = Field(16 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    # Seconds a whole request body may take to arrive (counted from its head); past it 408, connection closed.
    body_read_timeout_seconds: float = Field(30.0, gt=0, le=3600)
    # Seconds a whole request head may take (from the connection, or from the first byte of a later head on a
    # kept-alive one); past it the connection is closed.
    head_timeout_seconds: float = Field(10.0, gt=0, le=3600)
    # Open connections in all. Connections that have not sent an authenticated request yet are bounded
    # below that, in all and per client address; past a bound the oldest of them is closed for a newcomer.
    max_connections: int = Field(2048, ge=1, le=100_000)
    max_untrusted_connections: int = Field(1024, ge=1, le=100_000)
    max_untrusted_per_address: int = Field(256, ge=1, le=100_000)
    # Seconds an idle keep-alive connection stays open. Longer than clients keep idle connections
    # (httpx 5 s, aiohttp 15 s, Go 90 s): a server that closes first races a client reusing the
    # connection, and that client's request fails with a read error (a lost rollout under load).
    keep_alive_seconds: float = Field(120.0, ge=1, le=3600)
    record_ttl_seconds: float = Field(3600.0, ge=1, le=86400)
    cleanup_interval_seconds: float = Field(60.0, ge=0.1, le=3600)
    # Wall-clock limit of one agent run; a run over it is reported to TrainGate as an ERROR.
    request_timeout_seconds: float = Field(600.0, ge=1, le=86400)
    # On shutdown, running rollouts get this long to finish before they are cancelled and reported.
    shutdown_grace_seconds: float = Field(30.0, ge=0, le=3600)
    registration_readiness_timeout_seconds: float = Field(10.0, ge=1, le=60)
    registration_readiness_poll_interval_seconds: float = Field(0.2, ge=0.05, le=5)
    registration_shutdown_timeout_seconds: float = Field(30.0, ge=1, le=300)


class RolloutSettings(_EnvSettings):
    """All rollout settings (prefix ``OSMOSIS_ROLLOUT_``).

    Example:
        >>> settings = RolloutSettings(server=RolloutServerSettings(max_concurrent_rollouts=8))
        >>> settings.server.max_concurrent_rollouts
        8
    """

    env_prefix: ClassVar[str] = "OSMOSIS_ROLLOUT_"

    client: RolloutClientSettings = Field(default_factory=RolloutClientSettings)
    server: RolloutServerSettings = Field(default_factory=RolloutServerSettings)
    max_metadata_size_bytes: int = Field(1024 * 1024, ge=1024, le=100 * 1024 * 1024)


_lock = threading.Lock()
_settings: RolloutSettings | None = None


def get_settings() -> RolloutSettings:
    """Returns the process-wide settings, created from the environment on first use.

    Raises:
        ConfigError: An ``OSMOSIS_ROLLOUT_*`` environment variable holds an invalid value.
    """
    global _settings
    with _lock:
        if _settings is None:
            try:
                _settings = RolloutSettings()
            except ValidationError as exc:
                details = "; ".join(error["msg"].removeprefix("Value error, ") for error in exc.errors())
                raise ConfigError(f"invalid rollout settings: {details}") from None
        return _settings


def configure(settings: RolloutSettings) -> None:
    """Replaces the process-wide settings; also applies ``max_metadata_size_bytes`` to request validation.

    Example:
        >>> configure(RolloutSettings(max_metadata_size_bytes=2 * 1024 * 1024))  # doctest: +SKIP
    """
    from osmosis_ai.rollout.schemas import set_max_metadata_size_bytes

    global _settings
    with _lock:
        _settings = settings
    set_max_metadata_size_bytes(settings.max_metadata_size_bytes)


def reset_settings() -> None:
    """Forgets the process-wide settings; the next :func:`get_settings` reads the environment again."""
    global _settings
    with _lock:
        _settings = None
