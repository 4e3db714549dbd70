"""Which optional extra brings which module, and the one error that says what to install.

A feature that needs an extra imports its modules on use; when one is missing, :func:`missing_extra`
turns the ``ModuleNotFoundError`` into a :class:`~osmosis_ai.errors.MissingExtraError` naming the extra
(``pip install "osmosis-ai[report]"``). The CLI prints it as any other error (exit 1, no traceback).
"""

from __future__ import annotations

from osmosis_ai.errors import MissingExtraError

__all__ = ["EXTRA_OF_MODULE", "install_command", "missing_extra"]

# Top-level module -> the extra of pyproject.toml that installs it.
EXTRA_OF_MODULE: dict[str, str] = {
    "polars": "report",
    "vl_convert": "report",
    "fastapi": "server",
    "starlette": "server",
    "uvicorn": "server",
    "fastmcp": "mcp",
    "agents": "openai-agents",
    "strands": "strands",
    "ray": "ray",
}


def install_command(extra: str) -> str:
    """The command that installs ``extra``.

    Example:
        >>> install_command("report")
        'pip install "osmosis-ai[report]"'
    """
    return f'pip install "osmosis-ai[{extra}]"'


def missing_extra(exc: BaseException, feature: str | None = None) -> MissingExtraError | None:
    """The error to raise when ``exc`` (or what it was raised from) is a module an extra installs; else None.

    Args:
        exc: The ``ImportError`` caught around the feature's imports.
        feature: What needs it (``"osmosis report"``), for the message.

    Example:
        >>> str(missing_extra(ModuleNotFoundError("No module named 'polars'", name="polars"), "osmosis report"))
        'osmosis report needs polars, which the report extra installs: pip install "osmosis-ai[report]"'
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MissingExtraError):
            return seen
        if isinstance(seen, ModuleNotFoundError) and seen.name:
            module = seen.name.partition(".")[0]
            extra = EXTRA_OF_MODULE.get(module)
            if extra is not None:
                who = feature or "This feature"
                message = f"{who} needs {module}, which the {extra} extra installs: {install_command(extra)}"
                return MissingExtraError(message, extra=extra, module=module)
        seen = seen.__cause__ or seen.__context__
    return None
