"""proofs/gemm_c_tile.mlw's modules for RR x CC register tiles (a development tool, not in the wheel).

The file was generated once from one template and is kept as the source. This is that
template, so that a module with other tiles can be written without retyping RR*CC statements:
the parts that do not depend on the tile (the element operations and their facts, the index
facts, ``cell``, ``gemm_set_cell``/``gemm_get_cell``, ``gemm_elem_steps``, ``reached``/``level``
and the driver ``gemm_tiled``) are taken from the file's first module as they are (the driver's
strip width and row step rewritten); the row store ``gemm_set_row`` and the tiles
``gemm_tile_rows`` (RR x CC) and ``gemm_tile_row`` (1 x CC) are written out here.

  python -m sonnx_dev.gemm_tile_gen check              # the committed file is what this writes
  python -m sonnx_dev.gemm_tile_gen write OUT NAME:RR:CC [NAME:RR:CC ...]

``check`` regenerates the committed modules (GemmCTile8: 4 x 8, GemmCTile4: 4 x 4) and compares
them with the file, byte for byte. Issue 32 measured wider tiles (4 x 32 with an AVX-512 copy)
within 1.5x of the llvmlite fold; their sessions are the cost: the proof of a tile grows with
the square of its accumulators (each of the RR*CC invariants is proved in a context holding
all of them).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

TILE_FILE = Path("proofs/gemm_c_tile.mlw")


def _at(base: str, d: int) -> str:
    return base if d == 0 else f"({base} + {d})"


def _to_int(base: str, d: int) -> str:
    return f"(to_int {base})" if d == 0 else f"(to_int {base} + {d})"


def set_row(cc: int) -> list[str]:
    """y[i, j0 .. j0+cc-1] <- v0 .. v(cc-1), every other element unchanged"""
    vs = " ".join(f"v{c}" for c in range(cc))
    out = [f"  (** y[i, j0 .. j0+{cc - 1}] <- v0 .. v{cc - 1} (a tile's row stored), every other element unchanged *)",
           "  (* req: GEMM-R1 -- one tile row of a row-major matrix written by (row, column): indices in bounds, "
           "no int32 overflow, every other element unchanged *)",
           f"  let gemm_set_row (y: ptr t) (ghost m: int32) (n i j0: int32) ({vs}: t) : unit",
           "    requires { valid y (m * n) /\\ writable y /\\ y.offset = 0 /\\ m * n <= max_int32 }",
           f"    requires {{ 0 <= i < m /\\ 0 <= j0 /\\ j0 + {cc} <= n }}"]
    out += [f"    ensures  {{ (pelts y)[idx n i {_at('j0', c)}] = v{c} }}" for c in range(cc)]
    out += [f"    ensures  {{ forall i2 j2. 0 <= i2 < m -> 0 <= j2 < n -> not (i2 = i /\\ j0 <= j2 < j0 + {cc}) ->",
            "                 (pelts y)[idx n i2 j2] = (old (pelts y))[idx n i2 j2] }",
            "  ="]
    out += [f"    gemm_set_cell y m n i {_at('j0', c)} v{c}" + (";" if c < cc - 1 else "") for c in range(cc)]
    return out + [""]


def tile(rr: int, cc: int, name: str) -> list[str]:
    """an rr x cc tile advanced from step k0 to step k1, its sums in rr*cc local accumulators"""
    cells = [(r, c) for r in range(rr) for c in range(cc)]
    dot = "dot (pelts a) (pelts b) false false m n k"
    out = [f"  (** A {rr} x {cc} tile of Y, rows i0 .. i0+{rr - 1}, columns j0 .. j0+{cc - 1}, advanced from step k0 to step k1",
           f"      of its folds: its {rr * cc} partial sums are read once into local accumulators (which the C",
           f"      compiler keeps in vector registers: each row's {cc} sums are one or two packed registers),",
           "      the k1 - k0 steps run on them in ascending l, and they are stored once. Each accumulator",
           "      sees exactly its element's products for l ascending, one rounding each. *)",
           f"  (* req: GEMM-R7 -- a {rr} x {cc} register tile: each of its elements advanced by its own ascending-l "
           "steps k0 .. k1-1 of the fold, every other element of y unchanged *)",
           f"  let {name} (a b y: ptr t) (ghost m: int32) (n k i0 j0 k0 k1: int32) : unit",
           "    requires { 0 < m /\\ 0 < n /\\ 0 < k }",
           "    requires { m * k <= max_int32 /\\ k * n <= max_int32 /\\ m * n <= max_int32 }",
           "    requires { valid a (m * k) /\\ valid b (k * n) /\\ valid y (m * n) /\\ writable y }",
           "    requires { a.offset = 0 /\\ b.offset = 0 /\\ y.offset = 0 }",
           f"    requires {{ 0 <= i0 /\\ i0 + {rr} <= m /\\ 0 <= j0 /\\ j0 + {cc} <= n /\\ 0 <= k0 <= k1 <= k }}",
           f"    requires {{ forall i j. i0 <= i < i0 + {rr} -> j0 <= j < j0 + {cc} -> cell y a b m n k (i) (j) (k0) }}",
           f"    ensures  {{ forall i j. i0 <= i < i0 + {rr} -> j0 <= j < j0 + {cc} -> cell y a b m n k (i) (j) (k1) }}",
           f"    ensures  {{ forall i j. 0 <= i < m -> 0 <= j < n -> not (i0 <= i < i0 + {rr} /\\ j0 <= j < j0 + {cc}) ->",
           "                 (pelts y)[idx n i j] = (old (pelts y))[idx n i j] }",
           "  ="]
    out += [f"    assert {{ cell y a b m n k {_at('i0', r)} {_at('j0', c)} k0 }};" for r, c in cells]
    for r, c in cells:
        out += [f"    let ref s{r}_{c} = gemm_get_cell y m n {_at('i0', r)} {_at('j0', c)} in",
                f"    assert {{ s{r}_{c} = {dot} {_at('i0', r)} {_at('j0', c)} k0 }};"]
    out.append("    for l = k0 to k1 - 1 do")
    out += [f"      invariant {{ s{r}_{c} = {dot} {_at('i0', r)} {_at('j0', c)} l }}" for r, c in cells]
    out += [f"      opa_def (pelts a) false (to_int m) (to_int k) {_to_int('i0', r)} (to_int l);" for r in range(rr)]
    out += [f"      opb_def (pelts b) false (to_int k) (to_int n) (to_int l) {_to_int('j0', c)};" for c in range(cc)]
    out += [f"      let a{r} = gemm_get_cell a m k {_at('i0', r)} l in" for r in range(rr)]
    out += [f"      let b{c} = gemm_get_cell b k n l {_at('j0', c)} in" for c in range(cc)]
    for r, c in cells:
        out += [f"      dot_succ (pelts a) (pelts b) false false (to_int m) (to_int n) (to_int k) "
                f"{_to_int('i0', r)} {_to_int('j0', c)} (to_int l);",
                f"      s{r}_{c} <- add_p s{r}_{c} (mul_p a{r} b{c});"]
    out += ["    done;", "    let ghost y0 = pure { pelts y } in"]
    out += [f"    gemm_set_row y m n {_at('i0', r)} j0 " + " ".join(f"s{r}_{c}" for c in range(cc)) + ";"
            for r in range(rr)]
    for r in range(rr):
        out += [f"    assert {{ cell y a b m n k {_at('i0', r)} {_at('j0', c)} k1 }};" for c in range(cc)]
        out.append(f"    assert {{ forall j. j0 <= j < j0 + {cc} -> cell y a b m n k {_at('i0', r)} j k1 }};")
    out += [f"    assert {{ forall i j. 0 <= i < m -> 0 <= j < n -> not (i0 <= i < i0 + {rr} /\\ j0 <= j < j0 + {cc}) ->",
            "               (pelts y)[idx n i j] = y0[idx n i j] }", ""]
    return out


def _template(lines: list[str]) -> tuple[list[str], int, int]:
    """the file's first module (its lines up to ``end``) and its tile (RR, CC)"""
    start = next(i for i, line in enumerate(lines) if line.startswith("module GemmCTile"))
    end = lines.index("end", start)
    mod = lines[start:end + 1]
    rr = int(re.search(r"while i2 - i0 >= (\d+) do", "\n".join(mod)).group(1))
    cc = int(re.search(r"while n - j0 >= (\d+) do", "\n".join(mod)).group(1))
    return mod, rr, cc


