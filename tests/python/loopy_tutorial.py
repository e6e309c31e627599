"""loopy's tutorial (tests/data/loopy_tutorial.rst, loopy's doc/tutorial.rst
unchanged) run as written with only its imports changed.

    python tests/python/loopy_tutorial.py [-v]

prints how many of its blocks run and how many of its documented numeric
outputs Loom prints, and each failure.

Blocks. The tutorial's doctest examples (`>>>` lines, their `...`
continuations and the expected output below them) are grouped into blocks: a
block is a run of examples with nothing but blank lines between them; prose
or a directive (`.. doctest::`, `.. testsetup::`) ends it. The file has 73.

Imports. Each example's source is run as written, except its import
statements:
  - `import loopy as lp` -> `import loom as lp`;
    `from loopy.X import ...` -> `from loom.X import ...`;
    `import loopy.X` -> `import loom.X, loom as loopy` (the statement binds
    the name `loopy`, which the next line uses);
  - `import pyopencl as cl`, `import pyopencl.array`, `import pyopencl.clrandom`
    -> the same imports of `numpy_cl`, the NumPy stand-in below (a context, a
    queue, `cl.clrandom.rand`, `cl.array.arange/empty/zeros`: NumPy arrays
    whose `.get()` gives the host copy, as pyopencl's do).
The blocks run in order in one namespace, under doctest's rules: an
expression's value is printed, and an example whose documented output is a
traceback must raise the exception it names (loopy's class, as
loom.diagnostic or lp names it: the raised exception is an instance of it).
A block runs when every example in it does.

Outputs. The output of code generation and of print(kernel) is loopy's
OpenCL and loopy's text, which Loom does not reproduce (it generates CUDA and
prints its own kernel language); those outputs are not compared. The
documented numeric outputs are the blocks whose expected output states the
counts the statistics section computes for its kernel stats_knl
(NUMERIC_OUTPUTS: blocks 59, 60, 61, 63, 64, 66, 68, 69, 70, 71). Each is
compared with what the block prints, line by line: the numbers in each line
must equal the documented ones (integers exactly, floats to the digits
printed), and the text around them must match under doctest's ELLIPSIS rule;
a documented line ending in `...` may stand for several printed lines (a
map's), and of isl's notation only a constant piece counts: a constant
`[l, m, n] -> { [] -> 1 }` states the same count as Loom's bare `1`, and other
isl text is left out of the comparison (isl orders parameters its own way).
None of the ten prints random data. Left out on purpose: block 18 prints
`False` (a truth value), block 31 isl's grid-size bounds (loopy's internal
objects, not a computed result), block 48 the rotated array (the rotate_v2
kernel, which needs a global barrier inside a loop), and block 73 the barrier
count of loopy's code (1000), where Loom places one barrier per (i, j) and not
two (docs/loopy-differences.md: barrier counts are those of Loom's barriers).
"""
import contextlib
import doctest
import io
import os
import re
import sys
import types
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TUTORIAL = os.path.join(HERE, "..", "data", "loopy_tutorial.rst")
EXPECTED_BLOCKS = 73

# the blocks (1-based) whose documented output states counts the kernels' statistics compute
NUMERIC_OUTPUTS = (59, 60, 61, 63, 64, 66, 68, 69, 70, 71)


# ---------------------------------------------------------------------------
# the NumPy stand-in for pyopencl

class DeviceArray(np.ndarray):
    """A NumPy array standing in for pyopencl.array.Array: .get() is its host copy."""

    def get(self, queue=None, ary=None):
        host = np.array(self, copy=True).view(np.ndarray)
        if ary is not None:
            ary[...] = host
            return ary
        return host

    @property
    def queue(self):
        return None


def _device(a):
    return np.asarray(a).view(DeviceArray)


class Context:
    """pyopencl's Context: nothing to set up for NumPy."""

    def __init__(self, devices=None):
        self.devices = devices or []


class CommandQueue:
    def __init__(self, context=None, device=None, properties=None):
        self.context = context

    def finish(self):
        pass


