// What the GPU tests share: skipping where there is no GPU, and running a
// transformed kernel on the GPU against the untransformed one in the
// reference interpreter on the same inputs.
#pragma once
#include <gtest/gtest.h>

#include "loom/interpreter.h"
#include "loom/cuda.h"
#include "oracle.h"

// GTEST_SKIP must run in the test body itself, hence a macro.
#define REQUIRE_GPU()                                           \
  do {                                                          \
    std::string why_no_gpu;                                     \
    if (!::loom::cuda::gpu_available(&why_no_gpu)) GTEST_SKIP() << why_no_gpu; \
  } while (0)

namespace loom::testing {

// "" when every written array matches, else a description.
inline std::string gpu_vs_reference(const LoopKernel& reference, const LoopKernel& transformed,
                                    const std::map<std::string, int64_t>& params, uint64_t seed = 11) {
  auto ref = make_host_arrays(reference, params, seed);
  auto gpu = ref;
  interpret(generate(reference), args_of(reference, ref, params));
  cuda::CudaKernel(transformed).call_host(args_of(transformed, gpu, params));
  return compare_written(reference, ref, gpu);
}

}  // namespace loom::testing
