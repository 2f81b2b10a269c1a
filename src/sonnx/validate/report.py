"""What the validator returns: findings (one per violation) gathered in a report per model."""
from __future__ import annotations

from dataclasses import dataclass, field

# Findings that are not a profile requirement but a refusal by onnx itself. A model that onnx
# rejects is not conformant: these count as violations (exit 1), under an explicit category.
ONNX_CHECKER = "ONNX-CHECKER"
ONNX_INFERENCE = "ONNX-INFERENCE"
ONNX_IR = "ONNX-IR"
ONNX_CATEGORIES = {
    ONNX_CHECKER: ("ONNX checker", "The model passes onnx.checker.check_model: it is a well-formed "
                   "ONNX model (graph structure, topological order, unique outputs, known operators "
                   "and attributes)."),
    ONNX_INFERENCE: ("ONNX shape and type inference", "The model passes onnx.shape_inference."
                     "infer_shapes with check_type=True, strict_mode=True and data_prop=True: every "
                     "node's inputs have types and shapes its operator accepts."),
    ONNX_IR: ("ONNX IR and loaders", "The model is loadable, as the ONNX IR specification and "
              "onnxruntime's loader require where onnx's checker does not look: every text field "
              "is UTF-8, every tensor type names a known element type (not UNDEFINED), attribute "
              "references (ref_attr_name) appear only inside function bodies, and every tensor "
              "stored as external data lies inside an existing file next to the model."),
}


@dataclass(frozen=True)
class Finding:
    """One violation, located in the model.

    ``rule`` is a requirement ID of the registry (sonnx.requirements), or ONNX-CHECKER / ONNX-INFERENCE.
    ``graph`` is the path of the graph holding the node: ``main``, ``main/If_0:then_branch``,
    ``main/call_2:local::F`` (the body of a model-local function at a call site),
    ``function:local::F`` (a function never called, or a declaration in a function as written)
    or ``model`` (the model as a whole).
    """

    rule: str
    message: str
    graph: str = "model"
    node_index: int | None = None
    node_name: str | None = None
    op_type: str | None = None
    domain: str | None = None
    op_version: int | None = None
    tensor: str | None = None

    @property
    def kind(self) -> str:
        return "onnx" if self.rule in ONNX_CATEGORIES else "requirement"

    @property
    def node_label(self) -> str | None:
        if self.node_index is None and self.node_name is None:
            return None
        return node_label(self.node_name, self.op_type, self.node_index)

    @property
    def location(self) -> str:
        """Fully qualified logical location: graph path, then node, then tensor."""
        parts = [self.graph]
        if self.node_label is not None:
            parts.append(self.node_label)
        if self.tensor is not None:
            parts.append(f"tensor:{self.tensor}")
        return "/".join(parts)

    @property
    def where(self) -> str:
        """The location as a person reads it: the node (its name, or ``<op_type>_<index>``) with
        its operator version, else the tensor, else the graph; a graph other than the main one
        first (``main/If_0:then_branch > Cast_3 (Cast-13)``). ``location`` is the machine form."""
        op = (f" ({self.op_type}-{self.op_version})" if self.op_type and self.op_version else
              f" ({self.op_type})" if self.op_type else "")
        if self.node_label is not None:
            here = f"{self.node_label}{op}"
        elif self.tensor is not None:
            here = f"tensor {self.tensor}"
        else:
            return self.graph
        return here if self.graph == "main" else f"{self.graph} > {here}"

    @property
    def problem(self) -> str:
        """What is wrong: the message up to its first "; " (the rules write "problem; advice")."""
        return self.message.partition("; ")[0]

    @property
    def advice(self) -> str:
        """What to do: the message after its first "; " ("" when it gives none)."""
        return self.message.partition("; ")[2]

    def __str__(self) -> str:
        return f"[{self.rule}] {self.where}: {self.message}"

    def as_dict(self) -> dict:
        return {"rule": self.rule, "kind": self.kind, "message": self.message,
                "location": self.location, "graph": self.graph, "node_index": self.node_index,
                "node_name": self.node_name, "op_type": self.op_type, "domain": self.domain,
                "op_version": self.op_version, "tensor": self.tensor}


def node_label(name: str | None, op_type: str | None, index: int | None) -> str:
    """How a node is written in a path: its name, or ``<op_type>_<index>`` when it has none."""
    return name if name else f"{op_type or 'node'}_{index}"


@dataclass
class Report:
    """The verdict on one model. ``error`` is set when it could not be read (no verdict)."""

    source: str  # printable: bytes of a path that are not UTF-8 shown as \xNN
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    nodes: int = 0
    opset_imports: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    path: str | None = None  # the path as given (os.fsdecode), for SARIF's exact file URI

    @property
    def conforms(self) -> bool:
        return self.error is None and not self.findings

    @property
    def status(self) -> str:
        if self.error is not None:
            return "unreadable"
        return "violations" if self.findings else "conforms"

    @property
    def exit_code(self) -> int:
        return {"conforms": 0, "violations": 1, "unreadable": 2}[self.status]

    def rules(self) -> list[str]:
        """The rule IDs found, each once, in order of first appearance."""
        return list(dict.fromkeys(f.rule for f in self.findings))

    def by_rule(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.rule, []).append(f)
        return out

    def as_dict(self) -> dict:
        return {"source": self.source, "status": self.status, "error": self.error,
                "nodes": self.nodes, "opset_imports": dict(self.opset_imports),
                "findings": [f.as_dict() for f in self.findings]}
