"""loopy.diagnostic's names for Loom's errors, so `except lp.diagnostic.LoopyError`
and its kin port unchanged. Loom raises its own classes (loom.LoomError and
subclasses, with the command line's messages); each loopy name is one of them."""
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
# transformations refused, arguments rejected, text that does not parse
LoopyTransformError = TransformError
LoopyArgumentError = ArgumentError
LoopyParseError = ParseError


class LoopyWarning(UserWarning):
    """The base of loopy's warnings (Loom raises errors where loopy warns; scripts that filter these still run)."""


class WriteRaceConditionWarning(LoopyWarning):
    pass


class LoopyAdvisory(LoopyWarning):
    pass
