"""Tests written to kill the survivors of the mutation run over the proof summary and the Why3
driver (tools/mutation-proofs; docs/mutation/trace.md, run 3), and the heartbeat hang of the
evidence runner's `_run`. Each one checks a behaviour a verdict, a proofs.json field, an
assumption finding or an exit status depends on."""
from __future__ import annotations

import sys
import threading

from sonnx_dev import evidence     # the evidence runner (tools/sonnx_dev)

HANG_GUARD_S = 120   # wall clock as a hang guard only: a quick step ends in well under a second


def test_a_finished_step_ends_its_heartbeat_instead_of_hanging(tmp_path, capsys):
    """`_run` must return once its step has ended: its heartbeat thread stops when told, so a
    heartbeat that never wakes up to see it (evidence._run__mutmut_5) becomes a failure here
    rather than a hang of the whole evidence run."""
    got = []
    runner = threading.Thread(daemon=True, target=lambda: got.append(evidence._run(
        "quick", [sys.executable, "-c", "print('done')"], {}, tmp_path / "quick.log", 0.0, quiet_after=0.2)))
    runner.start()
    runner.join(HANG_GUARD_S)
    assert not runner.is_alive(), f"_run did not return within {HANG_GUARD_S} s of a step that ends at once"
    [(rc, secs)] = got
    assert rc == 0 and 0 < secs < HANG_GUARD_S
    assert (tmp_path / "quick.log").read_text() == "done\n"
