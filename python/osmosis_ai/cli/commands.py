"""The root command's table: its subcommands (imported only when they run) and its options' help.

Plain data with no click import, so `osmosis --help` can be printed without loading click (`entry.py`);
`main.py` builds the click group from the same data.
"""

from __future__ import annotations

# name -> (module, attribute, one-line help). Help text lives here so `--help` imports nothing.
LazyCommands = dict[str, tuple[str, str, str]]

ROOT_HELP = "osmosis: rewards, rubric judges, agent evals and pass@k for LLM post-training."

# The root options as `--help` lists them (click's order: as declared, then --help): (flags, help).
ROOT_OPTIONS: dict[str, tuple[str, str]] = {
    "version": ("-V, --version", "Show the version and exit."),
    "debug": ("--debug", "Show full tracebacks on errors (or set OSMOSIS_DEBUG=1)."),
    "json": ("--json", "One JSON envelope on stdout, any command (anywhere on the line)."),
    "plain": ("--plain", "Platform commands: tab-separated, script-friendly text."),
    "platform": ("--platform URL", "Platform URL (else OSMOSIS_PLATFORM_URL)."),
    "env_file": ("--env-file PATH", "dotenv file for platform commands (else the nearest .env)."),
    "help": ("-h, --help", "Show this message and exit."),
}


COMMANDS: LazyCommands = {
    "test": (
        "osmosis_ai.cli.test_cmd",
        "test_command",
        "Run an agent loop on dataset rows (batch or --interactive).",
    ),
    "eval": (
        "osmosis_ai.cli.eval_group",
        "eval_group",
        "Evaluate agents and judges locally; submit and follow evals on the platform.",
    ),
    "preview": (
        "osmosis_ai.cli.preview",
        "preview",
        "Show a rubric config or the records of a dataset file.",
    ),
    "dataset": (
        "osmosis_ai.cli.dataset",
        "dataset_group",
        "Check dataset files; upload and manage platform datasets.",
    ),
    "eval-rubric": (
        "osmosis_ai.cli.eval_rubric",
        "eval_rubric",
        "Score JSONL records against a YAML rubric with an LLM judge.",
    ),
    "report": (
        "osmosis_ai.cli.report_cmd",
        "report_command",
        "Write one self-contained HTML page with plots for results files.",
    ),
    "compare": (
        "osmosis_ai.cli.compare_cmd",
        "compare_command",
        "Compare two runs on the same rows: paired intervals, flips, McNemar.",
    ),
    "view": (
        "osmosis_ai.cli.view_cmd",
        "view_command",
        "Serve the report page of a results log of any size (or compare two) on 127.0.0.1.",
    ),
    "config": ("osmosis_ai.cli.config_cmd", "config_group", "Check eval and training configs."),
    "grade": (
        "osmosis_ai.cli.grade_cmd",
        "grade_command",
        "Run an OpenAI grader config (JSON) locally on samples or a results log.",
    ),
    "reward": (
        "osmosis_ai.cli.reward_cmd",
        "reward_group",
        "Will this reward train? Probe rewards with negative controls; diff two versions on a log.",
    ),
    "check": (
        "osmosis_ai.cli.check_cmd",
        "check_command",
        "Check a local-rollout repository: MCP tools, reward/rubric functions, dataset.",
    ),
    "train": (
        "osmosis_ai.cli.train_group",
        "train_group",
        "Submit, list, inspect and stop training runs on the platform.",
    ),
    "init": (
        "osmosis_ai.cli.init_cmd",
        "init_command",
        "Create a workspace with a rollout, configs and data.",
    ),
    "doctor": (
        "osmosis_ai.cli.doctor_cmd",
        "doctor_command",
        "Check a workspace (layout, guide files, configs); --fix adds what is missing.",
    ),
    "template": (
        "osmosis_ai.cli.template_cmd",
        "template_group",
        "List the bundled example rollouts; apply one to this workspace.",
    ),
    "serve": ("osmosis_ai.cli.serve", "serve", "Serve an agent loop to TrainGate (remote rollout server)."),
    "validate": ("osmosis_ai.cli.validate", "validate", "Validate an agent loop (name, tools, async run)."),
    "auth": (
        "osmosis_ai.cli.auth_cmd",
        "auth_group",
        "Log in to the Osmosis platform, log out, show who you are.",
    ),
    "login": ("osmosis_ai.cli.auth_cmd", "login_alias", "Log in to the Osmosis platform (= auth login)."),
    "logout": ("osmosis_ai.cli.auth_cmd", "logout_alias", "Log out (= auth logout)."),
    "whoami": ("osmosis_ai.cli.auth_cmd", "whoami_alias", "Show the logged-in account (= auth whoami)."),
    "workspace": (
        "osmosis_ai.cli.workspace_cmd",
        "workspace_group",
        "Show the platform workspace of this repository; list your workspaces.",
    ),
    "secret": ("osmosis_ai.cli.secret_cmd", "secret_group", "Manage platform secrets (provider keys)."),
    "model": ("osmosis_ai.cli.model_cmd", "model_group", "List, inspect and deploy platform models."),
    "rollout": (
        "osmosis_ai.cli.model_cmd",
        "rollout_group",
        "Create a rollout in this workspace; list the rollouts the platform synced.",
    ),
    "quickstart": (
        "osmosis_ai.cli.quickstart_cmd",
        "quickstart_command",
        "Set this machine up for a platform workspace; get a prompt for your coding agent.",
    ),
    "upgrade": (
        "osmosis_ai.cli.upgrade_cmd",
        "upgrade_command",
        "Upgrade osmosis-ai to the newest release (uv tool, pipx or pip, as installed).",
    ),
    "dev": ("osmosis_ai.cli.dev_cmd", "dev_group", "Development helpers on the platform (hidden)."),
    "benchmark": (
        "osmosis_ai.cli.benchmark_cmd",
        "benchmark_group",
        "Browse benchmarks; submit benchmark runs, follow, stop and download them.",
    ),
}

# Commands left out of `osmosis --help`, as in the established CLI (they still run).
HIDDEN = frozenset({"dev"})
