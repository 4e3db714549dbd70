"""``osmosis reward probe`` and ``osmosis reward diff``: will this reward train?

The library (``osmosis_ai.probes``) returns reports; this module renders them (text, or the ``--json``
envelope) and turns them into exit codes: ``probe`` exits 1 when a control passes on more than
``--fail-above`` of the rows (default 5 %), so it gates CI out of the box, and exits 1 too when a function
could not be tested at all (no format of the correct answer scored; an n/a verdict is never a pass).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.output import help_without_subcommand
from osmosis_ai.cli.run_log import log_options
from osmosis_ai.cli.run_support import LOG_FLAGS, EchoObserver, library_errors
from osmosis_ai.errors import CLIError
from osmosis_ai.probes.report import DEFAULT_FAIL_ABOVE

GATE_EXIT = 1


@click.group("reward", invoke_without_command=True)
@click.pass_context
def reward_group(ctx: click.Context) -> None:
    """Check reward functions before training on them: negative-control probes, version diffs."""
    help_without_subcommand(ctx)


PROBE_FLAGS = {**LOG_FLAGS, "eval_fns": "--eval-fn", "rubric_ids": "--rubric"}


def _count(finding: Any) -> str:
    if finding.fraction is None:
        return f"{'-':>4}/{0:<4} {'n/a':>6}"
    return f"{finding.hits:>4}/{finding.rows:<4} {finding.fraction:6.1%}"


def _score(value: float | None) -> str:
    return "not scored" if value is None else f"{value:g}"


def _render_probe(report: Any, fail_above: float, echo: Any) -> None:
    from osmosis_ai.probes.controls import CORRECT_FORMS, PROBE_HELP
    from osmosis_ai.probes.probe import CORRECT

    low = f"{report.threshold:g}"
    echo(
        f"Probed {report.rows} row(s). A control passes on a row when it scores at least as much as the\n"
        f"best-scoring format of the correct answer while that scores >= {low}; a control passing on more\n"
        f"than {fail_above:.0%} of the rows fails the probe."
    )
    for fn, by_probe in report.gameable.items():
        echo(f"\n{fn}")
        echo("  controls (rows where the control passed):")
        for probe, finding in by_probe.items():
            flag = "  <- GAMEABLE" if finding.fraction is not None and finding.fraction > fail_above else ""
            echo(f"    {probe:<17} {_count(finding)}  {PROBE_HELP[probe]}{flag}")
        untestable = report.untestable(fn)
        if untestable:
            echo(
                f"  {untestable} row(s) untestable: no format of the correct answer scored >= {low}, so no "
                "control could be compared there (not counted above)"
            )
        strict = report.too_strict[fn]
        if strict.hits:
            echo(
                f"  correct answers scoring below {low} (too strict?) on {strict.hits} of {strict.rows} row(s):"
            )
            for form, finding in report.formats[fn].items():
                echo(f"    {form:<17} {_count(finding)}  {CORRECT_FORMS[form]}")
        elif strict.rows:
            echo(f"  correct answers: scored >= {low} on all {strict.rows} row(s), in every format")
        else:
            echo("  correct answers: not scored on any row (see the errors in the log)")
        # One example per control that passed, and one row where a correct format scored low.
        for probe, finding in [*by_probe.items(), (CORRECT, strict)]:
            for ex in finding.examples[:1]:
                probe = probe if finding is not strict else f"too strict, {ex['probe']}"
                control = ex["control"] if len(ex["control"]) <= 60 else ex["control"][:57] + "..."
                reference = ex.get("reference") or CORRECT
                answer = "the answer as written" if reference == CORRECT else f"the answer as {reference}"
                echo(
                    f"    e.g. {probe}, row {ex['row_index']}: {control!r} scored "
                    f"{ex['control_score']:g} ({answer}: {_score(ex['correct_score'])})"
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
    default=DEFAULT_FAIL_ABOVE,
    show_default=True,
    metavar="FRACTION",
    help="Exit 1 when any control passes on more than this fraction of rows (1 never fails).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Rows probed at once (each row scores every control and format).",
)
@log_options
def probe_command(
    eval_fns: tuple[str, ...],
    rubric_ids: tuple[str, ...],
    config_path: Path | None,
    base_url: str | None,
    dataset: Path,
    threshold: float,
    fail_above: float,
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
    report = result.report
    assert report is not None, "a probe session ends with its report (of the finished rows when interrupted)"
    failures, inconclusive = report.failures(fail_above), report.inconclusive()
    data = {
        **result.to_json(),
        "fail_above": fail_above,
        "failed": [{"function": f, "probe": p, "fraction": x} for f, p, x in failures],
        "inconclusive": [{"function": fn, "reason": _inconclusive_reason(report, fn)} for fn in inconclusive],
    }
    if result.outcome.interrupted:
        exit_interrupted(result.log_path, "the finished rows", result.outcome.interrupted_exit_code, data)
    if quiet:
        emit_detail(data, [])
    else:
        _render_probe(report, fail_above, click.echo)
        for fn, probe, fraction in failures:
            click.echo(
                f"FAIL: {fn}: control '{probe}' passes on {fraction:.1%} of rows (> {fail_above:.1%})",
                err=True,
            )
        for fn in inconclusive:
            click.echo(f"N/A: {fn}: {_inconclusive_reason(report, fn)}", err=True)
    if failures or inconclusive:
        click.get_current_context().exit(GATE_EXIT)


def _inconclusive_reason(report: Any, fn: str) -> str:
    return (
        f"no verdict: the correct answer scored below {report.threshold:g} in every format on all "
        f"{report.untestable(fn)} scored row(s), so no control could be tested (check the reward, or --threshold)"
    )


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
