"""SGEMM variants at 4000^3 and 4096^3 (bench/RESULTS.md, tenth session):
hand edits of Loom's generated CUDA, timed beside cuBLAS and Triton in one
process. The CUDA comes from this machine's Loom:

    mkdir -p v && for k in sgemm_vec sgemm_any sgemm_zfill; do build/loom show examples/$k.loom > v/${k#sgemm_}.cu; done
    python3 bench/sgemm_variants.py make v          # writes the edited variants beside them
    python3 bench/sgemm_variants.py time v vec,any,zfill,clamp,clamp_lb,...   # on the GPU (torch, triton, cupy)

Variants: clamp (rows and columns of the tile copies clamped into the
matrix, no row/column conditions), clamp_nok (also no k conditions: right
only where l % 32 = 0), *_lb (__launch_bounds__(256, 2)), nok_vecstore
(clamp_nok's body, sgemm_vec's unguarded stores), vec_guardstore
(sgemm_vec's body, sgemm_zfill's guarded stores), *_uns (stores unswitched
per block), {vec,zfill,clamp}_{flat,sel,smem} (other epilogues: one if per
store, a branch-free address select, the tile staged in shared memory)."""
import os
import re
import sys


def split_at_stores(src):
    lines = src.split("\n")
    for i in range(len(lines) - 1, 0, -1):
        if lines[i] == "  }" and lines[i - 1] == "    __syncthreads();":
            return "\n".join(lines[: i + 1]), "\n".join(lines[i + 1 :])
    raise ValueError("no k loop end found")


def make(d):
    rd = lambda n: open(os.path.join(d, n + ".cu")).read()
    def wr(n, s, old, new):
        open(os.path.join(d, n + ".cu"), "w").write(s.replace(old + "(", new + "("))
    z, vec = rd("zfill"), rd("vec")
    pat_a = re.compile(r"&\(a\[\((128 \* i_outer \+ \([^;]*?\))\) \* l \+ (.*?)\]\), \1 < n && (.*?)\);")
    pat_b = re.compile(r"&\(b\[(.*?) \* m \+ \((128 \* j_outer \+ [^;]*?)\)\]\), (.*?) && \2 < m\);")
    clamp = pat_a.sub(lambda m: f"&(a[min({m.group(1)}, n - 1) * l + {m.group(2)}]), {m.group(3)});", z)
    clamp = pat_b.sub(lambda m: f"&(b[{m.group(1)} * m + min({m.group(2)}, m - 4)]), {m.group(3)});", clamp)
    nok = re.sub(r"loom_cp_async_zfill<16>\((&\([ab]_fetch\[.*?\]\)), (&\([ab]\[.*?\]\)), [^;]*?\);", r"loom_cp_async<16>(\1, \2);", clamp)
    wr("clamp", clamp, "sgemm_zfill", "sgemm_clamp")
    wr("clamp_nok", nok, "sgemm_zfill", "sgemm_clamp_nok")
    for name, s in (("zfill", z), ("clamp", clamp), ("clamp_nok", nok)):
        lb = re.sub(r"void __launch_bounds__\(256\) (sgemm_\w+)\(", r"void __launch_bounds__(256, 2) \1_lb(", s)
        open(os.path.join(d, name + "_lb.cu"), "w").write(lb)
    vb, ve = split_at_stores(vec)
    zb, ze = split_at_stores(z)
    cb, _ = split_at_stores(clamp)
    nb, _ = split_at_stores(nok)
    wr("nok_vecstore", nb + "\n" + ve, "sgemm_zfill", "sgemm_nok_vecstore")
    wr("vec_guardstore", vb + "\n" + ze, "sgemm_vec", "sgemm_vec_guardstore")
    uns = ("\n  if (128 * i_outer + 128 <= n && 128 * j_outer + 128 <= m)\n  {" + ve.rstrip()[:-1] + "  }\n  else\n  {" +
           ze.rstrip()[:-1] + "  }\n}\n")
    wr("clamp_uns", cb + uns, "sgemm_zfill", "sgemm_clamp_uns")
    wr("zfill_uns", zb + uns, "sgemm_zfill", "sgemm_zfill_uns")
    # other epilogues after sgemm_vec's, sgemm_zfill's and the clamped k loop:
    # flat (one if per store), sel (branch-free: the address or a dummy),
    # smem (the tile staged in shared memory, copied out by all threads under guards)
    for body, prefix in (("vec", vb), ("zfill", zb), ("clamp", cb)):
        for kind in ("flat", "sel", "smem"):
            name = f"{body}_{kind}"
            src = re.sub(r"void __launch_bounds__\(256\) (sgemm_\w+)\(", f"void __launch_bounds__(256) sgemm_{name}(",
                         prefix + "\n" + epilogue(kind))
            open(os.path.join(d, name + ".cu"), "w").write(src)


