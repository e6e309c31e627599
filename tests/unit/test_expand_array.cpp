// expand_array (transforms/expand_array.cpp): a work array argument that
// every iteration of some loops writes whole before reading it gets a copy
// per iteration, and the last iteration's copy is copied back. PolyBench's
// doitgen writes `sum` in every (r, q): expanded, its (r, q) run on blocks
// and threads, checked against the kernel as written (A and the final sum)
// on random inputs at sizes no tile divides; what expansion would change is
// refused with a witness; an illegal reordering after it is refused by the
// reorder check, which compares the copy's dataflow (the kernel as written is expanded too); the
// automatic space offers doitgen expanded.
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

LoopKernel doitgen() { return parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/doitgen.loom").kernel; }

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"nr", 1}, {"nq", 1}, {"np", 1}}, {{"nr", 3}, {"nq", 2}, {"np", 5}}, {{"nr", 7}, {"nq", 9}, {"np", 37}}};

}  // namespace

TEST(ExpandArray, DoitgenRunsItsIterationsInParallelEachWithItsOwnSum) {
  LoopKernel k = doitgen();
  // (a block for each (r, q): its threads read all of A's row before they overwrite it)
  const std::string tags = "split_iname p1 64 inner_tag=l.0\ntag_inames q:g.0\ntag_inames r:g.1\n";
  // as written, every (r, q) writes the one sum
  EXPECT_NE(error_of([&] { generate(transformed(k, tags)); }), "");

  LoopKernel expanded = transformed(k, "expand_array sum r,q\n");
  const Temporary* t = expanded.find_temporary("sum_expanded");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->stand_in.kind, StandIn::Expansion);
  EXPECT_EQ(t->stand_in.array, "sum");
  EXPECT_EQ(t->stand_in.leading_axes, 2);
  ASSERT_EQ(t->shape.size(), 3u);
  std::string first = expanded.instructions[0].str();
  EXPECT_NE(first.find("sum_expanded[r, q, p1] = 0"), std::string::npos) << first;
  // the copy back, after a barrier: the last (r, q)'s sum
  ASSERT_EQ(expanded.instructions.back().id, "sum_expanded_back");
  std::string back = expanded.instructions.back().str();
  EXPECT_NE(back.find("sum_expanded[nr - 1, nq - 1, sum_expanded_0]"), std::string::npos) << back;
  for (auto& sizes : kSizes) EXPECT_SAME_RESULTS(k, expanded, sizes);

  LoopKernel parallel = transformed(expanded, tags + "split_iname p2 64 inner_tag=l.0\nsplit_iname sum_expanded_0 32 outer_tag=g.0 inner_tag=l.0\n");
  for (auto& sizes : kSizes) EXPECT_SAME_RESULTS(k, parallel, sizes);
  GeneratedKernel g = generate(parallel, TargetInfo::cuda("sm_90a"));
  EXPECT_GE(g.launches.size(), 2u);
}

