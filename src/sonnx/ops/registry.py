"""The profile's operators: each module in sonnx/ops declares one ``Operator`` record, and
``STEMS`` below lists them, one explicit line each. Everything that needs the list of operators
or a fact about one (the profile's PROF-R1, the type sets, the validator and its OpenVINO
reader, conform's rewrites, the executor's planning and its comparison with onnxruntime, the C
kernels' bindings, the trace's proofs and requirement-ID pattern, the exported kernels
``sonnx.<stem>``) reads it here; no other list or table of operators exists, and no module
outside an operator's own files names one (tests/test_operator_homes.py).

A record, not a framework: no discovery, no base class, no hooks. The list is built on first
use because each operator module imports ``Operator`` from here.
"""
from __future__ import annotations

import functools
import importlib
import posixpath
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from ..errors import Violation

# The profile's operators, by stem (the module's name in sonnx/ops), in the order the profile
# lists them: the one line an operator adds outside its own files.
STEMS = (
    "mul",
    "gemm",
    "add",
    "sub",
    "relu",
    "matmul",
    "flatten",
    "squeeze",
    "unsqueeze",
    "maxpool",
    "globalaveragepool",
    "averagepool",
    "reshape",
    "transpose",
    "div",
    "pad",
    "batchnormalization",
    "conv",
)


@dataclass(frozen=True)
class CEntry:
    """One C entry point extracted from a proof (tools/extract-c)."""
    name: str                       # the C function, e.g. "sonnx_<stem>_f32"
    proof: str                      # the proof file its WhyML function is in
    theory: str                     # the WhyML module holding the function of the same name
    ids: tuple[str, ...]            # the requirement IDs of that function's goal
    argtypes: tuple                 # its ctypes argument types (it returns nothing)
    # x86-64: a packed (SIMD) instruction the compiled body must hold, i.e. its loop is
    # vectorised (tools/extract-c checks it in the object code); "" when none is required
    packed: str = ""

    @property
    def suffix(self) -> str:
        """The element-type suffix of the entry point's name (f32, u32, i64, ...)."""
        return self.name.rsplit("_", 1)[1]


# The evidence that the conversions a float16/bfloat16 route runs (numpy/ml_dtypes astype between
# T and float32) are what the route proofs assume of halffloat.mlw's converters: CHECKED against
# an integer reference (widening on all 65,536 values, narrowing on the rounding-relevant
# classes in CI and once on all 2^32 float32 inputs), not proved.
HALF_CONVERSIONS_CHECKED = ("tests/conversions/test_half_conversions.py",)


@dataclass(frozen=True)
class CRoute:
    """Element types a C wrapper runs on another type's entry point (e.g. float16 and bfloat16
    through the float32 one, rounded once to T), with what makes that route sound: the proofs
    that it computes T's semantics and the evidence, checked but not proved, of what those proofs
    assume (the conversions). The proved engine covers these types only through a route."""
    types: tuple[str, ...]          # ONNX names of the element types taken
    through: str                    # the entry-point suffix run on them (f32, i32, ...)
    proofs: tuple[str, ...]         # proof files: the route computes T's semantics
    checked: tuple[str, ...] = ()   # tests: checked (not proved) properties the proofs assume
    theory: str = ""                # the WhyML module of the route's lemmas, when one holds them all
    ids: tuple[str, ...] = ()       # the requirement IDs of those lemmas
    # the operands' bits go to the entry as they are (a view: int32 on the uint32 kernel), no
    # conversion on either side, so the default kernel may run the route too (c_kernels.default_entry)
    view: bool = False


@dataclass(frozen=True)
class CCall:
    """A node as one call of a C entry point, for a fused chain (sonnx/run/chain.py): the entry,
    which of the node's operands (positions) go to its array arguments a, b, c in that order, and
    its sizes and scalars (element-wise: n elements; Gemm: m, n, k, hasc, ta, tb, alpha, beta)."""
    entry: str                      # the C entry point, e.g. "sonnx_add_f32"
    operands: tuple[int, ...]       # node operand positions passed as a, b, c
    n: int
    m: int = 0
    k: int = 0
    hasc: int = 0
    ta: int = 0
    tb: int = 0
    alpha: float = 1.0
    beta: float = 1.0