def epilogue(kind):
    """The 8x8 register tile's stores (rows 16r + ty, float4 columns 4 * (16g + tx)), guarded by n and m."""
    out = []
    if kind == "sel":
        out.append("  float4 loom_sink;")
    if kind == "smem":
        out.append("  float *const c_tile = reinterpret_cast<float *>(loom_shared);  // the fetch tiles are done")
    for r in range(8):
        for g in range(2):
            acc = ", ".join(f"acc_c[{r + 8 * g + 16 * lane}]" for lane in range(4))
            row, col = f"128 * i_outer + (16 * {r} + i_inner_inner)", f"128 * j_outer + 4 * (16 * {g} + j_inner_outer_inner)"
            addr = f"reinterpret_cast<float4 *>(&(c[({row}) * m + ({col})]))"
            cond = f"{row} < n && {col} < m"
            if kind == "flat":
                out.append(f"  if ({cond})\n    *{addr} = make_float4({acc});")
            elif kind == "sel":
                out.append(f"  {{\n    float4 *p = ({cond}) ? {addr} : &loom_sink;\n    *p = make_float4({acc});\n  }}")
            else:
                out.append(f"  *reinterpret_cast<float4 *>(&c_tile[(16 * {r} + i_inner_inner) * 128 + 4 * (16 * {g} + j_inner_outer_inner)]) = "
                           f"make_float4({acc});")
    if kind == "smem":
        out.append("  __syncthreads();")
        out.append("  int const loom_tid = threadIdx.y * 16 + threadIdx.x;")
        for s in range(16):
            out.append(f"  {{\n    int const q = loom_tid + 256 * {s}, row = q >> 5, c4 = q & 31;\n"
                       f"    if (128 * i_outer + row < n && 128 * j_outer + 4 * c4 < m)\n"
                       f"      *reinterpret_cast<float4 *>(&c[(128 * i_outer + row) * m + 128 * j_outer + 4 * c4]) = "
                       f"*reinterpret_cast<const float4 *>(&c_tile[row * 128 + 4 * c4]);\n  }}")
    return "\n".join(out) + "\n}\n"


if len(sys.argv) > 2 and sys.argv[1] == "make":
    make(sys.argv[2])
    sys.exit(0)

import numpy as np
import torch, cupy as cp, triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_sgemm import best_of_five  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
HERE = sys.argv[2] if len(sys.argv) > 2 else "."


def bench(fn):
    return triton.testing.do_bench(fn, warmup=100, rep=400, return_mode="median")


def triton_best(A, B, C):
    return best_of_five(A, B, C, bench)


_mods = {}


def loom_fn(name, size):
    if name in _mods:
        return _mods[name]
    src = open(os.path.join(HERE, name + ".cu")).read()
    fname = re.search(r"void __launch_bounds__\([^)]*\) (\w+)\(", src).group(1)
    mod = cp.RawModule(code=src, options=("-std=c++17",), backend="nvrtc")
    f = mod.get_function(fname)
    f.max_dynamic_shared_size_bytes = 69632
    _mods[name] = (f, f.num_regs)
    return _mods[name]


def main():
    variants = sys.argv[3].split(",")
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    for size in (4000, 4096):
        A = torch.rand(size, size, device="cuda")
        B = torch.rand(size, size, device="cuda")
        C = torch.empty(size, size, device="cuda")
        ref = A @ B
        flops = 2 * size**3
        tf = lambda ms: flops / ms / 1e9
        grid = ((size + 127) // 128, (size + 127) // 128, 1)
        cA, cB, cC = cp.asarray(A), cp.asarray(B), cp.asarray(C)
        fns = {}
        for v in variants:
            if (v.startswith(("clamp_nok", "nok_")) and size % 32) or (v.startswith(("vec", "nok_vecstore")) and size % 128):
                continue
            f, regs = loom_fn(v, size)
            run = lambda f=f: f(grid, (16, 16, 1), (cA, cB, cC, np.int32(size), np.int32(size), np.int32(size)), shared_mem=69632)
            C.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            ok = bool(torch.allclose(C, ref, rtol=1e-3, atol=1e-2))
            fns[v] = (run, regs, ok)
        for r in range(rounds):
            t = bench(lambda: torch.mm(A, B, out=C))
            print(f"{size}^3 round {r}: cuBLAS {t*1e3:.0f} us {tf(t):.1f} TFLOP/s", flush=True)
            t = triton_best(A, B, C)
            print(f"{size}^3 round {r}: Triton best of 5 {t*1e3:.0f} us {tf(t):.1f}", flush=True)
            for v, (run, regs, ok) in fns.items():
                t = bench(run)
                print(f"{size}^3 round {r}: {v:14s} {regs} regs ok={ok} {t*1e3:.0f} us {tf(t):.1f}", flush=True)
        del A, B, C, ref


main()
