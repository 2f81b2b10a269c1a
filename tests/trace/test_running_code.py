"""The trace's "Running code" (issue 32): per row, how the default engine's code is checked, which
C entry points extracted from proofs the default engine runs for it (for the element types they
take) and which the proved engine runs, read from the operators' records (never a list here)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from sonnx.ops import registry
from sonnx.trace import report, running
from tests.trace.test_matrix import accept_all, build, tree  # noqa: F401  (the fixture tree)

pytestmark = pytest.mark.req("@every")


def test_proved_entries_come_from_the_records():
    entries = running.proved_entries()
    for op in registry.operators().values():
        b = op.c_binding
        for e in (b.entries if b else ()):
            for rid in e.ids:
                assert f"{e.name} ({e.proof})" in entries[rid]
    # an operator that runs another's entry points cites both proofs for the IDs it names
    for op in registry.operators().values():
        if op.c_binding is not None and op.c_binding.via is not None:
            stem, proof, ids = op.c_binding.via
            inner = registry.by_stem(stem).c_binding
            for rid in ids:
                assert [f"{e.name} ({e.proof} + {proof})" for e in inner.entries] == [
                    x for x in entries[rid] if proof in x]
    # no row of an operator without a C level is claimed
    for op in registry.operators().values():
        if op.c_binding is None:
            assert not any(rid.startswith(op.prefix + "-") for rid in entries), op.name


def test_a_binding_dropped_from_a_record_leaves_its_rows_without_proved_code(monkeypatch):
    ops = dict(registry.operators())
    mul = next(op for op in ops.values() if op.c_binding is not None and op.c_binding.entries)
    before = running.proved_entries()
    ids = {rid for e in mul.c_binding.entries for rid in e.ids}
    ops = {k: (dataclasses.replace(op, c_binding=None) if op is mul else op) for k, op in ops.items()}
    monkeypatch.setattr(running, "operators", lambda: ops)
    after = running.proved_entries()
    for rid in ids:
        assert [x for x in before.get(rid, []) if x.startswith(f"sonnx_{mul.stem}_")]
        assert not [x for x in after.get(rid, []) if x.startswith(f"sonnx_{mul.stem}_")]


def test_default_entries_come_from_the_records_and_a_non_default_binding_has_none(monkeypatch):
    """The rows whose default engine runs proved code are those of the records whose binding is
    the default one (CBinding.default); turning that off in a record takes them out."""
    entries = running.default_entries()
    ops = dict(registry.operators())
    defaults = [op for op in ops.values() if op.c_binding is not None and op.c_binding.default]
    assert defaults, "some record makes its proved C kernels the default"
    for op in ops.values():
        b = op.c_binding
        for e in (b.entries if b else ()):
            for rid in e.ids:
                rule = b.size_rule(e.suffix)
                sized = "" if rule is None else f" only where {rule.text}, {rule.otherwise} otherwise"
                assert (f"{e.name} ({e.proof}){sized}" in entries.get(rid, [])) == b.runs_by_default(e.suffix)
    # a record may name the entry points it makes the default: Gemm's integer ones at every size,
    # its float ones only where its size rule admits the call, the rule said in the row
    gemm_rows = entries["GEMM-R6"]
    assert "sonnx_gemm_u32 (proofs/gemm_c.mlw)" in gemm_rows
    rule = registry.by_stem("gemm").c_binding.sizes
    assert rule is not None and rule.suffixes == ("f32", "f64")
    f32 = [x for x in entries["GEMM-R7"] if x.startswith("sonnx_gemm_f32 ")]
    assert f32 == [f"sonnx_gemm_f32 (proofs/gemm_c.mlw) only where {rule.text}, the llvmlite fold otherwise"]
    # MatMul's kernel is Gemm's: its row lists Gemm's default entry points with matmul.mlw, the
    # float ones with the same rule
    mm = entries["MATMUL-R5"]
    assert "sonnx_gemm_u32 (proofs/gemm_c.mlw + proofs/matmul.mlw)" in mm
    assert f"sonnx_gemm_f64 (proofs/gemm_c.mlw + proofs/matmul.mlw) only where {rule.text}, the llvmlite fold otherwise" in mm
    # the cell counts the bounded ones apart, with the rule
    cell = running.cell(running.running(True, True, running.proved_entries()["GEMM-R7"], entries["GEMM-R7"]))
    assert f"; 2 of them only where {rule.text}, the llvmlite fold otherwise), other types tested" in cell
    # a binding without the rule runs every size: the rows lose the words (and a record that
    # drops its float entries from the default loses the rows)
    gemm = registry.by_stem("gemm")
    ops2 = {k: (dataclasses.replace(op, c_binding=dataclasses.replace(op.c_binding, sizes=None))
                if op is gemm else op) for k, op in ops.items()}
    monkeypatch.setattr(running, "operators", lambda: ops2)
    assert "sonnx_gemm_f32 (proofs/gemm_c.mlw)" in running.default_entries()["GEMM-R7"]
    ops2 = {k: (dataclasses.replace(op, c_binding=dataclasses.replace(op.c_binding, default=("u32", "u64")))
                if op is gemm else op) for k, op in ops.items()}
    monkeypatch.setattr(running, "operators", lambda: ops2)
    assert not any(x.startswith("sonnx_gemm_f") for x in running.default_entries()["GEMM-R7"])
    assert not any(x.startswith("sonnx_gemm_f") for x in running.default_entries()["MATMUL-R5"])
    monkeypatch.setattr(running, "operators", lambda: ops)
    mul = registry.by_stem("mul")
    assert mul in defaults and entries["MUL-R3"]
    ops = {k: (dataclasses.replace(op, c_binding=dataclasses.replace(op.c_binding, default=False))
               if op is mul else op) for k, op in ops.items()}
    monkeypatch.setattr(running, "operators", lambda: ops)
    assert "MUL-R3" not in running.default_entries()
    assert running.proved_entries()["MUL-R3"], "the proved engine still runs them"


def test_the_running_code_is_in_the_row_and_every_format(tree):
    root, _ = tree
    accept_all(root)
    m = build(root)
    row = next(r for r in m.rows if r.id == "MUL-R1")
    assert row.running["default_engine"] == ["tested"] + (["CrossHair-checked"] if row.crosshair else [])
    assert row.running["proved_engine"] == running.proved_entries().get("MUL-R1", [])
    assert row.running["proved_engine"], "Mul's C entry points name MUL-R1"
    assert row.running["default_proved"] == running.default_entries().get("MUL-R1", [])
    assert row.running["default_proved"], "Mul's record makes its C entry points the default"
    cell = running.cell(row.running)
    n = len(row.running["default_proved"])
    assert cell.startswith(f"default: {n} proved C entry points (their types), other types tested")
    assert "; --engine proved: " in cell
    assert json.loads(report.to_json(m))["requirements"][0]["running"] == row.running
    assert "Running code" in report.HEADERS and cell in report.to_csv(m) and cell in report.to_markdown(m)
    assert running.cell(running.running(False, False, [])) == "default: not checked; not proved code"


def test_the_default_engine_words():
    assert running.running(True, True, ["e"]) == {"default_engine": ["tested", "CrossHair-checked"],
                                                  "default_proved": [], "proved_engine": ["e"]}
    assert running.cell(running.running(True, False, ["e"])) == "default: tested; --engine proved: 1 proved C entry point"
    assert running.cell(running.running(True, False, ["e"], ["e"])) == \
        "default: 1 proved C entry point (their types), other types tested; --engine proved: 1 proved C entry point"


def test_a_route_is_listed_with_its_proofs_and_its_checked_conversions(monkeypatch):
    """A binding's routes (float16/bfloat16 through float32) appear in the row as the entry for
    those types, with the entry's and the route's proofs and the conversions' tests marked
    checked; the cell counts them apart from the entry points; a record without routes has none."""
    entries = running.proved_entries()
    routed = [op for op in registry.operators().values() if op.c_binding is not None and op.c_binding.routes]
    assert routed
    for op in routed:
        for r in op.c_binding.routes:
            for e in op.c_binding.entries:
                if e.name.endswith("_" + r.through):
                    checked = f"; checked: {', '.join(r.checked)}" if r.checked else ""
                    want = f"{e.name} for {', '.join(r.types)} ({' + '.join((e.proof, *r.proofs))}{checked})"
                    # the entry's IDs, or those of the route's lemmas when it names them
                    ids = sorted(set(e.ids) & set(r.ids)) if r.ids else e.ids
                    assert ids and all(want in entries[rid] for rid in ids)
                    cell = running.cell(running.running(True, True, entries[ids[0]]))
                    assert "route" in cell
                    # "conversions checked" only where some route of the row runs checked conversions
                    assert ("conversions checked" in cell) == any("; checked: " in x for x in entries[ids[0]])
    op = routed[0]
    ops = dict(registry.operators())
    ops[op.name] = dataclasses.replace(op, c_binding=dataclasses.replace(op.c_binding, routes=()))
    monkeypatch.setattr(running, "operators", lambda: ops)
    assert not any(" for " in x for rid in op.c_binding.entries[0].ids for x in running.proved_entries()[rid])
