"""loopy.diagnostic's names for Loom's errors, so `except lp.diagnostic.LoopyError`
and its kin port unchanged. Loom raises its own classes (loom.LoomError and
subclasses, with the command line's messages); each loopy name is one of them.

loopy's warning classes are here too, with loopy's hierarchy, so that scripts'
`filterwarnings(..., category=lp.LoopyWarning)` lines run. Where loopy warns
(a write race in a prefetch, a fallback scheduler), Loom mostly refuses with an
error instead; warn_with_kernel issues a warning as loopy's does, honouring the
kernel's silenced_warnings."""
from ._loom import ArgumentError, KernelError, LoomError, ParseError, TransformError

LoopyError = LoomError
# kernels Loom refuses as inconsistent, racy or unsynchronized
LoopyTypeError = KernelError
TypeInferenceFailure = KernelError
MissingBarrierError = KernelError
MissingDefinitionError = KernelError
ExpressionNotAffineError = KernelError
UnscheduledInstructionError = KernelError
ReductionIsNotTriangularError = KernelError
LoopyIndexError = KernelError
VariableAccessNotOrdered = KernelError  # (Loom: "... both write elements of 'out' and no dependency orders them")
DependencyCycleFound = KernelError
DependencyTypeInferenceFailure = KernelError
CannotBranchDomainTree = KernelError
ExpressionToAffineConversionError = KernelError
# a size (a temporary's shape, a block's extent) with no constant or parametric bound
StaticValueFindingError = KernelError
# transformations refused, arguments rejected, text that does not parse
LoopyTransformError = TransformError
LoopyArgumentError = ArgumentError
LoopyParseError = ParseError


class LoopyWarningBase(UserWarning):
    """The base of loopy's warnings and advisories."""


class LoopyWarning(LoopyWarningBase):
    """The base of loopy's warnings (Loom raises errors where loopy warns; scripts that filter these still run)."""


class LoopyAdvisory(LoopyWarningBase):
    """loopy's advice that is not a warning about correctness."""


class ParameterFinderWarning(LoopyWarning):
    """loopy: a parameter could not be found from the arguments' shapes."""


class WriteRaceConditionWarning(LoopyWarning):
    """loopy: an instruction writes in parallel where threads race (Loom refuses such kernels)."""


class DirectCallUncachedWarning(LoopyWarning):
    """loopy: a kernel called directly is compiled anew (Loom keeps each compiled variant with the kernel)."""


def warn_with_kernel(kernel, id, text, type=LoopyWarning, stacklevel=None):
    """loopy's warn_with_kernel: warns `in kernel NAME: TEXT` with category `type`, unless
    a pattern of the kernel's silenced_warnings (fnmatch, as in loopy) matches `id`."""
    import warnings
    from fnmatch import fnmatchcase
    for pattern in getattr(kernel, "silenced_warnings", ()) or ():
        if fnmatchcase(id, pattern):
            return
    text += f" (add '{id}' to silenced_warnings kernel attribute to disable)"
    stacklevel = 2 if stacklevel is None else stacklevel + 1
    warnings.warn(f"in kernel {kernel.name}: {text}", type, stacklevel=stacklevel)


warn = warn_with_kernel
