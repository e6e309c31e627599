// Parallel reductions over thread inames (shared-memory trees): every
// operator, with and without a sequential share per thread, extents that are
// not powers of two, partial tiles, a second thread axis, a reduction inside
// a sequential loop, and the generated CUDA compiling. The oracle is the
// untransformed (sequential) kernel.
#include <gtest/gtest.h>

#include "loom/analysis.h"
#include "loom/cuda.h"
#include "oracle.h"

using namespace loom;

namespace {
void check(const LoopKernel& ref, const LoopKernel& t, const std::vector<std::map<std::string, int64_t>>& sizes) {
  for (auto& p : sizes) EXPECT_EQ(loom::testing::compare_kernels(ref, t, p), "") << t.name;
  if (cuda::nvrtc_available()) EXPECT_GT(cuda::compile(cuda::print_source(generate(t)), "sm_90").cubin.size(), 0u);
}
}  // namespace

TEST(ParallelReduction, EveryOperatorOverAThreadIname) {
  for (const char* op : {"sum", "product", "max", "min", "argmax", "argmin"}) {
    std::string out = std::string(op).substr(0, 3) == "arg" ? "int32" : "float64";
    LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, std::string("out[i] = ") + op + "(j, a[i, j])",
                               {"a: float64[n, m], out: " + out + "[n]", "..."}, std::string("red_") + op);
    // all of j on the threads (37 of them: not a power of two; a thread axis needs a constant range)
    LoopKernel direct = tag_inames(fix_parameters(k, {{"m", 37}}), "i:g.0, j:l.0");
    check(k, direct, {{{"n", 5}, {"m", 37}}});
    // a sequential share per thread: j = 16*j_outer + j_inner, partial last tile
    LoopKernel tiled = tag_inames(split_iname(k, "j", 16, {std::nullopt, InameTag{InameTag::Local, 0}}), "i:g.0");
    check(k, tiled, {{{"n", 3}, {"m", 5}}, {{"n", 3}, {"m", 16}}, {{"n", 2}, {"m", 100}}});
  }
}

TEST(ParallelReduction, ArgmaxTiesGoToTheSmallestIndex) {
  LoopKernel k = make_kernel({"{[j]: 0 <= j < 40}"}, "out[0] = argmax(j, a[j % 8])", {"a: float32[8], out: int32[1]"});
  LoopKernel t = split_iname(k, "j", 16, {std::nullopt, InameTag{InameTag::Local, 0}});
  for (const LoopKernel* kk : {&k, &t}) {
    auto arrays = make_host_arrays(*kk, {}, 5);
    HostArray a = arrays.at("a");
    loom::testing::run_on_host(*kk, loom::testing::args_of(*kk, arrays, {}));
    int64_t best = 0;
    for (int64_t j = 1; j < 8; ++j)
      if (a.get(j) > a.get(best)) best = j;
    EXPECT_EQ(arrays.at("out").get(0), double(best));  // j = best is the first of five equal maxima
  }
}

TEST(ParallelReduction, WithASecondThreadAxisAndInsideASequentialLoop) {
  // 2D block: rows on l.1, the reduction on l.0 (one buffer row per l.1 thread)
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j] * a[i, j])", {"..."});
  LoopKernel t = split_iname(split_iname(k, "i", 4, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 1}}), "j", 32,
                             {std::nullopt, InameTag{InameTag::Local, 0}});
  check(k, t, {{{"n", 9}, {"m", 70}}, {{"n", 1}, {"m", 3}}});
  // the reduction inside a sequential loop over q: the buffer is reused every iteration
  LoopKernel q = make_kernel({"{[q, j]: 0 <= q < r and 0 <= j < m}"}, "out[q] = max(j, a[q, j])", {"..."});
  LoopKernel qt = tag_inames(fix_parameters(q, {{"m", 50}}), "j:l.0");
  check(q, qt, {{{"r", 6}, {"m", 50}}});
}

TEST(ParallelReduction, AWarpWideReductionUsesShufflesNotBarriers) {
  KernelFile f = loom::testing::example("row_sums_warp");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  std::string src = cuda::print_source(generate(t));
  EXPECT_NE(src.find("loom_warp_sum(acc_out, 32, 0xffffffffu)"), std::string::npos) << src;
  EXPECT_EQ(src.find("__syncthreads"), std::string::npos) << src;
  EXPECT_EQ(src.find("__shared__"), std::string::npos) << src;
  check(f.kernel, t, {{{"n", 7}, {"m", 45}}, {{"n", 3}, {"m", 5}}, {{"n", 2}, {"m", 64}}});
  // rows past n (a partial block of 8 rows): their warps skip the store, and still take part evenly
  check(f.kernel, t, {{{"n", 13}, {"m", 33}}, {{"n", 1}, {"m", 1}}});
  // a 16-lane group: the mask covers the 16 threads of the block
  LoopKernel k16 = tag_inames(split_iname(f.kernel, "j", 16, {std::nullopt, InameTag{InameTag::Local, 0}}), "i:g.0");
  EXPECT_NE(cuda::print_source(generate(k16)).find("loom_warp_sum(acc_out, 16, 65535u)"), std::string::npos);
  check(f.kernel, k16, {{{"n", 5}, {"m", 40}}});
  // the group's most lanes are the target's warp size (issue 52): a target
  // of 16-lane warps sums the 32 lanes through shared memory instead
  TargetInfo narrow = TargetInfo::generic_cuda();
  narrow.warp_size = 16;
  std::string tree = cuda::print_source(generate(t, narrow));
  EXPECT_EQ(tree.find("loom_warp_sum("), std::string::npos) << tree;
  EXPECT_NE(tree.find("__syncthreads"), std::string::npos) << tree;
  EXPECT_NE(cuda::print_source(generate(k16, narrow)).find("loom_warp_sum(acc_out, 16, 65535u)"), std::string::npos);
}

