// add_prefetch on the GPU: tiled matrix products (square tiles, tiles larger
// than the block), a stencil with its halo and a private prefetch, each
// against the untransformed kernel in the reference interpreter at awkward
// sizes; the barriers Loom places must make them race-free on real hardware.
// Skipped where there is no GPU.
#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;

namespace {

LoopKernel matmul() {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                     {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
}

LoopKernel tiled(const LoopKernel& k, const std::string& i, const std::string& j, int64_t t) {
  LoopKernel r = split_iname(k, i, t, {InameTag{InameTag::Group, 1}, InameTag{InameTag::Local, 1}});
  return split_iname(r, j, t, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 0}});
}

}  // namespace

TEST(GpuPrefetch, MatmulTilesStencilHaloAndPrivateFetch) {
  REQUIRE_GPU();
  LoopKernel mm = matmul();
  LoopKernel square = split_iname(tiled(mm, "i", "j", 16), "k", 16);
  square = add_prefetch(add_prefetch(square, "a", "i_inner, k_inner"), "b", "k_inner, j_inner");
  LoopKernel wide = split_iname(split_iname(tiled(mm, "i", "j", 8), "k", 8), "k_outer", 4);
  wide = add_prefetch(add_prefetch(wide, "a", "i_inner, k_outer_inner, k_inner"), "b", "k_outer_inner, k_inner, j_inner");
  for (auto [n, m, l] : {std::tuple{1, 1, 1}, {33, 17, 45}, {128, 64, 96}, {130, 257, 70}}) {
    std::map<std::string, int64_t> p{{"n", n}, {"m", m}, {"l", l}};
    EXPECT_EQ(loom::testing::gpu_vs_reference(mm, square, p), "") << n << "x" << m << "x" << l;
    EXPECT_EQ(loom::testing::gpu_vs_reference(mm, wide, p), "") << n << "x" << m << "x" << l;
  }
  // register tiles (4x4 per thread, ilp) with both operands prefetched: guards everywhere
  LoopKernel reg = apply_transforms(mm, parse_transform_script(
      "split_iname i 64 outer_tag=g.1\nsplit_iname j 64 outer_tag=g.0\n"
      "split_iname i_inner 4 outer_tag=l.1 inner_tag=ilp\nsplit_iname j_inner 16 outer_tag=ilp inner_tag=l.0\n"
      "split_iname k 16\nprioritize_loops k_outer,k_inner,i_inner_inner,j_inner_outer\n"
      "add_prefetch a i_inner_outer,i_inner_inner,k_inner\nadd_prefetch b k_inner,j_inner_outer,j_inner_inner\n"));
  for (auto [n, m, l] : {std::tuple{1, 1, 1}, {70, 33, 17}, {130, 257, 70}})
    EXPECT_EQ(loom::testing::gpu_vs_reference(mm, reg, {{"n", n}, {"m", m}, {"l", l}}), "") << "register tiles " << n << "x" << m << "x" << l;
  LoopKernel st = make_kernel({"{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}"},
                              "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]",
                              {"u: float32[n, m], out: float32[n, m]"}, "stencil");
  LoopKernel halo = add_prefetch(tiled(st, "i", "j", 16), "u", "i_inner, j_inner");
  for (auto [n, m] : {std::pair{3, 3}, {37, 21}, {258, 130}})
    EXPECT_EQ(loom::testing::gpu_vs_reference(st, halo, {{"n", n}, {"m", m}}), "") << n << "x" << m;
  LoopKernel rows = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"}, "out[i] = sum(j, a[i, j] * a[i, j])",
                                {"a: float32[n, 8], out: float32[n]"}, "rows");
  PrefetchOptions po;
  po.temporary_address_space = AddressSpace::Private;
  po.default_tag = "unr";
  LoopKernel priv = add_prefetch(split_iname(rows, "i", 32, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 0}}), "a", "j", po);
  EXPECT_EQ(loom::testing::gpu_vs_reference(rows, priv, {{"n", 77}}), "");
}
