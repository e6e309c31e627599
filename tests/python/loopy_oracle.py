"""loopy itself as the oracle of what a kernel *as written* means.

Loom's interpreter and targets share Loom's front end, so a misreading of the
kernel text (which loops an instruction runs in, which dependences order it)
is made the same way by the kernel and by Loom's own check, and no
comparison between them can see it. This module hands the same text to
loopy (inducer/loopy): its `ExecutableCTarget` generates C from the kernel,
compiles it with the system compiler and runs it on NumPy arrays. Loom's
parser is not used on loopy's side: the sections of the text are split here
and passed to `lp.make_kernel` as loopy's own domain strings, instruction
text and argument declarations. Both run on the same random arrays (Loom's
`random_arguments`: index arrays inside what they index, CSR offsets sorted,
pure outputs poisoned), and every array either writes is compared.

`compare_text(text)` returns a `Verdict`: "same", "differ" (with the arrays
and elements), or "untranslatable" (what loopy cannot be given, with the
reason: bfloat16 has no NumPy dtype, a layout loopy spells otherwise, ...).
A kernel that loopy refuses but Loom runs is "loopy-refuses" with loopy's
message; one Loom refuses and loopy runs is "loom-refuses". Each outcome
other than "same" is either a defect or a difference listed with its reason
in docs/loopy-differences.md.
"""
import contextlib
import io
import re
import textwrap
import warnings
from dataclasses import dataclass, field

import os

import numpy as np

# loopy's disk cache keeps pickled kernels (with this module's functions by
# name) across runs: a renamed function would then break every later run, and
# a comparison should not depend on what an earlier one left there
os.environ.setdefault("LOOPY_NO_CACHE", "1")

SECTIONS = ("domains", "arguments", "temporaries", "assumptions", "instructions", "transforms", "defaults")
DTYPES = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
          "float32": np.float32, "float64": np.float64}
# Loom's flags loopy has no counterpart for, none of which changes what is computed
# (`async`: a copy that need not finish before the next instruction, waited for at a barrier)
PERFORMANCE_FLAGS = ("async",)


class Untranslatable(Exception):
    """The text uses something loopy cannot be given (the reason says what)."""


@dataclass
class Verdict:
    outcome: str  # same | differ | untranslatable | loopy-refuses | loom-refuses | both-refuse
    detail: str = ""
    params: dict = field(default_factory=dict)

    def __str__(self):
        return f"{self.outcome} {self.params}: {self.detail}"


@contextlib.contextmanager
def _quiet():
    """loopy's warnings and the kernels it prints to stdout when it refuses one, kept out of the report."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def _strip_comment(line):
    return line.split("#", 1)[0]


def split_sections(text):
    """(kernel name, {section: [lines]}) of a kernel in Loom's language."""
    name, current = "loom_kernel", None
    out = {s: [] for s in SECTIONS}
    for raw in text.splitlines():
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        if not raw[:1].isspace():  # a header starts at column 1
            head = line.strip()
            if head.startswith("kernel "):
                name, current = head.split()[1], None
                continue
            m = re.match(r"(\w+):\s*(.*)$", head)
            if m and m.group(1) in SECTIONS:
                current = m.group(1)
                if m.group(2):
                    out[current].append(m.group(2))
                continue
        if current is None:
            raise Untranslatable(f"a line outside every section: {raw!r}")
        out[current].append(line)
    return name, out


def without_transforms(text):
    """The kernel as written: the text less its `transforms:` section."""
    kept, skipping = [], False
    for raw in text.splitlines():
        if raw[:1] and not raw[:1].isspace() and not raw.startswith("#"):
            skipping = re.match(r"transforms:", raw) is not None
        if not skipping:
            kept.append(raw)
    return "\n".join(kept) + "\n"


def _split_top_level(text, seps=",\n"):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch in seps and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p]


