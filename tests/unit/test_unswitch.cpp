// Full tiles separated from the partial last one (codegen/unswitch.cpp) and
// the register tiles that run whole past the matrix edges (the fast path's
// overcomputation through vector lanes and double-buffered indices): the
// shape of the CUDA C, and the CPU oracle against the untransformed kernel
// at sizes that leave partial tiles in every dimension.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;

namespace {

size_t count(const std::string& text, const std::string& what) { return loom::testing::count_of(text, what); }

LoopKernel matmul() { return loom::testing::matmul_kernel(); }

// sgemm_any's schedule, smaller: 32x64 block tiles of c on 8x8 threads, each
// a 4x8 register tile (two float4 along j, 32 apart), k tiles of 8 unrolled
// whole.
LoopKernel register_tiled(const std::string& extra = "") {
  return apply_transforms(matmul(), parse_transform_script("assume m mod 4 = 0 and l mod 4 = 0\n"
                                                           "split_iname i 32 outer_tag=g.1\n"
                                                           "split_iname j 64 outer_tag=g.0\n"
                                                           "split_iname i_inner 8 outer_tag=ilp inner_tag=l.1\n"
                                                           "split_iname j_inner 4 inner_tag=vec\n"
                                                           "split_iname j_inner_outer 8 outer_tag=ilp inner_tag=l.0\n"
                                                           "split_iname k 8\n"
                                                           "prioritize_loops k_outer,k_inner,i_inner_outer,j_inner_outer_outer,j_inner_inner\n"
                                                           "add_prefetch a i_inner_outer,i_inner_inner,k_inner\n"
                                                           "add_prefetch b k_inner,j_inner_outer_outer,j_inner_outer_inner,j_inner_inner vector_width=4 padding=0\n"
                                                           "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n" +
                                                           extra));
}

const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"n", 64}, {"m", 64}, {"l", 32}},   // whole tiles
    {{"n", 37}, {"m", 44}, {"l", 20}},   // partial tiles in i, j and k
    {{"n", 5}, {"m", 4}, {"l", 4}},      // one partial tile of each
    {{"n", 33}, {"m", 36}, {"l", 0}}};   // no k: c is zero

}  // namespace

TEST(Unswitch, FullKTilesRunWithoutTheirGuards) {
  LoopKernel k = register_tiled();
  std::string cuda = cuda::print_source(generate(k));
  // the k tile's two groups of four k are guarded by l >= 8 * k_outer + 1 and + 5
  // in the partial tile only: the full one tests the stronger once
  size_t loop = cuda.find("for (int k_outer");
  ASSERT_NE(loop, std::string::npos) << cuda;
  size_t full = cuda.find("if (l >= 8 * k_outer + 5)", loop);
  ASSERT_NE(full, std::string::npos) << cuda;
  size_t partial = cuda.find("else", full);
  ASSERT_NE(partial, std::string::npos) << cuda;
  std::string full_body = cuda.substr(full + 1, partial - full);
  EXPECT_EQ(full_body.find("k_outer + 1)"), std::string::npos) << full_body;
  EXPECT_EQ(count(full_body, "if (l >= 8 * k_outer"), 0u) << full_body;
  EXPECT_EQ(count(cuda.substr(partial), "if (l >= 8 * k_outer + 5)"), 1u) << cuda;
  for (auto& p : kSizes) EXPECT_SAME_RESULTS(matmul(), k, p);
}

TEST(Unswitch, DoubleBufferedRegisterTileRunsWholeAndGuardsOnlyItsStores) {
  LoopKernel k = register_tiled("double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n");
  std::string cuda = cuda::print_source(generate(k));
  // the products read the copies by parity ((k_outer) % 2) and keep no row or
  // column guard: only the four row stores (and each float4 store's column) test n and m
  EXPECT_NE(cuda.find("loom_mod(k_outer, 2)"), std::string::npos) << cuda;
  size_t products = cuda.find("acc_c[0] = acc_c[0] + ");
  size_t stores = cuda.find("c[", cuda.rfind("acc_c[0] = acc_c[0] + "));
  ASSERT_NE(products, std::string::npos) << cuda;
  std::string between = cuda.substr(products, stores - products);
  EXPECT_EQ(between.find("if (n >="), std::string::npos) << between;
  EXPECT_EQ(between.find("if (m >="), std::string::npos) << between;
  EXPECT_NE(cuda.find("if (n >= ", stores), std::string::npos) << cuda;
  for (auto& p : kSizes) EXPECT_SAME_RESULTS(matmul(), k, p);
}

TEST(Unswitch, GuardsOfThreadsOrOneGuardStayAsTheyAre) {
  // a split by 16 with no unrolled tile: one guard per iteration, nothing to separate
  LoopKernel k = apply_transforms(matmul(), parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"
                                                                   "split_iname k 16\n"));
  std::string cuda = cuda::print_source(generate(k));
  EXPECT_EQ(cuda.find("else"), std::string::npos) << cuda;
  for (auto& p : kSizes) EXPECT_SAME_RESULTS(matmul(), k, p);
}