def create_some_context(interactive=None, answers=None):
    return Context()


def _make_standin():
    cl = types.ModuleType("numpy_cl")
    cl.__doc__ = "pyopencl's names used by loopy's tutorial, on NumPy arrays"
    cl.Context, cl.CommandQueue, cl.create_some_context = Context, CommandQueue, create_some_context

    array = types.ModuleType("numpy_cl.array")
    array.Array = DeviceArray

    def arange(queue, *args, dtype=None, **kwargs):
        return _device(np.arange(*args, dtype=dtype))

    def empty(queue, shape, dtype=np.float64, order="C", **kwargs):
        return _device(np.empty(shape, dtype=dtype, order=order))

    def zeros(queue, shape, dtype=np.float64, order="C", **kwargs):
        return _device(np.zeros(shape, dtype=dtype, order=order))

    def to_device(queue, ary, **kwargs):
        return _device(np.array(ary, copy=True))

    array.arange, array.empty, array.zeros, array.to_device = arange, empty, zeros, to_device

    clrandom = types.ModuleType("numpy_cl.clrandom")
    rng = np.random.default_rng(2012)

    def rand(queue, shape, dtype=np.float32, a=0, b=1, **kwargs):
        """Uniform random numbers in [a, b) (pyopencl.clrandom.rand)."""
        dtype = np.dtype(dtype)
        if dtype.kind in "iu":
            return _device(rng.integers(a, b, size=shape, dtype=dtype))
        return _device((a + (b - a) * rng.random(size=shape)).astype(dtype))

    clrandom.rand = rand
    cl.array, cl.clrandom = array, clrandom
    return {"numpy_cl": cl, "numpy_cl.array": array, "numpy_cl.clrandom": clrandom}


# ---------------------------------------------------------------------------
# the tutorial's blocks

class Block:
    def __init__(self, number, examples, line):
        self.number, self.examples, self.line = number, examples, line  # line: 1-based, of the first example

    @property
    def source(self):
        return "".join(e.source for e in self.examples)

    @property
    def want(self):
        return "".join(e.want for e in self.examples)


def read_blocks(path=TUTORIAL):
    """The tutorial's blocks: runs of doctest examples with only blank lines between them."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()
    groups, prev_end = [], None
    for e in doctest.DocTestParser().get_examples(text):
        end = e.lineno + e.source.count("\n") + e.want.count("\n")
        if prev_end is not None and all(not l.strip() for l in lines[prev_end:e.lineno]):
            groups[-1][1].append(e)
        else:
            groups.append((e.lineno + 1, [e]))
        prev_end = end
    return [Block(i + 1, ex, line) for i, (line, ex) in enumerate(groups)]


_IMPORT_REWRITES = [
    # (pattern on one import statement, replacement)
    (re.compile(r"^(\s*)import loopy as (\w+)\s*$"), r"\1import loom as \2"),
    (re.compile(r"^(\s*)import loopy\.([\w.]+)\s*$"), r"\1import loom.\2, loom as loopy"),
    (re.compile(r"^(\s*)import loopy\s*$"), r"\1import loom as loopy"),
    (re.compile(r"^(\s*)from loopy(\.[\w.]+)? import "), r"\1from loom\2 import "),
    (re.compile(r"^(\s*)import pyopencl as (\w+)\s*$"), r"\1import numpy_cl as \2"),
    (re.compile(r"^(\s*)import pyopencl\.([\w.]+)\s*$"), r"\1import numpy_cl.\2"),
]


def rewrite_imports(source):
    """The source with loopy's and pyopencl's imports replaced (nothing else changes)."""
    out = []
    for line in source.split("\n"):
        for pattern, repl in _IMPORT_REWRITES:
            new = pattern.sub(repl, line)
            if new != line:
                line = new
                break
        out.append(line)
    return "\n".join(out)


def _expected_exception(example):
    """(module path, class name) of the exception an example's documented output shows, or None."""
    if not example.exc_msg:
        return None
    m = re.match(r"([\w.]+?)(?::|$)", example.exc_msg.strip())
    name = m.group(1) if m else example.exc_msg.split(":")[0]
    module, _, cls = name.rpartition(".")
    return module, cls


