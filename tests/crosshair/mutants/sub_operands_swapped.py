"""Sub computes B - A: the operands of the difference are taken in the wrong order."""


def exact_difference(x, y):
    return y - x                        # MUTANT: should be x - y


PATCHES = {"sonnx.ops.sub:exact_difference": exact_difference}
