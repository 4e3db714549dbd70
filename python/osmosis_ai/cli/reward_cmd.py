"""``osmosis reward probe`` and ``osmosis reward diff``: will this reward train?

The library (``osmosis_ai.probes``) returns reports; this module renders them (text, or the ``--json``
envelope) and turns them into exit codes: ``probe`` exits 1 when a control passes on more than
``--fail-above`` of the rows (default 5 %), so it gates CI out of the box.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli.output import help_without_subcommand
from osmosis_ai.cli.run_log import log_options
from osmosis_ai.errors import CLIError
from osmosis_ai.probes.report import DEFAULT_FAIL_ABOVE

GATE_EXIT = 1


@click.group("reward", invoke_without_command=True)
@click.pass_context
def reward_group(ctx: click.Context) -> None:
    """Check reward functions before training on them: negative-control probes, version diffs."""
    help_without_subcommand(ctx)


def _load_functions(paths: tuple[str, ...]) -> list[Any]:
    from osmosis_ai.eval.functions import load_eval_functions

    return load_eval_functions(list(paths))


def _load_rubrics(ids: tuple[str, ...], data: Path, config: Path | None, base_url: str | None) -> list[Any]:
    if not ids:
        return []
    from osmosis_ai.probes.rubric_fn import rubric_eval_function
    from osmosis_ai.rubric.config import find_config, load_rubric_configs

    entries = load_rubric_configs(find_config(data, config))
    missing = [rubric_id for rubric_id in ids if rubric_id not in entries]
    if missing:
        raise CLIError(
            f"Rubric(s) {', '.join(missing)} not in the config (available: {', '.join(sorted(entries))})"
        )
    overrides = {"base_url": base_url} if base_url else {}
    return [rubric_eval_function(entries[rubric_id], rubric_id, overrides) for rubric_id in ids]


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
        f"correct answer while that answer scores >= {low}; a control passing on more than {fail_above:.0%} "
        "of the rows\nfails the probe."
    )
    for fn, by_probe in report.gameable.items():
        echo(f"\n{fn}")
        echo("  controls (rows where the control passed):")
        for probe, finding in by_probe.items():
            flag = "  <- GAMEABLE" if finding.fraction is not None and finding.fraction > fail_above else ""
            echo(f"    {probe:<17} {_count(finding)}  {PROBE_HELP[probe]}{flag}")
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
                echo(
                    f"    e.g. {probe}, row {ex['row_index']}: {control!r} scored "
                    f"{ex['control_score']:g} (the answer as written: {_score(ex['correct_score'])})"
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
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
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
    from osmosis_ai.cli.run_log import check_log_options, exit_interrupted, open_log
    from osmosis_ai.datasets import read_dataset
    from osmosis_ai.probes.probe import log_config, other_answers, read_answers, run_probes
    from osmosis_ai.probes.report import build_report
    from osmosis_ai.runs.log import iter_runs
    from osmosis_ai.runs.progress import Progress

    check_log_options(log_path, resume_path)
    if not eval_fns and not rubric_ids:
        raise CLIError("Give at least one --eval-fn MODULE:FN (or grader JSON) or --rubric ID to probe.")
    functions = _load_functions(eval_fns) if eval_fns else []
    functions += _load_rubrics(rubric_ids, dataset, config_path, base_url)
    quiet = STATE.mode == "json"
    echo = (lambda _m: None) if quiet else click.echo
    answers = read_answers(dataset)
    log = open_log("probe", log_config(functions, threshold), dataset, log_path, resume_path, echo)
    progress = Progress(len(answers), unit="rows", quiet=quiet)
    try:
        rows = enumerate(read_dataset(dataset, contract="any"))
        outcome = run_probes(
            functions, rows, other_answers(answers), log, concurrency=concurrency, on_record=progress
        )
    finally:
        progress.close()
        log.close()
    if outcome.interrupted:
        exit_interrupted(log.path, "the finished rows", outcome.interrupted_exit_code)
    report = build_report(iter_runs(log.path), [f.name for f in functions], threshold=threshold)
    failures = report.failures(fail_above)
    data = {
        **report.as_json(),
        "log": str(log.path),
        "fail_above": fail_above,
        "failed": [{"function": f, "probe": p, "fraction": x} for f, p, x in failures],
    }
    if quiet:
        emit_detail(data, [])
    else:
        _render_probe(report, fail_above, click.echo)
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
