"""MaxPool's running maximum replaced only by a strictly greater value: on a tie of zeros the
first is kept, so max(-0, +0) is -0 (what onnxruntime does); MAXPOOL-R4 says +0."""
import math


def window_max(values):
    for v in values:
        if isinstance(v, float) and math.isnan(v):
            return v
    m = values[0]
    for v in values[1:]:
        if v > m:                       # MUTANT: no +0-over--0 rule
            m = v
    return m


PATCHES = {"sonnx.ops.maxpool:window_max": window_max}