@dataclass(frozen=True)
class CSizeRule:
    """The sizes at which an operator's default kernel runs some of its default entry points
    (``suffixes``); on other sizes it runs the operator's own kernel (``otherwise``), which
    gives the same bits. Decided from measurements, written once here, read by the kernel, the
    executor's planning and the trace alike (Gemm: the float entries where they are within 1.5x
    of the llvmlite fold)."""
    suffixes: tuple[str, ...]                   # the entry points the rule bounds (f32, f64, ...)
    admits: Callable[[int, int, int], bool]     # (M, N, K) of a matrix call -> the entry point runs
    text: str                                   # the rule in words, e.g. "M = 1 or M * N * K <= 2^15"
    otherwise: str                              # what runs on the other sizes, e.g. "the llvmlite fold"


@dataclass(frozen=True)
class CBinding:
    """An operator's C kernels: the extracted source, its proof, the entry points and the Python
    function that checks the operands as the Python kernel does and calls them."""
    source: str | None              # the extracted C file in sonnx/c/ (None: it runs another's)
    proof: str | None               # the proof file tools/extract-c extracts it from
    entries: tuple[CEntry, ...]
    wrapper: Callable               # exported as sonnx.c_kernels.<stem>
    # C functions that are not entry points (clones the entry points call): name -> (proof
    # file, WhyML module holding the clone, WhyML function cloned)
    internal: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)
    # the wrapper runs another operator's entry points: (its stem, the proof that this operator
    # is that one's special case, the IDs of this operator that proof covers), e.g. MatMul as
    # Gemm; the proved engine and the trace cite both proofs
    via: tuple[str, str, tuple[str, ...]] | None = None
    # the operator's default kernel (sonnx.<stem>, the default engine) runs these entry points on
    # the element types they take as they are (c_kernels.default_entry), and on the routes that
    # pass the bits as they are (CRoute.view); numpy for the others. True: every entry point; a
    # tuple of suffixes: those entry points only; ``sizes`` may bound some of them to the sizes
    # where they are fast enough (Gemm: the integer ones always, faster than numpy; the float
    # ones where they are within 1.5x of the llvmlite fold)
    default: bool | tuple[str, ...] = False
    # the element types the wrapper runs through another type's entry points (CRoute); only
    # these, besides the entries' own types, are covered by the proved engine
    routes: tuple[CRoute, ...] = ()
    # a node as one call of an entry point taking its element type as it is, for a fused chain:
    # (operand shapes, element type, the kernel's keywords) -> CCall, or None when no entry
    # point computes the node as its kernel does (the chain is cut there)
    call: Callable | None = None
    # the sizes at which the default kernel runs some of the ``default`` entry points (the
    # others: always); None: every size
    sizes: CSizeRule | None = None

    def runs_by_default(self, suffix: str) -> bool:
        """The default kernel runs the entry point of this suffix (see ``default``), on the sizes
        ``sizes`` admits when it bounds that suffix (``runs_by_default_at``)."""
        return self.default is True or (isinstance(self.default, tuple) and suffix in self.default)

    def size_rule(self, suffix: str) -> CSizeRule | None:
        """The rule bounding the sizes at which the default kernel runs this suffix, if any."""
        return self.sizes if self.sizes is not None and suffix in self.sizes.suffixes else None

    def runs_by_default_at(self, suffix: str, m: int, n: int, k: int) -> bool:
        """The default kernel runs the entry point of this suffix on a call of sizes (M, N, K)."""
        rule = self.size_rule(suffix)
        return self.runs_by_default(suffix) and (rule is None or bool(rule.admits(m, n, k)))

    def entry(self, suffix: str) -> CEntry | None:
        """The entry point of this element-type suffix (a route's ``through``), if any."""
        return next((e for e in self.entries if e.suffix == suffix), None)


