// What every transformation test does with a transformed kernel: the CPU
// oracle against the untransformed one at several sizes (outputs poisoned
// first), an NVRTC compile of its CUDA C where libnvrtc is present, and the
// message of the error an illegal use raises.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "oracle.h"

namespace loom::testing {

inline void check_transformed(const LoopKernel& ref, const LoopKernel& t, const std::vector<std::map<std::string, int64_t>>& sizes) {
  for (auto& p : sizes) EXPECT_EQ(compare_kernels(ref, t, p), "") << t.str();
  if (cuda::nvrtc_available()) {
    cuda::CompileResult r = cuda::compile(cuda::print_source(generate(t)), "sm_90");
    EXPECT_GT(r.cubin.size(), 0u);
  }
}

// The message of the exception f throws ("no error" when none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// How often `what` occurs in `text` (barriers, guards in generated code).
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// c[i, j] = sum(k, a[i, k] * b[k, j]) over n x m x l, the kernel every
// memory-transformation test schedules.
inline LoopKernel matmul_kernel() {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                     {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
}

}  // namespace loom::testing
