"""The documentation's generated blocks (tools/docs-tables) are current, a stale one is caught
and named, the links of README.md and docs/ reach their files and headings, and no page lists
the operators by hand (an operator list comes from the registry through a generated block)."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))   # sonnx_dev (no bare "tools": see test_evidence_tools)
from sonnx_dev import docs_tables  # noqa: E402


def check(root: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = docs_tables.run(root, check=True, out=out, err=out)
    return code, out.getvalue()


@pytest.fixture
def tree(tmp_path) -> Path:
    """A checkout whose README.md, docs/ and spec/ are copies (to plant in), the rest linked."""
    root = tmp_path / "tree"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in ("README.md", "docs", "spec"):
            continue
        if entry.name in ("src", "proofs", "examples", "tests", "tools", "pyproject.toml"):
            (root / entry.name).symlink_to(entry)
    shutil.copy(ROOT / "README.md", root / "README.md")
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copytree(ROOT / "spec", root / "spec")
    return root


@pytest.mark.req("PROF-R1", "PROF-R3")
def test_no_generated_block_is_stale():
    code, out = check(ROOT)
    assert code == 0, f"run tools/docs-tables:\n{out}"
    # the blocks the pages rely on are there
    found = {(page.relative_to(ROOT).as_posix(), m.group("head").split()[0])
             for page in docs_tables.documents(ROOT)
             for m in docs_tables.BLOCK.finditer(page.read_text(encoding="utf-8"))}
    assert {("README.md", "operator-list"), ("README.md", "standing"),
            ("docs/operators.md", "operators"), ("docs/evidence.md", "standing")} <= found


@pytest.mark.req("PROF-R1", "PROF-R3")
def test_a_stale_block_is_caught_named_and_regenerated(tree):
    readme = tree / "README.md"
    text = readme.read_text(encoding="utf-8")
    planted = text.replace(", `MatMul`", "", 1)          # README's list before issue 27: no MatMul
    assert planted != text
    readme.write_text(planted, encoding="utf-8")
    index = tree / "docs" / "operators.md"
    table = index.read_text(encoding="utf-8")
    index.write_text(table.replace("| yes |", "| no |", 1), encoding="utf-8")
    code, out = check(tree)
    line = planted[:planted.index("<!-- generated: operator-list")].count("\n") + 1
    assert code == 1
    assert f"README.md:{line}: block 'operator-list' is stale" in out, out
    assert "docs/operators.md:" in out and "block 'operators' is stale" in out, out
    assert "2 stale block(s)" in out
    # regenerating restores the committed text exactly
    assert docs_tables.run(tree, check=False, out=io.StringIO()) == 0
    assert readme.read_text(encoding="utf-8") == text
    assert index.read_text(encoding="utf-8") == table
    assert check(tree)[0] == 0


@pytest.mark.req("PROF-R1")
def test_a_spec_page_block_holds_its_operators_requirements(tree):
    """`<!-- generated: requirements -->` without a prefix, in an operator's spec page, is filled
    with that operator's statements (the block the spec pages hold, never written twice)."""
    from sonnx.ops.registry import operators
    op = next(iter(operators().values()))
    page = tree / op.spec
    page.write_text(page.read_text() + "\n<!-- generated: requirements -->\n<!-- end generated -->\n")
    code, out = check(tree)
    assert code == 1 and f"{op.spec}:" in out and "block 'requirements' is stale" in out, out
    assert docs_tables.run(tree, check=False, out=io.StringIO()) == 0
    body = page.read_text().split("<!-- generated: requirements -->\n")[-1].split("<!-- end generated -->")[0]
    assert body == docs_tables.markdown_block(op.prefix) + "\n"
    assert body.startswith(f"- **[{op.prefix}-R1] ")


@pytest.mark.req("PROF-R1")
def test_a_block_the_tool_cannot_render_is_an_error(tree):
    page = tree / "docs" / "operators.md"
    page.write_text(page.read_text() + "\n<!-- generated: no-such-table -->\n<!-- end generated -->\n")
    code, out = check(tree)
    assert code == 2 and "docs/operators.md: unknown block 'no-such-table'" in out, out
    page.write_text("<!-- generated: requirements -->\n<!-- end generated -->\n")
    code, out = check(tree)
    assert code == 2 and "belongs in an operator's spec page" in out, out


