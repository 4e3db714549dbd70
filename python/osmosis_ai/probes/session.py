"""``reward probe`` as a library call: every eval function (and rubric judge) on each row's correct answer
and on the negative controls built from it, on the run engine, then the report of what scored too high.

:func:`run_probe` takes a frozen :class:`ProbeOptions` and returns a :class:`ProbeResult` carrying today's
:class:`~osmosis_ai.probes.report.ProbeReport`. Gating (a control passing on too many rows fails CI) is the
caller's choice: :meth:`ProbeReport.failures` lists what is above a fraction.

Example:
    >>> from osmosis_ai.probes.session import ProbeOptions, run_probe
    >>> result = run_probe(ProbeOptions(dataset="data.jsonl", eval_fns=("rewards:exact",)))  # doctest: +SKIP
    >>> result.report.failures(0.1)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osmosis_ai.errors import RunError
from osmosis_ai.probes.report import ProbeReport
from osmosis_ai.runs.observer import RunObserver, quiet_observer
from osmosis_ai.runs.work import RunOutcome

__all__ = ["ProbeOptions", "ProbeResult", "run_probe"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, kw_only=True)
class ProbeOptions:
    """A probe session.

    Attributes:
        dataset: Rows with ``ground_truth`` (and ``user_prompt``).
        eval_fns: Eval functions to probe (``module:function`` or a grader ``.json``).
        rubric_ids: Rubrics (LLM judges) of the rubric config to probe.
        config_path: The rubric YAML for ``rubric_ids`` (default: next to the data, in ., or ./examples).
        base_url: OpenAI-compatible endpoint of the rubric judges.
        threshold: A correct answer scoring below this is "low" (the reward looks too strict).
        concurrency: Rows in flight at once.
        log_path: The results log to create (default: a new file under ``$OSMOSIS_LOG_DIR``).
        resume_path: A results log to continue instead.
    """

    dataset: PathLike
    eval_fns: tuple[str, ...] = ()
    rubric_ids: tuple[str, ...] = ()
    config_path: PathLike | None = None
    base_url: str | None = None
    threshold: float = 0.5
    concurrency: int = 4
    log_path: PathLike | None = None
    resume_path: PathLike | None = None

    def __post_init__(self) -> None:
        from osmosis_ai.runs.session_log import check_log_choice

        object.__setattr__(self, "eval_fns", tuple(self.eval_fns))
        object.__setattr__(self, "rubric_ids", tuple(self.rubric_ids))
        check_log_choice(self.log_path, self.resume_path)
        if not self.eval_fns and not self.rubric_ids:
            raise RunError(
                "Give at least one {eval_fns} MODULE:FN (or grader JSON) or {rubric_ids} ID to probe.",
                fields=("eval_fns", "rubric_ids"),
            )


@dataclass
class ProbeResult:
    """What a probe session did and found.

    Attributes:
        options: The options it ran with.
        outcome: Rows probed, taken from a resumed log; interrupted or not.
        log_path: The results log (one record per row: every function on every probe).
        report: Today's report of the log (gameable and too-strict findings); when interrupted, of the
            rows that finished.
    """

    options: ProbeOptions
    outcome: RunOutcome
    log_path: Path
    report: ProbeReport | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as JSON, with the results log."""
        return {**(self.report.as_json() if self.report is not None else {}), "log": str(self.log_path)}


def _rubric_functions(options: ProbeOptions) -> list[Any]:
    if not options.rubric_ids:
        return []
    from osmosis_ai.probes.rubric_fn import rubric_eval_function
    from osmosis_ai.rubric.config import find_config, load_rubric_configs

    config = Path(options.config_path) if options.config_path else None
    entries = load_rubric_configs(find_config(Path(options.dataset), config))
    missing = [rubric_id for rubric_id in options.rubric_ids if rubric_id not in entries]
    if missing:
        raise RunError(
            f"Rubric(s) {', '.join(missing)} not in the config (available: {', '.join(sorted(entries))})"
        )
    overrides = {"base_url": options.base_url} if options.base_url else {}
    return [
        rubric_eval_function(entries[rubric_id], rubric_id, overrides) for rubric_id in options.rubric_ids
    ]


def run_probe(options: ProbeOptions, observer: RunObserver | None = None) -> ProbeResult:
    """Probes every row the log does not hold yet; ``observer.progress`` sees each finished row.

    Raises:
        RunError: A rubric id is not in the config.
        EvalFnError: An eval function cannot be loaded.
    """
    from osmosis_ai.datasets import read_dataset
    from osmosis_ai.eval.functions import load_eval_functions
    from osmosis_ai.probes.probe import log_config, other_answers, read_answers, run_probes
    from osmosis_ai.probes.report import build_report
    from osmosis_ai.runs.session_log import open_session_log

    observer = quiet_observer(observer)
    functions = load_eval_functions(list(options.eval_fns)) if options.eval_fns else []
    functions += _rubric_functions(options)
    dataset = Path(options.dataset)
    answers = read_answers(dataset)
    config = log_config(functions, options.threshold)
    log = open_session_log("probe", config, dataset, options.log_path, options.resume_path, observer)
    progress = observer.progress(len(answers))
    try:
        rows = enumerate(read_dataset(dataset, contract="any"))
        outcome = run_probes(
            functions, rows, other_answers(answers), log, concurrency=options.concurrency, on_record=progress
        )
    finally:
        progress.close()
        log.close()
    names = [f.name for f in functions]
    # Interrupted or not, the log holds the rows that finished: the report covers them.
    return ProbeResult(options, outcome, log.path, build_report(log.path, names, threshold=options.threshold))
