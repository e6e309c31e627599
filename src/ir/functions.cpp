// The table of math functions.
#include "loom/functions.h"

namespace loom {

namespace {
const MathFunction kFunctions[] = {
    {"sqrt", 1, MathFunction::FloatUnary},   {"rsqrt", 1, MathFunction::FloatUnary},
    {"exp", 1, MathFunction::FloatUnary},    {"exp2", 1, MathFunction::FloatUnary},
    {"expm1", 1, MathFunction::FloatUnary},  {"log", 1, MathFunction::FloatUnary},
    {"log2", 1, MathFunction::FloatUnary},   {"log10", 1, MathFunction::FloatUnary},
    {"log1p", 1, MathFunction::FloatUnary},  {"sin", 1, MathFunction::FloatUnary},
    {"cos", 1, MathFunction::FloatUnary},    {"tan", 1, MathFunction::FloatUnary},
    {"asin", 1, MathFunction::FloatUnary},   {"acos", 1, MathFunction::FloatUnary},
    {"atan", 1, MathFunction::FloatUnary},   {"sinh", 1, MathFunction::FloatUnary},
    {"cosh", 1, MathFunction::FloatUnary},   {"tanh", 1, MathFunction::FloatUnary},
    {"erf", 1, MathFunction::FloatUnary},    {"floor", 1, MathFunction::FloatUnary},
    {"ceil", 1, MathFunction::FloatUnary},   {"round", 1, MathFunction::FloatUnary},
    {"trunc", 1, MathFunction::FloatUnary},  {"pow", 2, MathFunction::FloatBinary},
    {"atan2", 2, MathFunction::FloatBinary}, {"fmod", 2, MathFunction::FloatBinary},
    {"abs", 1, MathFunction::SameUnary},     {"fabs", 1, MathFunction::SameUnary},
    {"min", 2, MathFunction::SameBinary},    {"max", 2, MathFunction::SameBinary},
    {"fmin", 2, MathFunction::SameBinary},   {"fmax", 2, MathFunction::SameBinary},
    {"fma", 3, MathFunction::Fma},
    // to TF32's 10-bit mantissa, nearest with ties away from zero (cvt.rna.tf32.f32):
    // the operands of a TF32 tensor-core product (tensor_core tf32=true)
    {"round_tf32", 1, MathFunction::FloatUnary},
    // to TF32 toward zero (the 13 low mantissa bits dropped): what the
    // warpgroup's tensor cores (wgmma) make of float32 tiles in shared memory
    {"trunc_tf32", 1, MathFunction::FloatUnary},
};
}  // namespace

const MathFunction* find_math_function(const std::string& name) {
  for (auto& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace loom
