"""Re-run surviving mutants against given test files, as mutmut runs them: the tests are
collected once and run once with mutmut's "stats" trampolines to learn which mutated functions
each test calls; then each mutant runs in a forked child with MUTANT_UNDER_TEST set, through
the tests that call its function, stopping at the first failure; prints "NAME EXIT_CODE" lines
(0: every such test passed, or no test calls the function: the mutant survives; 1: a test
failed, the mutant is killed).

usage (in mutmut's mutants/ folder, with the project's venv; the test files copied there):
    python recheck.py TESTFILE... < names.txt > recheck.txt
names.txt: one mutant name a line. A child still running after 120 s (a hang guard, never a
verdict budget: these tests take about a second) is killed and reported with code 124."""
from __future__ import annotations

import os
import signal
import sys
import time

sys.path.insert(0, os.path.abspath("src"))      # the mutated sonnx, not the installed one


class Recheck:
    def __init__(self, names: list[str]):
        self.names = names

    def pytest_runtestloop(self, session):
        import sonnx
        assert sonnx.__file__.startswith(os.path.abspath("src")), sonnx.__file__
        from _pytest.runner import runtestprotocol

        import mutmut.mutation.trampoline as trampoline
        hits: dict[str, set[str]] = {}
        current: list[str] = []
        trampoline.record_trampoline_hit = lambda name, caller=None: hits.setdefault(name, set()).add(current[0])
        os.environ["MUTANT_UNDER_TEST"] = "stats"
        for item in session.items:
            current[:] = [item.nodeid]
            runtestprotocol(item, nextitem=None, log=False)
        del os.environ["MUTANT_UNDER_TEST"]
        for name in self.names:
            called = hits.get(name.rsplit("__mutmut_", 1)[0], set())
            items = [i for i in session.items if i.nodeid in called]
            if not items:
                sys.__stdout__.write(f"{name} 0\n")
                continue
            pid = os.fork()
            if pid == 0:
                os.environ["MUTANT_UNDER_TEST"] = name
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                code = 0
                for i, item in enumerate(items):
                    nxt = items[i + 1] if i + 1 < len(items) else None
                    if any(r.failed for r in runtestprotocol(item, nextitem=nxt, log=False)):
                        code = 1
                        break
                os._exit(code)
            t0 = time.monotonic()
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    code = os.waitstatus_to_exitcode(status)
                    break
                if time.monotonic() - t0 > 120:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    code = 124
                    break
                time.sleep(0.01)
            sys.__stdout__.write(f"{name} {code}\n")
            sys.__stdout__.flush()
        return True


if __name__ == "__main__":
    import pytest
    names = [n.strip() for n in sys.stdin if n.strip()]
    pytest.main([*sys.argv[1:], "-q", "-s", "-p", "no:cacheprovider"], plugins=[Recheck(names)])
