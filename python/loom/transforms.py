"""Every registered transformation as a Python function, built from the C++
registry's schemas: loopy's argument names and keyword defaults, the
registry's documentation as the docstring and a real signature for help()."""
import inspect

from . import _loom
from .kernel import LoopKernel
from .tuning import Choice, TuningSpace, _step_line


def _text(kind, value):
    """A Python value as the registry's text form of that argument."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "tag_map" and isinstance(value, dict):
        return ", ".join(f"{k}:{v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        if kind == "tag_map" and value and isinstance(value[0], (list, tuple)):
            return ", ".join(f"{k}:{v}" for k, v in value)
        return ",".join(str(v) for v in value)
    return str(value)


def _value_text(v):
    """A keyword value as text: numbers and names as they are, NumPy dtypes and types by name."""
    if isinstance(v, (str, int, float)):
        return str(v)
    try:
        import numpy as np
        return np.dtype(v).name
    except TypeError:
        return str(v)


def apply(name, knl, positional, keyword):
    if not isinstance(knl, LoopKernel):
        raise TypeError(f"{name}: the first argument must be a kernel, got {type(knl).__name__}")
    pos = [str(p) for p in positional]
    kw = {k: str(v) for k, v in keyword.items()}
    core = _loom.apply_transform(knl._core, name, pos, kw)
    return knl._derived(core, " ".join([name] + pos + [f"{k}={v}" for k, v in kw.items()]))


def _python_default(text):
    """A declared default (text) as Python shows it in the signature: True/False, an int, or the text."""
    if text in ("true", "false"):
        return text == "true"
    if text.lstrip("-").isdigit():
        return int(text)
    return text or None


def search_domain(knl, transform, param, **bound):
    """The values a search may try for one parameter of a transformation on this
    kernel, from the parameter's declaration: search_domain(knl, "split_iname",
    "inner_length", iname="i") -> ["1", "2", ..., up to i's extent]."""
    return _loom.search_domain(knl._core, transform, param, {k: str(v) for k, v in bound.items()})


def compile_variants(kernels, scripts=None, workers=None, compile=True, arch=None):
    """Generate (and compile with NVRTC) many variants in parallel worker processes,
    as a tuner does: `kernels` a list of kernels, or one kernel with `scripts` (transformation
    scripts as text, one step per line). Returns one dict per variant, in order: ok, error,
    hash, cuda, cubin, registers, spill_bytes, shared_bytes, generate_seconds,
    compile_seconds. A variant that is refused, or whose worker crashes, has ok False and
    the reason; the others are unaffected."""
    w = int(workers or 0)
    if scripts is not None:
        if not isinstance(kernels, LoopKernel):
            raise TypeError("compile_variants: with scripts, give one kernel")
        return _loom.compile_variants_of_scripts(kernels._core, list(scripts), w, bool(compile), arch or "")
    return _loom.compile_variants_of_kernels([k._core for k in kernels], w, bool(compile), arch or "")


def transform_schema():
    """Every transformation's declaration (types, defaults, choices, ranges, help, search domains) as a dict."""
    import json
    return json.loads(_loom.transform_schema_json())


def _make(name, doc, params):
    kinds = {p[0]: p[1] for p in params}
    keyword_map = [p[0] for p in params if p[1] == "keyword_map"]
    sig = [inspect.Parameter("kernel", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for pname, kind, required, _, _, default, _ in params:
        if kind == "keyword_map":
            continue
        sig.append(inspect.Parameter(pname, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     default=inspect.Parameter.empty if required else _python_default(default)))
    if keyword_map:
        sig.append(inspect.Parameter(keyword_map[0], inspect.Parameter.VAR_KEYWORD))
    signature = inspect.Signature(sig)

    def transform(*args, **kwargs):
        extra = {}
        if keyword_map and len(args) == 2 and isinstance(args[1], dict):  # loopy's add_dtypes(knl, {"a": np.float64})
            extra.update(args[1])
            args = args[:1]
        if keyword_map:
            named = set(kinds)
            extra.update({k: kwargs.pop(k) for k in list(kwargs) if k not in named})
            if isinstance(kwargs.get(keyword_map[0]), dict):
                extra.update(kwargs.pop(keyword_map[0]))
            # loopy's {"a,b": np.float32}: each comma-separated name
            extra = {part.strip(): v for k, v in extra.items() for part in str(k).split(",") if part.strip()}
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}: {e}") from None
        knl = bound.arguments.pop("kernel")
        # loopy's default_tag=None: the new inames stay untagged (sequential), not the default l.auto
        if "default_tag" in kwargs and kwargs["default_tag"] is None:
            bound.arguments["default_tag"] = "for"
        if isinstance(knl, TuningSpace) or any(isinstance(v, Choice) for v in bound.arguments.values()):
            # a choice point: the result is a space of kernels for lp.tune, not a kernel
            if keyword_map and extra:
                bound.arguments[keyword_map[0]] = ", ".join(f"{k}={_value_text(v)}" for k, v in extra.items())
            values = {k: v for k, v in bound.arguments.items() if v is not None}
            return TuningSpace.of(knl)._with(_step_line(name, values, lambda k, v: _text(kinds.get(k, "string"), v)))
        keyword = {k: _text(kinds[k], v) for k, v in bound.arguments.items() if v is not None}
        if keyword_map:
            if not extra and keyword_map[0] not in keyword:
                raise TypeError(f"{name}: give values as keywords, e.g. {name}(knl, n=128)")
            if extra:
                keyword[keyword_map[0]] = ", ".join(f"{k}={_value_text(v)}" for k, v in extra.items())
        return apply(name, knl, [], keyword)

    transform.__name__ = transform.__qualname__ = name
    transform.__module__ = "loom"
    transform.__signature__ = signature
    lines = [doc, "", "Arguments:"] + [f"    {p[0]} ({p[4]}{', required' if p[2] else ''}"
                                         f"{', default ' + p[5] if p[5] else ''}): {p[3]}" for p in params]
    transform.__doc__ = "\n".join(lines)
    return transform


def transform_names():
    return [t[0] for t in _loom.transforms()]


def _install(namespace):
    names = []
    for name, doc, params in _loom.transforms():
        namespace[name] = _make(name, doc, params)
        names.append(name)
    return names
