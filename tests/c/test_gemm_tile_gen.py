"""tools/sonnx_dev/gemm_tile_gen.py, the template of proofs/gemm_c_tile.mlw's register tiles: it
writes the committed file byte for byte (a planted change in the file is seen), and a module of
other tiles has one accumulator, invariant and step per element of its tile."""
from __future__ import annotations

from pathlib import Path

import pytest

from sonnx_dev import gemm_tile_gen as gen

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / gen.TILE_FILE).read_text()


@pytest.mark.req("GEMM-R7")
def test_the_committed_tiles_are_what_the_template_writes():
    assert gen.render(TEXT, gen.COMMITTED) == TEXT
    # plant: one accumulator of the committed 4 x 8 tile given another column's product
    planted = TEXT.replace("s0_3 <- add_p s0_3 (mul_p a0 b3);", "s0_3 <- add_p s0_3 (mul_p a0 b4);", 1)
    assert planted != TEXT and gen.render(planted, gen.COMMITTED) != planted


@pytest.mark.req("GEMM-R7")
def test_a_wider_tile_has_one_accumulator_invariant_and_step_per_element():
    out = gen.render(TEXT, [("GemmCTile2x3", 2, 3)])
    rows = out[out.index("let gemm_tile_rows"):out.index("let gemm_tile_row ")]
    cells = [(r, c) for r in range(2) for c in range(3)]
    for r, c in cells:
        assert f"let ref s{r}_{c} = gemm_get_cell" in rows
        assert rows.count(f"invariant {{ s{r}_{c} = dot ") == 1
        assert rows.count(f"s{r}_{c} <- add_p s{r}_{c} (mul_p a{r} b{c});") == 1
    assert rows.count("invariant {") == len(cells) and rows.count("dot_succ") == len(cells)
    assert "while n - j0 >= 3 do" in out and "while i2 - i0 >= 2 do" in out and "j0 <- j0 + 3" in out
    assert out.count("module ") == 1 and out.startswith(TEXT[:TEXT.index("module GemmCTile8")])
