"""The established command trees, node for node: every command and option of the newest 0.3 release and of
0.2.17 exists here, with the same kind (group or command) and the hidden `dev` group still hidden.

The trees are written from shared/spec (anchor-0.3 §4.1 and §6.1, compat-surface §C.1 and §C.2); ours may
add commands and options, never lack one.
"""

from __future__ import annotations

import click
import pytest

from osmosis_ai.cli.main import cli

_LIST = ("--limit", "--all")
_LOGS = ("--limit", "--cursor")

# path -> options (every spelling). A path ending in "/" is a group.
NEWEST_03: dict[str, tuple[str, ...]] = {
    "/": ("-V", "--version", "--json", "--plain", "--env-file", "--platform", "-h", "--help"),
    "quickstart": ("-w", "--workspace"),
    "doctor": ("--fix",),
    "upgrade": (),
    "dataset/": (),
    "dataset upload": ("--overwrite", "-y", "--yes"),
    "dataset download": ("-o", "--output", "--overwrite"),
    "dataset list": _LIST,
    "dataset info": (),
    "dataset logs": _LOGS,
    "dataset preview": ("--rows",),
    "dataset validate": (),
    "train/": (),
    "train list": _LIST,
    "train info": ("-o", "--output"),
    "train logs": _LOGS,
    "train submit": ("-y", "--yes", "--secrets-file"),
    "train stop": ("-y", "--yes"),
    "model/": (),
    "model list": (*_LIST, "--type"),
    "model info": (),
    "model deploy": (),
    "model undeploy": (),
    "eval/": (),
    "eval rubric": ("-d", "--data", "-r", "--rubric", "--model", "-n", "--number", "-o", "--output",
                    "--api-key", "--timeout", "--score-min", "--score-max"),
    "eval submit": ("-y", "--yes", "--secrets-file"),
    "eval run": ("--name", "-o", "--output", "--dataset-file", "--secrets-file", "--rows", "--fresh",
                 "--retry-failed", "--max-in-flight", "-y", "--yes", "--rollout-port", "--verbose", "--upload"),
    "eval upload": (),
    "eval list": _LIST,
    "eval logs": _LOGS,
    "eval info": ("-o", "--output"),
    "eval download": ("-o", "--output", "--type", "--rows", "--overwrite", "-y", "--yes"),
    "eval stop": ("-y", "--yes"),
    "benchmark/": (),
    "benchmark list": _LIST,
    "benchmark info": _LIST,
    "benchmark submit": ("-y", "--yes", "--secrets-file"),
    "benchmark runs/": (),
    "benchmark runs list": _LIST,
    "benchmark runs info": (),
    "benchmark runs logs": _LOGS,
    "benchmark runs stop": ("-y", "--yes"),
    "benchmark runs download": ("-o", "--output", "--type", "--overwrite", "-y", "--yes"),
    "rollout/": (),
    "rollout init": ("-f", "--force"),
    "rollout list": (*_LIST, "--branch"),
    "template/": (),
    "template list": (),
    "template apply": ("-f", "--force"),
    "auth/": (),
    "auth login": ("-f", "--force", "--token"),
    "auth logout": ("-y", "--yes"),
    "auth whoami": (),
    "secret/": (),
    "secret list": (*_LIST, "--scope"),
    "secret set": ("--scope", "--env"),
    "secret delete": ("--scope", "-y", "--yes"),
}  # fmt: skip
HIDDEN_03: dict[str, tuple[str, ...]] = {
    "dev/": (),
    "dev server/": (),
    "dev server up": ("--no-ttl", "--ttl-hours", "-y", "--yes"),
    "dev server down": (),
    "dev server logs": ("-f", "--follow", "-n", "--tail"),
    "dev server list": _LIST,
}
V0217: dict[str, tuple[str, ...]] = {
    "login": ("-f", "--force", "--no-browser"),
    "whoami": (),
    "logout": ("--all", "-y", "--yes"),
    "workspace/": (),
    "workspace list": (),
    "workspace switch": (),
    "workspace current": (),
    "preview": ("-p", "--path"),
    "eval-rubric": ("-r", "--rubric", "-d", "--data", "-n", "--number", "-c", "--config", "-o", "--output",
                    "-b", "--baseline"),
    "serve": ("-m", "--module", "-p", "--port", "-H", "--host", "--no-validate", "--reload", "--log-level",
              "--skip-register", "--local", "--local-debug", "--api-key", "--log"),
    "validate": ("-m", "--module", "-v", "--verbose"),
    "test": ("-m", "--module", "--agent", "--mcp", "-d", "--dataset", "--model", "--limit", "--offset", "--api-key",
             "--base-url", "--max-turns", "--max-tokens", "--temperature", "--debug", "-o", "--output", "-q",
             "--quiet", "-i", "--interactive", "--row"),
    "eval": ("-m", "--module", "--mcp", "-d", "--dataset", "--model", "--eval-fn", "--n", "--pass-threshold",
             "--max-turns", "--temperature", "--max-tokens", "--api-key", "--base-url", "--baseline-model",
             "--baseline-base-url", "--baseline-api-key", "-o", "--output", "--debug", "-q", "--quiet", "--limit",
             "--offset", "--batch-size"),
}  # fmt: skip


def _node(key: str) -> tuple[tuple[str, ...], bool]:
    words = tuple(key.rstrip("/").split()) if key != "/" else ()
    return words, key.endswith("/")


def _find(words: tuple[str, ...]) -> click.Command | None:
    command: click.Command | None = cli
    for word in words:
        if not isinstance(command, click.Group):
            return None
        command = command.get_command(click.Context(command), word)
    return command


def _options(command: click.Command) -> set[str]:
    names = {"-h", "--help"}
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def test_the_newest_03_tree_has_57_public_nodes() -> None:
    # The count: the root, 10 groups (benchmark runs included) and 46 commands.
    assert len(NEWEST_03) == 57
    assert sum(key.endswith("/") for key in NEWEST_03) == 11  # with the root


@pytest.mark.parametrize("key", [*NEWEST_03, *HIDDEN_03, *V0217])
def test_every_established_node_and_option_exists(key: str) -> None:
    words, group = _node(key)
    command = _find(words)
    assert command is not None, f"`osmosis {' '.join(words)}` is missing"
    if group:
        assert isinstance(command, click.Group), f"`osmosis {' '.join(words)}` must be a group"
    tree = {**NEWEST_03, **HIDDEN_03, **V0217}
    missing = set(tree[key]) - _options(command)
    assert not missing, f"`osmosis {' '.join(words)}` lacks {sorted(missing)}"


def test_the_dev_group_is_hidden_like_the_established_one() -> None:
    dev = _find(("dev",))
    assert dev is not None and dev.hidden
    help_text = cli.get_help(click.Context(cli))
    assert "\n  dev " not in help_text and "\n  benchmark " in help_text