def module(template: list[str], trr: int, tcc: int, name: str, rr: int, cc: int) -> list[str]:
    """module ``name`` with rr x cc tiles, from the template module of trr x tcc tiles"""
    i_row = next(i for i, line in enumerate(template) if line.startswith("  (** y[i, j0 .. j0+"))
    i_level = next(i for i, line in enumerate(template)
                   if line.startswith("  (** every element at its fold after k1"))
    tail = "\n".join(template[i_level:])
    for old, new in ((f"while n - j0 >= {tcc} do", f"while n - j0 >= {cc} do"),
                     (f"i0 {tcc} k0 k1", f"i0 {cc} k0 k1"),
                     (f"j0 <- j0 + {tcc}", f"j0 <- j0 + {cc}"),
                     (f"while i2 - i0 >= {trr} do", f"while i2 - i0 >= {rr} do"),
                     (f"i0 <- i0 + {trr}", f"i0 <- i0 + {rr}")):
        if old not in tail:
            raise ValueError(f"gemm_tile_gen: the template's driver has no {old!r}")
        tail = tail.replace(old, new)
    return ([f"module {name}"] + template[1:i_row] + set_row(cc) + tile(rr, cc, "gemm_tile_rows")
            + tile(1, cc, "gemm_tile_row") + tail.split("\n"))


def render(text: str, specs: list[tuple[str, int, int]]) -> str:
    """the file ``text`` with its modules replaced by those of ``specs`` (name, RR, CC); the text
    before the first module (the file's head comment) is kept"""
    lines = text.split("\n")
    template, trr, tcc = _template(lines)
    head = lines[:lines.index(template[0])]
    body: list[str] = []
    for name, rr, cc in specs:
        body += module(template, trr, tcc, name, rr, cc) + [""]
    return "\n".join(head + body)


COMMITTED = [("GemmCTile8", 4, 8), ("GemmCTile4", 4, 4)]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["check"]:
        text = TILE_FILE.read_text()
        ok = render(text, COMMITTED) == text
        print(f"gemm_tile_gen: {TILE_FILE} {'is' if ok else 'is NOT'} what the template writes for "
              + ", ".join(f"{n} ({r} x {c})" for n, r, c in COMMITTED))
        return 0 if ok else 1
    if argv[:1] == ["write"] and len(argv) >= 3:
        specs = [(s.split(":")[0], int(s.split(":")[1]), int(s.split(":")[2])) for s in argv[2:]]
        Path(argv[1]).write_text(render(TILE_FILE.read_text(), specs))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
