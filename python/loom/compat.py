"""loopy's top-level functions that are not transformations, for scripts that call them:
add_and_infer_dtypes, preprocess_kernel, get_one_linearized_kernel, set_caching_enabled,
make_copy_kernel, fuse_kernels, generate_header."""
import os
import re

from .kernel import make_kernel


def add_and_infer_dtypes(knl, dtype_dict, expect_completion=False):
    """loopy's add_and_infer_dtypes: the dtypes given, and those of the arrays the kernel
    writes inferred from what is assigned to them (Loom's add_dtypes does both)."""
    from . import add_dtypes
    return add_dtypes(knl, dict(dtype_dict))


def preprocess_kernel(knl):
    """loopy's preprocess_kernel. Loom preprocesses a kernel when it generates code
    (reductions, types, checks: compiled(...).asm["preprocessed"] shows the result),
    so the kernel is returned as it is and generate_code accepts either."""
    return knl


def get_one_linearized_kernel(knl, callables_table=None):
    """loopy's get_one_linearized_kernel (and its older name get_one_scheduled_kernel):
    the kernel with its linearization, Loom's order of loops, instructions and barriers
    as lines of text in `.linearization` ("for k_outer", "fetch_a", "end k_outer", ...).
    Code generation linearizes again, the same way."""
    from . import _loom
    out = knl.copy()
    out.linearization = _loom.schedule_text(knl._core).splitlines()
    return out


get_one_scheduled_kernel = get_one_linearized_kernel


def set_caching_enabled(flag):
    """loopy's set_caching_enabled: turns Loom's on-disk compile cache on or off for
    this process (the variable LOOM_CACHE, read at every compilation)."""
    os.environ["LOOM_CACHE"] = "on" if flag else "off"


def make_copy_kernel(new_dim_tags, old_dim_tags=None):
    """loopy's make_copy_kernel: a kernel copying `input` (layout old_dim_tags, default
    all C) into `output` (layout new_dim_tags), over axes of sizes n0, n1, ..."""
    from . import tag_array_axes, tag_inames
    new = [t.strip() for t in (new_dim_tags.split(",") if isinstance(new_dim_tags, str) else new_dim_tags)]
    old = ["c"] * len(new) if old_dim_tags is None else [
        t.strip() for t in (old_dim_tags.split(",") if isinstance(old_dim_tags, str) else old_dim_tags)]
    if len(old) != len(new):
        raise ValueError(f"make_copy_kernel: {len(new)} new axis tags but {len(old)} old ones")
    idx = [f"i{d}" for d in range(len(new))]
    bounds = " and ".join(f"0<={i}<n{d}" for d, i in enumerate(idx))
    knl = make_kernel(f"{{[{', '.join(idx)}]: {bounds}}}", f"output[{', '.join(idx)}] = input[{', '.join(idx)}]", name="copy")
    knl = tag_array_axes(knl, "input", ",".join(old))
    knl = tag_array_axes(knl, "output", ",".join(new))
    for d in range(len(new)):
        if new[d].startswith(("vec", "sep")) or old[d].startswith(("vec", "sep")):
            knl = tag_inames(knl, {idx[d]: "unr"})
    return knl


def fuse_kernels(kernels, suffixes=None, data_flow=None):
    """loopy's fuse_kernels: one kernel running the instructions of all of `kernels`, in
    order. Inames and arguments of one name are shared (their domains and declarations must
    agree), temporaries and instruction ids that would collide are renamed, assumptions are
    conjoined; `suffixes` (one per kernel) rename the temporaries other kernels also name;
    `data_flow` [(var, from_kernel, to_kernel), ...] makes kernel to_kernel's readers of var
    depend on kernel from_kernel's writers of it (indices into `kernels`)."""
    from . import _loom
    from .kernel import LoopKernel
    kernels = list(kernels)
    if not kernels:
        raise ValueError("fuse_kernels: no kernels given")
    flow = [(str(v), int(a), int(b)) for v, a, b in (data_flow or [])]
    core = _loom.fuse_kernels([k._core for k in kernels], [str(x) for x in (suffixes or [])], flow)
    return LoopKernel(core, kernels[0].target)


def generate_header(kernel, codegen_result=None):
    """loopy's generate_header: the declarations of the device functions a kernel's code
    defines, one per function (a kernel with global barriers is several launches), each
    the function's signature as generated, ending in ';' (CUDA C: `extern "C" __global__
    void __launch_bounds__(N) name(...);`). codegen_result: what generate_code_v2 gave, to
    declare that code's functions."""
    from .kernel import generate_code_v2
    source = (codegen_result if codegen_result is not None else generate_code_v2(kernel)).device_code()
    decls = re.findall(r'^(extern "C" __global__ void __launch_bounds__\(\d+\) \w+\([^()]*\))\s*\{', source, re.M)
    if not decls:
        raise ValueError("generate_header: no kernel function in the generated code")
    return [d + ";" for d in decls]
