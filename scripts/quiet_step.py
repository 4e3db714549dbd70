"""Run one set-up step of `make` and show one line for it, keeping the full output in a log.

    python scripts/quiet_step.py LOG TITLE -- COMMAND...

Prints ``==> TITLE``, runs COMMAND with stdout and stderr appended to LOG, and on a terminal keeps a
single status line up to date with cargo's progress (``Compiling NAME`` lines are counted, so the Rust
build is visibly moving without a hundred lines of output). Warnings from cargo and rustc (``warning:``
lines) and everything on failure are shown; the rest stays in LOG. Exits with COMMAND's status.

Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time

_COMPILING = re.compile(r"^\s*Compiling (\S+) v")
_TAIL_ON_FAILURE = 40


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log_path, title, command = argv[0], argv[1], argv[3:]
    live = sys.stdout.isatty()
    print(f"==> {title}", flush=True)
    started = time.monotonic()
    compiled, lines = 0, []
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"\n==> {title}\n$ {' '.join(command)}\n")
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            lines = [*lines[-_TAIL_ON_FAILURE + 1 :], line]
            match = _COMPILING.match(line)
            if match:
                compiled += 1
                if live:
                    status = f"    cargo: {compiled} crates compiled, now {match.group(1)}"
                    print(f"\r\033[K{status}", end="", flush=True)
            elif line.lstrip().startswith("warning:") and "generated" not in line:
                print(f"\r\033[K    {line.rstrip()}", flush=True)
        code = proc.wait()
    if live and compiled:
        print("\r\033[K", end="")
    elapsed = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    if code != 0:
        print(f"    failed after {elapsed:.0f} s; the last lines of {log_path}:", file=sys.stderr)
        sys.stderr.writelines(f"    {line}" for line in lines)
        return code
    crates = f", {compiled} crates compiled" if compiled else ""
    # CPU time tells more than wall time on a shared machine (it counts every process the step waited for).
    print(f"    done in {elapsed:.0f} s ({cpu:.0f} CPU-s){crates}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