@dataclass(frozen=True)
class NodeEdit:
    """A rewrite of one node that changes no output bit, as the operator's record computes it
    (ConformRule.node_rewrite); sonnx conform applies it and reports ``detail``."""
    detail: str                                         # what was made explicit, for the report
    initializers: tuple[tuple[str, Any], ...] = ()      # (new name, numpy array) to store
    before: tuple = ()                                  # onnx NodeProtos inserted before the node
    after: tuple = ()                                   # onnx NodeProtos inserted after it
    inputs: Mapping[int, str] = field(default_factory=dict)    # input position -> new name (also
    #                                                            one the node omits)
    outputs: Mapping[int, str] = field(default_factory=dict)   # output position -> new name


@dataclass(frozen=True)
class ConformRule:
    """What ``sonnx conform`` may repair for this operator so that the requirement ``rule``
    accepts the node: a broadcast constant operand stored expanded to the result's shape
    (``operands``), the node rewritten by the record's own ``node_rewrite`` where no bit
    changes (e.g. an operand's rank made explicit), omitted attributes written with ONNX's
    default (``defaults``), and/or auto_pad written as explicit pads (``auto_pad``)."""
    rule: str                                     # the requirement ID the rewrite satisfies
    operands: tuple[tuple[int, str], ...] = ()    # (input position, input name) it may expand
    # node_rewrite(node, shapes, value, opset, fresh) -> NodeEdit, or a str saying why the node
    # cannot be rewritten, or None (nothing to rewrite). ``shapes``: tensor name -> shape as onnx
    # infers it (symbolic entries as str); ``value(name)``: the numpy array of a constant (an
    # initializer that is no graph input), else None; ``opset``: the default-domain opset;
    # ``fresh(stem)``: a tensor name not yet used in the graph
    node_rewrite: Callable | None = None
    # attribute -> ONNX's default for it, which conform writes when a node omits the attribute and
    # ``rule`` refuses the omission (GR4: no default read; ONNX reads that very value, so no bit
    # changes): a value, or a function (input shapes, attributes written, opset, constants) ->
    # the value, None (nothing to write: the rule does not refuse the omission here), or a str
    # saying why none can be written (a default that depends on the node, e.g. one entry per
    # axis); ``constants``: per input, the numpy array of a constant (an initializer that is no
    # graph input), else None. Only attributes the node's operator version has are written
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # the node has the window attributes of ONNX's pooling and convolution operators
    # (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode) over input 0 of shape
    # (N, C, d1, ..., dn): conform writes an auto_pad SAME_UPPER, SAME_LOWER or VALID as the
    # explicit pads it means for the static input shape (ops/pool.py, auto_pads) and removes it
    auto_pad: bool = False


