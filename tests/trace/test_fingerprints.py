"""Change impact: the fingerprints see the code that computes results, and nothing else.

Planted changes on a copy of the real tree (the kernels' bodies, the compiled Gemm fold, a
contract decorator) each turn their requirement suspect, with the diff since review; comment,
whitespace and docstring edits do not. Small fixtures show the rules one at a time.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx import requirements
from sonnx.trace import baseline, links
from tests.trace.registry import registry_toml, write_data

ROOT = Path(__file__).resolve().parents[2]


def suspects_of(root: Path) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    reg = requirements.load_from(root)
    texts = baseline.site_texts(root, reg, links.collect(root))
    reviewed = baseline.load(root)
    found = {rid: r for rid, r in baseline.suspects(baseline.fingerprints(texts), reviewed).items() if r}
    return found, baseline.diffs(root, texts, reviewed, baseline.load_sources(root))


@pytest.fixture(scope="module")
def real_copy(tmp_path_factory):
    """The committed sources, specs and proofs, in a folder the tests may edit, reviewed as
    they are (so that each planted change is the only one since review, whether or not the
    committed baseline is up to date: test_the_committed_tree_matches_its_baseline says that)."""
    root = tmp_path_factory.mktemp("tree")
    for d in ("src", "spec", "proofs", "tests"):
        shutil.copytree(ROOT / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
    accept(root)
    return root


@pytest.fixture
def tree(real_copy):
    """Each test edits the copy and gets it back as committed afterwards."""
    edited = [*(real_copy / "src" / "sonnx" / "ops").rglob("*.py"), *(real_copy / "proofs").glob("*.mlw"),
              *(real_copy / "src" / "sonnx" / "ops").glob("*.toml"), real_copy / "src" / "sonnx" / "data" / "profile.toml",
              *(real_copy / "spec" / "gaps").glob("*.md")]
    saved = {p: p.read_text() for p in edited}
    yield real_copy
    for p, text in saved.items():
        p.write_text(text)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not once in {path.name}"
    path.write_text(text.replace(old, new))


def test_the_committed_tree_matches_its_baseline():
    assert suspects_of(ROOT)[0] == {}


def linked_to(root: Path, key: str) -> set[str]:
    """The requirements whose fingerprints hold the code site ``key`` (``code:PATH:UNIT``)."""
    found = links.collect(root, with_proofs=False)
    return {rid for rid, sites in found.sites.items()
            if any(s.kind == "code" and f"code:{s.path}:{s.name}" == key for s in sites)}


def test_mul_body_changed_to_add_is_suspect_with_its_diff(tree):
    # Mul's numpy kernel is the element-wise layer's, built with Mul's ufunc (by name) in mul.py
    edit(tree / "src/sonnx/ops/mul.py", 'mul = elementwise.numpy_kernel(OP, PREFIX, LATEST, "multiply",',
         'mul = elementwise.numpy_kernel(OP, PREFIX, LATEST, "add",')
    found, diffs = suspects_of(tree)
    [site] = [s for s in diffs["MUL-R1"] if s.startswith("code:src/sonnx/ops/mul.py:")]
    assert f"{site} changed" in found["MUL-R1"]
    assert set(found) == linked_to(tree, site) >= {"MUL-R1", "MUL-R3", "MUL-R4"}   # the IDs its marker names
    diff = diffs["MUL-R1"][site]
    assert "-mul = elementwise.numpy_kernel(OP, PREFIX, LATEST, 'multiply'," in diff   # as the AST prints it
    assert "+mul = elementwise.numpy_kernel(OP, PREFIX, LATEST, 'add'," in diff


def test_corrupted_compiled_gemm_fold_is_suspect(tree):
    edit(tree / "src/sonnx/ops/gemm/fold_ir.py", "out.append(b.fadd(acc[r * nvec + v], b.fmul(",
         "out.append(b.fsub(acc[r * nvec + v], b.fmul(")
    found, _ = suspects_of(tree)
    assert found == {"GEMM-R7": ["code:src/sonnx/ops/gemm/fold_ir.py:build changed"]}


def test_fma_contraction_on_the_fold_is_suspect(tree):
    edit(tree / "src/sonnx/ops/gemm/fold_ir.py", "def compile_folds(flags: tuple = (),",
         'def compile_folds(flags: tuple = ("contract",),')
    assert suspects_of(tree)[0] == {"GEMM-R7": ["code:src/sonnx/ops/gemm/fold_ir.py:compile_folds changed"]}


def test_weakened_mul_postcondition_is_suspect(tree):
    edit(tree / "src/sonnx/ops/elementwise.py", "lambda a, result: result.shape == a.shape and result.dtype == a.dtype",
         "lambda a, result: result.dtype == a.dtype")
    found, diffs = suspects_of(tree)
    assert "code:src/sonnx/ops/elementwise.py:reference_kernel changed" in found["MUL-R1"]
    assert "result.shape == a.shape" in diffs["MUL-R1"]["code:src/sonnx/ops/elementwise.py:reference_kernel"]


def test_comment_whitespace_and_docstring_edits_are_not_suspect(tree):
    layer = tree / "src/sonnx/ops/elementwise.py"
    edit(layer, "    else:                   # integers wrap without a warning; errstate would cost ~1 us\n",
         "    else:   # integers wrap silently (reworded comment)\n\n")
    edit(layer, '"""The numpy kernel of ``op``: every check', '"""The numpy kernel of ``op``, every check')
    edit(layer, "with np.errstate(all=\"ignore\"):", "with np.errstate( all = \"ignore\" ) :")
    edit(tree / "src/sonnx/ops/gemm/fold_ir.py", "# s = s + a*b: one rounded product, then one rounded sum",
         "# s = s + a * b, the product rounded, then the sum (reworded)")
    assert suspects_of(tree)[0] == {}


# ---------------------------------------------------------------- rules on small fixtures
REGISTRY = registry_toml(("MUL-R1", "t", "s", ["test"]))


def small(tmp_path: Path, code: str) -> Path:
    (tmp_path / "src" / "sonnx" / "trace").mkdir(parents=True)
    for d in ("spec", "tests", "proofs"):
        (tmp_path / d).mkdir()
    write_data(tmp_path, registry=REGISTRY)
    (tmp_path / "src" / "sonnx" / "k.py").write_text(code)
    return tmp_path


def accept(root: Path) -> None:
    reg = requirements.load_from(root)
    baseline.accept(root, baseline.site_texts(root, reg, links.collect(root)), ["all"])


@pytest.mark.parametrize("code,old,new,names,changed", [
    # a marker covers the whole function, decorators included
    ("import functools\n\n\n# req: MUL-R1\n@functools.lru_cache(maxsize=4)\ndef f(x):\n    return x * 2\n",
     "maxsize=4", "maxsize=8", ["f"], "f"),
    # an ID on a decorator line belongs to the function, not to the module
    ("def deco(f):\n    return f\n\n\n@deco   # MUL-R1\ndef g(x):\n    return x + 1\n",
     "x + 1", "x + 2", ["g"], "g"),
    # module-level sites are numbered: two of them never share a key
    ('A = "MUL-R1 first"\n\nB = ("MUL-R1", 2)\n', "2)", "3)", ["<module>#1", "<module>#2"], "<module>#2"),
])
def test_site_units(tmp_path, code, old, new, names, changed):
    root = small(tmp_path, code)
    assert [s.name for s in links.collect(root).of("MUL-R1", "code")] == names
    accept(root)
    (root / "src/sonnx/k.py").write_text(code.replace(old, new))
    assert suspects_of(root)[0] == {"MUL-R1": [f"code:src/sonnx/k.py:{changed} changed"]}


def test_methods_are_units_of_their_own(tmp_path):
    code = "class K:\n    # req: MUL-R1\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
    root = small(tmp_path, code)
    accept(root)
    (root / "src/sonnx/k.py").write_text(code.replace("return 2", "return 3"))
    assert suspects_of(root)[0] == {}
    (root / "src/sonnx/k.py").write_text(code.replace("return 1", "return 0"))
    assert suspects_of(root)[0] == {"MUL-R1": ["code:src/sonnx/k.py:K.a changed"]}


def test_whyml_comment_edit_is_not_suspect_but_a_goal_edit_is(tmp_path):
    root = small(tmp_path, "X = 1\n")
    mlw = root / "proofs" / "m.mlw"
    mlw.write_text("module M\n  (* req: MUL-R1 *)\n  lemma l: forall x: int. x = x (* why *)\nend\n")
    site = links.Site("proof", "proofs/m.mlw", 3, "l")
    before = baseline.whyml_declaration(mlw, site.line)
    mlw.write_text("module M\n  (* req: MUL-R1 *)\n  lemma l:   forall x: int.\n    x = x (* reworded *)\nend\n")
    assert baseline.whyml_declaration(mlw, site.line) == before == "lemma l: forall x: int. x = x"
    mlw.write_text("module M\n  (* req: MUL-R1 *)\n  lemma l: forall x: int. x + 0 = x\nend\n")
    assert baseline.whyml_declaration(mlw, site.line) != before


def test_old_baseline_without_texts_says_so_in_the_diff(tmp_path):
    root = small(tmp_path, "# req: MUL-R1\ndef f():\n    return 1\n")
    accept(root)
    (root / baseline.SOURCES).write_text("{}\n")
    (root / "src/sonnx/k.py").write_text("# req: MUL-R1\ndef f():\n    return 2\n")
    diff = suspects_of(root)[1]["MUL-R1"]["code:src/sonnx/k.py:f"]
    assert "(reviewed text not stored)" in diff and "+    return 2" in diff


def test_a_shared_check_changed_makes_every_operator_it_decides_suspect(tree):
    # dense_and_typed decides R2 and R3 of Mul, Add, Sub and Gemm; a change there must reach all
    # their rows, not only the operator whose file was edited
    edit(tree / "src/sonnx/ops/signature.py", "if len({elem for _, elem in typed}) > 1:",
         "if len({elem for _, elem in typed}) > 2:")
    found, diffs = suspects_of(tree)
    site = "code:src/sonnx/ops/signature.py:dense_and_typed"
    # the IDs (or families) its marker names, today's operators' and any added later
    assert set(found) == linked_to(tree, site) >= {"MUL-R2", "MUL-R3", "ADD-R2", "ADD-R3", "GEMM-R2", "GEMM-R3"}
    assert all(found[rid] == [f"{site} changed"] for rid in found)
    assert "+    if len({elem for _, elem in typed}) > 2:" in diffs["GEMM-R3"][site]


# ---------------------------------------------------------------- goal statements pinned
def test_a_postcondition_made_true_with_its_name_unchanged_is_suspect(tree):
    edit(tree / "proofs/mul.mlw", "broadcastable a.shape b.shape -> a.shape <> b.shape -> not (pre a b)",
         "broadcastable a.shape b.shape -> a.shape <> b.shape -> true")
    edit(tree / "proofs/gemm.mlw", "    ensures  { forall i j [result[idx n i j]]. 0 <= i < m -> 0 <= j < n ->\n"
                                   "                 lo <= result[idx n i j] < lo + modulus }",
         "    ensures  { true }")
    found, diffs = suspects_of(tree)
    assert found["MUL-R4"] == ["proof:proofs/mul.mlw:mul_rejects_broadcast changed"]
    assert "+lemma mul_rejects_broadcast: forall a b: tensor elt. broadcastable a.shape b.shape -> " \
           "a.shape <> b.shape -> true" in diffs["MUL-R4"]["proof:proofs/mul.mlw:mul_rejects_broadcast"]
    assert "proof:proofs/gemm.mlw:gemm_wrap changed" in found["GEMM-R6"]


def _elementwise() -> list[str]:
    """The prefixes of the operators whose theories clone proofs/elementwise.mlw (from the
    registry, so that a new element-wise operator is expected here without an edit)."""
    from sonnx.ops.registry import operators
    return [op.prefix for op in operators().values() if op.kind == "elementwise"]


def test_a_definition_a_goal_names_redefined_as_true_is_suspect(tree):
    # issue 19: MUL-R4's lemmas still prove with `broadcastable` redefined as true
    edit(tree / "proofs/elementwise.mlw",
         "predicate broadcastable (s1 s2: shape) = compat_rev (rev_app s1 Nil) (rev_app s2 Nil)",
         "predicate broadcastable (s1 s2: shape) = true")
    found, diffs = suspects_of(tree)
    key = "uses:proofs/elementwise.mlw:Broadcast.broadcastable"
    assert found == {rid: [f"{key} changed", "uses:proofs/elementwise.mlw:Broadcast.compat_rev is gone",
                           "uses:proofs/elementwise.mlw:Broadcast.rev_app is gone"]
                     for op in _elementwise() for rid in (f"{op}-R1", f"{op}-R4")}   # R1: the refusal models' goals
    assert "+predicate broadcastable (s1 s2: shape) = true" in diffs["MUL-R4"][key]


def test_the_shared_precondition_weakened_reaches_every_operator_using_it(tree):
    edit(tree / "proofs/elementwise.mlw", "predicate pre (a b: tensor elt) = dense a /\\ dense b /\\ a.shape = b.shape",
         "predicate pre (a b: tensor elt) = dense a /\\ dense b")
    found, _ = suspects_of(tree)
    key = "uses:proofs/elementwise.mlw:Elementwise.pre changed"
    assert {rid for rid, reasons in found.items() if key in reasons} == {
        f"{op}-R{n}" for op in _elementwise() for n in (1, 2, 3, 4)}


def test_a_clone_substitution_and_what_it_substitutes_are_pinned(tree):
    edit(tree / "proofs/gemm.mlw", "= x\n  let function add32 (x y: F32.t) : F32.t = F32.add F32.RNE x y",
         "= x\n  let function add32 (x y: F32.t) : F32.t = F32.sub F32.RNE x y")
    found, _ = suspects_of(tree)
    assert "uses:proofs/gemm.mlw:GemmFloat32.add32 changed" in found["GEMM-R7"]
    edit(tree / "proofs/mul.mlw", "clone export elementwise.Elementwise with type elt = elt, function op = times,",
         "clone export elementwise.Elementwise with\n    type elt = elt,   function op = times,")     # layout only
    assert "MUL-R1" not in suspects_of(tree)[0]
    edit(tree / "proofs/mul.mlw", "    val op_impl = times_impl", "    val op_impl = times_impl, lemma op_total")
    found, _ = suspects_of(tree)
    assert "uses:proofs/mul.mlw:Mul.clone elementwise.Elementwise changed" in found["MUL-R1"]


def test_a_statement_after_a_local_let_is_part_of_the_goal(tree):
    edit(tree / "proofs/gemm.mlw", "      if hasc then F32.add F32.RNE t (F32.mul F32.RNE beta (c (idx n i j))) else t",
         "      if hasc then F32.sub F32.RNE t (F32.mul F32.RNE beta (c (idx n i j))) else t")
    assert suspects_of(tree)[0] == {"GEMM-R7": ["proof:proofs/gemm.mlw:exact_entry changed"]}


def test_an_axiom_in_scope_of_a_goal_is_pinned(tree):
    edit(tree / "proofs/mul.mlw", "  clone export elementwise.Elementwise with",
         "  axiom anything: false\n  clone export elementwise.Elementwise with")
    found, diffs = suspects_of(tree)
    assert "uses:proofs/mul.mlw:Mul.anything is new" in found["MUL-R4"]
    assert diffs["MUL-R4"]["uses:proofs/mul.mlw:Mul.anything"].endswith("+axiom anything: false")


def test_comments_and_unrelated_lemmas_of_the_theories_are_not_suspect(tree):
    edit(tree / "proofs/elementwise.mlw", "predicate broadcastable (s1 s2: shape) =",
         "predicate broadcastable (s1 s2: shape) = (* numpy's rule, from the last axis *)")
    edit(tree / "proofs/elementwise.mlw", "lemma broadcastable_distinct_pair:\n    let s1 = Cons 3 Nil in",
         "lemma broadcastable_distinct_pair:\n    let s1 = Cons 3 (Nil) in")
    assert suspects_of(tree)[0] == {}


DEPS = {
    "proofs/lib/util.mlw": (
        "module U\n  predicate small (x: int) = x < 10\n  lemma small_zero: small 0\n  goal gz: small 1\n"
        "  predicate big (x: int) = x > 10\n  type small = int\nend\n"),
    "proofs/base.mlw": (
        "(* a file may open with a comment *)\n"
        "module Base\n  use int.Int\n  use export util.U\n  type box = { v: int }\n"
        "  function inner (b: box) : int = b.v\n  axiom inner_pos: forall b. inner b >= 0\nend\n"
        "module Hidden\n  use util.U\n  function h (x: int) : int = x\nend\n"
        "module Gen\n  type t\n  function f t : t\nend\n"),
    "proofs/top.mlw": (
        "module Top\n  use base.Base\n  use base.Hidden as H\n  use int.Int\n"
        "  function g (x: int) : int = x\n  function nb (x: bool) : bool = x\n"
        "  clone base.Gen as G with (* the instance *)\n    type t = int,\n    function f = g\n"
        "  clone base.Gen as G2 with type t = bool,\n    function f = nb\n"
        "  (* req: MUL-R1 *)\n  lemma l: forall b: box. small (inner b) -> H.h (G.f 1) = b.v /\\ G2.f true (* g *)\n"
        "  lemma k: forall x.\n    let y = x in (* not an end *)\n    small y\n"
        "  let m (x: int) : int ensures { result = g x }\n  = let z = g x in\n    let w = z in\n    w\nend\n"
        "module Top2\n  use base.Hidden\n  function g2 (x: int) : int = x\n"
        "  clone export base.Gen with type t = int,\n    function f = g2\n"
        "  lemma l2: Hidden.h 1 = f 1 /\\ small 1\nend\n"),
}


def deps_tree(tmp_path: Path) -> Path:
    for rel, text in DEPS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def line_of(start: str) -> int:
    return next(n for n, text in enumerate(DEPS["proofs/top.mlw"].splitlines(), 1) if text.startswith(start))


def test_dependencies_follow_uses_exports_aliases_and_clones(tmp_path):
    from sonnx.trace import whyml
    root = deps_tree(tmp_path)
    assert whyml.dependencies(root, "proofs/top.mlw", line_of("  lemma l:")) == {
        "proofs/base.mlw:Base.box": "type box = { v: int }",
        "proofs/base.mlw:Base.inner": "function inner (b: box) : int = b.v",
        "proofs/base.mlw:Base.inner_pos": "axiom inner_pos: forall b. inner b >= 0",   # an axiom of a module reached
        "proofs/base.mlw:Gen.f": "function f t : t",
        "proofs/base.mlw:Gen.t": "type t",
        "proofs/base.mlw:Hidden.h": "function h (x: int) : int = x",
        # through `use export`; a type and a predicate of one name are one key, neither lost
        "proofs/lib/util.mlw:U.small": "predicate small (x: int) = x < 10\ntype small = int",
        "proofs/top.mlw:Top.clone base.Gen as G": "clone base.Gen as G with type t = int, function f = g",
        "proofs/top.mlw:Top.clone base.Gen as G2": "clone base.Gen as G2 with type t = bool, function f = nb",
        "proofs/top.mlw:Top.g": "function g (x: int) : int = x",                  # named by the clones
        "proofs/top.mlw:Top.nb": "function nb (x: bool) : bool = x"}
    # an opened clone (`clone export`, no alias) and a module named by its own name
    assert whyml.dependencies(root, "proofs/top.mlw", line_of("  lemma l2:")) == {
        "proofs/base.mlw:Gen.f": "function f t : t",
        "proofs/base.mlw:Gen.t": "type t",
        "proofs/base.mlw:Hidden.h": "function h (x: int) : int = x",
        "proofs/top.mlw:Top2.clone base.Gen": "clone export base.Gen with type t = int, function f = g2",
        "proofs/top.mlw:Top2.g2": "function g2 (x: int) : int = x"}    # `small`: not exported by Hidden
    # a line that starts no declaration, and a declaration outside any module, have none
    assert whyml.dependencies(root, "proofs/top.mlw", 2) == {}
    (root / "proofs" / "bare.mlw").write_text("lemma x: true\n")
    assert whyml.dependencies(root, "proofs/bare.mlw", 1) == {}


def test_what_is_not_visible_or_not_a_declaration_is_not_followed(tmp_path):
    from sonnx.trace import whyml
    root = deps_tree(tmp_path)
    text = DEPS["proofs/top.mlw"]
    decls = [(d.name, d.line, d.end) for d in whyml.declarations(text)]
    # the clones' continued lines and the local lets are neither declarations nor ends
    assert [d[0] for d in decls] == ["g", "nb", "l", "k", "m", "g2", "l2"]
    assert [d[2] - d[1] for d in decls] == [0, 0, 0, 2, 3, 0, 0]
    assert whyml.declarations("clone M with\nlemma a: true\n") == []
    assert [d.name for d in whyml.declarations("lemma a: true\nb,\n")] == ["a"]
    # k names only `small`; an axiom of a module its module uses is in its context all the same
    assert whyml.dependencies(root, "proofs/top.mlw", line_of("  lemma k:")) == {
        "proofs/lib/util.mlw:U.small": "predicate small (x: int) = x < 10\ntype small = int",
        "proofs/base.mlw:Base.inner_pos": "axiom inner_pos: forall b. inner b >= 0",
        "proofs/base.mlw:Base.inner": "function inner (b: box) : int = b.v",      # the axiom names them
        "proofs/base.mlw:Base.box": "type box = { v: int }"}
    tree = whyml.Tree(root)
    hidden = tree.file("proofs/base.mlw")["Hidden"]
    assert whyml._resolve(tree, "proofs/base.mlw", hidden, "small")[0][1].name == "U"    # inside: visible
    top = tree.file("proofs/top.mlw")["Top"]
    top2 = tree.file("proofs/top.mlw")["Top2"]
    assert whyml._resolve(tree, "proofs/top.mlw", top, "b.v") == []       # a record field
    assert whyml._resolve(tree, "proofs/top.mlw", top2, "q.h") == []      # a variable's field, not Hidden's h
    assert whyml._resolve(tree, "proofs/top.mlw", top, "h") == []         # only as H.h
    assert whyml._resolve(tree, "proofs/top.mlw", top2, "Hidden.small") == []   # not exported by Hidden
    assert whyml._resolve(tree, "proofs/top.mlw", top2, "small") == []
    assert whyml._resolve(tree, "proofs/top.mlw", top, "small_zero") == []  # a lemma: a proved fact
    assert whyml._resolve(tree, "proofs/top.mlw", top, "gz") == []          # a goal likewise
    assert whyml._resolve(tree, "proofs/top.mlw", top, "big")[0][1].name == "U"      # declared after a lemma
    assert whyml._resolve(tree, "proofs/top.mlw", top, "Int.abs") == []     # Why3's library
    gen = tree.file("proofs/base.mlw")["Gen"]
    assert whyml._resolve(tree, "proofs/base.mlw", gen, "Base.inner")[0][1].name == "Base"  # a module of the file
    assert tree.module("proofs/base.mlw", "Gen") == ("proofs/base.mlw", gen) and tree.module("proofs/base.mlw", "No") is None
    assert tree.module("proofs/top.mlw", "nowhere.M") is None and tree.module("proofs/top.mlw", "base.Nope") is None
