"""`make demo`: the main job on the shipped example, against a real model running on this machine.

Starts the embedded SmolLM2-135M server (llama.cpp via xllamacpp, 127.0.0.1, one thread), runs
``osmosis eval`` with ``--n 3`` over ``test_data.jsonl`` (the ``math_agent`` loop, scored by
``reward_fn.compute_reward``), prints the summary with pass@k, and stops the model. A 135M model gets
most answers wrong: the point is the pipeline, not the score.
"""

import pathlib
import subprocess
import sys
import tempfile

from osmosis_ai.llm.local_server import spawn_local_server

HERE = pathlib.Path(__file__).resolve().parent


def main() -> int:
    print("==> Starting the local model (SmolLM2-135M on llama.cpp, 127.0.0.1)", flush=True)
    out_dir = pathlib.Path(tempfile.mkdtemp(prefix="osmosis-demo-"))
    with spawn_local_server(threads=1, log_file=str(out_dir / "model-server.log")) as server:
        print(f"    ready at {server.base_url}", flush=True)
        print("==> Running osmosis eval on examples/test_data.jsonl (--n 3, pass@k)\n", flush=True)
        command = [
            str(pathlib.Path(sys.executable).parent / "osmosis"), "eval",
            "-m", "math_agent:agent_loop",
            "-d", "test_data.jsonl",
            "--eval-fn", "reward_fn.compute_reward:numbers_match_reward",
            "--eval-fn", "reward_fn.compute_reward:has_number_reward",
            "--model", "smollm2-135m", "--base-url", server.base_url,
            "--n", "3", "--batch-size", "2", "--max-tokens", "48", "--temperature", "0.7",
            "--max-failure-rate", "1",
            "-o", str(out_dir / "results.json"), "--log", str(out_dir / "results.log.jsonl"),
        ]  # fmt: skip
        code = subprocess.call(command, cwd=HERE)
    print(f"\n==> Local model stopped. Results: {out_dir / 'results.json'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
