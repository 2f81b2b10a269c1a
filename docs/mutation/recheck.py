"""Re-run surviving mutants against given test files: each mutant in a forked child with
MUTANT_UNDER_TEST set (as mutmut runs them), pytest -x; prints "NAME EXIT_CODE" lines.

usage (in mutmut's mutants/ folder, with the project's venv; the test files copied there):
    python recheck.py JOBS PREFIX TESTFILE... < names.txt > recheck.txt
names.txt: one mutant name a line (e.g. the survivors of mutants/src/sonnx/**/*.meta). A child
still running after 120 s (a hang guard, never a verdict budget: no test here takes 2 s) is
killed and reported with code 124."""
from __future__ import annotations

import os
import signal
import sys
import time

sys.path.insert(0, os.path.abspath("src"))      # the mutated sonnx, not the installed one


def _child(name: str, tests: list[str]) -> None:
    import pytest
    os.environ["MUTANT_UNDER_TEST"] = name
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os._exit(int(pytest.main([*tests, "-x", "-q", "-p", "no:cacheprovider"])))


def main(jobs: int, prefix: str, tests: list[str]) -> None:
    import numpy  # noqa: F401  warm imports, shared by every fork
    import onnx  # noqa: F401
    import sonnx
    assert sonnx.__file__.startswith(os.path.abspath("src")), sonnx.__file__
    import sonnx.conform.api  # noqa: F401
    import sonnx.run.cli  # noqa: F401
    names = [n.strip() for n in sys.stdin if n.strip().startswith(prefix)]
    running: dict[int, tuple[str, float]] = {}
    while names or running:
        while names and len(running) < jobs:
            name = names.pop(0)
            pid = os.fork()
            if pid == 0:
                _child(name, tests)
            running[pid] = (name, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for p, (name, t0) in list(running.items()):
                if time.monotonic() - t0 > 120:
                    os.kill(p, signal.SIGKILL)
                    os.waitpid(p, 0)
                    print(name, 124, flush=True)
                    del running[p]
            time.sleep(0.02)
            continue
        name, _ = running.pop(pid)
        print(name, os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