@dataclass(frozen=True, eq=False)
class Operator:
    name: str                                   # ONNX op_type, default domain
    prefix: str                                 # requirement-ID prefix, e.g. "MUL" (IDs PREFIX-R1, ...)
    # what the other layers may assume about its shape of computation: "elementwise" (same-shape
    # binary, one element function), "unary", "matrix" (Gemm-like fold), "structural" (moves
    # elements, no arithmetic), "convolution" (a fold over a patch an index map selects);
    # requirement families @kind:<kind> are built from it
    kind: str
    type_sets: Mapping[int, frozenset[str]]     # since_version -> allowed element types (onnx schemas)
    inputs: tuple[str, ...]                     # every input, in ONNX order
    optional: tuple[str, ...]                   # the trailing inputs that may be absent
    attributes: Mapping[str, Any]               # attribute -> default (None: absent unless given)
    # the node-level check: (input signatures, INT/FLOAT attributes, default-domain opset) ->
    # every violation of the operator's own requirements
    constraints: Callable[[Sequence[Any], Mapping[str, Any], int], list[Violation]]
    reference: Callable                         # plain-Python kernel over semantics.tensor.TensorValue
    kernel: Callable                            # the numpy kernel exported as sonnx.<name>
    spec: str                                   # e.g. "spec/mul.md"
    proofs: tuple[str, ...]                     # the operator's own .mlw files
    # the kernel with its checks done once: bind(*example_arrays, **kernel_keywords) -> a
    # function of the arrays alone, for arrays of the examples' shapes and types, to be run
    # under fpenv.guarded (sonnx.run.session plans a model with it)
    bind: Callable
    # --- read by the layers above ops (issue 27): each a fact of this operator, kept here ---
    # the OpenVINO IR layers read as this operator (sonnx.ops.openvino_ir.IRLayer rows)
    openvino: tuple = ()
    # ONNX attribute -> the kernel's keyword, for the attributes that reach the kernel
    kernel_attributes: Mapping[str, str] = field(default_factory=dict)
    # the result's shape from the operands' shapes and the kernel keywords (the executor plans
    # with it; the operands are already accepted by the operator's checks); None: no rule
    output_shape: Callable[[Sequence[tuple[int, ...]], Mapping[str, Any]], tuple[int, ...]] | None = None
    # how `sonnx run --compare onnxruntime` judges a node: "bits" (equal bit for bit, a NaN
    # matches any NaN), "bits, zero sign open" (-0 and +0 also match), or a function
    # (results, operands, kernel keywords, progress) -> per result "" or why it is outside the
    # stated bound, applied to float results (integer results: "bits"); ValueError: not
    # compared. It judges several results of the same operands at once (onnxruntime's and
    # sonnx's own), so that a bound's work on the operands is done once; each_result makes one
    # from a judge of a single result
    comparison: str | Callable = "bits"
    c_binding: CBinding | None = None       # its C kernels extracted from the proofs, if any
    conform: ConformRule | None = None      # what conform may repair, if anything
    # inputs whose value decides the result's shape or values and must be a constant (an
    # initializer that is no graph input): input name -> the kernel's keyword. The validator
    # passes the value (a tuple of ints, of floats for a float initializer, or
    # signature.NotConstant saying why there is none) to the constraint
    # inputs that must be a constant (an initializer that is no graph input): those whose value
    # decides the result's shape, or that the operator's rule wants fixed (trained parameters):
    # input name -> the kernel's keyword. The validator passes the value (a
    # tuple of ints or floats, or signature.NotConstant saying why there is none) to the constraint
    # function in the attributes under "input:<name>"; the executor passes it to the kernel as
    # that keyword, not as an operand (issue 29)
    constant_inputs: Mapping[str, str] = field(default_factory=dict)
    # optional inputs that ONNX reads, when omitted, as a scalar zero of another input's element
    # type: optional input name -> that input's name. conform writes this scalar (all bits zero:
    # +0 for the float types, 0 for the integers) where the omission is spelled '' before a named
    # input, which the profile refuses (PROF-R5) and no dropping can repair
    omitted_as_zero: Mapping[str, str] = field(default_factory=dict)
    # the shared WhyML theories its proofs use (proofs/tensor.mlw, ...), read by the trace
    theories: tuple[str, ...] = ()
    # the check of how many outputs a node names: (outputs named, opset) -> the operator's
    # violations; None: every output onnx's schema has is defined (the ONNX checker counts them)
    outputs: Callable[[int, int], list[Violation]] | None = None

    @property
    def stem(self) -> str:
        """The operator's module name in sonnx/ops (its files are named after it)."""
        return posixpath.splitext(posixpath.basename(self.spec))[0]

    @property
    def files(self) -> tuple[str, ...]:
        """Glob patterns (repository-relative) of the operator's own files, its home: every
        other file is shared and names no operator."""
        s, p = self.stem, self.prefix
        return (f"src/sonnx/ops/{s}.py", f"src/sonnx/ops/{s}_*.py", f"src/sonnx/ops/{s}/**",
                f"src/sonnx/ops/{s}.toml", f"src/sonnx/c/{s}_c.c", f"spec/{s}.md",
                f"spec/gaps/{p}-R*.md", f"proofs/{s}*.mlw", f"proofs/{s}*/**",
                f"tests/ops/test_{s}*.py", f"tests/crosshair/{s}_cases.py",
                f"tests/crosshair/mutants/{s}*", f"docs/operators/{s}.md")

    @property
    def versions(self) -> tuple[int, ...]:
        """The since-versions the profile knows, ascending."""
        return tuple(sorted(self.type_sets))

    def since_version(self, opset: int) -> int | None:
        """The version in force under a default-domain opset, or None if there is none yet."""
        found = [v for v in self.versions if v <= opset]
        return found[-1] if found else None

    @property
    def required(self) -> int:
        """How many inputs a node must have."""
        return len(self.inputs) - len(self.optional)


