// Vector accesses through `vec` inames (codegen/vectorize.cpp): which accesses
// become float4/float2/double2 loads and stores (contiguous and aligned under
// the assumptions), the fallbacks (unproven alignment, strides, guarded lanes,
// a written array read elsewhere), vectorized prefetches, and the CPU oracle,
// which runs vector loops with the CUDA target's meaning (loads before the
// lanes, stores after them), against the untransformed kernel.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }

LoopKernel transformed(const LoopKernel& k, const std::string& script) {
  return apply_transforms(k, parse_transform_script(script));
}

std::string cuda_of(const LoopKernel& k) { return cuda::print_source(generate(k)); }

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

const char* kAxpy = R"(kernel axpy
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float32[n], out: float32[n]
instructions:
  out[i] = 2*a[i] + b[i]
)";

}  // namespace

TEST(Vectorize, ContiguousAlignedAccessesBecomeFloat4) {
  LoopKernel k = kernel_of(kAxpy);
  LoopKernel t = transformed(k, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "*reinterpret_cast<const float4 *>"), 2) << src;  // a and b
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>"), 1) << src;        // out
  GeneratedKernel g = generate(t);
  EXPECT_EQ(g.argument_alignment, (std::map<std::string, int64_t>{{"a", 16}, {"b", 16}, {"out", 16}}));
  // the tail of a size that is a multiple of 4 but not of 256 is one guard around the whole vector
  check_transformed(k, t, {{{"n", 4}}, {{"n", 8}}, {{"n", 260}}, {{"n", 1028}}});
}

