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

// sgemm_any's schedule, smaller, with the k tile unrolled whole.
LoopKernel register_tiled(const std::string& extra = "") {
  return apply_transforms(matmul(), parse_transform_script(loom::testing::register_tiles_script() +
                                                           "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n" + extra));
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
  // the k tile's groups of four k are guarded by l >= 16 * k_outer + 5, + 9
  // and + 13 in the partial tile only: the full one tests the strongest once
  size_t loop = cuda.find("for (int k_outer");
  ASSERT_NE(loop, std::string::npos) << cuda;
  size_t full = cuda.find("if (l >= 16 * k_outer + 13)", loop);
  ASSERT_NE(full, std::string::npos) << cuda;
  size_t partial = cuda.find("else", full);
  ASSERT_NE(partial, std::string::npos) << cuda;
  std::string full_body = cuda.substr(full + 1, partial - full);
  EXPECT_EQ(count(full_body, "if (l >= 16 * k_outer"), 0u) << full_body;
  std::string rest = cuda.substr(partial);
  for (const char* g : {"if (l >= 16 * k_outer + 5)", "if (l >= 16 * k_outer + 9)", "if (l >= 16 * k_outer + 13)"})
    EXPECT_EQ(count(rest, g), 1u) << g << "\n" << cuda;
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

TEST(Unswitch, OneConditionInSeveralPlacesIsNotSeparated) {
  // a double-buffered fill's `k_outer + 1 <= last` guards the a and the b
  // fetch: one condition, not the steps of a tile; the body is not copied
  LoopKernel k = apply_transforms(matmul(), parse_transform_script("split_iname i 16 outer_tag=g.1 inner_tag=l.1\n"
                                                                   "split_iname j 16 outer_tag=g.0 inner_tag=l.0\n"
                                                                   "split_iname k 16\n"
                                                                   "assume n mod 16 = 0 and m mod 16 = 0 and l mod 16 = 0\n"
                                                                   "add_prefetch a i_inner,k_inner\n"
                                                                   "add_prefetch b k_inner,j_inner\n"
                                                                   "double_buffer a_fetch k_outer\n"
                                                                   "double_buffer b_fetch k_outer\n"));
  std::string cuda = cuda::print_source(generate(k));
  EXPECT_EQ(count(cuda, "if (k_outer + 1 <="), 2u) << cuda;
  EXPECT_EQ(cuda.find("    else"), std::string::npos) << cuda;
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 32}, {"m", 48}, {"l", 64}}, {{"n", 16}, {"m", 16}, {"l", 16}}})
    EXPECT_SAME_RESULTS(matmul(), k, p);
}

TEST(Unswitch, GuardsOfThreadsOrOneGuardStayAsTheyAre) {
  // a split by 16 with no unrolled tile: one guard per iteration, nothing to separate
  LoopKernel k = apply_transforms(matmul(), parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"
                                                                   "split_iname k 16\n"));
  std::string cuda = cuda::print_source(generate(k));
  EXPECT_EQ(cuda.find("else"), std::string::npos) << cuda;
  for (auto& p : kSizes) EXPECT_SAME_RESULTS(matmul(), k, p);
}
