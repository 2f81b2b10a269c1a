"""tools/acasxu-e2e (tools/sonnx_dev/acasxu_e2e.py): a row per network, exit 0 only when every
one conforms after conform, passes the bit check and is within bounds; --dim pins a named
dimension where a model has it; bad usage is one line and exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from sonnx_dev import acasxu_e2e

MODELS = Path(__file__).parent / "models"
CONFORM = Path(__file__).parents[1] / "conform" / "models"


@pytest.mark.req("@operators")
def test_rows_and_exit_status(capsys):
    assert acasxu_e2e.main([str(MODELS / "mlp_dynamo_op18_bias.onnx")]) == 0
    out = capsys.readouterr().out
    assert "mlp_dynamo_op18_bias.onnx" in out and "conforms   passed" in out and "within" in out
    # a symbolic batch without --dim stays refused: the run fails and says what is left
    dynamic = str(CONFORM / "mlp_torchscript_op17_bias_dynamic.onnx")
    assert acasxu_e2e.main([dynamic]) == 1
    printed = capsys.readouterr()
    assert "NOT all pass" in printed.out and "PROF-R2" in printed.err
    assert acasxu_e2e.main(["--dim", "batch=3", "--dim", "absent=2", dynamic]) == 0
    assert "all conform and are within bounds" in capsys.readouterr().out


@pytest.mark.req("@operators")
@pytest.mark.parametrize("bad", [["--dim", "batch=0", "x.onnx"], ["--dim", "batch", "x.onnx"], ["nowhere.onnx"]])
def test_bad_usage_is_one_line_and_exit_2(bad, capsys):
    assert acasxu_e2e.main(bad) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