TEST(Vectorize, UnprovenAlignmentOrStrideFallsBackToScalars) {
  LoopKernel k = kernel_of(kAxpy);
  // without the assumption the lanes are guarded one by one: unrolled
  LoopKernel t = transformed(k, "split_iname i 4 inner_tag=vec\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "float4"), 0) << src;
  EXPECT_TRUE(generate(t).argument_alignment.empty());
  check_transformed(k, t, {{{"n", 1}}, {{"n", 7}}, {{"n", 259}}});
  // a stride of 2 and an offset of 1: only the contiguous, aligned access is a vector
  LoopKernel s = kernel_of(R"(kernel strided
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[2*n], b: float32[n + 1], out: float32[n]
instructions:
  out[i] = a[2*i] + b[i + 1]
)");
  LoopKernel st = transformed(s, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\n");
  src = cuda_of(st);
  EXPECT_EQ(count(src, "const float4"), 0) << src;
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>(&(out["), 1) << src;
  check_transformed(s, st, {{{"n", 4}}, {{"n", 12}}});
  // three lanes have no vector type: unrolled
  LoopKernel three = transformed(k, "assume n mod 3 = 0\nsplit_iname i 3 inner_tag=vec\n");
  EXPECT_EQ(count(cuda_of(three), "reinterpret_cast"), 0);
  check_transformed(k, three, {{{"n", 3}}, {{"n", 9}}});
}

TEST(Vectorize, RowStrideNeedsADivisibleParameter) {
  LoopKernel k = kernel_of(R"(kernel scale
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
arguments:
  a: float32[n, m], out: float32[n, m]
instructions:
  out[i, j] = 3*a[i, j]
)");
  // m mod 2 = 0 proves rows of float2 only
  LoopKernel two = transformed(k, "assume m mod 2 = 0\nsplit_iname j 2 inner_tag=vec\n");
  EXPECT_EQ(count(cuda_of(two), "const float2"), 1);
  check_transformed(k, two, {{{"n", 3}, {"m", 6}}});
  LoopKernel four = transformed(k, "assume m mod 8 = 0\nsplit_iname j 4 inner_tag=vec\n");
  EXPECT_EQ(count(cuda_of(four), "const float4"), 1);
  check_transformed(k, four, {{{"n", 3}, {"m", 8}}, {{"n", 1}, {"m", 24}}});
  LoopKernel unproven = transformed(k, "assume m mod 2 = 0\nsplit_iname j 4 inner_tag=vec\n");
  EXPECT_EQ(count(cuda_of(unproven), "float4"), 0);
  check_transformed(k, unproven, {{{"n", 3}, {"m", 6}}});
}

TEST(Vectorize, AWrittenArrayReadAtAnotherElementStaysScalar) {
  // lane l reads what lane l - 1 wrote: a vector store after the lanes would
  // hide it, so neither the store nor the loads of `a` are vectors
  LoopKernel k = kernel_of(R"(kernel carry
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n + 4], b: float32[n + 4]
instructions:
  a[i + 4] = a[i + 4] + 0.5*a[i + 3] + b[i + 4]
)");
  LoopKernel t = transformed(k, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "float4 *>(&(a["), 0) << src;
  EXPECT_EQ(count(src, "const float4 *>(&(b["), 1) << src;
  check_transformed(k, t, {{{"n", 4}}, {{"n", 16}}});
  // reading the element it writes is fine: load, update and store as vectors
  LoopKernel own = kernel_of(R"(kernel own
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float32[n]
instructions:
  a[i] = a[i]*b[i] + 1
)");
  LoopKernel o = transformed(own, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\n");
  src = cuda_of(o);
  EXPECT_EQ(count(src, "const float4 *>(&(a["), 1) << src;
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>(&(a["), 1) << src;
  check_transformed(own, o, {{{"n", 8}}});
}

TEST(Vectorize, ReductionOverAVecInameSumsTheLanesInOrder) {
  LoopKernel k = kernel_of(R"(kernel rows
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
arguments:
  a: float32[n, m], out: float32[n]
instructions:
  out[i] = sum(j, a[i, j])
)");
  LoopKernel t = transformed(k, "assume m mod 4 = 0\nsplit_iname j 4 inner_tag=vec\nsplit_iname i 32 outer_tag=g.0 inner_tag=l.0\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const float4"), 1) << src;
  check_transformed(k, t, {{{"n", 33}, {"m", 4}}, {{"n", 5}, {"m", 12}}, {{"n", 1}, {"m", 0}}});
}

TEST(Vectorize, RegisterTileStoresAndSharedMemoryReads) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  std::string script =
      "assume n mod 32 = 0 and m mod 32 = 0 and l mod 8 = 0\n"
      "split_iname i 32 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
      "split_iname i_inner 4 outer_tag=l.1 inner_tag=ilp\nsplit_iname j_inner 4 outer_tag=l.0 inner_tag=vec\n"
      "split_iname k 8\nprioritize_loops k_outer,k_inner,i_inner_inner,j_inner_inner\n"
      "add_prefetch a i_inner_outer,i_inner_inner,k_inner vector_width=4\n"
      "add_prefetch b k_inner,j_inner_outer,j_inner_inner vector_width=4 padding=0\n";
  LoopKernel t = transformed(k, script);
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const float4 *>(&(a["), 1) << src;           // the fetches
  EXPECT_EQ(count(src, "const float4 *>(&(b["), 1) << src;
  EXPECT_EQ(count(src, "const float4 *>(&(b_fetch["), 4) << src;     // one per register-tile row
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>(&(c["), 4) << src;  // the tile's store
  EXPECT_EQ(count(src, "if (16"), 0) << src;  // the fetch guards are proven by the assumptions
  check_transformed(k, t, {{{"n", 32}, {"m", 64}, {"l", 8}}, {{"n", 64}, {"m", 32}, {"l", 24}}});
}

TEST(Vectorize, DoublesAndIntegers) {
  LoopKernel k = kernel_of(R"(kernel mixed
domains:
  {[i]: 0 <= i < n}
arguments:
  x: float64[n], y: float64[n], p: int32[n], q: int32[n]
instructions:
  y[i] = x[i] * 2
  q[i] = p[i] + 7
)");
  LoopKernel t = transformed(k, "assume n mod 4 = 0\nsplit_iname i 2 inner_tag=vec\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const double2"), 1) << src;
  EXPECT_EQ(count(src, "const int2"), 1) << src;
  check_transformed(k, t, {{{"n", 4}}, {{"n", 12}}});
}

TEST(Vectorize, PrefetchVectorWidthRefusals) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 6}"}, "out[i] = sum(j, a[i, j])", {"a: float32[n, 6], out: float32[n]"}, "r");
  LoopKernel t = transformed(k, "split_iname i 16 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_NE(error_of([&] { transformed(t, "add_prefetch a i_inner,j vector_width=4\n"); }).find("does not divide the contiguous extent 6"),
            std::string::npos);
  EXPECT_NE(error_of([&] { transformed(t, "add_prefetch a i_inner,j vector_width=2 default_tag=for\n"); }).find("needs default_tag='l.auto'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { transformed(t, "add_prefetch a i_inner,j vector_width=0\n"); }).find("argument 'vector_width' must be one of 1, 2 or 4, got '0'"),
            std::string::npos);
  LoopKernel two = transformed(t, "add_prefetch a i_inner,j vector_width=2\n");
  check_transformed(k, two, {{{"n", 16}}, {{"n", 37}}});
}

TEST(Vectorize, SeveralAssignmentsRunOneAfterTheOther) {
  // t is private to each lane (privatized over the vec iname): a, b and out move as vectors
  LoopKernel k = kernel_of(R"(kernel two
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float32[n], out: float32[n]
instructions:
  <float32> t = 2*a[i]  {id=t}
  out[i] = t + b[i]  {dep=t}
)");
  LoopKernel t = transformed(k, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const float4"), 2) << src;
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>(&(out["), 1) << src;
  check_transformed(k, t, {{{"n", 4}}, {{"n", 20}}});
  // s is one value for all lanes, read back by the next lane's first
  // assignment: assignment after assignment would change the result, so the loop is unrolled
  LoopKernel chain = kernel_of(R"(kernel chain
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
temporaries:
  s: float32
instructions:
  s = 0  {id=z}
  out[i] = a[i] + s  {id=w, dep=z}
  s = out[i]  {id=u, dep=w}
)");
  LoopKernel c = transformed(chain, "assume n mod 4 = 0\nsplit_iname i 4 inner_tag=vec\n");
  EXPECT_EQ(count(cuda_of(c), "float4"), 0) << cuda_of(c);
  check_transformed(chain, c, {{{"n", 8}}});
}

TEST(Vectorize, AGuardTheLanesShareGoesAroundTheVector) {
  // a DG element kernel reading rows of D and u as float4 (the sum over j
  // split by 4, vec inside): the fetch of u is guarded by the element (the
  // last block is partial), not by the lane, so the guard wraps the float4 copy
  KernelFile f = parse_kernel_text(R"(kernel dg32_vec

domains:
  {[e, i, j]: 0 <= e < ne and 0 <= i, j < 32}

arguments:
  D: float32[32, 32]
  u: float32[ne, 32]
  res: float32[ne, 32]

instructions:
  res[e, i] = sum(j, D[i, j] * u[e, j])

transforms:
  split_iname e 128 outer_tag=g.0
  split_iname e_inner 4 outer_tag=l.1 inner_tag=ilp
  split_iname i 4 outer_tag=l.0 inner_tag=ilp
  split_iname j 4 inner_tag=vec
  prioritize_loops j_outer,e_inner_inner,i_inner,j_inner
  add_prefetch D i_outer,i_inner,j_outer,j_inner padding=4
  add_prefetch u e_inner_outer,e_inner_inner,j_outer,j_inner vector_width=4 padding=4
)");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const float4 *>(&(u["), 1) << src;
  EXPECT_EQ(count(src, "const float4 *>(&(D_fetch["), 16) << src;  // one per product of the 4x4 tile (the compiler merges repeats)
  check_transformed(f.kernel, t, {{{"ne", 1}}, {{"ne", 130}}});
}

TEST(Vectorize, TransposedTileThroughPrecompute) {
  // a's tile stored transposed (storage_axes=q,p) by a compute loop tagged by
  // hand: float4 along k from global memory, four scalar stores down the
  // tile; the footprint guards are proven by the assumptions and left out
  LoopKernel k = kernel_of(R"(kernel mt
domains:
  {[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}
arguments:
  a: float32[n, l], b: float32[l, m], c: float32[n, m]
instructions:
  aa(p, q) := a[p, q]
  c[i, j] = sum(k, aa(i, k) * b[k, j])
)");
  LoopKernel t = transformed(k,
                             "assume n mod 32 = 0 and m mod 32 = 0 and l mod 8 = 0 and n >= 32 and m >= 32 and l >= 8\n"
                             "split_iname i 32 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
                             "split_iname i_inner 4 outer_tag=l.1 inner_tag=ilp\nsplit_iname j_inner 4 outer_tag=l.0 inner_tag=vec\n"
                             "split_iname k 8\nprioritize_loops k_outer,k_inner,i_inner_inner,j_inner_inner\n"
                             "precompute aa i_inner_outer,i_inner_inner,k_inner storage_axes=q,p precompute_inames=ak,ai "
                             "temporary_address_space=local default_tag=for\n"
                             "split_iname ak 4 inner_tag=vec\ntag_inames ak_outer:l.1 ai:l.0\nprioritize_loops ak_outer,ak_inner\n");
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "const float4 *>(&(a["), 1) << src;
  EXPECT_EQ(count(src, "if (m"), 0) << src;
  check_transformed(k, t, {{{"n", 32}, {"m", 64}, {"l", 8}}, {{"n", 64}, {"m", 32}, {"l", 24}}});
}

// A fetch spread over a block's threads by joining a row split with the
// vector groups of a row: the offsets hold x // 8 and x % 8 of the joined
// iname, which are no polynomial but the same for every lane, so they stay
// opaque terms whose coefficients (a multiple of the row and of 4) prove the
// alignment.
TEST(Vectorize, FloorDivisionsAndModuloOfOtherInamesKeepTheVector) {
  auto rows = [](const std::string& row_length) {
    return kernel_of("kernel rows\ndomains:\n  {[r, c]: 0 <= r < n and 0 <= c < 32}\narguments:\n  a: float32[n, " + row_length +
                     "], out: float32[n, 32]\ninstructions:\n  out[r, c] = 3 * a[r, c]\n");
  };
  const char* schedule = "assume n mod 32 = 0\nsplit_iname c 4 inner_tag=vec\nsplit_iname r 2\n"
                         "join_inames r_inner,c_outer new_iname=x\ntag_inames x:l.0\n"
                         "split_iname r_outer 16 outer_tag=g.0 inner_tag=l.1\n";
  LoopKernel k = rows("32");
  LoopKernel t = transformed(k, schedule);
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "*reinterpret_cast<const float4 *>"), 1) << src;
  EXPECT_EQ(count(src, "*reinterpret_cast<float4 *>"), 1) << src;
  check_transformed(k, t, {{{"n", 32}}, {{"n", 96}}});
  // with rows of an odd length the same split cannot be proven aligned
  std::string scalar = cuda_of(transformed(rows("33"), schedule));
  EXPECT_EQ(count(scalar, "*reinterpret_cast<const float4 *>"), 0) << scalar;
  EXPECT_EQ(count(scalar, "*reinterpret_cast<float4 *>"), 1) << scalar;
}

// A fetch guarded at the array's end: `64*i_outer + 4*f + lane < n` holds for
// all four lanes or for none when n is a multiple of 4, so the guard goes
// around one float4 copy; without that assumption the lanes are copied one
// by one, each under its own guard.
TEST(Vectorize, AGuardAtAnEdgeTheLanesAgreeOnGoesAroundTheVector) {
  LoopKernel k = kernel_of(R"(kernel scale
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = 2 * a[i]
)");
  const char* schedule = "split_iname i 64 outer_tag=g.0 inner_tag=l.0\nadd_prefetch a i_inner vector_width=4\n";
  LoopKernel t = transformed(k, std::string("assume n mod 4 = 0\n") + schedule);
  std::string src = cuda_of(t);
  EXPECT_EQ(count(src, "*reinterpret_cast<const float4 *>(&(a["), 1) << src;
  check_transformed(k, t, {{{"n", 4}}, {{"n", 68}}, {{"n", 200}}});
  LoopKernel u = transformed(k, schedule);
  std::string scalar = cuda_of(u);
  EXPECT_EQ(count(scalar, "float4"), 0) << scalar;
  check_transformed(k, u, {{{"n", 5}}, {{"n", 67}}});
}
