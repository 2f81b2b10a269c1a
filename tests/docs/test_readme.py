"""The README's first screen (everything before "## The command line") says only what is true:
its journey's output is what the commands print, its status figures are what the claims give,
its install line names extras pyproject.toml defines, and the facts it quotes about tools/setup
and tools/evidence are theirs (the bundle's steps as docs/evidence.md names them); its Python
sample runs as shown; the README stays a first screen (at most 20 KB)."""
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
    assert "only the **C kernels**" in screen and "--engine proved" in screen and "**not proved**" in screen
    # planted: one figure off, one ID moved
    covered = re.search(r"\*\*(\d+) covered\*\*", screen)
    assert covered, "no covered figure"
    n = int(covered.group(1))
    assert status_problems(screen.replace(f"**{n} covered**", f"**{n + 1} covered**")) != []
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
             "validate": "validation of the examples", "trace": "trace",
             "qualification": "qualification kit"}
    row = next(line for line in screen.splitlines() if line.startswith("| `tools/evidence` |"))
    at = [row.find(words[s]) for s in steps]
    assert -1 not in at and at == sorted(at), (steps, row)
    bundle = (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8").split("## The evidence bundle")[1]
    at = [bundle.find(f"`tools/{s}`") if s not in ("validate", "trace", "qualification") else 0 for s in steps]
    assert -1 not in at, (steps, "each tool step is named in docs/evidence.md, 'The evidence bundle'")


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
    """The operator list of the first screen is the generated block (tools/docs-tables keeps it
    current: tests/docs/test_generated.py), and it names every registered operator."""
    from sonnx.ops.registry import operators
    from sonnx.profile import MAX_KNOWN_OPSET
    screen = first_screen()
    block = re.search(r"<!-- generated: operator-list -->\n(.*?)<!-- end generated -->", screen, re.S)
    assert block, "the first screen has no generated operator list"
    words = " ".join(block.group(1).split())
    listed = re.search(r"operators: ((?:`\w+`(?:, )?)+) \(default domain, opsets 1 to (\d+)\)", words)
    assert listed, words
    assert listed.group(1).split(", ") == [f"`{op}`" for op in operators()]
    assert int(listed.group(2)) == MAX_KNOWN_OPSET
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11" and "with Python 3.11 or later" in " ".join(screen.split())


def test_the_readme_is_a_first_screen():
    """At most 20 KB (ruff's README is 19.6 KB): the rest lives in docs/."""
    assert (ROOT / "README.md").stat().st_size <= 20_000


def python_sample(text: str) -> str:
    """The ```python block of the README's "From Python" section."""
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.req("PROF-R2", "MUL-R4", "RELU-R3")
def test_the_python_sample_runs_as_shown(workdir, monkeypatch):
    """After the journey's conform step, the sample gives the bits `sonnx run` printed, Relu's
    result as commented, and the refusal shown (its last statement)."""
    import hashlib

    import numpy as np

    import sonnx
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    steps = {c.split()[1]: c for c, _, _ in console_steps(first_screen(text))}
    for cmd in (steps["conform"], steps["-c"]):
        if not (workdir / ("mlp_b1000.onnx" if "conform" in cmd else "x.npy")).exists():
            assert run_step(cmd, workdir).returncode == 0, cmd
    monkeypatch.chdir(workdir)
    code = python_sample(text)
    *body, last = [line for line in code.splitlines() if line and not line.startswith("#")]
    scope: dict = {}
    exec("\n".join(body), scope)
    y = scope["y"]
    shown = re.search(r"sha256 ([0-9a-f]{64})", first_screen(text)).group(1)
    assert (y.shape, y.dtype) == ((1000, 4), np.float32)
    assert hashlib.sha256(y.tobytes()).hexdigest() == shown
    relu = sonnx.relu(np.array([-1.5, -0.0, 2.0], np.float32))
    assert relu.tolist() == [0.0, 0.0, 2.0] and not np.signbit(relu).any()
    with pytest.raises(sonnx.ProfileViolation) as refused:
        exec(last, scope)
    assert refused.value.requirement == "MUL-R4"
    assert str(refused.value).startswith(code.split("# sonnx.ProfileViolation: ")[1].split(" (")[0])
