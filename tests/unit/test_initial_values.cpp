// read_initial_values (transforms/initial_values.cpp): reads that see an
// array's values from before the kernel read a copy taken by a launch
// before it. PolyBench's trmm updates B in place, row i reading rows k > i
// that their own iterations rewrite later: with the copy, its rows run on
// blocks and threads, checked against the kernel as written on random
// inputs at sizes no tile divides; the reads that see written values stay;
// a copy read where the kernel as written reads a written value is refused,
// both by the transformation and, after an illegal reordering, by the
// reorder check; the automatic space offers trmm's product in tiles.
#include <gtest/gtest.h>

#include <random>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

namespace {

LoopKernel trmm() { return parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/trmm.loom").kernel; }

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

const std::vector<std::map<std::string, int64_t>> kSizes = {{{"m", 1}, {"n", 1}}, {{"m", 5}, {"n", 3}}, {{"m", 37}, {"n", 67}}};

}  // namespace

TEST(ReadInitialValues, TrmmRowsRunInParallelReadingTheCopy) {
  LoopKernel k = trmm();
  const std::string tags = "split_iname j 32 outer_tag=g.0 inner_tag=l.0\nsplit_iname i 4 outer_tag=g.1 inner_tag=l.1\n";
  // as written, row i's blocks read rows another block rewrites
  std::string e = error_of([&] { generate(transformed(k, tags)); });
  EXPECT_NE(e.find("another block writes"), std::string::npos) << e;

  LoopKernel copied = transformed(k, "read_initial_values B\n");
  const Temporary* t = copied.find_temporary("B_initial");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->stand_in.kind, StandIn::InitialValues);
  EXPECT_EQ(t->stand_in.array, "B");
  EXPECT_EQ(t->space, AddressSpace::Global);
  // the copy, its barrier, then the kernel: B[k, j] reads the copy, the accumulator B[i, j] stays
  ASSERT_EQ(copied.instructions.size(), 4u);
  EXPECT_EQ(copied.instructions[0].id, "B_initial_fill");
  EXPECT_EQ(copied.instructions[1].kind, Instruction::GlobalBarrier);
  std::string update = copied.instructions[2].str();
  EXPECT_NE(update.find("B_initial[k, j]"), std::string::npos) << update;
  EXPECT_NE(update.find("B[i, j] + "), std::string::npos) << update;

  LoopKernel parallel = transformed(copied, tags + "split_iname B_initial_1 32 outer_tag=g.0 inner_tag=l.0\n");
  for (auto& sizes : kSizes) EXPECT_SAME_RESULTS(k, parallel, sizes);
  GeneratedKernel g = generate(parallel, TargetInfo::cuda("sm_90a"));
  EXPECT_EQ(g.launches.size(), 2u);
}

TEST(ReadInitialValues, RefusalsNameTheArrayAndTheReason) {
  LoopKernel k = trmm();
  auto refused = [&](const LoopKernel& kernel, const std::string& script, const std::string& part) {
    std::string e = error_of([&] { transformed(kernel, script); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  // the scaling reads what the update wrote
  refused(k, "read_initial_values B within=id:insn_1\n",
          "every read of 'B' gets, at some instance, a value the kernel wrote: 'insn_1' at i = 0, j = 0 reads what 'insn_0' at i = 0, j = 0, k = 1 wrote");
  refused(k, "read_initial_values A\n", "'A' is never written");
  refused(k, "read_initial_values alpha\n", "'alpha' is not an array argument");
  refused(k, "read_initial_values B temporary_name=A\n", "the name 'A' is taken");
  refused(k, "read_initial_values B within=nosuch\n", "no instruction matching 'nosuch' reads 'B'");
  // the copy is taken first: moved after the update, it would copy what the update wrote
  refused(k, "read_initial_values B\nreorder_instructions \"insn_0, B_initial_fill\"\n",
          "instruction 'B_initial_fill' fills or copies back a copy of an array, which keeps its place");
}

// An illegal reordering first (the reader before the writer), after which
// the read sees the array as it was: the transformation accepts the kernel
// as it stands, and generating it refuses what the kernel as written does
// not do.
TEST(ReadInitialValues, TheReorderCheckComparesTheCopysReadsWithTheKernelAsWritten) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i] = 2 * x[i] {id=s}\nb[i] = a[i] + 1 {id=t}",
                             {"x: float64[n], a: float64[n], b: float64[n]", "..."}, "reader");
  LoopKernel wrong = transformed(k, "reorder_instructions \"t, s\"\nread_initial_values a\n");
  std::string e = error_of([&] { generate(wrong); });
  EXPECT_NE(e.find("a read of a copy taken before the kernel (read_initial_values) stands where the kernel as written reads a value the kernel wrote"),
            std::string::npos)
      << e;
  // an array both read first and then written: the reads before the writes take the copy
  LoopKernel shift = make_kernel({"{[i]: 0 <= i < n - 1}"}, "a[i] = a[i + 1] + x[i] {id=s}", {"x: float64[n], a: float64[n]", "..."}, "shift");
  LoopKernel p = transformed(shift, "read_initial_values a\nsplit_iname i 32 outer_tag=g.0 inner_tag=l.0\nsplit_iname a_initial_0 32 outer_tag=g.0 inner_tag=l.0\n");
  for (int64_t n : {2, 3, 70}) EXPECT_SAME_RESULTS(shift, p, {{"n", n}});
}

TEST(ReadInitialValues, TheAutomaticSpaceMultipliesTrmmsRowsInTiles) {
  LoopKernel k = trmm();
  tune::Space space = tune::auto_space(k, "cuda");
  int index = -1;
  for (size_t i = 0; i < space.sketches().size(); ++i)
    if (space.sketches()[i].name == "nests, tiles, initial copies") index = int(i);
  ASSERT_GE(index, 0) << space.str();
  const tune::Sketch& sk = space.sketches()[size_t(index)];
  std::mt19937_64 rng(3);
  for (int draw = 0; draw < 2; ++draw) {
    tune::Configuration c = draw == 0 ? tune::Configuration{index, std::vector<int>(sk.choices.size(), 0)} : space.random_in(index, rng);
    LoopKernel t = apply_transforms(k, space.steps(c));
    for (auto& sizes : kSizes) EXPECT_SAME_RESULTS(k, t, sizes) << space.script(c);
    generate(t, TargetInfo::cuda("sm_90a"));
  }
}
