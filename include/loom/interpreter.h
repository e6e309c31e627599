// The interpreter target (targets/interpreter/): a third target beside cuda
// and cpu, independent of any compiler, the reference of `loom run` and of
// the test suite.
#pragma once
#include "loom/codegen.h"
#include "loom/runtime.h"

namespace loom {

// The reference interpreter: runs a generated kernel on host arrays, one
// thread of the grid after another (hardware inames become loops), in the
// types of the kernel, barriers with GPU semantics (every thread reaches a
// barrier before any passes it). Slow, exact, and independent of any
// compiler; it is the host reference of `loom run`.
// With `counts`, every element each thread loads from or stores to an array
// (argument or temporary) is counted by the array's name: what the kernel
// statistics (loom/statistics.h) predict, observed.
struct InterpretCounts {
  std::map<std::string, int64_t> loads, stores;
};
void interpret(const GeneratedKernel& g, const ArgMap& host_args, InterpretCounts* counts = nullptr);

}  // namespace loom
