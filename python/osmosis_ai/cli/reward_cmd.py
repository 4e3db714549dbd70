"""``osmosis reward probe`` and ``osmosis reward diff``: will this reward train?

The library (``osmosis_ai.probes``) returns reports; this module renders them (text, or the ``--json``
envelope) and turns them into exit codes: ``probe`` exits 1 when a control passes on more than
``--fail-above`` of the rows, so it can gate CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.output import help_without_subcommand
from osmosis_ai.cli.run_log import log_options
from osmosis_ai.cli.run_support import LOG_FLAGS, EchoObserver, library_errors
from osmosis_ai.errors import CLIError

GATE_EXIT = 1


@click.group("reward", invoke_without_command=True)
@click.pass_context
def reward_group(ctx: click.Context) -> None:
    """Check reward functions before training on them: negative-control probes, version diffs."""
    help_without_subcommand(ctx)


PROBE_FLAGS = {**LOG_FLAGS, "eval_fns": "--eval-fn", "rubric_ids": "--rubric"}


def _render_probe(report: Any, echo: Any) -> None:
    from osmosis_ai.probes.controls import PROBE_HELP

    echo(
        f"Probed {report.rows} row(s); a control passes when it scores >= the correct answer "
        f"(and that answer >= {report.threshold:g})."
    )
    for fn, by_probe in report.gameable.items():
        strict = report.too_strict[fn]
        echo(f"\n{fn}")
        echo(
            f"  {'correct':<12} {strict.hits:>4}/{strict.rows:<4} {strict.fraction:6.1%}  scores low (too strict?)"
        )
        for probe, finding in by_probe.items():
            flag = "  <- GAMEABLE" if finding.hits else ""
            echo(
                f"  {probe:<12} {finding.hits:>4}/{finding.rows:<4} {finding.fraction:6.1%}  "
                f"{PROBE_HELP[probe]}{flag}"
            )
        for probe, finding in [("correct", strict), *by_probe.items()]:
            for ex in finding.examples[:1]:
                control = ex["control"] if len(ex["control"]) <= 60 else ex["control"][:57] + "..."
                echo(
                    f"    e.g. {probe}, row {ex['row_index']}: {control!r} scored "
                    f"{ex['control_score']:g} (correct answer {ex['correct_score']:g})"
                )


@reward_group.command("probe")
@click.option(
    "--eval-fn",
    "eval_fns",
    multiple=True,
    metavar="MODULE:FN|GRADER.json",
    help="Eval function to probe (repeatable).",
)
@click.option(
    "--rubric", "rubric_ids", multiple=True, metavar="ID", help="Rubric (LLM judge) to probe (repeatable)."
)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Rubric YAML for --rubric (default: rubric_configs.yaml next to the data, in ., or in ./examples).",
)
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint of the --rubric judge.")
@click.option(
    "-d",
    "--dataset",
    "--data",
    "dataset",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Rows with ground_truth (and user_prompt).",
)
@click.option(
    "--threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="A correct answer scoring below this is 'low' (the reward looks too strict).",
)
@click.option(
    "--fail-above",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    metavar="FRACTION",
    help="Exit 1 when any control passes on more than this fraction of rows.",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@log_options
def probe_command(
    eval_fns: tuple[str, ...],
    rubric_ids: tuple[str, ...],
    config_path: Path | None,
    base_url: str | None,
    dataset: Path,
    threshold: float,
    fail_above: float | None,
    concurrency: int,
    log_path: str | None,
    resume_path: str | None,
) -> None:
    """Score negative controls built from each row; report gameable and too-strict rewards."""
    from osmosis_ai.cli.output import STATE, emit_detail
    from osmosis_ai.cli.run_log import exit_interrupted
    from osmosis_ai.probes.session import ProbeOptions, run_probe
    from osmosis_ai.runs.progress import Progress

    quiet = STATE.mode == "json"
    with library_errors(PROBE_FLAGS):
        options = ProbeOptions(
            dataset=dataset,
            eval_fns=eval_fns,
            rubric_ids=rubric_ids,
            config_path=config_path,
            base_url=base_url,
            threshold=threshold,
            concurrency=concurrency,
            log_path=log_path,
            resume_path=resume_path,
        )
        observer = EchoObserver(quiet=quiet, progress=lambda total: Progress(total, unit="rows", quiet=quiet))
        result = run_probe(options, observer)
    if result.outcome.interrupted:
        exit_interrupted(result.log_path, "the finished rows", result.outcome.interrupted_exit_code)
    report = result.report
    failures = report.failures(fail_above) if fail_above is not None else []
    data = {
        **result.to_json(),
        "fail_above": fail_above,
        "failed": [{"function": f, "probe": p, "fraction": x} for f, p, x in failures],
    }
    if quiet:
        emit_detail(data, [])
    else:
        _render_probe(report, click.echo)
        for fn, probe, fraction in failures:
            click.echo(
                f"FAIL: {fn}: control '{probe}' passes on {fraction:.1%} of rows (> {fail_above:.1%})",
                err=True,
            )
    if failures:
        click.get_current_context().exit(GATE_EXIT)


def _render_diff(data: dict[str, Any], echo: Any) -> None:
    def num(value: float | None, signed: bool = False) -> str:
        return "-" if value is None else f"{value:+.4f}" if signed else f"{value:.4f}"

    echo(f"Re-scored {data['compared']} of {data['runs']} saved run(s): {data['old']} -> {data['new']}")
    flips = data["flips"]
    echo(
        f"  flips at >= {data['pass_threshold']:g}: {flips['total']} "
        f"({flips['fail_to_pass']} fail->pass, {flips['pass_to_fail']} pass->fail); "
        f"{data['changed_scores']} score(s) changed"
    )
    old, new, delta = data["old_summary"], data["new_summary"], data["delta"]
    echo(f"  mean: {num(old.get('mean'))} -> {num(new.get('mean'))} ({num(delta['mean'], True)})")
    for k, value in (new.get("pass_at_k") or {}).items():
        before = (old.get("pass_at_k") or {}).get(k)
        echo(f"  pass@{k}: {num(before)} -> {num(value)} ({num(delta.get(f'pass_at_{k}'), True)})")
    adv = data["advantage"]
    echo(
        f"  advantage signs change in {adv['groups_sign_changed']} of {adv['groups']} row group(s) "
        f"({adv['runs_sign_changed']} run(s)); {adv['groups_skipped']} group(s) not comparable"
    )
    for ex in flips["examples"][:3]:
        echo(
            f"    flip: row {ex['row_index']} run {ex['run_index']}: {ex['output']!r} {ex['old']:g} -> {ex['new']:g}"
        )
    for side, count in data["errors"].items():
        if count:
            echo(f"  {count} run(s) the {side} version could not score")


@reward_group.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--log",
    "log_path",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    metavar="RESULTS",
    help="The results log whose saved runs are re-scored.",
)
@click.option(
    "--pass-threshold", type=float, default=1.0, show_default=True, help="A run passes at score >= this."
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
def diff_command(old: str, new: str, log_path: Path, pass_threshold: float, concurrency: int) -> None:
    """Re-score a results log's saved runs with two versions of an eval function (MODULE:FN or GRADER.json):
    flips, mean and pass@k change, and GRPO advantage-sign changes per row group."""
    from osmosis_ai.cli.output import STATE, emit_detail
    from osmosis_ai.eval.functions import load_eval_function
    from osmosis_ai.probes.diff import diff_log

    if old == new:
        raise CLIError("OLD and NEW are the same eval function.")
    report = diff_log(
        load_eval_function(old),
        load_eval_function(new),
        log_path,
        pass_threshold=pass_threshold,
        concurrency=concurrency,
    )
    if report.runs == 0:
        raise CLIError(f"{log_path} holds no saved runs.")
    data = report.as_json()
    if STATE.mode == "json":
        emit_detail(data, [])
    else:
        _render_diff(data, click.echo)
    if report.compared == 0:
        raise CLIError("No saved run could be scored by both versions (see the errors above).")
