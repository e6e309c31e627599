"""Kernel statistics with loopy's names (loopy.statistics): get_op_map,
get_mem_access_map and get_synchronization_map return a ToCountMap from Op,
MemAccess and Sync keys to counts. A count is exact and a function of the
kernel's parameters: print it (isl's piecewise quasi-polynomial) or evaluate
it with eval_with_dict({"n": 512, ...}). The counting is done in C++
(loom/statistics.h); docs/statistics.md says what is counted and how.

    op_map = lp.get_op_map(knl, subgroup_size=32)
    f32mul = op_map[lp.Op(np.float32, "mul", CG.SUBGROUP, "knl")].eval_with_dict({"n": 512})
"""
import numpy as np

from . import _loom


class CountGranularity:
    """Whether an event is counted once per work-item, sub-group or work-group."""
    WORKITEM = "workitem"
    SUBGROUP = "subgroup"
    WORKGROUP = "workgroup"
    ALL = (WORKITEM, SUBGROUP, WORKGROUP)


def _dtype(d):
    if d is None:
        return None
    try:
        return np.dtype(d)
    except TypeError:
        return d  # (bfloat16: NumPy has no dtype for it; the name stands)


def _dtype_repr(d):
    return "None" if d is None else f"np:{d!r}"


class _Key:
    _fields = ()

    def __init__(self, **values):
        for f in self._fields:
            setattr(self, f, values.get(f))

    def _tuple(self):
        return tuple(repr(getattr(self, f)) for f in self._fields)

    def __eq__(self, other):
        return type(self) is type(other) and self._tuple() == other._tuple()

    def __hash__(self):
        return hash(self._tuple())

    def copy(self, **changes):
        values = {f: getattr(self, f) for f in self._fields}
        values.update(changes)
        return type(self)(**values)


def _check_granularity(g):
    if g not in (*CountGranularity.ALL, None):
        raise ValueError(f"count_granularity '{g}' is not allowed; count_granularity options: {list(CountGranularity.ALL) + [None]}")


class Op(_Key):
    """An arithmetic operation: dtype, name (add, mul, div, pow, shift, bw, maxmin, func:<name>), granularity, kernel."""
    _fields = ("dtype", "name", "count_granularity", "kernel_name")

    def __init__(self, dtype=None, name=None, count_granularity=None, kernel_name=None):
        _check_granularity(count_granularity)
        super().__init__(dtype=_dtype(dtype), name=name, count_granularity=count_granularity, kernel_name=kernel_name)

    def __repr__(self):
        tail = f', "{self.kernel_name}"' if self.kernel_name is not None else ""
        return f"Op({_dtype_repr(self.dtype)}, {self.name}, {self.count_granularity}{tail})"


class MemAccess(_Key):
    """A memory access: mtype (global/local), dtype, lid_strides and gid_strides ({axis: stride}), direction
    (load/store), variable, granularity, kernel."""
    _fields = ("mtype", "dtype", "lid_strides", "gid_strides", "direction", "variable", "variable_tags",
               "count_granularity", "kernel_name")

    def __init__(self, mtype=None, dtype=None, lid_strides=None, gid_strides=None, direction=None, variable=None, *,
                 variable_tags=None, count_granularity=None, kernel_name=None):
        _check_granularity(count_granularity)
        super().__init__(mtype=mtype, dtype=_dtype(dtype), lid_strides=None if lid_strides is None else dict(sorted(lid_strides.items())),
                         gid_strides=None if gid_strides is None else dict(sorted(gid_strides.items())), direction=direction,
                         variable=variable, variable_tags=frozenset(variable_tags or ()), count_granularity=count_granularity,
                         kernel_name=kernel_name)

    def __repr__(self):
        tags = "None" if not self.variable_tags else str(self.variable_tags)
        return (f"MemAccess({self.mtype}, {_dtype_repr(self.dtype)}, {self.lid_strides}, {self.gid_strides}, {self.direction}, "
                f"{self.variable}, {tags}, {self.count_granularity}, {self.kernel_name!r})")


class Sync(_Key):
    """A synchronization: kind (barrier_local, barrier_global, kernel_launch) and kernel."""
    _fields = ("kind", "kernel_name")

    def __init__(self, kind=None, kernel_name=None):
        super().__init__(kind=kind, kernel_name=kernel_name)

    def __repr__(self):
        return f"Sync({self.kind}, {self.kernel_name})"


