"""Issue 27: every fact about an operator lives in its own files (its home), and the layers of
sonnx import one way.

Home check: a module of src/sonnx outside every operator's home (a shared module) must not name
an operator, in any of three ways:
- an op_type in a string constant (the op_type as a whole word, case-sensitive: ``"Gemm"``,
  ``f"... Gemm's ..."``). Docstrings are not read for this check: a docstring steers nothing a
  program does, and its prose uses the capitalised words the op_types are made of ("Add a ...",
  "MatMul-like"), which only a reader can tell apart; the shared docstrings are kept to kinds
  by review, and an ID in one is still caught by the next check;
- a requirement ID with the operator's prefix (``GEMM-R7``) anywhere in the file, comments and
  docstrings included (a ``# req:`` marker of a shared module names a family, ``@rounding``);
- an import of the operator's module by name (``from ..ops import gemm``,
  ``from .ops.gemm_bound import ...``); sonnx/ops/registry.py alone lists them.
The homes are the records' ``files`` (sonnx/ops/registry.py), so a new operator's files are
known by its record alone.

Layer check: core (errors, dtypes, profile rules, text, ...) -> ops -> validate / conform / run /
trace -> cli; no module imports a module of a higher layer, function-local imports included.

Each check is shown able to fail on a planted fault in a copy under tmp_path (never in the tree).
"""
from __future__ import annotations

import ast
import fnmatch
import importlib
import re
import shutil
from pathlib import Path

import pytest

from sonnx.ops.registry import operators

ROOT = Path(__file__).resolve().parents[1]
SRC = "src/sonnx"
REGISTRY = "src/sonnx/ops/registry.py"


# ------------------------------------------------------------------------------ homes
def _homes() -> dict[str, tuple[str, ...]]:
    """op_type -> the glob patterns of its home (repository-relative)."""
    return {name: op.files for name, op in operators().items()}


def _in_home(rel: str, patterns: tuple[str, ...]) -> bool:
    for pat in patterns:
        if pat.endswith("/**"):
            if rel.startswith(pat[:-2]):
                return True
        elif fnmatch.fnmatchcase(rel, pat):
            return True
    return False


def shared_files(root: Path, under: str, suffixes=(".py",)) -> list[str]:
    """The files of ``under`` that lie in no operator's home, registry.py excepted."""
    homes = _homes()
    out = []
    for path in sorted((root / under).rglob("*")):
        if not path.is_file() or path.suffix not in suffixes or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root).as_posix()
        if rel == REGISTRY or any(_in_home(rel, pats) for pats in homes.values()):
            continue
        out.append(rel)
    return out


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                ids.add(id(body[0].value))
    return ids


def _module_name(rel: str) -> str:
    """Dotted module name of a file under src/ (``src/sonnx/ops/mul.py`` -> ``sonnx.ops.mul``)."""
    parts = Path(rel).with_suffix("").parts
    parts = parts[1:] if parts[0] == "src" else parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of every module a file imports, relative imports resolved; for
    ``from X import a, b`` both ``X`` and ``X.a``, ``X.b`` (which may be submodules)."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def operator_mentions(root: Path, files: list[str]) -> list[str]:
    """Every place a shared file names an operator: 'file:line: what'."""
    ops = operators()
    names = {name: re.compile(rf"\b{re.escape(name)}\b") for name in ops}
    ids = re.compile(r"\b(?:" + "|".join(re.escape(op.prefix) for op in ops.values()) + r")-R\d+")
    stems = {op.stem for op in ops.values()}
    found = []
    for rel in files:
        text = (root / rel).read_text(encoding="utf-8")
        for m in ids.finditer(text):
            found.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: requirement ID {m.group(0)}")
        if not rel.endswith(".py"):
            continue
        tree = ast.parse(text)
        docs = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                for name, rx in names.items():
                    if rx.search(node.value):
                        found.append(f"{rel}:{node.lineno}: op_type {name!r} in a string")
        module = _module_name(rel)
        for line, imported in _imports(tree, module, rel.endswith("__init__.py")):
            parts = imported.split(".")
            if len(parts) >= 3 and parts[:2] == ["sonnx", "ops"] and \
                    any(parts[2] == s or parts[2].startswith(s + "_") for s in stems):
                found.append(f"{rel}:{line}: imports the operator module {imported}")
    return found


@pytest.mark.req("PROF-R1")
def test_no_shared_module_of_the_package_names_an_operator():
    files = shared_files(ROOT, SRC)
    assert len(files) > 30          # the scan sees the package (a wrong root would pass vacuously)
    assert operator_mentions(ROOT, files) == []


@pytest.mark.req("PROF-R1")
def test_every_operator_has_a_home_in_the_package():
    """Each record's stem is its module (a file or a package) and its spec page, so the home
    patterns built from it match the operator's real files."""
    for name, op in operators().items():
        assert (ROOT / f"src/sonnx/ops/{op.stem}.py").exists() or (ROOT / f"src/sonnx/ops/{op.stem}").is_dir(), name
        assert (ROOT / op.spec).exists() and op.spec == f"spec/{op.stem}.md", name
        assert importlib.import_module(f"sonnx.ops.{op.stem}").OPERATOR is op, name


