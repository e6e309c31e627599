// The linearizer's loop instances, checked after it: an ILP iname opened as
// several loops (check_split_ilp_loops) and a temporary a loop fills in one
// instance and reads in another (check_loop_instances). Each refusal names
// the loop, the instructions and two overwriting or reordered iterations;
// the legal splits (a register tile's init, updates and store) still run and
// match the untransformed kernel on the CPU.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

namespace {

KernelFile bmm(const std::string& transforms) { return loom::testing::batched_matmul(transforms); }

}  // namespace

// A buffer of c whose window moves with an ILP iname: the windows of the two
// iterations overlap, the init of both ran before either store, and
// iteration 0's store wrote back elements iteration 1 had computed (5376
// wrong elements before the check; found with LOOM_RANDOM_SEED=8).
TEST(SplitLoops, BufferWindowsOverlappingAcrossIlpIterationsAreRefused) {
  KernelFile f = bmm("  split_iname j 2 outer_tag=for inner_tag=ilp\n"
                     "  buffer_array c j_outer temporary_scope=private default_tag=l.auto\n");
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  std::string e = error_of([&] { generate(k); });
  EXPECT_NE(e.find("the ilp iname 'j_inner' runs as separate loops around 'init_c_buf' and 'store_c_buf'"), std::string::npos) << e;
  EXPECT_NE(e.find("they touch one element of 'c' from different iterations (for instance"), std::string::npos) << e;
  EXPECT_NE(e.find("j_inner (first) = 1"), std::string::npos) << e;
  // the same buffer with j_inner a plain loop: init, products and store of
  // one iteration run before the next iteration's init
  KernelFile g = bmm("  split_iname j 2 outer_tag=for inner_tag=unr\n"
                     "  buffer_array c j_outer temporary_scope=private default_tag=l.auto\n");
  LoopKernel plain = apply_transforms(g.kernel, g.transforms);
  for (int64_t nb : {1, 3}) EXPECT_SAME_RESULTS(g.kernel, plain, {{"nb", nb}});
}

// Register tiles split their ILP loops around the k loop legally: each
// iteration's accumulator is its own (privatized), and the stores of
// different iterations write different elements.
TEST(SplitLoops, RegisterTilesAroundAReductionStillRun) {
  KernelFile f = bmm("  split_iname i 4 inner_tag=ilp\n"
                     "  split_iname j 4 inner_tag=ilp\n"
                     "  tag_inames i_outer:l.1 j_outer:l.0 b:g.0\n");
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  std::string sched = generate(k).linearization.str();
  EXPECT_GE(loom::testing::count_of(sched, "i_inner"), 4u) << sched;  // opened more than once
  for (int64_t nb : {1, 5}) EXPECT_SAME_RESULTS(f.kernel, k, {{"nb", nb}});
}

// A double-buffered tile whose fill the loop order put in another instance
// of k than its readers (the batch and row inames joined after
// double_buffer): the fills' slot (k + 1) mod 2 repeats every other
// iteration, so the products would read the last two tiles only.
TEST(SplitLoops, DoubleBufferedFillInAnotherInstanceOfItsLoopIsRefused) {
  KernelFile f = bmm("  add_prefetch a i temporary_address_space=local default_tag=unr async_copy=true\n"
                     "  double_buffer a_fetch k\n"
                     "  join_inames b,i\n");
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  std::string e = error_of([&] { generate(k); });
  EXPECT_NE(e.find("reads temporary 'a_fetch' that 'fetch_a' writes in each iteration of loop 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("a later iteration overwrites what an earlier one wrote (nb = 1"), std::string::npos) << e;
  EXPECT_NE(e.find("k (first) = 13"), std::string::npos) << e;
  // without double buffering the tile has no index in k: refused as before
  KernelFile g = bmm("  add_prefetch a i temporary_address_space=local default_tag=unr\n"
                     "  join_inames b,i\n");
  e = error_of([&] { generate(apply_transforms(g.kernel, g.transforms)); });
  EXPECT_NE(e.find("so only the last iteration's value would be read"), std::string::npos) << e;
}