def _declaration(item):
    m = re.match(r"^(\w+)\s*:\s*(\w+)\s*(?:\[(.*)\])?\s*(.*)$", item)
    if not m:
        raise Untranslatable(f"a declaration not read here: {item!r}")
    name, dtype, shape, rest = m.groups()
    if dtype == "auto":
        np_dtype = None
    elif dtype in DTYPES:
        np_dtype = DTYPES[dtype]
    else:
        raise Untranslatable(f"{dtype} has no NumPy dtype (array '{name}')")
    return name, np_dtype, shape, rest.split()


def loopy_arguments(lp, lines, atomic=()):
    """loopy's kernel_data for the `arguments:` section (arrays named in
    `atomic` updated atomically: loopy's for_atomic)."""
    data = []
    for item in _split_top_level("\n".join(lines)):
        if item == "...":
            data.append("...")
            continue
        name, dtype, shape, options = _declaration(item)
        if shape is None:
            data.append(lp.ValueArg(name, dtype))
            continue
        shape = shape if shape.strip() else ()  # (`out: int64[]`, a 0-d array)
        order = "C"
        for opt in options:
            if opt == "order=F":
                order = "F"
            elif opt != "order=C":
                raise Untranslatable(f"the layout option {opt} of '{name}' is not translated to loopy's dim_tags")
        data.append(lp.GlobalArg(name, dtype, shape=shape, order=order, for_atomic=name in atomic))
    return data


def loopy_temporaries(lp, lines):
    spaces = {"local": lp.AddressSpace.LOCAL, "private": lp.AddressSpace.PRIVATE,
              "global": lp.AddressSpace.GLOBAL, "auto": lp.auto}
    out = []
    for item in _split_top_level("\n".join(lines)):
        name, dtype, shape, options = _declaration(item)
        space, opt = lp.auto, None
        for opt in options:
            if opt not in spaces:
                raise Untranslatable(f"the temporary option {opt} of '{name}'")
            space = spaces[opt]
        if opt == "global":  # (its C code then writes through a null pointer: a segmentation fault)
            raise Untranslatable(f"the global temporary '{name}': loopy's C target does not allocate global temporaries")
        out.append(lp.TemporaryVariable(name, dtype, shape=shape if shape and shape.strip() else (), address_space=space))
    return out


def _options(line):
    """(instruction, [options]) of a line whose options stand in braces at its end."""
    m = re.match(r"^(.*?)\{([^{}]*)\}\s*$", line)
    if not m or "=" not in m.group(1) and not m.group(1).strip().startswith("..."):
        return line, None
    return m.group(1).rstrip(), _split_top_level(m.group(2), ",")


def loopy_instructions(lines):
    """The instruction text for loopy: Loom's performance-only flags dropped;
    `if=` conditions (whose expressions may hold commas, which loopy's option
    reader splits at) written as loopy's `if` blocks around the instruction,
    which mean the same (the condition as a predicate of what is inside)."""
    out = []
    for line in textwrap.dedent("\n".join(lines)).splitlines():
        insn, opts = _options(line)
        if opts is None:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        conds = [o.split("=", 1)[1] for o in opts if o.startswith("if=")]
        kept = [o for o in opts if o not in PERFORMANCE_FLAGS and not o.startswith("if=")]
        body = insn.strip() + (" {" + ", ".join(kept) + "}" if kept else "")
        for c in conds:
            out.append(f"{indent}if {' and '.join('(' + x + ')' for x in c.split(':'))}")
        out.append(indent + ("  " * len(conds)) + body)
        out.extend([indent + "end"] * len(conds))
    return "\n".join(out)


def c_limits_mangler(kernel, name):
    """INFINITY, HUGE_VAL and LONG_MAX/LONG_MIN (the neutral elements of loopy's
    max and min over float32, float64 and int64), which loopy's C target,
    unlike its OpenCL target, cannot type (loopy 2025.2: TypeInferenceFailure
    for every such reduction); math.h and limits.h define them."""
    from loopy.types import NumpyType
    if name in ("INFINITY", "HUGE_VALF"):
        return NumpyType(np.dtype(np.float32)), name
    if name == "HUGE_VAL":  # (float64's)
        return NumpyType(np.dtype(np.float64)), name
    if name in ("LONG_MAX", "LONG_MIN"):  # (int64's, from limits.h)
        return NumpyType(np.dtype(np.int64)), name
    return None


