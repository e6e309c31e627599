"""SGEMM schedules of other tile shapes at 4000^3 and 4096^3, timed beside
cuBLAS and Triton (best of five) in one process (bench/RESULTS.md, eleventh
session). Each variant is a CUDA file NAME.cu in DIR (from `build/loom show`
of a .loom schedule, or a hand edit of one) with its launch shape:

    python3 bench/sgemm_tiles.py DIR NAME:BM:BN:TX:TY:SMEM[,...] [SIZES]

BM x BN is the block tile of c (the grid is ceil(n/BM) x ceil(m/BN)), TX x TY
the threads of a block, SMEM the dynamic shared memory in bytes (`loom
compile` prints it). A variant whose name contains "vec" assumes multiples
of its tiles and is skipped at sizes that are not. Needs torch, triton, cupy."""
import os, re, sys
import numpy as np, torch, cupy as cp, triton
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_sgemm import best_of_five
torch.backends.cuda.matmul.allow_tf32 = False
bench = lambda fn: triton.testing.do_bench(fn, warmup=100, rep=400, return_mode="median")
# name:bm:bn:threads_x:threads_y:smem
DIR = sys.argv[1]
specs = [s.split(":") for s in sys.argv[2].split(",")]
sizes = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "4000,4096").split(",")]
mods = {}
def fn(name, smem):
    if name not in mods:
        src = open(os.path.join(DIR, name + ".cu")).read()
        fname = re.search(r"void __launch_bounds__\([^)]*\) (\w+)\(", src).group(1)
        f = cp.RawModule(code=src, options=("-std=c++17",), backend="nvrtc").get_function(fname)
        f.max_dynamic_shared_size_bytes = smem
        mods[name] = f
    return mods[name]
for size in sizes:
    A = torch.rand(size, size, device="cuda"); B = torch.rand(size, size, device="cuda"); C = torch.empty(size, size, device="cuda")
    ref = A @ B; tf = lambda ms: 2 * size**3 / ms / 1e9
    cA, cB, cC = cp.asarray(A), cp.asarray(B), cp.asarray(C)
    runs = {}
    for name, bm, bn, tx, ty, smem in specs:
        bm, bn, tx, ty, smem = int(bm), int(bn), int(tx), int(ty), int(smem)
        if ("vec" in name and (size % bm or size % bn)): continue
        f = fn(name, smem)
        grid = ((size + bn - 1) // bn, (size + bm - 1) // bm, 1)
        run = lambda f=f, grid=grid, tx=tx, ty=ty, smem=smem: f(grid, (tx, ty, 1), (cA, cB, cC, np.int32(size), np.int32(size), np.int32(size)), shared_mem=smem)
        C.fill_(float("nan")); run(); torch.cuda.synchronize()
        runs[name] = (run, f.num_regs, bool(torch.allclose(C, ref, rtol=1e-3, atol=1e-2)))
    for r in range(2):
        t = bench(lambda: torch.mm(A, B, out=C)); print(f"{size}^3 r{r}: cuBLAS {t*1e3:.0f} us {tf(t):.1f}", flush=True)
        t = best_of_five(A, B, C, bench); print(f"{size}^3 r{r}: Triton {t*1e3:.0f} us {tf(t):.1f}", flush=True)
        for name, (run, regs, ok) in runs.items():
            t = bench(run); print(f"{size}^3 r{r}: {name:12s} {regs} regs ok={ok} {t*1e3:.0f} us {tf(t):.1f}", flush=True)
    del A, B, C, ref