TEST(ExpandArray, RefusalsNameTheArrayTheLoopsAndAWitness) {
  LoopKernel k = doitgen();
  auto refused = [&](const LoopKernel& kernel, const std::string& script, const std::string& part) {
    std::string e = error_of([&] { transformed(kernel, script); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  refused(k, "expand_array sum r,q,p1\n", "instruction 'insn_2' accesses 'sum' outside loop 'p1'");
  refused(k, "expand_array C4 r,q\n", "'insn_1' at p1 = 0, q = 0, r = 0, s = 0 reads the element 'C4' at x0 = 0, x1 = 0 before any write to it");
  refused(k, "expand_array nosuch r\n", "'nosuch' is not an array argument");
  refused(k, "expand_array sum nosuch\n", "no iname 'nosuch'");
  refused(k, "expand_array sum r temporary_name=A\n", "the name 'A' is taken");
  // a read of a value from before the kernel: no copy holds it
  LoopKernel acc = make_kernel({"{[t, i]: 0 <= t < m and 0 <= i < n}"}, "s[i] = s[i] + x[t, i] {id=u}",
                               {"x: float64[m, n], s: float64[n]", "..."}, "acc");
  refused(acc, "expand_array s t\n", "'u' at i = 0, t = 0 reads the element 's' at x0 = 0 before any write to it");
  // a value carried from one iteration to the next
  LoopKernel carry = make_kernel({"{[t]: 0 <= t < m}", "{[i]: 0 <= i < n}"}, "w[0] = x[t] {id=a}\nw[1] = w[0] + w[1] + x[t] {id=b, dep=a}",
                                 {"x: float64[m], w: float64[2]", "..."}, "carry");
  refused(carry, "expand_array w t\n", "before any write to it");
  // an iteration that leaves an element unwritten
  LoopKernel part = make_kernel({"{[t]: 0 <= t < m}", "{[i]: 0 <= i < t}"}, "w[i] = x[t] {id=a}\ny[t] = w[0] {id=b, dep=a}",
                                {"x: float64[m], w: float64[m], y: float64[m]", "..."}, "part");
  refused(part, "expand_array w t\n", "expand_array('w', 't')");
}

// An illegal reordering after the expansion (the reads of sum before its
// writes within each (r, q)) is refused when generated: the reorder check
// reads the copy's accesses as sum's.
TEST(ExpandArray, TheReorderCheckFollowsTheCopy) {
  LoopKernel k = doitgen();
  LoopKernel wrong = transformed(k, "expand_array sum r,q\nreorder_instructions \"insn_2, insn_0, insn_1\"\n");
  std::string e = error_of([&] { generate(wrong); });
  EXPECT_NE(e.find("reorder dependent iterations"), std::string::npos) << e;
  EXPECT_NE(e.find("'sum_expanded'"), std::string::npos) << e;
}

TEST(ExpandArray, TheAutomaticSpaceRunsDoitgenExpanded) {
  LoopKernel k = doitgen();
  tune::Space space = tune::auto_space(k, "cuda");
  int index = -1;
  for (size_t i = 0; i < space.sketches().size(); ++i)
    if (space.sketches()[i].name.find("expanded") != std::string::npos && index < 0) index = int(i);
  ASSERT_GE(index, 0) << space.str();
  const tune::Sketch& sk = space.sketches()[size_t(index)];
  std::mt19937_64 rng(5);
  for (int draw = 0; draw < 2; ++draw) {
    tune::Configuration c = draw == 0 ? tune::Configuration{index, std::vector<int>(sk.choices.size(), 0)} : space.random_in(index, rng);
    LoopKernel t = apply_transforms(k, space.steps(c));
    EXPECT_NE(space.script(c).find("expand_array sum r,q"), std::string::npos) << space.script(c);
    for (auto& sizes : kSizes) EXPECT_SAME_RESULTS(k, t, sizes) << space.script(c);
    generate(t, TargetInfo::cuda("sm_90a"));
  }
}

// A temporary's copies replace it (no copy back): ludcmp's w, one web
// renamed (rename_temporary within), then one copy per (i1, j1); the
// kernel's results are unchanged, and its rows' updates may then run in
// separate launches. A local temporary and a value carried across
// iterations are refused.
TEST(ExpandArray, ATemporaryWebGetsACopyPerIteration) {
  LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/ludcmp.loom").kernel;
  LoopKernel e = transformed(k, "rename_temporary w w1 within=\"id:insn_0 or id:insn_1 or id:insn_2\"\nexpand_array w1 \"i1, j1\"\n");
  EXPECT_EQ(e.find_temporary("w1"), nullptr);
  const Temporary* t = e.find_temporary("w1_expanded");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->space, AddressSpace::Global);
  EXPECT_EQ(t->shape.size(), 2u);
  EXPECT_NE(e.instruction("insn_1").str().find("w1_expanded[i1 - 1, j1]"), std::string::npos) << e.instruction("insn_1").str();
  EXPECT_EQ(e.instructions.back().id, "insn_11");  // (no copy back)
  for (int64_t n : {1, 2, 7, 23}) {
    std::map<std::string, int64_t> sizes{{"n", n}};
    EXPECT_SAME_RESULTS(k, e, sizes);
  }
  auto refused = [&](const LoopKernel& kernel, const std::string& script, const std::string& part) {
    std::string err = error_of([&] { transformed(kernel, script); });
    EXPECT_NE(err.find(part), std::string::npos) << err;
  };
  // w as written: its other webs sit in other loops
  refused(k, "expand_array w \"i1, j1\"\n", "instruction 'insn_3' accesses 'w' outside loop 'j1'");
  // the accumulation's value crosses iterations of k1
  refused(transformed(k, "rename_temporary w w1 within=\"id:insn_0 or id:insn_1 or id:insn_2\"\n"), "expand_array w1 \"i1, j1, k1\"\n",
          "outside loop 'k1'");
  LoopKernel local = transformed(k, "rename_temporary w w1 within=\"id:insn_0 or id:insn_1 or id:insn_2\"\nset_temporary_address_space w1 local\n");
  refused(local, "expand_array w1 i1\n", "is a local temporary");
}
