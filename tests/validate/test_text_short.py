"""validate's text report, as a person reads it: one line per finding (where: the problem), the
rule's fix once, a last line with the next step; -v for every message whole and the time taken;
JSON and SARIF keep every detail; str(finding) is a readable line."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sonnx.cli import main
from sonnx.validate import formats, validate
from sonnx.validate.report import Finding

from . import models as M
from .test_cli import run

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "pytorch_mlp" / "mlp.onnx")


def short_form_problems(text: str, report) -> list[str]:
    """How ``text`` breaks the short form for ``report`` (a model with findings)."""
    bad = []
    lines = text.splitlines()
    for rule, found in report.by_rule().items():
        start = next(i for i, line in enumerate(lines) if line.startswith(f"  [{rule}] "))
        block = []
        for line in lines[start + 1:]:
            if not line.startswith("    "):
                break
            block.append(line)
        shown = found[:formats.TEXT_PER_RULE]
        for f in shown:
            if sum(line == f"    {f.where}: {f.problem}" for line in block) != 1:
                bad.append(f"{rule}: no single line '{f.where}: {f.problem}'")
        fixes = [line for line in block if line.startswith("    fix: ")]
        if found[0].advice and len(fixes) != 1:
            bad.append(f"{rule}: {len(fixes)} fix lines, not one")
        if found[0].advice and sum(found[0].advice in line for line in block) != 1:
            bad.append(f"{rule}: the advice is repeated")
    if not lines[-1].startswith("next: "):
        bad.append("the last line is not the next step")
    return bad


@pytest.mark.req("PROF-R2", "GEMM-R4", "MUL-R4", "PROF-R1")
def test_the_exported_mlp_reads_in_one_screen(capsys):
    code, out, _ = run(["validate", MLP], capsys)
    r = validate(MLP)
    assert code == 1 and short_form_problems(out, r) == []
    lines = out.splitlines()
    assert lines[0].endswith(": 9 violations of 4 rules (5 nodes)")
    assert len(lines) == 1 + 4 + 9 + 4 + 1              # model, rules, findings, fixes, next
    assert "main//" not in out and "(1 nodes)" not in out
    assert len(out) < len(formats.to_text([r], verbosity=1))   # -v: every advice in full


@pytest.mark.req("MUL-R4")
def test_the_short_form_check_catches_the_long_form_and_a_missing_next_step(capsys):
    r = validate(MLP)
    long = formats.to_text([r], verbosity=1)          # every message whole: the advice per finding
    assert short_form_problems(long, r) != []
    short = formats.to_text([r])
    assert short_form_problems(short.rsplit("next: ", 1)[0], r) == ["the last line is not the next step"]
    doubled = short.replace("    fix: ", "    fix: x\n    fix: ", 1)
    assert any("fix lines" in p for p in short_form_problems(doubled, r))


@pytest.mark.req("PROF-R2")
def test_verbose_gives_every_message_whole_and_the_time_of_every_model(tmp_path, capsys):
    ok = tmp_path / "ok.onnx"
    ok.write_bytes(M.mul([2, 3], [2, 3]).SerializeToString())
    code, out, _ = run(["validate", "-v", MLP, str(ok)], capsys)
    for f in validate(MLP).findings:
        assert f.message in out
    heads = [line for line in out.splitlines() if not line.startswith(" ")][:2]
    assert all(re.search(r"\(\d+ nodes?, \d+\.\d{3} s\)$", h) for h in heads), heads


@pytest.mark.req("GEMM-R4")
def test_json_and_sarif_keep_every_detail(capsys):
    r = validate(MLP)
    main(["validate", "--format", "json", MLP])
    found = json.loads(capsys.readouterr().out)["models"][0]["findings"]
    assert [f["message"] for f in found] == [f.message for f in r.findings]
    assert all(f.advice and f.message == f"{f.problem}; {f.advice}" for f in r.findings)
    main(["validate", "--format", "sarif", MLP])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert [x["message"]["text"] for x in results] == [f"{f.where}: {f.message}" for f in r.findings]


@pytest.mark.req("GEMM-R4")
def test_str_of_a_finding_is_one_readable_line(monkeypatch):
    f = next(f for f in validate(MLP).findings if f.rule == "GEMM-R4")
    assert str(f).startswith("[GEMM-R4] /fc1/Gemm (Gemm-13): Gemm input C has shape (16,)")
    assert "\n" not in str(f) and f.message in str(f)
    sub = Finding("MUL-R4", "m", graph="main/If_0:then_branch", node_index=0, op_type="Mul", op_version=13)
    assert str(sub) == "[MUL-R4] main/If_0:then_branch > Mul_0 (Mul-13): m"
    monkeypatch.setattr(Finding, "__str__", Finding.__repr__)   # planted: the dataclass repr
    assert str(f).startswith("Finding(")
