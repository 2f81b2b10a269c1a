"""sonnx/onnx_proto.py: the validator reads models through onnx's generated classes and C++
checker loaded without onnx's package __init__ (start-up, issue 28). What is checked here: the
objects are onnx's own (never a second copy, whichever is imported first), and the validator's
verdicts and findings are the same both ways on every model committed here and on unreadable
and checker-rejected files. Modules loaded by `sonnx validate`: tests/cli/test_startup.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import sonnx
from sonnx.validate.formats import to_json_obj

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted(p for d in ("examples", "tests") for p in (ROOT / d).rglob("*.onnx"))


def _fresh(code: str) -> str:
    """stdout of ``code`` in a new interpreter, where onnx is not imported yet."""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _reports_alone(paths: list[Path]) -> list[dict]:
    """The JSON report of each model, validated in a fresh process through onnx_proto's
    standalone loading (checked: a conforming model first, after which neither onnx's package
    nor numpy is imported; a model that needs onnx's inference or a constant's value imports
    the package later, as it should)."""
    out = _fresh(
        "import json, sys\n"
        "import sonnx\n"
        "from sonnx.validate.formats import to_json_obj\n"
        f"reports = [sonnx.validate({str(ROOT / 'examples' / 'mul_ok.onnx')!r})]\n"
        "assert reports[0].conforms and 'onnx' not in sys.modules and 'numpy' not in sys.modules\n"
        f"reports += [sonnx.validate(p) for p in {[str(p) for p in paths]!r}]\n"
        "print(json.dumps([m for r in reports[1:] for m in to_json_obj([r])['models']]))\n")
    return json.loads(out)


def _reports_here(paths: list[Path]) -> list[dict]:
    """The same reports in this process, where onnx's package is imported (the facade uses it)."""
    return [m for p in paths for m in to_json_obj([sonnx.validate(str(p))])["models"]]


def _comparable(m: dict) -> dict:
    return {k: v for k, v in m.items() if k not in ("timings", "seconds")}


def test_the_classes_and_checker_are_onnxs_own_whichever_loads_first():
    out = _fresh(
        "import sys\n"
        "from sonnx import onnx_proto\n"
        "M, C = onnx_proto.ModelProto, onnx_proto._parts()[1]\n"
        "assert 'onnx' not in sys.modules\n"
        "import onnx\n"
        "print(onnx.ModelProto is M, onnx.TensorProto is onnx_proto.TensorProto,\n"
        "      onnx.checker.C is C.checker, onnx.defs.onnx_opset_version() == onnx_proto.defs.onnx_opset_version(),\n"
        "      onnx_proto.helper is onnx.helper, onnx.onnx_ml_pb2 is sys.modules['onnx.onnx_ml_pb2'])\n")
    assert out.split() == ["True"] * 6


def test_with_onnx_imported_the_facade_is_the_package():
    from sonnx import onnx_proto
    assert onnx_proto.ModelProto is onnx.ModelProto and onnx_proto.numpy_helper is onnx.numpy_helper
    assert onnx_proto.defs.onnx_opset_version() == onnx.defs.onnx_opset_version()
    with pytest.raises(AttributeError):
        onnx_proto.__path__                       # the import system's questions are answered as a module's


def test_every_committed_model_gets_the_same_report_both_ways():
    assert len(MODELS) >= 30
    alone, here = _reports_alone(MODELS), _reports_here(MODELS)
    assert [_comparable(m) for m in alone] == [_comparable(m) for m in here]
    assert {m["status"] for m in here} >= {"conforms", "violations"}   # both verdicts are exercised


def _bad_models(tmp: Path) -> list[Path]:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    good = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", 14)])
    data = good.SerializeToString()
    no_opset = onnx.ModelProto()
    no_opset.CopyFrom(good)
    del no_opset.opset_import[:]                  # the checker refuses a model without opset_import
    future_ir = onnx.ModelProto()
    future_ir.CopyFrom(good)
    future_ir.ir_version = 99                     # newer than the checker's
    dangling = onnx.ModelProto()
    dangling.CopyFrom(good)
    dangling.graph.node[0].input[0] = "nowhere"   # the checker: input not produced
    files = {"truncated.onnx": data[:-3], "garbage.onnx": b"\x08\x07\xff\xff\xff" * 5,
             "trailing.onnx": data + b"\x00", "no_graph.onnx": onnx.ModelProto(ir_version=8).SerializeToString(),
             "no_opset.onnx": no_opset.SerializeToString(), "future_ir.onnx": future_ir.SerializeToString(),
             "dangling.onnx": dangling.SerializeToString(), "good.onnx": data}
    for name, content in files.items():
        (tmp / name).write_bytes(content)
    return [tmp / name for name in files]


def _outcome(code: str) -> list:
    return json.loads(_fresh(code))


def test_unreadable_and_rejected_models_get_the_same_verdicts_both_ways(tmp_path):
    paths = _bad_models(tmp_path)
    probe = ("import json, sys\nimport sonnx\nout = []\n"
             f"assert sonnx.validate({str(ROOT / 'examples' / 'mul_ok.onnx')!r}).conforms\n"
             "assert 'onnx' not in sys.modules\n"
             f"for p in {[str(p) for p in paths]!r}:\n"
             "    r = sonnx.validate(p)\n"
             "    out.append([r.status, r.error, sorted((f.rule, f.message) for f in r.findings)])\n"
             "print(json.dumps(out))\n")
    alone = _outcome(probe)
    here = _outcome("import onnx\n" + probe.replace("assert 'onnx' not in sys.modules\n", ""))
    assert alone == here
    by_name = dict(zip((p.name for p in paths), here))
    for name in ("truncated.onnx", "garbage.onnx", "trailing.onnx", "no_graph.onnx"):
        assert by_name[name][0] == "unreadable", name
    for name in ("no_opset.onnx", "future_ir.onnx", "dangling.onnx"):
        assert "ONNX-CHECKER" in {rule for rule, _ in by_name[name][2]}, name
    assert by_name["good.onnx"] == ["conforms", None, []]
