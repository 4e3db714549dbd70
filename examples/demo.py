"""`make demo`: the main job on the shipped example, against a real model running on this machine.

Starts the embedded SmolLM2-135M server (llama.cpp via xllamacpp, 127.0.0.1, one thread), runs
``osmosis eval`` with ``--n 3`` over ``test_data.jsonl`` (the ``math_agent`` loop, scored by
``reward_fn.compute_reward``), prints the summary with pass@k, and stops the model. A 135M model gets
most answers wrong: the point is the pipeline, not the score.
"""

import pathlib
import resource
import subprocess
import sys
import tempfile
import time

from osmosis_ai.llm.local_server import spawn_local_server

HERE = pathlib.Path(__file__).resolve().parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    print("==> Starting the local model (SmolLM2-135M on llama.cpp, 127.0.0.1)", flush=True)
    out_dir = pathlib.Path(tempfile.mkdtemp(prefix="osmosis-demo-"))
    started = time.monotonic()
    with spawn_local_server(threads=1, log_file=str(out_dir / "model-server.log")) as server:
        print(f"    ready at {server.base_url} in {time.monotonic() - started:.1f} s", flush=True)
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
        eval_started = time.monotonic()
        code = subprocess.call(command, cwd=HERE)
        eval_wall, eval_cpu = time.monotonic() - eval_started, _children_cpu()
    # The server is a child too: its CPU is counted once it has stopped.
    server_cpu = _children_cpu() - eval_cpu
    print(
        f"\n==> Local model stopped. The eval took {eval_wall:.0f} s ({eval_cpu:.0f} CPU-s), the model "
        f"{server_cpu:.0f} CPU-s. Results: {out_dir / 'results.json'}"
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
