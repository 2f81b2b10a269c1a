"""The README's first screen (everything before "## The command line") says only what is true:
its journey's output is what the commands print, its status figures are what
spec/requirement-claims.toml gives, its install line names extras pyproject.toml defines, and
the facts it quotes about tools/setup and tools/evidence are theirs."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sonnx.trace import claims

ROOT = Path(__file__).resolve().parents[2]


def first_screen(text: str | None = None) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8") if text is None else text
    return text[:text.index("\n## The command line")]


def console_steps(screen: str) -> list[tuple[str, int, list[str]]]:
    """The ```console block of the first screen as (command, expected exit, output lines)."""
    block = re.search(r"```console\n(.*?)```", screen, re.S)
    assert block, "the first screen shows no ```console block"
    steps: list[tuple[str, int, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            cmd, _, note = line[2:].partition("  # ")
            code = int(note.split()[1]) if note.startswith("exit ") else 0
            steps.append((cmd.strip(), code, []))
        else:
            steps[-1][2].append(line)
    return steps


# what depends on the machine: onnxruntime's version, and how far its float sums land from the
# exact ones (its BLAS, the CPU); every other character is compared
_MACHINE = [(re.compile(r"onnxruntime \d+(\.\d+)+"), "onnxruntime VERSION"),
            (re.compile(r"max \d+ ulp, max \|diff\| \S+"), "max N ulp, max |diff| D")]


def masked(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        for pattern, repl in _MACHINE:
            line = pattern.sub(repl, line)
        out.append(line)
    return out


def run_step(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    """One shown command, with this interpreter and the sonnx under test (a hang guard only)."""
    import os

    import sonnx
    argv = shlex.split(cmd)
    head = {"sonnx": [sys.executable, "-m", "sonnx"], "python": [sys.executable]}[argv[0]]
    env = {**os.environ, "PYTHONPATH": str(Path(sonnx.__file__).resolve().parents[1])}
    return subprocess.run(head + argv[1:], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def journey_problems(screen: str, cwd: Path) -> list[str]:
    """Run the shown commands in ``cwd`` (holding a copy of the example model) and list every
    difference from what the README shows."""
    problems = []
    for cmd, code, shown in console_steps(screen):
        p = run_step(cmd, cwd)
        if p.returncode != code:
            problems.append(f"{cmd}: exit {p.returncode}, the README says {code}: {p.stderr[-500:]}")
        if "Traceback" in p.stderr:
            problems.append(f"{cmd}: a traceback")
        got, want = masked(p.stdout.splitlines()), masked(shown)
        if got != want:
            diff = next(((i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w),
                        (min(len(got), len(want)), "<end>", "<end>"))
            problems.append(f"{cmd}: line {diff[0] + 1} prints {diff[1]!r}, the README shows {diff[2]!r}")
    return problems


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    pytest.importorskip("onnxruntime", reason="the journey's conform and run --compare need it")
    cwd = tmp_path_factory.mktemp("journey")
    (cwd / "examples" / "pytorch_mlp").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "pytorch_mlp" / "mlp.onnx", cwd / "examples" / "pytorch_mlp")
    return cwd


@pytest.mark.req("PROF-R2", "GEMM-R4", "MUL-R4", "PROF-R1")
def test_the_journey_prints_what_the_readme_shows(workdir):
    screen = first_screen()
    assert [c.split()[:2] for c, _, _ in console_steps(screen)] == [
        ["sonnx", "validate"], ["sonnx", "conform"], ["sonnx", "validate"], ["python", "-c"],
        ["sonnx", "run"]]
    assert journey_problems(screen, workdir) == []
    assert (workdir / "out" / "y.npy").is_file() and (workdir / "out" / "y.hex").is_file()


@pytest.mark.req("PROF-R2")
def test_the_journey_check_catches_a_planted_difference(workdir):
    """A README that says one character more, or another exit status, is caught."""
    screen = first_screen()
    for planted in (screen.replace("(5 nodes)", "(6 nodes)", 1),
                    screen.replace("mlp.onnx  # exit 1", "mlp.onnx  # exit 0", 1),
                    screen.replace("every bit of y", "every bit of z", 1)):
        assert planted != screen
        assert journey_problems(planted, workdir) != []


STATUS = re.compile(r"\*\*(\d+) (covered|partial|tested only)\*\*.*?\(((?:`[A-Z]+-R\d+`(?:, )?)+)\)", re.S)


def status_problems(screen: str) -> list[str]:
    """The certifiers' figures against the claims file: counts and the IDs listed."""
    truth = claims.standings(ROOT)
    total = sum(len(v) for v in truth.values())
    problems = []
    if f"Of the {total} requirements" not in screen:
        problems.append(f"the total is not {total}")
    shown = {kind: (int(n), [i.strip(" `") for i in ids.split(",")]) for n, kind, ids in STATUS.findall(screen)}
    for kind, ids in truth.items():
        if shown.get(kind) != (len(ids), ids):
            problems.append(f"{kind}: the README says {shown.get(kind)}, the claims give {len(ids)}: {ids}")
    return problems


def test_the_certifiers_figures_are_the_claims_files():
    screen = first_screen()
    assert status_problems(screen) == []
    assert "only the **C kernels, called directly**" in screen and "**not proved**" in screen
    # planted: one figure off, one ID moved
    assert status_problems(screen.replace("**5 covered**", "**6 covered**")) != []
    assert status_problems(screen.replace("`GEMM-R4`", "`GEMM-R5`", 1)) != []


def test_the_install_line_names_real_extras_and_no_index_package():
    screen = first_screen()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (line,) = re.findall(r'pip install "\.\[([^\]]*)\]"', screen)
    assert set(line.split(",")) == {"conform", "fast-exact"} <= set(extras)
    assert not re.search(r"pip install sonnx\b", screen)      # not on PyPI


def test_the_first_screen_keeps_the_two_commands_and_quotes_the_tools_truly():
    screen = first_screen()
    assert "tools/evidence     # the main job" in screen and "tools/test         # only the tests" in screen
    setup = (ROOT / "tools/setup").read_text()
    apt = re.search(r"apt_pkgs=\(([^)]*)\)", setup).group(1).split()
    assert f"`{' '.join(apt)}`" in screen, apt
    # the no-apt-get message's list, as the README gives it
    words = " ".join(screen.split())
    listed = re.search(r"machine without apt-get \(why3 1\.5\.1, ([^)]*)\)", words).group(1)
    assert set(listed.split(", ")) == {*apt, "python3-venv"} - {"why3"}, listed
    sys.path.insert(0, str((ROOT / "tools/setup").parent))   # sonnx_dev; no bare "tools": see test_no_test_reruns_the_proofs_or_the_campaign
    from sonnx_dev import evidence
    steps = [name for name, _, _ in evidence._steps(sys.executable, ROOT / "build" / "x")]
    # how the README words each step, in the runner's order
    words = {"prove": "prove", "extract-c": "extract-c", "crosshair": "CrossHair", "test": "tests",
             "validate": "validation of the examples", "trace": "trace"}
    row = next(line for line in screen.splitlines() if line.startswith("| `tools/evidence` |"))
    at = [row.find(words[s]) for s in steps]
    assert -1 not in at and at == sorted(at), (steps, row)
    bundle = (ROOT / "README.md").read_text(encoding="utf-8").split("## The evidence bundle")[1]
    at = [bundle.find(f"`tools/{s}`") if s not in ("validate", "trace") else 0 for s in steps]
    assert -1 not in at, (steps, "each tool step is named in 'The evidence bundle'")


def test_every_link_of_the_first_screen_reaches_a_file_or_a_heading():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
               for h in re.findall(r"^#+ (.*)$", text, re.M)}
    for target in re.findall(r"\]\(([^)]+)\)", first_screen(text)):
        if target.startswith("#"):
            assert target[1:] in anchors, target
        else:
            assert (ROOT / target).exists(), target


def test_the_limits_quoted_are_the_registrys():
    from sonnx.ops.registry import operators
    from sonnx.profile import MAX_KNOWN_OPSET
    words = " ".join(first_screen().split())
    ops = ", ".join(f"`{op}`" for op in operators())
    listed = re.search(r"Six operators: ((?:`\w+`(?:, )?)+) \(opsets 1 to (\d+)\)", words)
    assert listed and len(operators()) == 6, words[:600]
    assert sorted(listed.group(1).split(", ")) == sorted(ops.split(", "))
    assert int(listed.group(2)) == MAX_KNOWN_OPSET
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11" and "with Python 3.11 or later" in words
