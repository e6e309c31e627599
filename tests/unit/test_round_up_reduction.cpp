// Zero-filled prefetches (add_prefetch's fill_value) and round_up_reduction:
// the box copied whole with the fill value where it leaves the array (a
// select per element; cp.async's zero-fill form on the GPU), a sum's partial
// last tile run whole where every extra term reads zeros, and the refusals
// where an extra term could be anything else. Each kernel is checked by the
// CPU oracle against the untransformed one at sizes that leave partial tiles,
// and its CUDA C compiles with NVRTC. Also: a vec loop's copy under a
// condition loads its vector under that condition, never before it.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/isl_util.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::count_of;
using loom::testing::error_of;

namespace {

LoopKernel matmul() { return loom::testing::matmul_kernel(); }

LoopKernel scheduled(const std::string& script) { return apply_transforms(matmul(), parse_transform_script(script)); }

// sgemm_any's schedule, smaller, both tiles zero-filled.
const std::string kRegisterTiles = loom::testing::register_tiles_script("fill_value=0");

const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"n", 64}, {"m", 64}, {"l", 32}},   // whole tiles
    {{"n", 37}, {"m", 44}, {"l", 20}},   // partial tiles in i, j and k
    {{"n", 5}, {"m", 4}, {"l", 4}},      // one partial tile of each
    {{"n", 33}, {"m", 36}, {"l", 0}}};   // no k: c is zero

const Instruction& fetch_of(const LoopKernel& k, const std::string& temp) {
  for (auto& insn : k.instructions)
    if (insn.assignee_name() == temp) return insn;
  throw std::runtime_error("no fetch of " + temp);
}

}  // namespace

TEST(FillValue, TheWholeBoxIsCopiedWithZerosOutsideTheArray) {
  LoopKernel k = scheduled("split_iname i 16 outer_tag=g.1 inner_tag=l.1\n"
                           "split_iname j 16 outer_tag=g.0 inner_tag=l.0\n"
                           "split_iname k 16\n"
                           "add_prefetch a i_inner,k_inner fill_value=0\n"
                           "add_prefetch b k_inner,j_inner\n");
  const Instruction& fa = fetch_of(k, "a_fetch");
  EXPECT_TRUE(fa.predicates.empty()) << fa.str();
  EXPECT_TRUE(fa.rhs.as<Select>()) << fa.str();
  EXPECT_EQ(k.find_temporary("a_fetch")->zero_fill_of, "a");
  // the plain prefetch keeps its guards and is no zero-filled copy
  EXPECT_FALSE(fetch_of(k, "b_fetch").predicates.empty());
  EXPECT_EQ(k.find_temporary("b_fetch")->zero_fill_of, "");
  std::string cuda = cuda::print_source(generate(k));
  EXPECT_NE(cuda.find("? a["), std::string::npos) << cuda;
  check_transformed(matmul(), k, kSizes);
}

TEST(FillValue, OtherValuesAndBadOnes) {
  LoopKernel k = scheduled("split_iname i 16 outer_tag=g.1 inner_tag=l.1\n"
                           "split_iname j 16 outer_tag=g.0 inner_tag=l.0\n"
                           "split_iname k 8\n"
                           "add_prefetch a i_inner,k_inner fill_value=-2.5\n");
  EXPECT_EQ(k.find_temporary("a_fetch")->zero_fill_of, "") << "only a zero fill is marked";
  check_transformed(matmul(), k, kSizes);
  EXPECT_NE(error_of([] { scheduled("split_iname k 8\nadd_prefetch a k_inner fill_value=zero\n"); }).find("argument 'fill_value' must be a number, got 'zero'"),
            std::string::npos);
  LoopKernel ints = make_kernel({"{[i]: 0 <= i < n}"}, "y[i] = 2 * x[i]", {"x: int32[n], y: int32[n]"}, "ints");
  std::string e = error_of([&] { apply_transforms(ints, parse_transform_script("split_iname i 16 outer_tag=g.0\nadd_prefetch x i_inner fill_value=0.5\n")); });
  EXPECT_NE(e.find("fill_value 0.5"), std::string::npos) << e;
  EXPECT_NE(e.find("int32"), std::string::npos) << e;
}

TEST(FillValue, VectorAndAsynchronousCopiesUseTheZeroFillForm) {
  LoopKernel k = scheduled(kRegisterTiles + "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n"
                                                         "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n");
  std::string cuda = cuda::print_source(generate(k));
  // b's float4 copies: cp.async that writes zeros where the row or the column leaves b
  EXPECT_NE(cuda.find("loom_cp_async_zfill<16>(&(b_fetch["), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("loom_cp_async<16>(&(b_fetch["), std::string::npos) << cuda;
  check_transformed(matmul(), k, kSizes);
}