// A warp reduction under the instruction's condition, read from memory at
// the row (a y-axis thread): the lanes of a row agree on it, so the
// shuffles stay under it, and rows past n (a partial block) neither test it
// nor reduce. A condition that differs between the lanes of a row (a value
// each lane computes for itself) takes the shared-memory tree instead.
TEST(ParallelReduction, AWarpReductionUnderAConditionItsLanesShare) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j])  {if=keep[i] != 0}",
                             {"a: float32[n, m], keep: int32[n], out: float32[n]"}, "kept_rows");
  LoopKernel t = split_iname(split_iname(k, "i", 8, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 1}}), "j", 32,
                             {std::nullopt, InameTag{InameTag::Local, 0}});
  std::string src = cuda::print_source(generate(t));
  size_t cond = src.find("if (keep[8 * i_outer + i_inner] != 0)"), sum = src.find("= loom_warp_sum(");
  EXPECT_TRUE(cond != std::string::npos && sum != std::string::npos && cond < sum) << src;
  EXPECT_EQ(src.find("__syncthreads"), std::string::npos) << src;
  check(k, t, {{{"n", 13}, {"m", 70}}, {{"n", 8}, {"m", 3}}, {{"n", 1}, {"m", 64}}});
  EXPECT_EQ(loom::testing::interpreted_vs_reference(k, t, {{"n", 13}, {"m", 70}}), "");
  std::set<std::string> varying = lane_varying_names(t);
  EXPECT_TRUE(varying.count("j_inner") && !varying.count("i_inner") && !varying.count("i_outer"));
}

// A warp reduction in a loop whose bound differs between the rows of a
// block (i_outer's loop runs while 3 * i_outer + i_inner < n, i_inner a
// y-axis thread): the lanes of a row agree on it, so the CUDA code keeps the
// shuffles in the loop; the CPU target and the interpreter run such a loop
// for each thread, where they had refused it as a barrier in a
// thread-dependent loop (LOOM_RANDOM_SEED=33).
TEST(ParallelReduction, AWarpReductionInALoopWhoseBoundDiffersBetweenRows) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = min(j, a[i, j] * 1.5)",
                             {"a: float64[n, m], out: float64[n]", "..."}, "row_minima");
  LoopKernel t = split_iname(split_iname(k, "j", 8, {InameTag{}, InameTag{InameTag::Local, 0}}), "i", 3,
                             {InameTag{}, InameTag{InameTag::Local, 1}});
  std::string src = cuda::print_source(generate(t));
  size_t loop = src.find("for (int i_outer = 0; i_outer <= loom_floordiv(n - i_inner - 1, 3); ++i_outer)"),
         shuffle = src.find("loom_warp_min(acc_out, 8,");
  EXPECT_TRUE(loop != std::string::npos && shuffle != std::string::npos && loop < shuffle) << src;
  check(k, t, {{{"n", 7}, {"m", 29}}, {{"n", 3}, {"m", 8}}, {{"n", 1}, {"m", 3}}, {{"n", 10}, {"m", 1}}});
  EXPECT_EQ(loom::testing::interpreted_vs_reference(k, t, {{"n", 7}, {"m", 29}}), "");
  // under a condition the rows differ on, too (an if around the loop, both kept per thread)
  LoopKernel kept = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j])  {if=keep[i] != 0}",
                                {"a: float32[n, m], keep: int32[n], out: float32[n]"}, "kept_rows_in_a_loop");
  LoopKernel kt = split_iname(split_iname(kept, "j", 16, {InameTag{}, InameTag{InameTag::Local, 0}}), "i", 4,
                              {InameTag{}, InameTag{InameTag::Local, 1}});
  check(kept, kt, {{{"n", 11}, {"m", 37}}, {{"n", 2}, {"m", 16}}});
  EXPECT_EQ(loom::testing::interpreted_vs_reference(kept, kt, {{"n", 11}, {"m", 37}}), "");
}

TEST(ParallelReduction, LaneVaryingNamesFollowValuesAndBounds) {
  // w is computed from the lane; v from the row only; the jj loop is
  // bounded by the lane's own value
  LoopKernel k = make_kernel({"{[i, q]: 0 <= i < 4 and 0 <= q < 32}", "{[jj]: 0 <= jj < w}"},
                             "<int32> w = q + i  {id=w}\n<int32> v = 2 * i  {id=v}\n<int32> s = v + 1  {id=s, inames=i:q:jj}\n"
                             "out[i, q] = w + v",
                             {"out: int32[4, 32]"}, "lanes");
  LoopKernel t = tag_inames(k, "q:l.0, i:l.1");
  std::set<std::string> varying = lane_varying_names(t);
  for (const char* n : {"q", "w", "jj", "s"}) EXPECT_TRUE(varying.count(n)) << n;
  for (const char* n : {"i", "v"}) EXPECT_FALSE(varying.count(n)) << n;
  // a block iname coupled to the lane by a split's constraints (j = 100 j_outer + j_inner) is the block's
  LoopKernel rows = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j])", {"a: float32[n, m], out: float32[n]"}, "rows");
  LoopKernel split = split_iname(split_iname(rows, "j", 100, {InameTag{InameTag::Group, 0}, std::nullopt}), "j_inner", 32,
                                 {std::nullopt, InameTag{InameTag::Local, 0}});
  varying = lane_varying_names(split);
  EXPECT_TRUE(varying.count("j_inner_inner") && varying.count("j_inner_outer")) << "the lane, and its loop bounded by the lane";
  EXPECT_FALSE(varying.count("j_outer")) << "a block iname";
}
