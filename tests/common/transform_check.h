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

// Batched 16x16 products (examples/bmm16.loom without its schedule) with
// the transformation script `transforms` (indented lines).
inline KernelFile batched_matmul(const std::string& transforms) {
  return parse_kernel_text(R"(kernel bmm
domains:
  {[b, i, j, k]: 0 <= b < nb and 0 <= i, j, k < 16}
arguments:
  a: float32[nb, 16, 16], x: float32[nb, 16, 16], c: float32[nb, 16, 16]
instructions:
  c[b, i, j] = sum(k, a[b, i, k] * x[b, k, j])
transforms:
)" + transforms);
}

// sgemm_any's schedule of matmul_kernel(), smaller: 32x64 block tiles of c
// on 8x8 threads, each a 4x8 register tile (two float4 along j, 32 apart), k
// tiles of 16, both tiles prefetched (with `fetch_options` added to each).
inline std::string register_tiles_script(const std::string& fetch_options = "") {
  return "assume m mod 4 = 0 and l mod 4 = 0\n"
         "split_iname i 32 outer_tag=g.1\n"
         "split_iname j 64 outer_tag=g.0\n"
         "split_iname i_inner 8 outer_tag=ilp inner_tag=l.1\n"
         "split_iname j_inner 4 inner_tag=vec\n"
         "split_iname j_inner_outer 8 outer_tag=ilp inner_tag=l.0\n"
         "split_iname k 16\n"
         "prioritize_loops k_outer,k_inner,i_inner_outer,j_inner_outer_outer,j_inner_inner\n"
         "add_prefetch a i_inner_outer,i_inner_inner,k_inner " + fetch_options + "\n"
         "add_prefetch b k_inner,j_inner_outer_outer,j_inner_outer_inner,j_inner_inner vector_width=4 padding=0 " + fetch_options + "\n";
}

}  // namespace loom::testing