def _exception_class(module, cls, namespace):
    """The class a documented exception name stands for in Loom (loopy.diagnostic.X -> loom.diagnostic.X)."""
    import builtins
    import loom
    if module in ("", "builtins"):
        return getattr(builtins, cls, None)
    module = re.sub(r"^loopy\b", "loom", module)
    try:
        mod = __import__(module, fromlist=["_"])
    except ImportError:
        return None
    return getattr(mod, cls, None) or getattr(loom, cls, None)


class Outcome:
    def __init__(self, block):
        self.block = block
        self.ok = True
        self.error = None  # why the block did not run as documented
        self.output = ""
        self.output_matches = None  # for NUMERIC_OUTPUTS: whether the output matched
        self.raised_as_documented = []  # (line, exception text) of the documented exceptions it raised

    def __repr__(self):
        return f"<block {self.block.number}: {'ran' if self.ok else 'failed: ' + self.error}>"


def run_example(example, namespace, filename):
    """Runs one example; (printed output, None) or (printed output, reason it did not run as documented)."""
    source = rewrite_imports(example.source)
    expected = _expected_exception(example)
    buf = io.StringIO()
    raised = None
    try:
        code = compile(source, filename, "single")
        with contextlib.redirect_stdout(buf):
            exec(code, namespace)
    except Exception as e:  # (a warning turned into an error by filterwarnings is an exception too)
        raised = e
    printed = buf.getvalue()
    if expected is None:
        if raised is not None:
            return printed, f"{type(raised).__module__}.{type(raised).__name__}: {_first_line(raised)}"
        return printed, None
    cls = _exception_class(*expected, namespace)
    documented = ".".join(p for p in expected if p)
    if raised is None:
        return printed, f"documented to raise {documented}, but raised nothing"
    if cls is None:
        return printed, f"documented to raise {documented} (no such class in Loom); raised " \
                        f"{type(raised).__name__}: {_first_line(raised)}"
    if not isinstance(raised, cls):
        return printed, f"documented to raise {documented}; raised {type(raised).__module__}." \
                        f"{type(raised).__name__}: {_first_line(raised)}"
    return printed + f"{_RAISED}{type(raised).__name__}: {_first_line(raised)}\n", None


_RAISED = "(raised as documented) "


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else repr(e)


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def _numbers(text):
    return _NUMBER.findall(text)


def _same_number(want, got):
    if re.fullmatch(r"-?\d+", want) and re.fullmatch(r"-?\d+", got):
        return int(want) == int(got)
    w, g = float(want), float(got)
    mantissa, _, exponent = want.lower().partition("e")
    digits = len(mantissa.split(".")[1]) if "." in mantissa else 0  # as printed: half a unit in the last place
    return abs(w - g) <= max(0.5 * 10 ** (int(exponent or 0) - digits), 1e-12 * abs(w))


def _isl_free(line):
    """The line with isl's notation cut out: a constant `[l, m, n] -> { [] -> 1 }` becomes `1` (Loom
    prints a constant count bare), anything else `{...}` (its parameters' order is isl's)."""
    line = re.sub(r"(\[[^\]]*\]\s*->\s*)?\{\s*\[\]\s*->\s*(-?\d+)\s*\}", r"\2", line)
    return re.sub(r"(\[[^\]]*\]\s*->\s*)?\{\s*\[[^{}]*\}", "{...}", line)  # (not a dict: `{0: 1}`)


