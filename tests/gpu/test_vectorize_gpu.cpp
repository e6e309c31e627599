// Vector accesses on the H200: float4/double2 loads and stores from `vec`
// inames (element-wise, a row reduction, a register-tiled product with
// vectorized prefetches) against the untransformed kernel in the reference
// interpreter, and the launch-time refusal of an array that is not aligned
// to the vector size.
#include <gtest/gtest.h>

#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;
using loom::testing::gpu_vs_reference;

namespace {
LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }
LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }
}  // namespace

TEST(GpuVectorize, ElementwiseRowsAndTiles) {
  REQUIRE_GPU();
  LoopKernel axpy = kernel_of(R"(kernel axpy
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float64[n], out: float32[n], out2: float64[n]
instructions:
  out[i] = 2*a[i] + 1
  out2[i] = b[i] - a[i]
)");
  LoopKernel v4 = transformed(axpy, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\nsplit_iname i_outer 128 outer_tag=g.0 inner_tag=l.0\n");
  LoopKernel v2 = transformed(axpy, "assume n mod 2 = 0\nsplit_iname i 2 inner_tag=vec\nsplit_iname i_outer 128 outer_tag=g.0 inner_tag=l.0\n");
  for (int64_t n : {4, 508, 512, 100004}) {
    EXPECT_EQ(gpu_vs_reference(axpy, v4, {{"n", n}}), "") << n;
    EXPECT_EQ(gpu_vs_reference(axpy, v2, {{"n", n}}), "") << n;
  }
  LoopKernel rows = kernel_of(R"(kernel rows
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
arguments:
  a: float32[n, m], out: float32[n]
instructions:
  out[i] = sum(j, a[i, j])
)");
  LoopKernel r = transformed(rows, "assume m mod 4 = 0\nsplit_iname j 4 inner_tag=vec\nsplit_iname j_outer 8 inner_tag=l.0\n"
                                   "split_iname i 32 outer_tag=g.0 inner_tag=l.1\n");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{1, 4}, {33, 32}, {1000, 36}, {77, 1024}})
    EXPECT_EQ(gpu_vs_reference(rows, r, {{"n", n}, {"m", m}}), "") << n << "x" << m;
  LoopKernel mm = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                              {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  LoopKernel t = transformed(mm,
                             "assume n mod 32 = 0 and m mod 32 = 0 and l mod 8 = 0\n"
                             "split_iname i 32 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
                             "split_iname i_inner 4 outer_tag=l.1 inner_tag=ilp\nsplit_iname j_inner 4 outer_tag=l.0 inner_tag=vec\n"
                             "split_iname k 8\nprioritize_loops k_outer,k_inner,i_inner_inner,j_inner_inner\n"
                             "add_prefetch a i_inner_outer,i_inner_inner,k_inner vector_width=4\n"
                             "add_prefetch b k_inner,j_inner_outer,j_inner_inner vector_width=4 padding=0\n");
  for (auto p : {std::map<std::string, int64_t>{{"n", 32}, {"m", 64}, {"l", 8}}, {{"n", 96}, {"m", 32}, {"l", 200}}})
    EXPECT_EQ(gpu_vs_reference(mm, t, p), "");
}

TEST(GpuVectorize, MisalignedArrayIsRefusedAtLaunch) {
  REQUIRE_GPU();
  LoopKernel k = kernel_of(R"(kernel scale
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = 3*a[i]
)");
  cuda::CudaKernel ck(transformed(k, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n"));
  cuda::DeviceBuffer a(4096), out(4096);
  auto arg = [](void* p) {
    ArgValue v;
    v.kind = ArgValue::Array;
    v.array = ArrayRef{p, types::float32, {256}};
    return v;
  };
  ArgMap ok{{"a", arg(a.ptr())}, {"out", arg(out.ptr())}};
  EXPECT_NO_THROW(ck.launch(ok));
  ArgMap shifted{{"a", arg(static_cast<char*>(a.ptr()) + 4)}, {"out", arg(out.ptr())}};
  try {
    ck.launch(shifted);
    FAIL() << "a misaligned array was launched";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'a' must start at a multiple of 16 bytes"), std::string::npos) << e.what();
  }
}

TEST(GpuVectorize, ArraysWithAVecAxis) {
  REQUIRE_GPU();
  // loopy's form: the lanes are an axis of the array (tag_array_axes c,vec), a vec iname runs over them
  LoopKernel k = kernel_of(R"(kernel vadd4
domains:
  {[i, j]: 0 <= i < n and 0 <= j < 4}
arguments:
  a: float32[n, 4], b: float32[n, 4], out: float32[n, 4]
instructions:
  out[i, j] = a[i, j] + 2 * b[i, j]
)");
  LoopKernel d = kernel_of(R"(kernel scale2
domains:
  {[i, j]: 0 <= i < n and 0 <= j < 2}
arguments:
  x: float64[n, 2], y: float64[n, 2]
instructions:
  y[i, j] = x[i, j] * 3 - j
)");
  LoopKernel v4 = transformed(k, "tag_array_axes a,b,out c,vec\nsplit_iname i 64 outer_tag=g.0 inner_tag=l.0\ntag_inames j:vec\n");
  LoopKernel v2 = transformed(d, "tag_array_axes x,y c,vec\nsplit_iname i 128 outer_tag=g.0 inner_tag=l.0\ntag_inames j:vec\n");
  for (int64_t n : {1, 63, 64, 100001}) {
    EXPECT_EQ(gpu_vs_reference(k, v4, {{"n", n}}), "") << n;
    EXPECT_EQ(gpu_vs_reference(d, v2, {{"n", n}}), "") << n;
  }
}