def _copy_of(tmp_path: Path, rel: str) -> Path:
    dest = tmp_path / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / rel, dest)
    return dest


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("plant, what", [
    ('\nX = "{name}"\n', "op_type"),
    ("\n# the bound of {prefix}-R7\n", "requirement ID"),
    ('\ndef f():\n    """Quietly about {prefix}-R1."""\n', "requirement ID"),
    ("\ndef f():\n    from ..ops import {stem}\n", "imports the operator module"),
    ("\nfrom ..ops.{stem}_helper import x\n", "imports the operator module"),
])
def test_the_home_check_fails_on_a_planted_name(tmp_path, plant, what):
    rel = "src/sonnx/run/executor.py"
    op = operators()[next(iter(operators()))]
    copy = _copy_of(tmp_path, rel)
    assert operator_mentions(tmp_path, [rel]) == []
    copy.write_text(copy.read_text() + plant.format(name=op.name, prefix=op.prefix, stem=op.stem))
    found = operator_mentions(tmp_path, [rel])
    assert found and all(what in f for f in found), found


@pytest.mark.req("PROF-R1")
def test_a_docstring_naming_an_op_type_is_left_to_review(tmp_path):
    rel = "src/sonnx/run/executor.py"
    name = next(iter(operators()))
    copy = _copy_of(tmp_path, rel)
    copy.write_text(copy.read_text() + f'\ndef f():\n    """Runs {name}."""\n')
    assert operator_mentions(tmp_path, [rel]) == []


@pytest.mark.req("PROF-R1")
def test_an_operator_home_is_not_shared():
    op = next(iter(operators().values()))
    files = shared_files(ROOT, SRC)
    assert f"src/sonnx/ops/{op.stem}.py" not in files and REGISTRY not in files
    assert "src/sonnx/run/executor.py" in files


# ------------------------------------------------------------------------------ layers
CORE, OPS, FEATURES, CLI = range(4)
LAYER_NAMES = ("core", "ops", "validate/conform/run/trace", "cli")


def layer_of(module: str) -> int | None:
    """The layer of a module of the sonnx package; None for anything else."""
    parts = module.split(".")
    if parts[0] != "sonnx":
        return None
    if module == "sonnx" or parts[-1] in ("cli", "__main__"):
        return CLI          # the package's facade loads the API on demand; the command lines
    if len(parts) > 1 and parts[1] in ("validate", "conform", "run", "trace", "onnx_reference", "qualification"):
        return FEATURES
    if len(parts) > 1 and parts[1] in ("ops", "c_kernels", "requirements"):
        return OPS
    return CORE             # errors, dtypes, profile, text, config, colour, fpenv, output, semantics


def layer_violations(root: Path, files: list[str]) -> list[str]:
    out = []
    known = {_module_name(f) for f in files}
    for rel in files:
        module = _module_name(rel)
        mine = layer_of(module)
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        for line, imported in _imports(tree, module, rel.endswith("__init__.py")):
            # ``from pkg import name``: judge the submodule when it is one, else the package
            target = imported if imported in known or imported.rpartition(".")[0] not in known \
                else imported.rpartition(".")[0]
            # ``from .. import dtypes`` names the package only to reach its submodule
            theirs = None if target == "sonnx" else layer_of(target)
            if theirs is not None and mine is not None and theirs > mine:
                out.append(f"{rel}:{line}: {LAYER_NAMES[mine]} module {module} imports "
                           f"{LAYER_NAMES[theirs]} module {target}")
    return out


def _package_files(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in sorted((root / SRC).rglob("*.py"))
            if "__pycache__" not in p.parts]


@pytest.mark.req("PROF-R1")
def test_layers_import_one_way():
    files = _package_files(ROOT)
    assert len(files) > 50
    assert layer_violations(ROOT, files) == []


@pytest.mark.req("PROF-R1")
@pytest.mark.parametrize("rel, plant", [
    ("src/sonnx/dtypes.py", "\ndef f():\n    from .ops.registry import operator\n"),
    ("src/sonnx/output.py", "\nfrom .validate.report import Finding\n"),
    ("src/sonnx/ops/signature.py", "\ndef f():\n    from ..run import executor\n"),
    ("src/sonnx/run/executor.py", "\nimport sonnx.cli\n"),
])
def test_the_layer_check_fails_on_a_planted_import(tmp_path, rel, plant):
    files = _package_files(ROOT)
    for f in files:
        _copy_of(tmp_path, f)
    assert layer_violations(tmp_path, files) == []
    (tmp_path / rel).write_text((tmp_path / rel).read_text() + plant)
    found = layer_violations(tmp_path, files)
    assert found and all(f.startswith(rel) for f in found), found
