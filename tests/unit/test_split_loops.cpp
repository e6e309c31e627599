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

// A tile written in one slot per iteration and read in another instance of
// the loop (the loop order put them apart): the slots (k + 1) mod 2 repeat
// every other iteration, so the reader would find a later iteration's value.
// The random-schedule test found it as a double-buffered fill that
// join_inames moved away from its readers (LOOM_RANDOM_SEED=3; join_inames
// now refuses that join itself); here the loop priorities do it.
TEST(SplitLoops, TemporaryOverwrittenAcrossIterationsOfALoopItIsReadOutsideOf) {
  auto kernel = [](const std::string& slot) {
    return parse_kernel_text(R"(kernel db
domains:
  {[k, t, u]: 0 <= k < 8 and 0 <= t < 4 and 0 <= u < 4}
arguments:
  x: float32[8, 4], y: float32[8, 4]
temporaries:
  s: float32[8, 4] private
instructions:
  s[)" + slot + R"(, t] = x[k, t]  {id=w}
  y[k, u] = s[)" + slot + R"(, u] * 2  {id=r, dep=w}
transforms:
  prioritize_loops t,k
  prioritize_loops u,k
)");
  };
  KernelFile two = kernel("(k + 1) % 2");
  std::string e = error_of([&] { generate(apply_transforms(two.kernel, two.transforms)); });
  EXPECT_NE(e.find("instruction 'r' reads temporary 's' that 'w' writes in each iteration of loop 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("a later iteration overwrites what an earlier one wrote (k (first) = 2, t (first) = 0, k (second) = 4"),
            std::string::npos) << e;
  // one slot per iteration: each value stays until it is read
  KernelFile own = kernel("k");
  LoopKernel k = apply_transforms(own.kernel, own.transforms);
  std::string sched = generate(k).linearization.str();
  EXPECT_EQ(loom::testing::count_of(sched, "for k"), 2u) << sched;  // still two instances of k
  EXPECT_SAME_RESULTS(own.kernel, k, {});
  // without an index in k the tile is rewritten whole each iteration: refused as before
  KernelFile g = kernel("0");
  e = error_of([&] { generate(apply_transforms(g.kernel, g.transforms)); });
  EXPECT_NE(e.find("so only the last iteration's value would be read"), std::string::npos) << e;
  // and the double-buffered fill joined away from its readers is refused by join_inames
  KernelFile d = bmm("  add_prefetch a i temporary_address_space=local default_tag=unr async_copy=true\n"
                     "  double_buffer a_fetch k\n"
                     "  join_inames b,i\n");
  e = error_of([&] { apply_transforms(d.kernel, d.transforms); });
  EXPECT_NE(e.find("join_inames('b,i')"), std::string::npos) << e;
  EXPECT_NE(e.find("reads temporary 'a_fetch', which 'fetch_a_first' writes"), std::string::npos) << e;
}