class ToCountMap:
    """A map from keys (Op, MemAccess, Sync) to counts, with loopy's filter_by, filter_by_func, group_by,
    to_bytes, sum and eval_and_sum."""

    def __init__(self, count_map=None):
        self.count_map = dict(count_map or {})

    def __getitem__(self, key):
        return self.count_map[key]

    def __len__(self):
        return len(self.count_map)

    def __iter__(self):
        return iter(self.count_map)

    def get(self, key, default=None):
        return self.count_map.get(key, default)

    def items(self):
        return self.count_map.items()

    def keys(self):
        return self.count_map.keys()

    def values(self):
        return self.count_map.values()

    def __add__(self, other):
        result = dict(self.count_map)
        for k, v in other.count_map.items():
            result[k] = result[k] + v if k in result else v
        return type(self)(result)

    def __radd__(self, other):
        if other != 0:
            raise ValueError(f"ToCountMap: only 0 and other ToCountMaps can be added to a ToCountMap, not {type(other).__name__}")
        return self

    def __str__(self):
        return "\n".join(f"{k}: {v}" for k, v in sorted(self.count_map.items(), key=lambda kv: str(kv[0])))

    def __repr__(self):
        return repr(self.count_map)

    def copy(self, count_map=None):
        return type(self)(self.count_map if count_map is None else count_map)

    def with_set_attributes(self, **kwargs):
        return self.copy({k.copy(**kwargs): v for k, v in self.count_map.items()})

    def filter_by(self, **kwargs):
        """The items whose key fields take one of the given values: filter_by(direction=["load"], variable=["a"])."""
        allowed = {f: ([_dtype(d) for d in vals] if f == "dtype" else list(vals)) for f, vals in kwargs.items()}
        return self.copy({k: v for k, v in self.count_map.items()
                          if all(getattr(k, f, object()) in vals for f, vals in allowed.items())})

    def filter_by_func(self, func):
        return self.copy({k: v for k, v in self.count_map.items() if func(k)})

    def group_by(self, *fields):
        """The counts summed over keys that agree on `fields` (the others become None)."""
        grouped = {}
        for k, v in self.count_map.items():
            key = type(k)(**{f: getattr(k, f) for f in fields})
            grouped[key] = grouped[key] + v if key in grouped else v
        return self.copy(grouped)

    def to_bytes(self):
        return self.copy({k: v * int(k.dtype.itemsize) for k, v in self.count_map.items()})

    def sum(self):
        return sum(self.count_map.values(), 0)

    def eval_and_sum(self, params=None):
        total = self.sum()
        return total if isinstance(total, int) else total.eval_with_dict(dict(params or {}))


ToCountPolynomialMap = ToCountMap


def _options(subgroup_size, count_redundant_work, count_within_subscripts, within, granularity="", as_generated=False):
    if subgroup_size is None or subgroup_size == "guess":
        subgroup_size = 32  # the target model's warp: Loom's targets run 32 threads per sub-group
    if not isinstance(subgroup_size, int) or subgroup_size < 1:
        raise ValueError(f"subgroup_size must be a positive int, None or 'guess', not {subgroup_size!r}")
    return (bool(count_redundant_work), bool(count_within_subscripts), subgroup_size, granularity or "", within or "",
            bool(as_generated))


def _core(knl):
    return getattr(knl, "_core", knl)


def get_op_map(knl, count_redundant_work=False, count_within_subscripts=True, subgroup_size=None, entrypoint=None,
               within=None, count_granularity=None, as_generated=False):
    """Operations by (dtype, kind), counted once per sub-group as in loopy (count_granularity forces one
    granularity for every key; as_generated counts the code after common-subexpression elimination)."""
    redundant, subs, sg, gran, wi, gen = _options(subgroup_size, count_redundant_work, count_within_subscripts, within,
                                                  count_granularity, as_generated)
    return ToCountMap({Op(**key): c for key, c in _loom.statistics(_core(knl), "op", redundant, subs, sg, gran, wi, gen)})


def get_mem_access_map(knl, count_redundant_work=False, subgroup_size=None, entrypoint=None, within=None,
                       count_granularity=None, as_generated=False):
    """Global and local memory accesses by (array, direction, dtype, thread strides)."""
    redundant, subs, sg, gran, wi, gen = _options(subgroup_size, count_redundant_work, True, within, count_granularity,
                                                  as_generated)
    return ToCountMap({MemAccess(**key): c for key, c in _loom.statistics(_core(knl), "mem", redundant, subs, sg, gran, wi, gen)})


def get_synchronization_map(knl, subgroup_size=None, entrypoint=None):
    """Barriers per work-item and kernel launches."""
    redundant, subs, sg, gran, wi, gen = _options(subgroup_size, False, True, None)
    return ToCountMap({Sync(**key): c for key, c in _loom.statistics(_core(knl), "sync", redundant, subs, sg, gran, wi, gen)})


def stringify_stats_mapping(m):
    """loopy's stringify_stats_mapping: one line "key : count" per item, sorted."""
    return "\n".join(f"{k} : {v}" for k, v in sorted(m.count_map.items(), key=lambda kv: str(kv[0]))) + "\n"
