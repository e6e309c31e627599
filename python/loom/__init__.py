"""Loom from Python, with loopy's names: a loopy script ports by changing the import.

    import numpy as np
    import loom as lp

    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]")
    knl = lp.split_iname(knl, "i", 128, outer_tag="g.0", inner_tag="l.0")
    (out,) = knl(a=np.arange(1000, dtype=np.float32))

Kernels are immutable: every transformation returns a new kernel. Every
transformation registered in C++ is a function here, built from the
registry's schema (loopy's argument names, keyword defaults, help text).
Errors are LoomError and its subclasses (ParseError, TransformError,
KernelError, ArgumentError, CudaError), with the command line's messages.
"""
from ._loom import ArgumentError, CudaError, JsonError, KernelError, LoomError, ParseError, TransformError
from .kernel import (AddressSpace, CudaTarget, ExecutableCTarget, GlobalArg, InterpreterTarget, LoopKernel,
                     TemporaryVariable, ValueArg, auto, generate_code, generate_code_v2, kernel_from_json, kernel_from_text, load_kernel, make_kernel,
                     random_arguments, set_options, target_info)
from .transforms import compile_variants, search_domain, transform_names, transform_schema, _install
from .task_scheduler import TuneManyResult, tune_many
from .tuning import Autotuned, Choice, TuneResult, TuningSpace, autotune, read_log, tune
from . import diagnostic, version
from .compat import (add_and_infer_dtypes, fuse_kernels, generate_header, get_one_linearized_kernel, get_one_scheduled_kernel,
                     make_copy_kernel, preprocess_kernel, set_caching_enabled)
from . import options, types
from .diagnostic import LoopyError, LoopyWarning
from .types import LoopyType, NumpyType, to_loopy_type
from .statistics import (CountGranularity, MemAccess, Op, Sync, ToCountMap, ToCountPolynomialMap, get_mem_access_map,
                         get_op_map, get_synchronization_map, stringify_stats_mapping)

__all__ = [
    "AddressSpace", "ArgumentError", "CudaError", "CudaTarget", "ExecutableCTarget", "GlobalArg", "InterpreterTarget",
    "KernelError", "LoomError", "LoopKernel", "ParseError", "TemporaryVariable", "TransformError", "ValueArg", "auto",
    "generate_code", "generate_code_v2", "JsonError", "kernel_from_json", "kernel_from_text", "random_arguments", "load_kernel", "make_kernel", "set_options", "target_info", "compile_variants", "search_domain", "transform_names", "transform_schema",
    "Autotuned", "Choice", "TuneManyResult", "TuneResult", "TuningSpace", "autotune", "read_log", "tune", "tune_many",
    "CountGranularity", "MemAccess", "Op", "Sync", "ToCountMap", "ToCountPolynomialMap", "get_mem_access_map", "get_op_map", "stringify_stats_mapping",
    "get_synchronization_map", "add_and_infer_dtypes", "get_one_linearized_kernel", "get_one_scheduled_kernel", "make_copy_kernel", "fuse_kernels", "preprocess_kernel", "set_caching_enabled",
    "diagnostic", "version",
    "generate_header", "LoopyError", "LoopyWarning", "LoopyType", "NumpyType", "to_loopy_type",
]
__all__ += _install(globals())
