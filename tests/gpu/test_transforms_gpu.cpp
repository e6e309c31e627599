// Transformations of issue 4 on the GPU: each transformed kernel runs on the
// GPU and matches the untransformed kernel in the reference interpreter at
// awkward sizes. Skipped where there is no GPU.
#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;

namespace {

std::string on_gpu(const LoopKernel& reference, const LoopKernel& transformed, const std::map<std::string, int64_t>& params) {
  return loom::testing::gpu_vs_reference(reference, transformed, params, 5);
}

LoopKernel reductions() {
  return make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"},
                     "s[i] = sum(j, a[i, j])\nmx[i] = max(j, a[i, j])\nam[i] = argmax(j, a[i, j])\nan[i] = argmin(j, a[i, j])",
                     {"a: float32[n, m], s: float32[n], mx: float32[n], am: int32[n], an: int32[n]", "..."}, "reductions");
}

}  // namespace

TEST(GpuTransforms, TreeAndWarpReductionsIncludingArgmax) {
  REQUIRE_GPU();
  LoopKernel k = reductions();
  // a tree over 64 threads per row (argmax too), rows on blocks
  LoopKernel tree = tag_inames(split_iname(k, "j", 64, {std::nullopt, InameTag{InameTag::Local, 0}}), "i:g.0");
  // 2D blocks: 4 rows per block on l.1, a tree over 32 lanes on l.0 (argmax) and warp shuffles (sum, max)
  LoopKernel rows = split_iname(split_iname(k, "j", 32, {std::nullopt, InameTag{InameTag::Local, 0}}), "i", 4,
                                {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 1}});
  for (auto [n, m] : {std::pair{5, 1}, {37, 100}, {130, 257}}) {
    EXPECT_EQ(on_gpu(k, tree, {{"n", n}, {"m", m}}), "") << n << "x" << m;
    EXPECT_EQ(on_gpu(k, rows, {{"n", n}, {"m", m}}), "") << n << "x" << m;
  }
}

TEST(GpuTransforms, IlpSlabsJoinAndCse) {
  REQUIRE_GPU();
  LoopKernel mm = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                              {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."});
  LoopKernel ilp = split_iname(split_iname(mm, "j", 16, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 0}}), "i", 4);
  ilp = tag_inames(ilp, "i_outer:g.1, i_inner:ilp");
  SplitOptions slab;
  slab.inner_tag = InameTag{InameTag::Unroll, 0};
  slab.slabs = {0, 1};
  LoopKernel slabs = tag_inames(split_iname(split_iname(mm, "k", 4, slab), "i", 16), "i_outer:g.0, i_inner:l.0");
  for (auto [n, m, l] : {std::tuple{17, 33, 9}, {64, 16, 12}}) {
    std::map<std::string, int64_t> p{{"n", n}, {"m", m}, {"l", l}};
    EXPECT_EQ(on_gpu(mm, ilp, p), "");
    EXPECT_EQ(on_gpu(mm, slabs, p), "");
  }
  LoopKernel sq = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 12}"}, "out[i, j] = (a[i, j] - 1) * (a[i, j] - 1) + j",
                              {"a: float32[n, 12], out: float32[n, 12]"});
  LoopKernel joined = tag_inames(split_iname(join_inames(sq, "i, j", "ij"), "ij", 128), "ij_outer:g.0, ij_inner:l.0");
  EXPECT_EQ(on_gpu(sq, joined, {{"n", 77}}), "");
}

// 16-bit floats on the GPU: computed in float and rounded once per operation,
// like the interpreter, so in-thread results match; max reductions over a
// thread iname (tree, then warp shuffles) are exact in any order.
TEST(GpuTransforms, HalfPrecision) {
  REQUIRE_GPU();
  LoopKernel k = loom::testing::half_precision_kernel();
  LoopKernel per_thread = tag_inames(split_iname(k, "i", 32), "i_outer:g.0, i_inner:l.0");
  for (int64_t n : {1, 45, 300}) EXPECT_EQ(on_gpu(k, per_thread, {{"n", n}, {"m", 7}}), "") << n;
  LoopKernel maxes = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "h[i] = max(j, x[i, j] * x[i, j] - 0.5)",
                                 {"x: float16[n, m], h: float16[n]"}, "half_max");
  // a tree over 64 threads (one row per block), and warp shuffles over 32 lanes (4 rows per block)
  LoopKernel tree = tag_inames(split_iname(maxes, "j", 64, {std::nullopt, InameTag{InameTag::Local, 0}}), "i:g.0");
  LoopKernel warp = split_iname(split_iname(maxes, "j", 32, {std::nullopt, InameTag{InameTag::Local, 0}}), "i", 4,
                                {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 1}});
  for (int64_t m : {1, 37, 200}) {
    EXPECT_EQ(on_gpu(maxes, tree, {{"n", 5}, {"m", m}}), "") << m;
    EXPECT_EQ(on_gpu(maxes, warp, {{"n", 5}, {"m", m}}), "") << m;
  }
}

// group_blocks: one launch along x, mapped back to (g.0, g.1) in groups of
// 3 rows of blocks; with 7 rows the last group has one. Every block runs
// once: each element of c is its own block's (poisoned first by the oracle).
TEST(GpuTransforms, GroupedBlocksCoverTheGridWithAShortLastGroup) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "c[i, j] = 2 * a[i, j] + i - j", {"a: float32[n, m], c: float32[n, m]", "..."});
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 4 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 32 outer_tag=g.0 inner_tag=l.0\n"
                                                            "group_blocks 3\n"));
  for (auto [n, m] : {std::pair{27, 100}, {24, 32}, {3, 5}, {100, 1000}}) EXPECT_EQ(on_gpu(k, t, {{"n", n}, {"m", m}}), "") << n << "x" << m;
}

// rfactor: a row's partial sums on blocks of their own (warp shuffles under
// the rows' and chunks' guards), a global barrier, the rows' sums of them;
// and a whole-array sum as examples/sum_all.loom writes it by hand.
TEST(GpuTransforms, ARowSumAcrossBlocksInTwoLaunches) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j])", {"a: float32[n, m], out: float32[n]"}, "rows");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname j 1000\nrfactor j_outer\nsplit_iname j_inner 32 inner_tag=l.0\n"
                                                            "tag_inames j_outer:g.0 i:g.1\nsplit_iname j_outer_r 32 inner_tag=l.0\n"));
  for (auto [n, m] : {std::pair{3, 100000}, {5, 999}, {1, 1}, {2, 4321}}) EXPECT_EQ(on_gpu(k, t, {{"n", n}, {"m", m}}), "") << n << "x" << m;
  LoopKernel total = make_kernel({"{[i]: 0 <= i < n}"}, "total[0] = sum(i, a[i])", {"a: float32[n], total: float32[1]"}, "total");
  LoopKernel tt = apply_transforms(total, parse_transform_script("assume n mod 4 = 0\nsplit_iname i 16384\nrfactor i_outer\nsplit_iname i_inner 4 inner_tag=vec\n"
                                                                 "split_iname i_inner_outer 256 inner_tag=l.0\ntag_inames i_outer:g.0\n"
                                                                 "split_iname i_outer_r 256 inner_tag=l.0\n"));
  for (int64_t n : {1000000, 16384, 4}) EXPECT_EQ(on_gpu(total, tt, {{"n", n}}), "") << n;
}
