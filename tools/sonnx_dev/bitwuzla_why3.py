#!/usr/bin/env python3
"""Bitwuzla as a Why3 prover: reads the SMT-LIB task Why3 writes, answers unsat/sat/unknown.

    python3 -m sonnx_dev.bitwuzla_why3 [--steps N] [--seconds S] TASK.smt2

Bitwuzla (the ``bitwuzla`` wheel: Python bindings with an SMT-LIB parser) decides
floating-point formulas by bit-blasting; it is the prover that closes the float16 lemmas Z3
and cvc5 time out on. It has no integers or reals, and Why3's task carries the whole context
of ieee_float (integer and real axioms among it). So the task is fed command by command: a
command Bitwuzla's parser refuses (an Int or Real sort, or a symbol of a command refused
before) is left out. Leaving out a declaration or a hypothesis only weakens the task, so
"unsat" stays a proof of the goal; "sat" is reported only when nothing was left out (else
"unknown"), and a task whose goal was left out is "unknown" at once.

Budget: ``--steps N`` stops the search after N calls of Bitwuzla's termination callback
(the SAT solver calls it as it works, so the count depends on the task, not on the machine's
load): the deterministic budget tools/prove's replay gives (sonnx_dev.prove.steps_config). The count is printed as
``bitwuzla-steps: N`` for the driver (proofs/drivers/bitwuzla.drv). ``--seconds`` is only a
hang guard (Why3's own time limit kills the process too).
"""
from __future__ import annotations

import argparse
import sys
import time


def commands(text: str) -> list[tuple[str, str]]:
    """Top-level commands of an SMT-LIB script, each with the comment lines just before it."""
    out, depth, start, comment, i, n = [], 0, None, [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == ";" and depth == 0:
            j = text.find("\n", i)
            j = n if j < 0 else j
            comment.append(text[i:j])
            i = j
            continue
        if ch == ";":                                   # a comment inside a command
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == '"' or ch == "|":                     # string literal or quoted symbol
            j = text.find(ch, i + 1)
            while ch == '"' and j >= 0 and text[j + 1:j + 2] == '"':   # "" inside a string
                j = text.find(ch, j + 2)
            i = n if j < 0 else j + 1
            continue
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(("\n".join(comment), text[start:i + 1]))
                comment = []
        i += 1
    return out


def head(cmd: str) -> str:
    return cmd[1:].split(None, 1)[0].rstrip(")") if len(cmd) > 1 else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=0, help="step budget (0: none)")
    ap.add_argument("--seconds", type=float, default=0, help="hang guard in seconds (0: none)")
    ap.add_argument("task")
    args = ap.parse_args(argv)
    try:
        import bitwuzla as bz
    except ImportError:
        print("bitwuzla_why3: the bitwuzla wheel is not installed in this Python "
              f"({sys.executable}); install the project's dev dependencies", file=sys.stderr)
        return 3
    with open(args.task, encoding="utf-8") as f:
        cmds = commands(f.read())

    tm = bz.TermManager()
    opts = bz.Options()
    opts.set(bz.Option.PRODUCE_MODELS, False)

    def parser_with(kept: list[str]):
        p = bz.Parser(tm, opts, "smt2")
        for c in kept:
            p.parse(c, True, False)
        return p

    kept: list[str] = []
    parser = parser_with(kept)
    dropped_assert = goal_dropped = checked = False
    for comment, cmd in cmds:
        h = head(cmd)
        if h in ("set-logic", "set-info", "set-option", "get-info", "get-model", "get-value", "exit"):
            continue
        if h == "check-sat":
            checked = True
            break
        try:
            parser.parse(cmd, True, False)
            kept.append(cmd)
        except bz.BitwuzlaException:
            # the parser is unusable after an error: rebuild it from what was kept
            dropped_assert |= h == "assert"
            goal_dropped |= h == "assert" and ";; Goal" in comment
            parser = parser_with(kept)
    print(f"bitwuzla_why3: kept {len(kept)} of {len(cmds)} commands", file=sys.stderr)
    if goal_dropped or not checked:
        print("bitwuzla-steps: 0")
        print("unknown")
        return 0

    solver = parser.bitwuzla()
    calls = [0]
    t0 = time.monotonic()
    stopped = [""]

    def terminate() -> bool:
        calls[0] += 1
        if args.steps and calls[0] > args.steps:
            stopped[0] = "steps"
            return True
        if args.seconds and time.monotonic() - t0 > args.seconds:
            stopped[0] = "seconds"
            return True
        return False

    solver.configure_terminator(terminate)
    result = solver.check_sat()
    print(f"bitwuzla-steps: {calls[0]}")
    if result == bz.Result.UNSAT:
        print("unsat")
    elif result == bz.Result.SAT and not dropped_assert:
        print("sat")
    else:
        if stopped[0] == "steps":
            print(f"bitwuzla_why3: step limit exceeded ({args.steps})")
        elif stopped[0] == "seconds":
            print("bitwuzla_why3: interrupted by the hang guard")
        print("unknown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