def output_matches(want, got):
    """Whether printed output `got` states the documented output `want`, line by line (see the
    module's docstring). A documented line ending in `...` may stand for several printed lines
    (doctest's ELLIPSIS across lines: loopy's maps print one line per key)."""
    want_lines = [l for l in want.splitlines() if l.strip()]
    got_lines = [l for l in got.splitlines() if l.strip()]
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

    def line_matches(w, g):
        w, g = _isl_free(w), _isl_free(g)
        if not checker.check_output(_NUMBER.sub("0", w) + "\n", _NUMBER.sub("0", g) + "\n", flags):
            return False
        elided = w.rstrip().endswith("...")
        wn = _numbers(w[:-3] if elided else w)
        gn = _numbers(g)[:len(wn)] if elided else _numbers(g)
        return len(wn) == len(gn) and all(_same_number(a, b) for a, b in zip(wn, gn))

    gi, may_skip = 0, False
    for w in want_lines:
        while gi < len(got_lines) and not line_matches(w, got_lines[gi]):
            if not may_skip:
                return False
            gi += 1
        if gi == len(got_lines):
            return False
        gi += 1
        may_skip = w.rstrip().endswith("...")
    return gi == len(got_lines) or may_skip


def run(blocks=None, verbose=False):
    """Runs the tutorial's blocks in order in one namespace; a list of Outcome."""
    blocks = read_blocks() if blocks is None else blocks
    saved_modules = {k: sys.modules.get(k) for k in ("numpy_cl", "numpy_cl.array", "numpy_cl.clrandom")}
    saved_env = dict(os.environ)
    saved_random = np.random.get_state()
    import loom.options  # (the tutorial sets ALLOW_TERMINAL_COLORS; it is put back after)
    saved_colors = loom.options.ALLOW_TERMINAL_COLORS
    sys.modules.update(_make_standin())
    np.random.seed(2012)  # (the tutorial's np.random.randn data)
    namespace = {"__name__": "loopy_tutorial"}
    outcomes = []
    try:
        with warnings.catch_warnings():  # the tutorial's filterwarnings/resetwarnings stay inside
            for block in blocks:
                outcome = Outcome(block)
                for k, example in enumerate(block.examples):
                    printed, error = run_example(example, namespace, f"<loopy tutorial block {block.number}>")
                    if _RAISED in printed:
                        printed, _, note = printed.partition(_RAISED)
                        outcome.raised_as_documented.append((example.lineno + 1, note.strip()))
                    outcome.output += printed
                    if error and outcome.ok:
                        outcome.ok = False
                        outcome.error = f"line {example.lineno + 1}: {error}"
                if block.number in NUMERIC_OUTPUTS:
                    outcome.output_matches = outcome.ok and output_matches(block.want, outcome.output)
                outcomes.append(outcome)
                if verbose:
                    print(f"block {block.number} (line {block.line}): "
                          f"{'ran' if outcome.ok else 'FAILED ' + outcome.error}", file=sys.stderr)
    finally:
        for k, v in saved_modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        os.environ.clear()
        os.environ.update(saved_env)
        np.random.set_state(saved_random)
        loom.options.ALLOW_TERMINAL_COLORS = saved_colors
    return outcomes


def summary(outcomes, verbose=False):
    ran = sum(o.ok for o in outcomes)
    numeric = [o for o in outcomes if o.block.number in NUMERIC_OUTPUTS]
    matched = sum(bool(o.output_matches) for o in numeric)
    lines = [f"loopy's tutorial as written: blocks run {ran}/{len(outcomes)}, "
             f"documented numeric outputs matched {matched}/{len(NUMERIC_OUTPUTS)}"]
    for o in outcomes:
        if not o.ok:
            lines.append(f"  block {o.block.number} (line {o.block.line}): {o.error}")
    if verbose:
        lines.append("documented exceptions raised (the class as documented; the message is Loom's):")
        for o in outcomes:
            for line, note in o.raised_as_documented:
                lines.append(f"  block {o.block.number} (line {line}): {note}")
    for o in numeric:
        if o.ok and not o.output_matches:
            lines.append(f"  block {o.block.number} (line {o.block.line}): output differs\n"
                         f"    documented:\n      " + o.block.want.rstrip().replace("\n", "\n      ") +
                         "\n    printed:\n      " + o.output.rstrip().replace("\n", "\n      "))
    return "\n".join(lines)


if __name__ == "__main__":
    verbose = "-v" in sys.argv[1:]
    outcomes = run(verbose=verbose)
    print(summary(outcomes, verbose=verbose))
