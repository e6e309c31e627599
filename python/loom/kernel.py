"""Kernels: make_kernel (loopy's signature), argument declarations, targets,
code generation, and calling a kernel on NumPy arrays or CUDA tensors."""
import re

import numpy as np

from . import _loom

LOOPY_DTYPE_NAMES = {
    np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
    np.dtype(np.int8): "int8", np.dtype(np.int16): "int16", np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
    np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16", np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "bool",
}


class _Auto:
    """loopy's lp.auto: a dtype left for Loom to find (from the call, or what is assigned)."""

    def __repr__(self):
        return "lp.auto"


auto = _Auto()


def _dtype_name(dtype):
    if dtype is None or dtype is auto:
        return None
    if isinstance(dtype, str) and dtype in ("bfloat16", "float16", "float32", "float64", "bool") or (
            isinstance(dtype, str) and dtype.lstrip("u").startswith("int")):
        return dtype
    try:
        return LOOPY_DTYPE_NAMES[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise _loom.ArgumentError(f"unsupported dtype {dtype!r}") from None


def _split_top_level(text):
    """"(n, m)" or "n, (m + 1) // 2" -> the comma-separated parts outside parentheses."""
    text = text.strip()
    depth, outer = 0, text.startswith("(") and text.endswith(")")
    for i, c in enumerate(text):  # one pair of parentheses around the whole text is a tuple's
        depth += (c == "(") - (c == ")")
        if depth == 0 and i < len(text) - 1:
            outer = False
    if outer:
        text = text[1:-1]
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _shape_text(shape):
    if shape is None:
        return None
    if isinstance(shape, str):
        shape = _split_top_level(shape)
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    return ", ".join(str(s) for s in shape)


class AddressSpace:
    """loopy's address spaces, as Loom spells them."""
    PRIVATE = "private"
    LOCAL = "local"
    GLOBAL = "global"
    AUTO = "auto"


class GlobalArg:
    """An array argument: GlobalArg("a", np.float32, shape=("n", "m"), order="C")."""

    def __init__(self, name, dtype=None, shape=None, order="C", offset=None, strides=None, for_atomic=False,
                 is_input=None, is_output=None, **loopy_only):
        # (for_atomic: Loom's atomics are per instruction, {atomic}; other loopy-only options are refused)
        # is_input/is_output: loopy's, checked against what the kernel reads and writes (make_kernel)
        if loopy_only:
            raise TypeError(f"GlobalArg: unsupported arguments {sorted(loopy_only)}")
        self.name, self.dtype, self.shape, self.order = name, dtype, shape, order
        self.offset, self.strides = offset, strides
        self.is_input, self.is_output = is_input, is_output

    def declaration(self):
        dt = _dtype_name(self.dtype) or "auto"  # loopy's dtype=None: the dtype of the array a call passes
        text = f"{self.name}: {dt}[{_shape_text(self.shape) or ''}]"
        if self.order == "F":
            text += " order=F"
        if self.strides is not None:
            text += f" strides=({_shape_text(self.strides)})"
        if self.offset is not None:
            text += f" offset={self.offset}"
        return text


ArrayArg = GlobalArg


class ValueArg:
    """A scalar argument: ValueArg("n", np.int32)."""

    def __init__(self, name, dtype=None):
        self.name, self.dtype = name, dtype

    def declaration(self):
        return f"{self.name}: {_dtype_name(self.dtype) or 'int32'}"


class TemporaryVariable:
    """A temporary array: TemporaryVariable("tile", np.float32, shape=(16, 16), address_space=AddressSpace.LOCAL)."""

    def __init__(self, name, dtype=None, shape=(), address_space=None):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.address_space = address_space or AddressSpace.AUTO

    def declaration(self):
        # dtype None: inferred from what is assigned to it; address space auto: loopy's rule
        # (local where the local-parallel inames of its writers index it, else private)
        shape = _shape_text(self.shape)
        return f"{self.name}: {_dtype_name(self.dtype) or 'auto'}" + (f"[{shape}]" if shape else "") + \
            f" {self.address_space}"


def target_info(arch=None):
    """The target model Loom generates code for (limits and features) as a dict:
    the GPU's when arch is None (the generic sm_90a model without a GPU), or an
    architecture's ("sm_80", "sm_86", "sm_90a", ...)."""
    return _loom.target_info(arch or "")


class CudaTarget:
    """Generate CUDA C, compile it with NVRTC and launch it on the GPU."""
    name = "cuda"


class ExecutableCTarget:
    """Run on the CPU (LLVM JIT), with the GPU's semantics."""
    name = "cpu"


class InterpreterTarget:
    """Loom's reference interpreter: slow and exact."""
    name = "interpreter"


def _lines(x):
    if isinstance(x, str):
        return [x]
    return list(x)


def _each_name(declarations):
    """loopy's GlobalArg("a,b", ...): one declaration per comma-separated name."""
    import copy
    for d in declarations:
        names = [x.strip() for x in d.name.split(",")] if isinstance(d, (GlobalArg, ValueArg, TemporaryVariable)) else None
        if not names or len(names) == 1:
            yield d
            continue
        for nm in names:
            c = copy.copy(d)
            c.name = nm
            yield c


def make_kernel(domains, instructions, kernel_data=("...",), name="loopy_kernel", assumptions=None, target=None,
                lang_version=None, seq_dependencies=False, do_not_specialize=(), index_dtype=None, **kwargs):
    """loopy's make_kernel: isl domains, instructions (text or a list of lines),
    argument declarations (GlobalArg, ValueArg, TemporaryVariable, "..." to infer
    the rest, or Loom's own "a: float32[n]" strings)."""
    if kwargs:
        raise TypeError(f"make_kernel: unsupported arguments {sorted(kwargs)}")
    args, temps, shape_from_accesses = [], [], {}
    for d in _each_name(_lines(kernel_data)):
        if isinstance(d, TemporaryVariable):
            temps.append(d.declaration())
        elif isinstance(d, GlobalArg) and d.shape is auto:  # loopy's shape=lp.auto: inferred, as `...` infers
            shape_from_accesses[d.name] = d.dtype
            if "..." not in args:
                args.append("...")
        elif isinstance(d, (GlobalArg, ValueArg)):
            args.append(d.declaration())
        elif isinstance(d, str):
            args.append(d)
        elif d is Ellipsis:  # loopy's [..., GlobalArg(...)]: infer the ones not declared
            args.append("...")
        else:
            raise TypeError(f"make_kernel: unsupported argument declaration {d!r}")
    text = [f"kernel {name}", "domains:"] + ["  " + d.replace("\n", " ") for d in _lines(domains)]
    if args:
        text += ["arguments:"] + ["  " + a for a in args]
    if temps:
        text += ["temporaries:"] + ["  " + t for t in temps]
    text += ["instructions:"]
    sections = [(2, "<domains>"), (len(text), "<instructions>")]  # (first line - 1, name) of the user's text
    for insn in _lines(instructions):
        text += ["  " + line for line in insn.strip("\n").split("\n") if line.strip()]
    try:
        core = _loom.parse_kernel("\n".join(text) + "\n", "<make_kernel>")
    except _loom.ParseError as e:
        raise _loom.ParseError(_user_position(str(e), sections)) from None
    knl = LoopKernel(core, _target_name(target), do_not_specialize)
    from . import transforms
    if assumptions:
        knl = transforms.apply("assume", knl, [assumptions], {})
    if index_dtype is not None:  # loopy's index_dtype=np.int64: 64-bit inames, parameters and index arithmetic
        knl = transforms.apply("set_index_dtype", knl, [_dtype_name(index_dtype)], {})
    given = {n: dt for n, dt in shape_from_accesses.items() if _dtype_name(dt)}
    if given:
        knl = transforms.apply("add_dtypes", knl, [], {n: _dtype_name(dt) for n, dt in given.items()})
    _check_input_output(knl, [d for d in _each_name(_lines(kernel_data)) if isinstance(d, GlobalArg)])
    return knl


def _check_input_output(knl, declared):
    """loopy's is_input/is_output on GlobalArg, against Loom's calling convention: a call returns
    every array the kernel writes (is_output), and allocates a written array the caller does not
    pass (so is_input=False needs the kernel to write it; what it reads of it before writing is
    undefined, as in loopy). A declaration Loom's call cannot honour is refused here."""
    declared = [d for d in declared if getattr(d, "is_input", None) is not None or getattr(d, "is_output", None) is not None]
    if not declared:
        return
    written = set(knl._core.written_arrays())
    for d in declared:
        is_input, is_output = getattr(d, "is_input", None), getattr(d, "is_output", None)
        if is_output is True and d.name not in written:
            raise _loom.ArgumentError(f"kernel '{knl.name}': argument '{d.name}' is declared is_output=True, but the "
                                      "kernel never writes it (a call returns the arrays the kernel writes)")
        if is_output is False and d.name in written:
            raise _loom.ArgumentError(f"kernel '{knl.name}': argument '{d.name}' is declared is_output=False, but the "
                                      "kernel writes it, and a call returns every array the kernel writes; "
                                      "write to a temporary instead")
        if is_input is False and d.name not in written:
            raise _loom.ArgumentError(f"kernel '{knl.name}': argument '{d.name}' is declared is_input=False, but the "
                                      "kernel never writes it: nothing would give its values")


_INT32_MAX = 2**31 - 1


def _element_count(shape):
    if shape is None:
        return 0
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _user_position(message, sections):
    """'<make_kernel>:7:18: ...' as a position in the user's domains or instructions
    ('<instructions>:1:16: ...'; the generated text indents each line by two)."""
    m = re.match(r"<make_kernel>:(\d+):(\d+): ", message)
    if not m:
        return message
    line, col = int(m.group(1)), int(m.group(2))
    for start, name in reversed(sections):
        if line > start:
            return f"{name}:{line - start}:{max(col - 2, 1)}: " + message[m.end():]
    return message


def _target_name(target):
    if target is None:
        return None
    if isinstance(target, str):
        return target
    return target.name


def _dtype_of(value):
    """The dtype name of a NumPy array, a PyTorch tensor or a CuPy array; None for scalars."""
    dt = getattr(value, "dtype", None)
    if dt is None:
        return None
    name = getattr(dt, "name", None)
    if isinstance(name, str):
        return name
    return str(dt).replace("torch.", "")


def _from_dlpack(value):
    """An array of another framework (JAX, TensorFlow, ...) that speaks DLPack, as
    a NumPy array (host memory) or a PyTorch tensor / CuPy array (GPU memory),
    without a copy; NumPy, PyTorch and CuPy arrays themselves pass as they are."""
    if (not hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__")
            or hasattr(value, "__cuda_array_interface__") or hasattr(value, "data_ptr")):
        return value
    device_type = value.__dlpack_device__()[0] if hasattr(value, "__dlpack_device__") else 1
    if device_type == 1:  # kDLCPU
        return np.from_dlpack(value)
    try:
        import torch
        return torch.from_dlpack(value)
    except ImportError:
        try:
            import cupy
            return cupy.from_dlpack(value)
        except ImportError:
            raise _loom.ArgumentError("an array in GPU memory given through DLPack needs PyTorch or CuPy to be "
                                      "installed (Loom launches on their arrays)") from None


class LoopKernel:
    """An immutable kernel. Transformations return new kernels; calling it runs it.

    Calls specialize, as Python JIT systems do: arrays whose dtype the kernel
    leaves open take the dtypes they are called with, and integer parameters
    given by array shapes that are multiples of 16 are assumed so (no tail
    guards); one compiled variant per combination, cached. Parameters named in
    do_not_specialize keep their general code."""

    DIVISIBILITY = 16

    def __init__(self, core, target=None, do_not_specialize=(), _variant=False):
        self._core = core
        self.target = target
        self.do_not_specialize = tuple(do_not_specialize)
        self._compiled = {}
        self._dispatch = None  # the per-call path for PyTorch CUDA tensors (C++), made on the first such call
        self._is_variant = _variant
        self._variants = {}
        self._open = None
        self._watch = ()
        self._by_signature = {}
        # the transformation steps that made this kernel: (script line, core) after each,
        # from _origin, for compiled(...).asm["transforms"]
        self._origin = core
        self._history = ()

    def _derived(self, core, step, _variant=False):
        """A kernel made from this one by a step (its history extended)."""
        k = LoopKernel(core, self.target, self.do_not_specialize if not _variant else (), _variant=_variant)
        k._origin = self._origin
        k._history = self._history + ((step, core),)
        if self.silenced_warnings:
            k.silenced_warnings = self.silenced_warnings
        return k

    def __eq__(self, other):
        """Kernels are values: equal when their content is (two scripts that make the same kernel)."""
        return isinstance(other, LoopKernel) and self.target == other.target and \
            self.do_not_specialize == other.do_not_specialize and self._core.structurally_equal(other._core)

    def __hash__(self):
        return hash((self._core.structural_hash(), self.target, self.do_not_specialize))

    def __getitem__(self, name):
        """loopy's translation units give their kernels by name (t_unit["loopy_kernel"]); a Loom kernel is its own."""
        if name != self.name:
            raise KeyError(f"no kernel '{name}' (this is '{self.name}')")
        return self

    @property
    def structural_hash(self):
        """The kernel's 64-bit content hash (FNV-1a of its canonical text): the same in every run and on every machine."""
        return self._core.structural_hash()

    @property
    def name(self):
        return self._core.name

    @property
    def all_inames(self):
        return self._core.inames()

    def iname_tag(self, iname):
        return self._core.iname_tag(iname)

    @property
    def temporary_variables(self):
        return self._core.temporary_names()

    def copy(self, target=None, do_not_specialize=None, silenced_warnings=None):
        k = LoopKernel(self._core, _target_name(target) or self.target,
                       self.do_not_specialize if do_not_specialize is None else do_not_specialize)
        # loopy's kernel attribute: ids (fnmatch patterns) of the warnings diagnostic.warn_with_kernel leaves out
        k.silenced_warnings = self.silenced_warnings if silenced_warnings is None else tuple(silenced_warnings)
        return k

    # -- loopy's kernel attributes and translation-unit interface (a Loom kernel is its own translation unit)

    silenced_warnings = ()

    @property
    def default_entrypoint(self):
        """loopy's TranslationUnit.default_entrypoint: the kernel itself."""
        return self

    @property
    def entrypoints(self):
        return frozenset([self.name])

    @property
    def callables_table(self):
        """loopy's TranslationUnit.callables_table: the kernels by name (this one; Loom's
        kernels call no other kernels), for the functions that take it."""
        import types
        return types.MappingProxyType({self.name: self})

    def with_kernel(self, kernel):
        """loopy's TranslationUnit.with_kernel: the translation unit with `kernel` in place
        of the kernel of its name (a Loom kernel holds one kernel: `kernel` itself)."""
        if not isinstance(kernel, LoopKernel):
            raise TypeError(f"with_kernel: expected a kernel, got {type(kernel).__name__}")
        if kernel.name != self.name:
            raise _loom.ArgumentError(f"with_kernel: a Loom kernel is a translation unit of one kernel ('{self.name}'); "
                                      f"kernel '{kernel.name}' cannot be added to it")
        if kernel.target == self.target or self.target is None:
            return kernel
        out = kernel.copy(target=self.target)
        if hasattr(kernel, "linearization"):
            out.linearization = kernel.linearization
        return out

    _STRINGIFY_PARTS = ("name", "arguments", "domains", "tags", "variables", "rules", "instructions", "Dependencies",
                        "linearization")

    def stringify(self, what=None, with_dependencies=False, use_separators=True, show_labels=True):
        """loopy's LoopKernel.stringify: the kernel's parts, each under a label between separator
        lines. `what` picks parts: a set of names, a comma-separated string of them, or a string of
        their first letters (name, arguments, domains, tags, variables, rules, instructions,
        Dependencies, linearization); by default all but Dependencies, which with_dependencies adds
        (one line "instruction : the instructions it depends on" per instruction that declares
        dependencies). Arguments, temporaries and instructions are written in Loom's kernel
        language; linearization is there after get_one_linearized_kernel."""
        import json
        parts = set(self._STRINGIFY_PARTS)
        if what is None:
            what = set(parts) - (set() if with_dependencies else {"Dependencies"})
        elif isinstance(what, str):
            if "," in what:
                what = {w.strip() for w in what.split(",")}
            else:
                first = {p[0]: p for p in parts}
                unknown = [c for c in what if c not in first]
                if unknown:
                    raise _loom.LoomError(f"invalid 'what' passed: {', '.join(unknown)}")
                what = {first[c] for c in what}
        else:
            what = set(what)
        if not what <= parts:
            raise _loom.LoomError(f"invalid 'what' passed: {', '.join(sorted(what - parts))}")
        text = {}  # Loom's sections: "arguments" -> its lines
        section = None
        for line in str(self._core).splitlines():
            if line and not line.startswith(" ") and line.endswith(":"):
                section = text.setdefault(line[:-1], [])
            elif line.strip() and section is not None:
                section.append(line.strip())
        doc = json.loads(self.to_json())["kernel"]
        sep = ["-" * 75] if use_separators else []
        lines = []

        def part(name, label, body, always=True):
            if name in what and (always or body):
                lines.extend(sep)
                if show_labels and label:
                    lines.append(label)
                lines.extend(body)

        if "name" in what:
            lines.extend(sep)
            lines.append("KERNEL: " + self.name)
        part("arguments", "ARGUMENTS:", text.get("arguments", []))
        part("domains", "DOMAINS:", text.get("domains", []))
        tags = doc.get("iname_tags", {})
        part("tags", "INAME TAGS:", [f"{n}: {tags.get(n, 'None')}" for n in sorted(self.all_inames, key=_natural_key)])
        part("variables", "TEMPORARIES:", text.get("temporaries", []), always=False)
        part("rules", "SUBSTITUTION RULES:", [f"{r['name']}({', '.join(r.get('params', []))}) := {r['body']}"
                                              for r in sorted(doc.get("substitutions", []), key=lambda r: _natural_key(r["name"]))],
             always=False)
        part("instructions", "INSTRUCTIONS:", text.get("instructions", []))
        part("Dependencies", "DEPENDENCIES: (use loopy.show_dependency_graph to visualize)",
             [f"{i['id']} : {','.join(i['depends_on'])}" for i in doc["instructions"] if i.get("depends_on")], always=False)
        part("linearization", "LINEARIZATION:", list(getattr(self, "linearization", None) or []), always=False)
        lines.extend(sep)
        return "\n".join(lines)

    def get_grid_size_upper_bounds(self, callables_table=None, ignore_auto=False, return_dict=False):
        """loopy's get_grid_size_upper_bounds: (global sizes, local sizes), one entry per hardware axis
        (axes 0, 1, 2 as far as the kernel uses them; an axis below a used one that is not used
        is 1): the number of blocks along each g.N axis as a function of the parameters (a count
        with eval_with_dict, as Loom's statistics give them) and the threads along each l.N axis
        (an int: Loom's block sizes are compile-time constants). These are the sizes Loom's code
        generation launches with, asked of it on a kernel with this one's domains and each axis'
        inames alone. ignore_auto leaves out inames tagged l.auto; otherwise an l.auto iname takes
        the axis code generation gives it. return_dict: ({axis: size}, {axis: size}) instead."""
        import json
        from .statistics import get_mem_access_map
        doc = json.loads(self.to_json())["kernel"]
        used = {h for insn in doc["instructions"] for h in insn.get("within_inames", [])}
        tags = {h: t for h, t in doc.get("iname_tags", {}).items() if h in used}
        if any(t == "l.auto" for t in tags.values()):
            if ignore_auto:
                tags = {h: t for h, t in tags.items() if t != "l.auto"}
            else:  # the axes code generation chose (the preprocessed kernel's tags)
                resolved, section = {}, False
                for line in self.compiled(target="interpreter").asm["preprocessed"].splitlines():
                    if line and not line.startswith(" "):
                        section = line == "tags:"
                    elif section and ":" in line:
                        name, tag = (x.strip() for x in line.split(":", 1))
                        resolved[name] = tag
                tags = {h: resolved.get(h, t) for h, t in tags.items()}
        axes = {}
        for h, t in tags.items():
            m = re.fullmatch(r"([gl])\.(\d)", t)
            if m:
                axes.setdefault((m.group(1), int(m.group(2))), []).append(h)
        global_sizes, local_sizes = {}, {}
        for (kind, axis), inames in sorted(axes.items()):
            probe = self._grid_probe(doc, inames, f"{kind}.{axis}")
            if kind == "g":
                counts = get_mem_access_map(probe, count_granularity="workitem", count_redundant_work=True)
                global_sizes[axis] = sum(counts.filter_by(variable=[_PROBE]).values(), 0)
            else:
                src = _loom.cuda_source(probe._core)
                local_sizes[axis] = int(re.search(r"__launch_bounds__\((\d+)\)", src).group(1))
        if return_dict:
            return global_sizes, local_sizes

        def as_tuple(sizes):
            return tuple(sizes.get(a, 1) for a in range(max(sizes) + 1)) if sizes else ()
        return as_tuple(global_sizes), as_tuple(local_sizes)

    def _grid_probe(self, doc, inames, tag):
        """A kernel with this one's domains, parameters and assumptions whose only hardware axis is
        `tag`, carried by `inames` (each used by an instruction): one load outside every loop,
        which Loom's statistics count once per thread of the whole launch (count_redundant_work)."""
        import json
        taken = set(self.all_inames) | {a["name"] for a in doc["arguments"]} | {t["name"] for t in doc.get("temporaries", [])}

        def name(base):  # a name the kernel does not use
            n, i = base, 0
            while n in taken:
                i += 1
                n = f"{base}_{i}"
            taken.add(n)
            return n
        value = name(_PROBE + "_value")
        marks = {h: name(f"{_PROBE}_{h}") for h in inames}
        kernel = {
            "name": doc["name"], "domains": doc["domains"],
            "arguments": [a for a in doc["arguments"] if a.get("kind") == "value"] +
                         [{"name": _PROBE, "kind": "array", "dtype": "float32", "shape": ["1"]}],
            "temporaries": [{"name": m, "dtype": "int32", "shape": [], "address_space": "private"} for m in marks.values()] +
                           [{"name": value, "dtype": "float32", "shape": [], "address_space": "private"}],
            "instructions": [{"id": f"{m}_insn", "assignee": m, "expression": "0", "within_inames": [h]}
                             for h, m in marks.items()] +
                            [{"id": f"{value}_insn", "assignee": value, "expression": f"{_PROBE}[0]", "within_inames": []}],
            "iname_tags": {h: tag for h in inames},
            "options": {"index_dtype": doc.get("options", {}).get("index_dtype", "int32")},
        }
        if doc.get("assumptions"):
            kernel["assumptions"] = doc["assumptions"]
        return LoopKernel(_loom.kernel_from_json(json.dumps({"format": "loom-kernel", "version": 1, "kernel": kernel}),
                                                 "<grid sizes>"))

    def _variant_for(self, kwargs):
        """The specialized kernel for these arguments (self when nothing specializes),
        memoized by the dtypes and shapes of the arrays that decide it."""
        if self._open is None:
            self._open = ([(n, self._core.argument_dtype(n)) for n in self._core.open_dtype_arrays()],
                          [(p, places) for p, places in self._core.shape_parameters().items()
                           if p not in self.do_not_specialize and p not in self._core.do_not_specialize()])
            watch = {n for n, _ in self._open[0]} | {a for _, places in self._open[1] for a, _ in places}
            self._watch = tuple(sorted(watch))
            self._by_signature = {}
        if not self._watch:
            return self
        try:
            sig = tuple((v.dtype, v.shape) if v is not None else None for v in map(kwargs.get, self._watch))
        except AttributeError:  # scalars or objects without dtype/shape: decide the slow way
            return self._variant_slow(kwargs)
        v = self._by_signature.get(sig)
        if v is None:
            if len(self._by_signature) > 4096:
                self._by_signature.clear()
            v = self._by_signature[sig] = self._variant_slow(kwargs)
        return v

    def _variant_slow(self, kwargs):
        open_arrays, shape_params = self._open
        dtypes = []
        for name, current in open_arrays:
            v = kwargs.get(name)
            dt = _dtype_of(v) if v is not None else None
            if dt is not None and dt != current:
                dtypes.append((name, dt))
        divisible = []
        for p, places in shape_params:
            for a, ax in places:
                shape = getattr(kwargs.get(a), "shape", None)
                if shape is not None and len(shape) > ax:
                    if shape[ax] > 0 and shape[ax] % self.DIVISIBILITY == 0:
                        divisible.append(p)
                    break
        # arrays of more than 2^31 - 1 elements need 64-bit index arithmetic (known
        # from the shapes, before compiling; other sizes near 2^31 are caught by
        # the launch's check on the generated code: _run_widening)
        wide = self._core.index_dtype() == "int32" and any(
            _element_count(getattr(kwargs.get(a), "shape", None)) > _INT32_MAX for a in self._watch)
        if not dtypes and not divisible and not wide:
            return self
        key = (tuple(dtypes), tuple(divisible), wide)
        v = self._variants.get(key)
        if v is None:
            v = self
            if wide:
                v = v._derived(_loom.apply_transform(v._core, "set_index_dtype", ["int64"], {}), "set_index_dtype int64", True)
            if dtypes:
                spec = ", ".join(f"{n}={d}" for n, d in dtypes)
                v = v._derived(_loom.apply_transform(v._core, "add_dtypes", [], {"dtypes": spec}), f"add_dtypes {spec}", True)
            if divisible:
                undivided = v if v is not self else self._derived(self._core, "(no divisibility)", True)
                cond = " and ".join(f"{p} mod {self.DIVISIBILITY} = 0" for p in divisible)
                v = v._derived(_loom.apply_transform(v._core, "assume", [cond], {}), f"assume {cond}", True)
                v._unaligned_fallback = undivided
            self._variants[key] = v
        return v

    def compiled(self, target=None, **kwargs):
        """The compiled variant a call with these arguments would run, with its
        stages as Triton's compiled.asm: compiled(a=x).asm["cuda"], ["ptx"],
        ["cubin"], ["llvm"] (cpu), ["kernel"], ["json"], ["preprocessed"], ["schedule"], and
        ["transforms"]: the kernel as made and after each transformation step."""
        knl = self._variant_for(kwargs) if kwargs and not self._is_variant else self
        target = _target_name(target) or knl._default_target()
        return CompiledKernel(knl, knl._compiled_for(target))

    def to_json(self):
        """The kernel as a loom-kernel JSON document (lossless: kernel_from_json
        gives a kernel that generates identical code)."""
        return _loom.kernel_to_json(self._core)

    def __str__(self):
        return str(self._core)

    __repr__ = __str__

    def _compiled_for(self, target):
        c = self._compiled.get(target)
        if c is None:
            c = self._compiled[target] = _loom.compile(self._core, target)
        return c

    def _default_target(self):
        if self.target:
            return self.target
        return "cuda" if _loom.gpu_available() else ("cpu" if _loom.has_cpu_target() else "interpreter")

    def _call_general(self, *queue, target=None, **kwargs):
        """Runs the kernel (LoopKernel.__call__ is the C++ fast path for PyTorch
        CUDA tensors of a signature seen before; every other call comes here)."""
        kwargs = {n: _from_dlpack(v) for n, v in kwargs.items()}
        knl = self
        if not self._is_variant:
            # the variant for these dtypes and shapes, memoized
            watch = self._watch
            if watch:
                try:
                    knl = self._by_signature.get(tuple((v.dtype, v.shape) if v is not None else None
                                                       for v in map(kwargs.get, watch)))
                except AttributeError:
                    knl = None
                if knl is None:
                    knl = self._variant_for(kwargs)
            elif self._open is None:
                knl = self._variant_for(kwargs)
            if knl is not self:
                try:
                    knl, outputs = knl._run_widening(queue, target, kwargs)
                except _loom.ArgumentError as e:
                    # the divisible variant moves arrays as vectors; an array view that
                    # is not 16-byte aligned runs the variant without that assumption
                    fallback = getattr(knl, "_unaligned_fallback", None)
                    if fallback is None or "must start at a multiple of" not in str(e):
                        raise
                    return fallback._run_widening(queue, target, kwargs)[1]
                self._remember(knl, queue, target, kwargs)
                return outputs
        knl, outputs = self._run_widening(queue, target, kwargs)
        self._remember(knl, queue, target, kwargs)
        return outputs

    def _run_widening(self, queue, target, kwargs):
        """(kernel that ran, outputs): this kernel, or its 64-bit-index variant when
        the launch proves that 32-bit index arithmetic could wrap around for
        these sizes (the check runs before anything is launched)."""
        try:
            return self, self._run(queue, target, kwargs)
        except _loom.ArgumentError as e:
            if "index arithmetic is 32-bit" not in str(e) or self._core.index_dtype() != "int32":
                raise
        wide = getattr(self, "_wide_variant", None)
        if wide is None:
            wide = self._wide_variant = self._derived(
                _loom.apply_transform(self._core, "set_index_dtype", ["int64"], {}), "set_index_dtype int64", True)
        return wide, wide._run(queue, target, kwargs)

    def _remember(self, knl, queue, target, kwargs):
        """After a call on PyTorch CUDA tensors: the next call with the same
        dtypes, shapes and scalars takes the C++ path straight to the launch."""
        if queue or target is not None:
            return
        if not any(getattr(v, "is_cuda", False) is True and hasattr(v, "data_ptr") for v in kwargs.values()):
            return
        if self._dispatch is None:
            self._dispatch = _loom.DeviceDispatcher(self._core)
        self._dispatch.bind(knl._compiled_for("cuda"), knl._core, kwargs)

    def _run(self, queue, target, kwargs):
        target = _target_name(target) or self._default_target()
        device = {k: v for k, v in kwargs.items() if hasattr(v, "__cuda_array_interface__")}
        if device:
            outputs = self._run_device(device, kwargs)
        else:
            outputs = _as_input_class(_loom.run_host(self._compiled_for(target), self._core, kwargs), kwargs)
        return (None, outputs) if queue else outputs

    def _run_device(self, device, kwargs):
        arrays, scalars = {}, {}
        for name, v in kwargs.items():
            if name in device:
                cai = v.__cuda_array_interface__
                shape = tuple(cai["shape"])
                strides = cai.get("strides")
                if strides is not None:
                    item = np.dtype(cai["typestr"]).itemsize
                    expected, step = [], item
                    for s in reversed(shape):
                        expected.insert(0, step)
                        step *= s
                    if tuple(strides) != tuple(expected):
                        raise ArgumentError(f"array '{name}' must be C-contiguous")
                # a bfloat16 tensor shows as 2 raw bytes ("<V2"): NumPy has no bfloat16
                bf16 = str(getattr(v, "dtype", "")) in ("torch.bfloat16", "bfloat16") and np.dtype(cai["typestr"]).kind == "V"
                arrays[name] = (cai["data"][0], "bfloat16" if bf16 else np.dtype(cai["typestr"]).str, list(shape))
            elif isinstance(v, np.ndarray):
                raise _loom.ArgumentError(f"array '{name}' is a NumPy array while others are CUDA tensors; "
                                          "pass all arrays on one device")
            else:
                scalars[name] = v
        missing = [a for a in self._core.written_arrays() if a not in arrays]
        if missing:
            raise _loom.ArgumentError(f"with CUDA tensors, pass every output too: missing {', '.join(missing)}")
        _loom.run_device(self._compiled_for("cuda"), self._core, arrays, scalars, _current_stream(device))
        return tuple(kwargs[a] for a in self._core.written_arrays())


def _as_input_class(outputs, kwargs):
    """Outputs of the class the input arrays have, as in loopy, where arrays of one
    kind in give that kind out: an ndarray subclass passed in (a device-array
    stand-in with .get(), a memmap's parent class excepted) makes every NumPy
    output that class, viewed without a copy."""
    cls = next((type(v) for v in kwargs.values()
                if isinstance(v, np.ndarray) and type(v) is not np.ndarray and not isinstance(v, np.memmap)), None)
    if cls is None:
        return outputs
    return tuple(o.view(cls) if type(o) is np.ndarray else o for o in outputs)


_PROBE = "loom_grid_probe"  # (get_grid_size_upper_bounds' probe array)


def _natural_key(name):
    """"i2" before "i10" (loopy lists inames in natural order)."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


# knl(...): PyTorch CUDA tensors of a signature seen before go from C straight
# to the launch (no Python frame); everything else runs _call_general.
_loom.install_fast_call(LoopKernel)

ArgumentError = _loom.ArgumentError


def _current_stream(device_arrays):
    """The caller's current stream for these arrays: PyTorch's or CuPy's (0: the default stream)."""
    for v in device_arrays.values():
        if hasattr(v, "data_ptr") and hasattr(v, "get_device"):
            import torch
            return torch.cuda.current_stream(v.get_device()).cuda_stream
        stream = v.__cuda_array_interface__.get("stream")
        if isinstance(stream, int) and stream > 2:  # 1 and 2 are the legacy and per-thread default streams
            return stream
        try:
            import cupy
            if isinstance(v, cupy.ndarray):
                return cupy.cuda.get_current_stream().ptr
        except ImportError:
            pass
    return 0


class CompiledKernel:
    """A compiled variant: its stages in .asm (a dict, computed once)."""

    def __init__(self, knl, compiled):
        self.kernel = knl
        self._compiled = compiled
        self._asm = None

    @property
    def asm(self):
        if self._asm is None:
            self._asm = _loom.stages(self._compiled, self.kernel._core)
            # the kernel as made (make_kernel or a file) and after each transformation step
            k = self.kernel
            self._asm["transforms"] = [("input", str(k._origin))] + [(step, str(core)) for step, core in k._history]
        return self._asm


class GeneratedCode:
    def __init__(self, source):
        self._source = source

    def device_code(self):
        return self._source

    def all_code(self):
        return self._source


def load_kernel(path, target=None):
    """A kernel from a file in Loom's kernel language or a loom-kernel JSON
    document (docs/json-schema.md), its transformations applied."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if str(path).endswith(".json") or text.lstrip().startswith("{"):
        return LoopKernel(_loom.kernel_from_json(text, str(path)), _target_name(target))
    return LoopKernel(_loom.parse_kernel(text, str(path)), _target_name(target))


def kernel_from_text(text, target=None, filename="<text>"):
    """A kernel from text in Loom's kernel language (what a .loom file holds),
    its transformations applied; errors are ParseError naming line and column."""
    return LoopKernel(_loom.parse_kernel(text, filename), _target_name(target))


def random_arguments(knl, seed=0, **params):
    """The arrays `loom run` makes for a call at these sizes, by name: inputs
    random and seeded (floats in [-1, 1), integers in [-50, 50), index arrays
    inside the arrays they index, CSR offsets sorted), arrays the kernel only
    writes poisoned (NaN, or a sentinel integer); Fortran-order arguments in
    Fortran order. The same seed gives the same arrays, so two
    implementations of one kernel can be run on them and compared."""
    return dict(_loom.random_arrays(knl._core, {k: int(v) for k, v in params.items()}, int(seed)))


def kernel_from_json(text, target=None, filename="<json>"):
    """A kernel from a loom-kernel JSON document (its transforms applied);
    errors are JsonError/ParseError naming the JSON path."""
    return LoopKernel(_loom.kernel_from_json(text, filename), _target_name(target))


def generate_code_v2(knl):
    """The CUDA C of a kernel: generate_code_v2(knl).device_code()."""
    return GeneratedCode(_loom.cuda_source(knl._core))


def generate_code(knl):
    """loopy's older form: (device code, None)."""
    return generate_code_v2(knl).device_code(), None


def set_options(knl, *args, **kwargs):
    """loopy's options (write_code, ...) have no effect in Loom; accepted so scripts run."""
    return knl
