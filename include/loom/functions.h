// The math functions the kernel language knows, with how their result type
// follows from their arguments. Shared by type inference and every target.
#pragma once
#include <string>

namespace loom {

struct MathFunction {
  enum Kind {
    FloatUnary,   // sqrt, exp, ...: float in, same float out (ints promote to float64)
    FloatBinary,  // pow, atan2, fmod: promoted float
    SameUnary,    // abs: same type as the argument
    SameBinary,   // min, max: promoted type
    Fma           // fma(a, b, c): promoted float
  };
  const char* name;
  int arity;
  Kind kind;
};

const MathFunction* find_math_function(const std::string& name);

}  // namespace loom