TEST(RoundUpReduction, ThePartialKTileRunsWhole) {
  LoopKernel before = scheduled(kRegisterTiles + "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n");
  LoopKernel k = scheduled(kRegisterTiles + "round_up_reduction k_inner\n"
                                                         "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n");
  // the k tile's own range stays, the bound by l is gone
  auto r = islu::constant_range(k, "k_inner_outer");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->second, 3);
  std::string with_tail = cuda::print_source(generate(before)), whole = cuda::print_source(generate(k));
  EXPECT_GT(count_of(with_tail, "if (l >= 16 * k_outer"), 0u) << with_tail;
  EXPECT_EQ(count_of(whole, "if (l >= 16 * k_outer"), 0u) << whole;
  EXPECT_EQ(whole.find("    else"), std::string::npos) << "no unswitched copy of the body:\n" << whole;
  check_transformed(matmul(), k, kSizes);
  // and double-buffered, as examples/sgemm_any.loom could be
  LoopKernel db = scheduled(kRegisterTiles + "round_up_reduction k_inner\n"
                                                          "split_iname k_inner 4 inner_tag=unr outer_tag=unr\n"
                                                          "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n");
  check_transformed(matmul(), db, kSizes);
}

TEST(RoundUpReduction, Refusals) {
  auto error = [](const std::string& script) { return error_of([&] { scheduled(script); }); };
  const std::string tiles = "split_iname i 16 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 16\n";
  // a factor that is not zero-filled: the extra terms would read b's stale or out-of-bounds values
  std::string e = error(tiles + "add_prefetch a i_inner,k_inner fill_value=0\nadd_prefetch b k_inner,j_inner\nround_up_reduction k_inner\n");
  EXPECT_NE(e.find("b_fetch"), std::string::npos) << e;
  EXPECT_NE(e.find("is not a read of a temporary prefetched with fill_value=0"), std::string::npos) << e;
  // a fill that is not zero
  e = error(tiles + "add_prefetch a i_inner,k_inner fill_value=1\nadd_prefetch b k_inner,j_inner fill_value=1\nround_up_reduction k_inner\n");
  EXPECT_NE(e.find("fill_value=0"), std::string::npos) << e;
  // an iname that is no reduction's
  e = error(tiles + "add_prefetch a i_inner,k_inner fill_value=0\nadd_prefetch b k_inner,j_inner fill_value=0\nround_up_reduction i_inner\n");
  EXPECT_NE(e.find("runs in loop 'i_inner'"), std::string::npos) << e;
  e = error(tiles + "round_up_reduction nope\n");
  EXPECT_NE(e.find("no iname 'nope'"), std::string::npos) << e;
  // not a sum
  LoopKernel mx = make_kernel({"{[i, k]: 0 <= i < n and 0 <= k < l}"}, "c[i] = max(k, a[i, k])", {"a: float32[n, l], c: float32[n]"}, "mx");
  e = error_of([&] {
    apply_transforms(mx, parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 16\n"
                                                "add_prefetch a i_inner,k_inner fill_value=0\nround_up_reduction k_inner\n"));
  });
  EXPECT_NE(e.find("is not a sum"), std::string::npos) << e;
  // extra terms inside the array: the sum stops at m, the rows of a are l long
  // (m <= l: the kernel as written stays in a's rows, which the bounds check proves)
  LoopKernel part = apply_transforms(
      make_kernel({"{[i, k]: 0 <= i < n and 0 <= k < m}"}, "c[i] = sum(k, a[i, k])", {"a: float32[n, l], c: float32[n]"}, "part"),
      parse_transform_script("assume m <= l\n"));
  e = error_of([&] {
    apply_transforms(part, parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 16\n"
                                                  "add_prefetch a i_inner,k_inner fill_value=0\nround_up_reduction k_inner\n"));
  });
  EXPECT_NE(e.find("would read a inside the array"), std::string::npos) << e;
  // when the assumptions say the sum covers whole rows, it is legal
  LoopKernel ok = apply_transforms(part, parse_transform_script("assume m = l\nsplit_iname i 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 16\n"
                                                                "add_prefetch a i_inner,k_inner fill_value=0\nround_up_reduction k_inner\n"));
  check_transformed(part, ok, {{{"n", 37}, {"m", 21}, {"l", 21}}, {{"n", 5}, {"m", 3}, {"l", 3}}});
}

TEST(VectorizeSelect, AVectorUnderAConditionIsLoadedUnderIt) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "y[i] = if(i < m, x[i], 0)", {"x: float32[m], y: float32[n]"}, "sel");
  // the lanes agree on i < m when m is a multiple of 4: one float4 load under the condition
  LoopKernel agree = apply_transforms(k, parse_transform_script("assume n mod 4 = 0 and m mod 4 = 0 and m <= n\nsplit_iname i 4 inner_tag=vec\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n"));
  std::string cuda = cuda::print_source(generate(agree));
  EXPECT_NE(cuda.find(") ? *reinterpret_cast<const float4 *>(&(x["), std::string::npos) << cuda;
  check_transformed(k, agree, {{{"n", 64}, {"m", 20}}, {{"n", 1024}, {"m", 1024}}});
  // otherwise each lane reads x under its own condition: no vector load of x
  LoopKernel differ = apply_transforms(k, parse_transform_script("assume n mod 4 = 0 and m <= n\nsplit_iname i 4 inner_tag=vec\nsplit_iname i_outer 64 outer_tag=g.0 inner_tag=l.0\n"));
  cuda = cuda::print_source(generate(differ));
  EXPECT_EQ(cuda.find("reinterpret_cast<const float4 *>(&(x["), std::string::npos) << cuda;
  check_transformed(k, differ, {{{"n", 64}, {"m", 21}}, {{"n", 8}, {"m", 3}}});
}
