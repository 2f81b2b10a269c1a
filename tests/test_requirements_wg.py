"""The working group's cross-reference of every requirement, and sources that name their
documents: checked data, shown by `sonnx requirements --format json`."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from sonnx import cli, requirements

# A snapshot of github.com/onnx/working-groups (a git directory holding WG_COMMIT); the
# references are judged against that commit's files.
WG_GIT = Path(os.environ.get("SONNX_WG_GIT", "/work/.mirror/onnx+working-groups/repo"))


def _wg_reader(git_dir: Path):
    def read(path: str):
        full = requirements.WG_PREFIX + path.rstrip("/")
        proc = subprocess.run(["git", "-C", str(git_dir), "cat-file", "-t", f"{requirements.WG_COMMIT}:{full}"],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            return None
        if proc.stdout.strip() == "tree":
            return ""
        return subprocess.run(["git", "-C", str(git_dir), "show", f"{requirements.WG_COMMIT}:{full}"],
                              capture_output=True, text=True, timeout=60, check=True).stdout
    return read


def _have_commit() -> bool:
    return subprocess.run(["git", "-C", str(WG_GIT), "cat-file", "-e", f"{requirements.WG_COMMIT}^{{commit}}"],
                          capture_output=True, timeout=60).returncode == 0


def test_every_requirement_has_a_wg_entry_with_a_known_relation_and_reasons():
    reqs = requirements.load()
    assert all(r.wg for r in reqs.values()), [rid for rid, r in reqs.items() if not r.wg]
    for r in reqs.values():
        for w in r.wg:
            assert w.relation in requirements.WG_RELATIONS
            if w.relation in ("departs", "none"):
                assert w.reason.strip(), (r.id, w.ref)
            if w.relation == "none" and "#" not in w.ref:
                # an operator with no WG specification says so, naming the commit judged
                assert requirements.WG_COMMIT in w.reason, (r.id, w.ref)


@pytest.mark.skipif(not WG_GIT.exists(), reason=f"no working-groups snapshot at {WG_GIT} (set SONNX_WG_GIT)")
def test_every_wg_reference_is_true_of_the_working_group_s_commit():
    assert _have_commit(), f"{WG_GIT} does not hold working-groups commit {requirements.WG_COMMIT}"
    read = _wg_reader(WG_GIT)
    assert requirements.wg_problems(requirements.load(), read) == []
    # and the judge sees a false one: a tag not in its document, a document that does not
    # exist, a "none" for a specification that does exist
    fake = requirements.parse(
        '[[requirement]]\nid="X-R1"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["test"]\n'
        '[[requirement.wg]]\nref="deliverables/reqs/reqs.md#OP 999"\nrelation="refines"\n'
        '[[requirement.wg]]\nref="documents/no-such.md#[R1]"\nrelation="refines"\n'
        '[[requirement.wg]]\nref="documents/profile_opset/conv"\nrelation="none"\nreason="r"\n'
        '[[requirement.wg]]\nref="documents/profile_opset/mul"\nrelation="refines"\n')
    problems = requirements.wg_problems(fake, read)
    assert len(problems) == 4, problems
    assert "holds no 'OP 999'" in problems[0] and "no document" in problems[1]
    assert "exists" in problems[2] and "relation none" in problems[3]


@pytest.mark.parametrize("wg,msg", [
    ('[[requirement.wg]]\nref="a#b"\nrelation="implements"\n', "wg relation"),
    ('[[requirement.wg]]\nref="a#b"\nrelation="departs"\n', "needs a reason"),
    ('[[requirement.wg]]\nref="a"\nrelation="none"\nreason="  "\n', "needs a reason"),
    ('[[requirement.wg]]\nrelation="refines"\n', "without a ref"),
    ('[[requirement.wg]]\nref="a#b"\nrelation="refines"\nwhy="x"\n', "unknown key"),
    ('wg = "x"\n', "must be"),
])
def test_a_malformed_wg_entry_is_refused(wg, msg):
    entry = '[[requirement]]\nid="A-R1"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["test"]\n'
    with pytest.raises(ValueError, match=msg):
        requirements.parse(entry + wg)


def test_sonnx_requirements_json_shows_the_wg_entries(capsys):
    assert cli.main(["requirements", "--format", "json"]) == 0
    data = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    reqs = requirements.load()
    assert set(data) == set(reqs)
    for rid, r in reqs.items():
        assert data[rid]["wg"] == [w.as_dict() for w in r.wg] != []
    gemm5 = {w["ref"]: w for w in data["GEMM-R5"]["wg"]}
    assert gemm5["deliverables/reqs/reqs.md#OP 016"]["relation"] == "departs"


def test_no_source_cites_a_bare_seed_number():
    bare = {rid: requirements.bare_seed_citations(r.source) for rid, r in requirements.load().items()}
    assert {rid: b for rid, b in bare.items() if b} == {}
    # and the check sees one: a bare number, an unknown seed, a title of another seed
    assert requirements.bare_seed_citations("seed 004 (SONNX Mul), restriction R1") != []
    assert requirements.bare_seed_citations("seed 9 (x)") == ["seed 9 (no such seed document)"]
    title = requirements.seed_documents()["002"]["title"]
    assert requirements.bare_seed_citations(f"seed 004 ({title})") != []
    assert requirements.bare_seed_citations(f"seed 002 ({title})") == []


def test_every_seed_document_has_a_title_and_an_identity():
    for number, doc in requirements.seed_documents().items():
        assert doc["title"] and "sha256" in doc["identity"], number
    assert sorted(requirements.seed_documents()) == ["000", "001", "002", "003", "004"]
