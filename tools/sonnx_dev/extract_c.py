"""tools/extract-c: the C kernels from the proofs, checked (a development tool, not in the wheel).

1. ``why3 extract -D c -D proofs/drivers/c_ieee.drv`` of every proof file that has C
   (sonnx.c_kernels.PROOF_OF) into build/c/gen/; each must equal the committed
   src/sonnx/c/<stem>.c byte for byte (a difference is a defect: the committed C is not what
   the proofs extract to; ``--update`` rewrites the committed files instead);
2. the committed sources built with sonnx.c_kernels.CFLAGS (warnings are errors) into
   build/c/libsonnx_kernels.so;
3. ``objdump -d`` of that library: any fused multiply-add instruction fails;
4. on x86-64, every entry point whose record names a packed instruction (``CEntry.packed``)
   has it in its compiled body: a loop that is no longer vectorised fails; and every body
   compiled a second time for AVX2 (``*_avx2``, sonnx_kernels.c) uses 256-bit registers
   (step 3 has read it for fused instructions with the rest).
Exit 0 only when all of that holds; one line per step.
"""
from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sonnx import c_kernels

DRIVER = "proofs/drivers/c_ieee.drv"


def extract(root: Path, mlw: str, out: Path, driver: str = DRIVER) -> None:
    """Why3's C for ``mlw`` (relative to ``root``) into ``out``; RuntimeError on any failure."""
    cmd = ["why3", "extract", "-L", "proofs", "-L", "proofs/lib", "-D", "c", "-D", driver, mlw, "-o", str(out)]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    # Why3 1.5.1 skips a declaration it cannot translate (e.g. a rounding mode without a C
    # syntax) with a message and exit status 0: any message is a failure here
    if r.returncode != 0 or not out.exists() or r.stderr.strip():
        raise RuntimeError(f"{' '.join(cmd)} failed: {(r.stderr or r.stdout).strip()}")


def fused_instructions(lib: Path) -> list[str]:
    """The lines of ``objdump -d lib`` whose mnemonic is a fused multiply-add."""
    dis = subprocess.run(["objdump", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    pat = re.compile(r"\t(" + "|".join(c_kernels.FUSED_MNEMONICS) + r")\w*\s", re.I)
    return [line.strip() for line in dis.splitlines() if pat.search(line)]


def _bodies(lib: Path) -> dict[str, list[str]]:
    """Each function of ``objdump -d lib``: its instructions' mnemonics."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    bodies: dict[str, list[str]] = {}
    current = None
    for line in dis.splitlines():
        head = re.match(r"[0-9a-f]+ <([^>]+)>:$", line)
        if head:
            current = bodies.setdefault(head.group(1), [])
        elif current is not None and "\t" in line:
            fields = line.split("\t")[1].split()
            if fields:
                current.append(fields[0])
    return bodies


def scalar_loops(lib: Path) -> list[str]:
    """The entry points whose record asks for a vectorised loop (``CEntry.packed``) and whose
    compiled body (``<entry>_rne``, sonnx_kernels.c) lacks that packed instruction: a
    regression to scalar code. x86-64 only (the mnemonics are its); [] elsewhere."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    bodies = _bodies(lib)
    missing = []
    for b in c_kernels._BINDINGS:
        for e in b.entries:
            if e.packed and e.packed not in bodies.get(f"{e.name}_rne", []):
                missing.append(f"{e.name}: no {e.packed}")
    return missing


def avx2_copies(lib: Path) -> tuple[list[str], list[str]]:
    """The functions of the library compiled a second time for AVX2 (named ``*_avx2``,
    sonnx_kernels.c) and those of them that use no 256-bit register: a copy that gained
    nothing. The fused-instruction check above covers these copies too (it reads the whole
    library)."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    copies: dict[str, bool] = {}
    current = None
    for line in dis.splitlines():
        head = re.match(r"[0-9a-f]+ <([^>]+)>:$", line)
        if head:
            current = head.group(1) if head.group(1).endswith("_avx2") else None
            if current:
                copies.setdefault(current, False)
        elif current and "%ymm" in line:
            copies[current] = True
    return sorted(copies), sorted(name for name, wide in copies.items() if not wide)


def run(root: Path, update: bool = False) -> int:
    root = Path(root)
    committed = root / "src" / "sonnx" / "c"
    gen = root / "build" / "c" / "gen"
    shutil.rmtree(gen, ignore_errors=True)
    gen.mkdir(parents=True)
    ok = True
    for src, mlw in c_kernels.PROOF_OF.items():
        try:
            extract(root, mlw, gen / src)
        except RuntimeError as e:
            print(f"extract-c: {mlw}: {e}")
            return 1
        new, old = (gen / src).read_bytes(), (committed / src).read_bytes() if (committed / src).exists() else b""
        if new == old:
            print(f"extract-c: {mlw} -> src/sonnx/c/{src}: identical to the committed file")
        elif update:
            (committed / src).write_bytes(new)
            print(f"extract-c: {mlw} -> src/sonnx/c/{src}: updated")
        else:
            ok = False
            print(f"extract-c: {mlw} -> src/sonnx/c/{src}: DIFFERS from the committed file "
                  f"(regenerated copy in {(gen / src).relative_to(root)}; run tools/extract-c --update "
                  "after checking the proofs replay)")
    if not ok:
        return 1
    try:
        lib = c_kernels.build(root / "build" / "c", committed)
    except c_kernels.CKernelsUnavailable as e:
        print(f"extract-c: build FAILED: {e}")
        return 1
    print(f"extract-c: built {lib.relative_to(root)} with {' '.join(c_kernels.CFLAGS)}")
    fused = fused_instructions(lib)
    if fused:
        print(f"extract-c: {len(fused)} fused multiply-add instruction(s) in {lib.name}: FAILED")
        for line in fused[:10]:
            print(f"    {line}")
        return 1
    print(f"extract-c: objdump -d {lib.name}: no fused multiply-add instruction: OK")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        print("extract-c: vectorised loops not checked (the packed instructions named are x86-64's)")
        return 0
    scalar = scalar_loops(lib)
    if scalar:
        print(f"extract-c: {len(scalar)} loop(s) not vectorised in {lib.name}: FAILED")
        for line in scalar:
            print(f"    {line}")
        return 1
    n = sum(1 for b in c_kernels._BINDINGS for e in b.entries if e.packed)
    print(f"extract-c: objdump -d {lib.name}: the {n} loops the records ask for are vectorised: OK")
    copies, narrow = avx2_copies(lib)
    if narrow:
        print(f"extract-c: {len(narrow)} AVX2 cop(ies) with no 256-bit instruction in {lib.name}: FAILED")
        for name in narrow:
            print(f"    {name}")
        return 1
    print(f"extract-c: objdump -d {lib.name}: {len(copies)} AVX2 copies ({', '.join(copies) or 'none'}), "
          "each with 256-bit instructions and none fused: OK")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    return run(Path(__file__).resolve().parents[2], update="--update" in argv)


if __name__ == "__main__":
    sys.exit(main())
