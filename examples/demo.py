"""Scores recorded attempts of the shipped example with its reward functions (run by `make demo`).

Each row of test_data.jsonl carries four recorded model answers in `attempts`; every answer is scored
by the decorated reward functions, exactly as a trainer would call them.
"""

import json
import pathlib

from reward_fn.compute_reward import has_number_reward, numbers_match_reward

HERE = pathlib.Path(__file__).parent
REWARDS = {"numbers_match_reward": numbers_match_reward, "has_number_reward": has_number_reward}


def main() -> None:
    rows = [json.loads(line) for line in (HERE / "test_data.jsonl").read_text().splitlines() if line.strip()]
    totals = {name: [] for name in REWARDS}
    print(f"Scoring {len(rows)} rows x {len(rows[0]['attempts'])} attempts from test_data.jsonl\n")
    for index, row in enumerate(rows):
        scores = {
            name: [fn(answer, row["ground_truth"], {"row_index": index}) for answer in row["attempts"]]
            for name, fn in REWARDS.items()
        }
        for name, values in scores.items():
            totals[name].extend(values)
        shown = "  ".join(f"{name}={sum(v) / len(v):.2f}" for name, v in scores.items())
        print(f"  row {index}: {row['user_prompt'][:48]:<48} {shown}")
    print("\nReward function          mean    runs")
    for name, values in totals.items():
        print(f"  {name:<22} {sum(values) / len(values):6.3f}  {len(values):5d}")


if __name__ == "__main__":
    main()
