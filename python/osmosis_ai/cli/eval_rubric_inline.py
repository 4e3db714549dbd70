"""``osmosis eval rubric``: the newer spelling, with an inline rubric and chat-style records.

Shares the engine, options, Ctrl+C handling and exit rules of ``eval-rubric`` (see ``cli/eval_rubric.py``);
its results file has 0.3's layout (``rubric.report.layout_0_3``), written where ``eval-rubric`` writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from osmosis_ai.cli import bounds
from osmosis_ai.cli.eval_rubric import FLAGS, _common_judge_options, judge_and_report, judge_fields, render
from osmosis_ai.cli.output import json_result
from osmosis_ai.cli.run_support import library_errors


@click.command("rubric")
@click.option(
    "-d",
    "--dataset",
    "--data",
    "data_path",
    required=True,
    type=click.Path(path_type=Path),
    help="JSONL records: 'messages' (last assistant message is judged) or 'solution_str'.",
)
@click.option(
    "-r", "--rubric", "rubric_text", required=True, help="Rubric text, or @FILE to read it from a file."
)
@click.option("--model", required=True, help="Judge model in LiteLLM form, e.g. openai/gpt-4o-mini.")
@click.option(
    "-o",
    "--output",
    "output_path",
    default=None,
    metavar="PATH",
    help="Results file, or a directory (a trailing / or an existing one) for rubric_eval_result.json "
    "(default: ~/.cache/osmosis/eval_result/rubric/).",
)
@click.option("--api-key", default=None, help="Deprecated: set the provider's API key variable instead.")
@click.option(
    "--score-min",
    type=bounds.finite(),
    default=0.0,
    show_default=True,
    help="Lowest score the judge may give.",
)
@click.option(
    "--score-max",
    type=bounds.finite(),
    default=1.0,
    show_default=True,
    help="Highest score the judge may give (a score outside the range is clamped and counted).",
)
@_common_judge_options
@json_result
def eval_rubric_inline(**o: Any) -> None:
    """Score JSONL conversations against an inline rubric with an LLM judge."""
    from osmosis_ai.rubric.run import InlineRubricOptions

    with library_errors(FLAGS):
        options = InlineRubricOptions(
            data_path=o["data_path"],
            rubric=o["rubric_text"],
            model=o["model"],
            output=o["output_path"],
            api_key=o["api_key"],
            score_min=o["score_min"],
            score_max=o["score_max"],
            **judge_fields(o),
        )
        if o["api_key"]:
            click.echo(
                "DEPRECATION: --api-key is deprecated; set the provider's API key variable instead.", err=True
            )
        result = judge_and_report(options)
    render(result)
