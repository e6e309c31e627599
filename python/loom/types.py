"""loopy.types: loopy's dtype wrappers, so `from loopy.types import to_loopy_type`
ports by changing the import.

Loom's own dtypes are NumPy dtypes (statistics keys, argument dtypes), so a
NumpyType also equals the NumPy dtype it wraps: `key.dtype ==
to_loopy_type(np.float32)` holds for Loom's statistics keys as for loopy's.
NumPy accepts a NumpyType wherever it takes a dtype (np.dtype(t), through its
`dtype` attribute)."""
import numpy as np

from ._loom import KernelError
from .kernel import auto

LoopyError = KernelError


class LoopyType:
    """The base of loopy's dtypes."""

    def is_integral(self):
        raise NotImplementedError

    def is_complex(self):
        raise NotImplementedError

    def involves_complex(self):
        raise NotImplementedError

    def is_composite(self):
        raise NotImplementedError

    @property
    def itemsize(self):
        raise NotImplementedError

    @property
    def numpy_dtype(self):
        raise ValueError(f"'{self}' is not a numpy type")


class AtomicType(LoopyType):
    """The base of dtypes of variables that atomic operations update."""


class NumpyType(LoopyType):
    """A NumPy dtype as loopy wraps it: NumpyType(np.float32).dtype is np.dtype('float32')."""

    def __init__(self, dtype):
        if isinstance(dtype, LoopyType):
            raise TypeError("NumpyType wraps a NumPy dtype, not a LoopyType")
        if dtype is None:
            raise TypeError("may not pass None to construct NumpyType")
        if dtype is object:
            raise TypeError("loopy does not directly support object arrays")
        self.dtype = np.dtype(dtype)

    def __hash__(self):
        return hash(self.dtype)

    def __eq__(self, other):
        if type(self) is type(other):
            return self.dtype == other.dtype
        if isinstance(other, np.dtype) and not isinstance(self, AtomicNumpyType):
            return self.dtype == other  # (Loom's keys hold NumPy dtypes)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def is_integral(self):
        return self.dtype.kind in "iu"

    def is_complex(self):
        return self.dtype.kind == "c"

    def involves_complex(self):
        def involves(dt):
            if dt.kind == "c":
                return True
            return dt.fields is not None and any(involves(f[0]) for f in dt.fields.values())
        return involves(self.dtype)

    def is_composite(self):
        return self.dtype.kind == "V"

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def numpy_dtype(self):
        return self.dtype

    def __repr__(self):
        return "np:" + repr(self.dtype)


class AtomicNumpyType(NumpyType, AtomicType):
    """A NumPy dtype of a variable that atomic operations update (loopy's for_atomic=True)."""

    def __hash__(self):
        return 0xa7031c ^ hash(self.dtype)

    def __repr__(self):
        return "np_atomic:" + repr(self.dtype)


class OpaqueType(LoopyType):
    """loopy's opaque type: a value passed through by name, with no size and no arithmetic."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError("OpaqueType needs a name")
        self.name = name

    def is_integral(self):
        return False

    def is_complex(self):
        return False

    def involves_complex(self):
        return False

    def is_composite(self):
        return False

    @property
    def itemsize(self):
        raise LoopyError("cannot find size of an opaque type")

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return type(self) is type(other) and self.name == other.name

    def __repr__(self):
        return f"OpaqueType({self.name!r})"


def to_loopy_type(dtype, allow_auto=False, allow_none=False, for_atomic=False):
    """loopy's to_loopy_type: a LoopyType for a NumPy dtype (or anything np.dtype takes),
    a LoopyType as it is; None and lp.auto only where allowed."""
    if dtype is None:
        if allow_none:
            return None
        raise LoopyError("dtype may not be none")
    if dtype is auto:
        if allow_auto:
            return dtype
        raise LoopyError("dtype may not be auto")
    if isinstance(dtype, LoopyType):
        if for_atomic:
            if isinstance(dtype, NumpyType):
                return AtomicNumpyType(dtype.dtype)
            if not isinstance(dtype, AtomicType):
                raise LoopyError(f"do not know how to convert '{dtype}' to an atomic type")
        return dtype
    try:
        numpy_dtype = np.dtype(dtype)
    except Exception:
        raise TypeError(f"dtype must be a LoopyType, or convertible to one, found '{type(dtype)}' instead") from None
    return AtomicNumpyType(numpy_dtype) if for_atomic else NumpyType(numpy_dtype)


_TO_UNSIGNED = {np.dtype(np.int8): np.dtype(np.uint8), np.dtype(np.int16): np.dtype(np.uint16),
                np.dtype(np.int32): np.dtype(np.uint32), np.dtype(np.int64): np.dtype(np.uint64)}


def to_unsigned_dtype(dtype):
    """The unsigned integer dtype of a signed one's width (an unsigned one as it is)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        return dtype
    if dtype.kind != "i":
        raise ValueError("can only convert integer types to unsigned")
    return _TO_UNSIGNED[dtype]