def each_result(judge: Callable) -> Callable:
    """A record's comparison function from ``judge(result, operands, keywords, progress)`` of one
    result: for bounds whose work on the operands is cheap enough to repeat per result."""
    @functools.wraps(judge)
    def judged(results, args, keywords, progress=None) -> list[str]:
        return [judge(y, args, keywords, progress) for y in results]
    return judged


@lru_cache(maxsize=1)
def operators() -> dict[str, Operator]:
    """op_type -> Operator, in the order the profile lists them."""
    listed = [importlib.import_module(f"{__package__}.{stem}").OPERATOR for stem in STEMS]
    return {op.name: op for op in listed}


def operator(name: str) -> Operator:
    """The profile operator ``name`` (KeyError when it is not one)."""
    return operators()[name]


def first_shape(shapes: Sequence[tuple[int, ...]], keywords: Mapping[str, Any]) -> tuple[int, ...]:
    """``output_shape`` of an operator whose result has its (first) operand's shape."""
    return tuple(shapes[0])


def by_stem(stem: str) -> Operator:
    """The profile operator whose module is ``stem`` (KeyError when none is)."""
    if stem not in STEMS:
        raise KeyError(stem)
    return next(op for op in operators().values() if op.stem == stem)


def versions(op: str) -> list[int]:
    """The since-versions of an operator that the profile knows, ascending."""
    return list(operator(op).versions)


@lru_cache(maxsize=256)
def since_version(op: str, opset: int) -> int | None:
    """The operator version in force under an imported opset, or None if there is none."""
    return operator(op).since_version(opset)


def type_set(op: str, version: int) -> frozenset[str]:
    """The element types operator ``op`` admits at since-version ``version``."""
    return operator(op).type_sets[version]


# Operators outside the profile that compute a copy of their first input (Dropout: in
# inference mode): `sonnx conform` removes them (sonnx/conform/rewrite.py, remove_copies).
COPY_OPERATORS = ("Identity", "Dropout")


def operator_violations(domain: str, op_type: str) -> list[Violation]:
    """PROF-R1: the node's operator is a profile operator (one of the registry's) of ai.onnx."""
    from ..profile import DEFAULT_DOMAINS
    listed = ", ".join(operators())
    if domain not in DEFAULT_DOMAINS:
        return [Violation("PROF-R1", f"operator {domain}::{op_type} is outside the default ONNX domain; "
                                     f"the profile admits only {listed} from ai.onnx (`sonnx conform` cannot remove it)")]
    if op_type == "Constant":
        return [Violation("PROF-R1", "operator Constant is not in the SONNX profile; `sonnx conform "
                                     "MODEL -o OUT` stores its value as an initializer (no output bit "
                                     "changes; a sparse value excepted)")]
    if op_type in COPY_OPERATORS and op_type not in operators():
        return [Violation("PROF-R1", f"operator {op_type} is not in the SONNX profile; it computes "
                                     "a copy of its input, and `sonnx conform MODEL -o OUT` removes "
                                     "it (no output bit changes; a Dropout in training mode or "
                                     "whose mask output is read excepted)")]
    if op_type not in operators():
        return [Violation("PROF-R1", f"operator {op_type} is not in the SONNX profile, which cannot "
                                     f"express it yet; only a model built from {listed} alone "
                                     "conforms (`sonnx conform` cannot remove it: it removes only "
                                     "Constant nodes, into initializers, and copies: Identity, "
                                     "inference-mode Dropout)")]
    return []