@pytest.mark.req("PROF-R1")
def test_the_command_line_tool_checks(tree):
    """tools/docs-tables --check exits 1 on a stale block (what CI runs), 0 once regenerated."""
    readme = tree / "README.md"
    readme.write_text(readme.read_text().replace("Of the ", "Of all the ", 1))
    script = [sys.executable, "-m", "sonnx_dev.docs_tables", "--root", str(tree)]
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{ROOT / 'tools'}", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([*script, "--check"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 1 and "block 'standing' is stale" in p.stdout, p.stdout + p.stderr
    p = subprocess.run(script, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and "1 regenerated" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([*script, "--check"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_requirements_block_renders_each_line_as_agreed():
    """`- **[ID] Title.** statement`, one line per requirement, the statement's whitespace
    normalised: the format the spec pages' blocks share with sonnx.requirements."""
    from sonnx import requirements
    lines = docs_tables.markdown_block("PROF").splitlines()
    reqs = [r for r in requirements.load().values() if r.id.startswith("PROF-R")]
    assert lines == [f"- **[{r.id}] {r.title}.** {' '.join(r.statement.split())}" for r in reqs]


# --- links ---------------------------------------------------------------------------------------

def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def link_problems(pages: list[Path], root: Path = ROOT) -> list[str]:
    problems = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                problems.append(f"{where}: no such heading")
    return problems


def test_every_link_of_the_readme_and_docs_reaches_a_file_or_a_heading(tmp_path):
    assert link_problems(_pages()) == []
    planted = tmp_path / "docs" / "x.md"
    planted.parent.mkdir()
    (tmp_path / "README.md").write_text("# sonnx\n## First run\n")
    planted.write_text("[a](gone.md) [b](#nowhere) [c](https://example.org/x) [d](../README.md)\n"
                       "[e](../README.md#first-run) [f](../README.md#second-run)\n")
    assert [p.split(": ", 1)[1] for p in link_problems([planted], tmp_path)] == [
        "gone.md: no such file", "#nowhere: no such heading", "../README.md#second-run: no such heading"]


# --- operator lists come from the registry -------------------------------------------------------

def hand_lists(text: str, names: list[str], at_least: int = 4) -> list[str]:
    """Runs of at least ``at_least`` different operator names written as a list ("Mul, Add,
    Sub and Gemm", "`Mul`, `Add`, ...", "Mul/Add/Sub/Gemm") outside generated blocks and code."""
    text = docs_tables.BLOCK.sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    name = "`?(?:" + "|".join(map(re.escape, names)) + r")`?"
    run = re.compile(rf"\b{name}(?:(?:, (?:and |or )?| and | or |/){name})+")
    found = []
    for m in run.finditer(text):
        listed = set(re.findall("|".join(map(re.escape, names)), m.group(0)))
        if len(listed) >= at_least:
            found.append(m.group(0))
    return found


@pytest.mark.req("PROF-R1")
def test_no_page_lists_the_operators_by_hand():
    from sonnx.ops.registry import operators
    names = list(operators())
    pages = [p for p in _pages() if "records" not in p.relative_to(ROOT).parts]
    found = {p.relative_to(ROOT).as_posix(): hand_lists(p.read_text(encoding="utf-8"), names)
             for p in pages}
    assert {k: v for k, v in found.items() if v} == {}
    # the check sees the README's list as it was before issue 27, and each way of writing one
    assert hand_lists("Six operators: `Mul`, `Add`, `Sub`, `Gemm`, `MatMul`, `Relu` (opsets", names)
    assert hand_lists("judged as Mul, Add, Sub, MatMul and Relu;", names)
    assert hand_lists("for Mul/Add/Sub, Gemm and MatMul.", names)
    assert not hand_lists("Mul, Add and Sub share one element-wise layer", names)