def _c_target():
    """ExecutableCTarget, with limits.h and stdint.h included first: loopy's C
    code for an integer min/max reduction uses INT_MAX/INT_MIN without
    including limits.h, and its integer-power helpers use int32_t before
    stdint.h is included (both compile errors in loopy 2025.2)."""
    import loopy as lp
    from loopy.target.c.c_execution import CCompiler
    return lp.ExecutableCTarget(compiler=CCompiler(cflags=["-std=c99", "-O2", "-fPIC", "-include", "limits.h", "-include", "stdint.h"]))


def to_loopy(text, parameters=(), text_order=False):
    """The kernel as written, as a loopy kernel on ExecutableCTarget.
    parameters: names to declare as int32 values where the text does not (a
    size used only in a shape, `v: float32[nnz]`, which loopy cannot type).
    text_order: each instruction depends on the one before it (loopy's
    seq_dependencies), Loom's rule for accesses the declared dependences leave
    unordered; also where the kernel has global barriers, which loopy's C
    target cannot run (NotImplementedError) and which are then no-ops that
    keep the text order."""
    import loopy as lp

    name, s = split_sections(text)
    if not s["domains"] or not s["instructions"]:
        raise Untranslatable("no domains or no instructions")
    body = "\n".join(s["instructions"])
    for function in ("round_tf32", "trunc_tf32"):
        if function + "(" in body:
            raise Untranslatable(f"Loom's {function} (TF32 rounding as the tensor cores read float32) has no loopy counterpart")
    for m in re.finditer(r"\b(argmax|argmin)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", body):
        if len(_split_top_level(m.group(2), ",")) == 2:
            raise Untranslatable(f"Loom's two-argument {m.group(1)}(i, value) (the index alone) has no loopy counterpart "
                                 "(loopy's takes the index expression and gives two outputs)")
    atomic = {m.group(1) for m in re.finditer(r"^\s*(\w+)\s*\[[^\n]*\{[^{}]*\batomic\b[^{}]*\}\s*$", body, re.M)}
    data = loopy_arguments(lp, s["arguments"], atomic) if s["arguments"] else []
    data += loopy_temporaries(lp, s["temporaries"])
    declared = {d.name for d in data if not isinstance(d, str)}
    data += [lp.ValueArg(p, np.int32) for p in parameters if p not in declared]
    if "..." not in data:
        data.append("...")
    instructions = loopy_instructions(s["instructions"])
    if re.search(r"\.\.\.\s*gbarrier", instructions):
        instructions = re.sub(r"\.\.\.\s*gbarrier", "... nop", instructions)
        text_order = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        knl = lp.make_kernel([d.strip() for d in s["domains"]], instructions, data, name=name,
                             target=_c_target(), lang_version=(2018, 2), seq_dependencies=text_order)
        knl = lp.register_symbol_manglers(knl, [c_limits_mangler])
        if s["assumptions"]:
            try:
                knl = lp.assume(knl, " ".join(a.strip() for a in s["assumptions"]))
            except Exception:  # noqa: BLE001
                # loopy cannot state an assumption on a parameter no domain uses (`m >= 1` where m is
                # only a shape: an isl syntax error); assumptions change no value at sizes that meet them
                pass
        knl = lp.set_options(knl, return_dict=True)
    return knl


def _same(expected, actual, dtype):
    """Elements that differ (NaN matches NaN, so both leaving an element unwritten agrees)."""
    e, a = np.asarray(expected), np.asarray(actual)
    if e.shape != a.shape:
        return f"shape {e.shape} against {a.shape}"
    if np.issubdtype(e.dtype, np.floating):
        tol = {np.float64: (1e-9, 1e-12)}.get(e.dtype.type, (1e-4, 1e-4))
        bad = ~(np.isclose(a, e, rtol=tol[0], atol=tol[1]) | (np.isnan(a) & np.isnan(e)))
    else:
        bad = a != e
    if not bad.any():
        return ""
    where = tuple(int(x) for x in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} elements, first at {where}: loopy {e[where]}, loom {a[where]}"


