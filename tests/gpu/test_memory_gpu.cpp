// The memory transformations on the H200: precompute into shared memory,
// buffer_array in registers and shared memory, privatized temporaries, and
// dynamic shared memory above 48 KiB (opt-in), each against the untransformed
// kernel in the reference interpreter.
#include <gtest/gtest.h>

#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;
using loom::testing::gpu_vs_reference;

namespace {
LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }
}  // namespace

TEST(GpuMemory, PrecomputeAndBufferArray) {
  REQUIRE_GPU();
  LoopKernel st = kernel_of(R"(kernel st
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n + 2], out: float32[n]
instructions:
  f(x) := 2 * a[x] + 1
  out[i] = f(i) + f(i + 1) + f(i + 2)
)");
  LoopKernel p = apply_transforms(st, parse_transform_script("split_iname i 128 outer_tag=g.0 inner_tag=l.0\nprecompute f i_inner\n"));
  for (int64_t n : {1, 127, 128, 1000, 100003}) EXPECT_EQ(gpu_vs_reference(st, p, {{"n", n}}), "") << n;
  LoopKernel acc = kernel_of(R"(kernel acc
domains:
  {[i, k]: 0 <= i < n and 0 <= k < 5}
arguments:
  a: float32[n, 5], out: float32[n]
instructions:
  out[i] = out[i] + a[i, k] * (k + 1)
)");
  LoopKernel local = apply_transforms(acc, parse_transform_script("split_iname i 64 outer_tag=g.0 inner_tag=l.0\nbuffer_array out i_inner,k\n"));
  LoopKernel regs = apply_transforms(acc, parse_transform_script("split_iname i 4\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n"
                                                                 "buffer_array out i_inner,k temporary_scope=private\n"));
  for (int64_t n : {1, 63, 1000, 65537}) {
    EXPECT_EQ(gpu_vs_reference(acc, local, {{"n", n}}), "") << n;
    EXPECT_EQ(gpu_vs_reference(acc, regs, {{"n", n}}), "") << n;
  }
}

TEST(GpuMemory, DynamicSharedMemoryAbove48KiB) {
  REQUIRE_GPU();
  // 16384 floats (64 KiB) reversed through shared memory by 1024 threads per block
  LoopKernel k = kernel_of(R"(kernel big_reverse
domains:
  {[g, t, u, r, s]: 0 <= g < nb and 0 <= t, u < 1024 and 0 <= r, s < 16}
arguments:
  a: float32[16384 * nb], out: float32[16384 * nb]
temporaries:
  tile: float32[16384] local
instructions:
  tile[1024 * r + t] = a[16384 * g + 1024 * r + t]  {id=w}
  out[16384 * g + 1024 * s + u] = tile[16383 - 1024 * s - u]  {dep=w}
)");
  LoopKernel t = tag_inames(k, "g:g.0, t:l.0, u:l.0");
  EXPECT_EQ(generate(t).local_bytes(), 65536);
  EXPECT_EQ(gpu_vs_reference(k, t, {{"nb", 3}}), "");
}
