"""A rubric-style reward (`@osmosis_rubric`): what an LLM judge would score, written here as a rule so the
example runs without a judge model. `osmosis check .` checks its signature."""

from osmosis_ai import osmosis_rubric


@osmosis_rubric
def shows_work(solution_str: str, ground_truth: str | None, extra_info: dict) -> float:
    """0.5 for an answer that names a number, 1.0 when it also says how it got there."""
    has_number = any(ch.isdigit() for ch in solution_str)
    explains = any(word in solution_str.lower() for word in ("because", "so ", "add", "multiply", "="))
    return 0.5 * has_number + 0.5 * (has_number and explains)
