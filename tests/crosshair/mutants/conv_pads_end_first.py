"""Conv's index map subtracting the end pad (pads[r + i]) where ONNX's pads list puts the begin
pad (pads[i]): with asymmetric pads every output reads the input shifted; CONV-R6 says
o*s + k*d - pad_begin."""


def input_position(o, k, pads, strides, dilations, spatial):
    r = len(o)
    at = tuple(o[i] * strides[i] + k[i] * dilations[i] - pads[r + i] for i in range(r))     # MUTANT: end pad
    return at if all(0 <= at[i] < spatial[i] for i in range(len(at))) else None


PATCHES = {"sonnx.ops.conv:input_position": input_position}
