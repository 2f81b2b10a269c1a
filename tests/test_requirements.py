"""The registry: well-formed, shipped with the package, listed by `sonnx requirements`."""
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sonnx import cli, requirements

ROOT = Path(__file__).resolve().parents[1]


def test_registry_entries_are_complete():
    reqs = requirements.load()
    assert {"MUL-R1", "MUL-R2", "MUL-R3", "MUL-R4", "PROF-R1", "PROF-R2"} <= set(reqs)
    for r in reqs.values():
        assert re.fullmatch(requirements.ID_PATTERN, r.id)
        assert r.title and r.statement and r.rationale and r.source and r.verification


def test_each_operator_s_requirements_live_in_its_own_data_file():
    from sonnx.ops.registry import operators
    reqs = requirements.load()
    files = requirements.data_files()
    assert files[0] == requirements.PROFILE_DATA and len(files) == len(operators()) + 1
    for op in operators().values():
        rel = requirements.data_file_of(f"{op.prefix}-R1")
        assert rel in files and (ROOT / "src" / "sonnx" / rel).is_file(), op.name
        own = requirements.parse((ROOT / "src" / "sonnx" / rel).read_text(encoding="utf-8"))
        assert own and all(rid.startswith(op.prefix + "-R") for rid in own), op.name
    profile = requirements.parse((ROOT / "src" / "sonnx" / requirements.PROFILE_DATA).read_text(encoding="utf-8"))
    assert profile and all(rid.startswith("PROF-R") for rid in profile)
    # the registry gathers the profile's rules, then each operator's, in registry order
    order = ["PROF", *(op.prefix for op in operators().values())]
    prefixes = [rid.rsplit("-R", 1)[0] for rid in reqs]
    assert sorted(prefixes, key=order.index) == prefixes


def test_the_profile_names_every_registered_operator_from_the_registry():
    from sonnx.ops.registry import operators
    text = (ROOT / "src" / "sonnx" / requirements.PROFILE_DATA).read_text(encoding="utf-8")
    reqs = requirements.load()
    assert text.count("{operators}") >= 2
    for rid in ("PROF-R1", "PROF-R3"):
        assert "{operators}" not in reqs[rid].statement
        assert all(name in reqs[rid].statement for name in operators()), rid
    import tomllib
    statements = " ".join(r["statement"] for r in tomllib.loads(text)["requirement"])
    for name in operators():     # the names are filled in, never written by hand
        assert name not in statements, name


def test_families_are_declared_and_expand_over_the_registry():
    from sonnx.ops.registry import operators
    reqs = requirements.load()
    used = {f for r in reqs.values() for f in r.families}
    assert used <= set(requirements.FAMILIES)
    for name in requirements.FAMILIES:
        assert requirements.family_members(name, reqs), f"family {name} has no member"
    assert requirements.family_members("every", reqs) == list(reqs)
    assert not any(r.startswith("PROF-") for r in requirements.family_members("operators", reqs))
    assert set(requirements.family_members("operators", reqs)) | {r for r in reqs if r.startswith("PROF-")} == set(reqs)
    proved = requirements.family_members("proved", reqs)
    assert proved and all("proof" in reqs[r].verification for r in proved)
    for op in operators().values():
        members = requirements.family_members(f"kind:{op.kind}", reqs)
        assert f"{op.prefix}-R1" in members
    ids, unknown = requirements.expand(["@rounding", "PROF-R1", "@no-such-family", "@rounding"], reqs)
    assert unknown == ["@no-such-family"] and ids[-1] == "PROF-R1"
    assert ids[:-1] == requirements.family_members("rounding", reqs)
    with pytest.raises(ValueError, match="undeclared family"):
        requirements.parse('[[requirement]]\nid="A"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\n'
                           'verification=["test"]\nfamilies=["made-up"]\n')


SPEC_PAGES = sorted((ROOT / "spec").glob("*.md"))


def _page_prefix(page):
    """The requirement prefix a spec page is about: the operator whose spec it is, PROF for
    the profile's page, None for pages about no requirement set."""
    from sonnx.ops.registry import operators
    for op in operators().values():
        if (ROOT / op.spec).resolve() == page.resolve():
            return op.prefix
    return "PROF" if page.name == "profile.md" else None


def test_every_operator_and_the_profile_have_a_spec_page_with_a_requirement_block():
    from sonnx.ops.registry import operators
    pages = {_page_prefix(p) for p in SPEC_PAGES}
    assert {"PROF", *(op.prefix for op in operators().values())} <= pages


@pytest.mark.parametrize("page", [p for p in SPEC_PAGES if _page_prefix(p)], ids=lambda p: p.name)
def test_a_spec_page_s_requirement_block_is_generated_from_the_data(page):
    text = page.read_text(encoding="utf-8")
    block = requirements.page_block(text)
    assert block is not None, f"{page.name}: no {requirements.BLOCK_START} ... {requirements.BLOCK_END} block"
    assert block == requirements.markdown_block(_page_prefix(page)), \
        f"{page.name}: the requirement block is stale; regenerate it from the data (tools/docs-tables)"


@pytest.mark.parametrize("bad,msg", [
    ('[[requirement]]\nid = "X"\n', "lacks"),
    ('[[requirement]]\nid="A"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["magic"]\n',
     "unknown verification"),
])
def test_malformed_registry_is_refused(bad, msg):
    with pytest.raises(ValueError, match=msg):
        requirements.parse(bad)


def test_duplicate_ids_are_refused():
    entry = '[[requirement]]\nid="A"\ntitle="t"\nstatement="s"\nrationale="r"\nsource="s"\nverification=["test"]\n'
    with pytest.raises(ValueError, match="twice"):
        requirements.parse(entry + entry)


def test_cli_lists_requirements_as_text_and_json(capsys):
    assert cli.main(["requirements"]) == 0
    text = capsys.readouterr().out
    assert "MUL-R4" in text and "No broadcasting" in text
    assert cli.main(["requirements", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in data] == list(requirements.load())
    assert all(set(d) == {"id", "title", "statement", "rationale", "source", "verification", "families", "wg"}
               for d in data)


def test_cli_usage_error_exits_2():
    proc = subprocess.run([sys.executable, "-m", "sonnx.cli", "no-such-command"], capture_output=True, text=True)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_wheel_ships_the_registry(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-2000:])
    wheel = next(tmp_path.glob("sonnx-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        for rel in requirements.data_files():
            shipped = z.read(f"sonnx/{rel}").decode()
            assert shipped == (ROOT / "src" / "sonnx" / rel).read_text(encoding="utf-8"), rel