def run_both(text, params, seed=0, target="cpu"):
    """Runs the kernel as written through loopy and through Loom on the same
    random arrays; a Verdict."""
    import loom

    written = without_transforms(text)
    try:
        lknl = to_loopy(written, parameters=list(params))
    except Untranslatable as e:
        return Verdict("untranslatable", str(e), params)
    except Exception as e:  # noqa: BLE001 - loopy's refusals come as many exception types
        lknl, make_error = None, f"{type(e).__name__}: {str(e)[:400]}"
    loom_error = loopy_error = None
    try:
        knl = loom.kernel_from_text(written, target=target)
        arrays = loom.random_arguments(knl, seed=seed, **params)
    except loom.LoomError as e:
        loom_error, arrays = f"{type(e).__name__}: {e}", None
    if lknl is None:
        if arrays is None:
            return Verdict("both-refuse", f"loom: {loom_error}\nloopy: {make_error}", params)
        return Verdict("loopy-refuses", make_error, params)
    if arrays is None:  # Loom refused the kernel: loopy's outcome decides what that is
        try:
            with _quiet():
                lp_code = __import__("loopy").generate_code_v2(lknl)
            del lp_code
        except Exception as e:  # noqa: BLE001 - loopy's refusals come as many exception types
            return Verdict("both-refuse", f"loom: {loom_error}\nloopy: {type(e).__name__}: {str(e)[:300]}", params)
        return Verdict("loom-refuses", loom_error, params)
    scalars = dict(params)
    for a in knl._core.scalar_arguments():  # (alpha, beta: any fixed value serves a comparison)
        scalars[a] = np.dtype(knl._core.argument_dtype(a)).type(1.5)  # (typed: loopy takes a scalar's dtype from the call)
    for_loopy = {k: v.copy(order="K") for k, v in arrays.items()}
    for_loom = {k: v.copy(order="K") for k, v in arrays.items()}
    try:
        with _quiet():
            try:
                _, loopy_out = lknl(**for_loopy, **_value_args(lknl, scalars))
            except Exception as e:  # noqa: BLE001
                if type(e).__name__ != "VariableAccessNotOrdered":
                    raise
                # loopy asks for dependences between writers that Loom orders by the text
                lknl = to_loopy(written, parameters=list(params), text_order=True)
                _, loopy_out = lknl(**for_loopy, **_value_args(lknl, scalars))
    except Exception as e:  # noqa: BLE001
        loopy_error = f"{type(e).__name__}: {str(e)[:400]}"
    try:
        knl(**for_loom, **scalars)
    except loom.LoomError as e:
        if loopy_error:
            return Verdict("both-refuse", f"loom: {e}\nloopy: {loopy_error}", params)
        return Verdict("loom-refuses", f"{type(e).__name__}: {e}", params)
    if loopy_error:
        return Verdict("loopy-refuses", loopy_error, params)
    problems = []
    for name in sorted(knl._core.written_arrays()):
        expected = loopy_out.get(name, for_loopy.get(name))
        if expected is None:
            problems.append(f"{name}: loopy returned no array")
            continue
        diff = _same(expected, for_loom[name], for_loom[name].dtype)
        if diff:
            problems.append(f"{name}: {diff}")
    return Verdict("differ" if problems else "same", "; ".join(problems), params)


def _value_args(lknl, scalars):
    names = {a.name for a in lknl.default_entrypoint.args}
    return {k: v for k, v in scalars.items() if k in names}


def sizes_for(text, candidates=(13, 17, 16, 32, 64, 128, 256, 3, 1)):
    """Parameter values for a comparison: the `defaults:` section's names,
    each parameter at the first of `candidates` (all the same) that Loom's
    assumptions allow; None when none does."""
    import loom

    knl = loom.kernel_from_text(without_transforms(text), target="interpreter")
    names = list(knl._core.parameters())
    for c in candidates:
        params = {n: c for n in names}
        if knl._core.assumptions_hold(params):
            return params
    return None
