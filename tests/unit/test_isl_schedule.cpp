// Per-statement schedules (tuner/isl_schedule.cpp) and the transformations
// that write them: rename_iname existing_ok (two loops joined into one),
// reorder_instructions, duplicate_inames of inames whose bounds use each
// other. PolyBench's cholesky and lu, whose loops all carry dependences as
// written, run right-looking: one step on the host, the column and the
// trailing update on blocks and threads — checked against the kernel as
// written on well-posed random inputs (diagonally dominant, so Cholesky's
// square roots are real) at sizes no tile divides, tiny ones included; an
// order the dependences forbid is refused with the pair it reverses.
#include <gtest/gtest.h>

#include <random>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/preprocess.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::polybench;
using loom::testing::error_of;

namespace {

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// A[n, n] random in [-1, 1) with n + 1 added on the diagonal: symmetric
// positive definite as Cholesky reads it (its lower triangle), and LU needs
// no pivoting. Both kernels on the oracle's target; "" when A matches.
std::string compare_factorizations(const LoopKernel& ref, const LoopKernel& t, int64_t n) {
  std::map<std::string, int64_t> params{{"n", n}};
  auto expected = make_host_arrays(ref, params, 11);
  HostArray& a = expected.at("A");
  for (int64_t i = 0; i < n; ++i) a.set(i * n + i, a.get(i * n + i) + double(n) + 1);
  auto actual = expected;
  loom::testing::run_on_host(ref, loom::testing::args_of(ref, expected, params));
  loom::testing::run_on_host(t, loom::testing::args_of(t, actual, params));
  for (int64_t i = 0; i < n * n; ++i)
    if (std::isnan(expected.at("A").get(i))) return "NaN in the reference at " + std::to_string(i);
  return loom::testing::compare_written(ref, expected, actual);
}

// Path lengths 0..99 (random int32 values include negative cycles, whose
// sums overflow: undefined in C and on the CPU target, where two orders of
// the same dataflow may then differ). "" when path matches.
std::string compare_paths(const LoopKernel& ref, const LoopKernel& t, int64_t n) {
  std::map<std::string, int64_t> params{{"n", n}};
  auto expected = make_host_arrays(ref, params, 5);
  HostArray& p = expected.at("path");
  for (int64_t i = 0; i < n * n; ++i) p.set(i, double((i * 7919 + 13) % 100));
  auto actual = expected;
  loom::testing::run_on_host(ref, loom::testing::args_of(ref, expected, params));
  loom::testing::run_on_host(t, loom::testing::args_of(t, actual, params));
  return loom::testing::compare_written(ref, expected, actual);
}

const tune::Sketch* sketch_named(const tune::Space& space, const std::string& name, int* index = nullptr) {
  for (size_t i = 0; i < space.sketches().size(); ++i)
    if (space.sketches()[i].name == name) {
      if (index) *index = int(i);
      return &space.sketches()[i];
    }
  return nullptr;
}

}  // namespace

// Cholesky right-looking, written by hand as the tuner writes it: each
// statement's loops copied and mapped (the step k first), the steps joined,
// the statements in the step's order (the pivot's square root, the column
// below it, the diagonal's update, the trailing update), a launch each. The
// update's 2-d grid shrinks with the step, down to no blocks (at n = 3 its
// rows ran out first: the CPU target divided by the empty grid's size).
TEST(IslSchedule, CholeskyRunsRightLookingByHand) {
  LoopKernel k = polybench("cholesky");
  std::string steps =
      "duplicate_inames \"i, j, k1\" within=id:insn_0 new_inames=\"i0, j0, k0\"\n"
      "affine_map_inames \"i0, j0, k0\" \"s, b0, a0\" \"s = k0, b0 = i0, a0 = j0\"\n"
      "duplicate_inames \"i, j\" within=id:insn_1 new_inames=\"i1, j1\"\n"
      "affine_map_inames \"i1, j1\" \"s1, b1\" \"s1 = j1, b1 = i1\"\n"
      "rename_iname s1 s existing_ok=true\n"
      "duplicate_inames \"i, k2\" within=id:insn_2 new_inames=\"i2, k2b\"\n"
      "affine_map_inames \"i2, k2b\" \"s2, b2\" \"s2 = k2b, b2 = i2\"\n"
      "rename_iname s2 s existing_ok=true\n"
      "rename_iname i s existing_ok=true\n"
      "reorder_instructions \"insn_3, insn_1, insn_2, insn_0\"\n"
      "remove_unused_inames\n";
  LoopKernel sequential = transformed(k, steps);
  EXPECT_EQ(sequential.domains[0].inames(), (std::vector<std::string>{"s"}));
  for (int64_t n : {1, 2, 3, 5, 37}) EXPECT_EQ(compare_factorizations(k, sequential, n), "") << "n = " << n;
  LoopKernel launches = transformed(sequential,
                                    "add_global_barrier insn_3 within=s id=g1\nadd_global_barrier insn_1 within=s id=g2\n"
                                    "add_global_barrier insn_2 within=s id=g3\nadd_global_barrier insn_0 within=s id=g4\n"
                                    "split_iname b1 32 outer_tag=g.0 inner_tag=l.0\nsplit_iname b2 32 outer_tag=g.0 inner_tag=l.0\n"
                                    "split_iname a0 64 outer_tag=g.0 inner_tag=l.0\nsplit_iname b0 1 outer_tag=g.1 inner_tag=l.1\n");
  GeneratedKernel g = generate(launches);
  EXPECT_EQ(g.launches.size(), 4u);
  EXPECT_NE(host_steps_text(g.host_steps).find("for s in"), std::string::npos) << host_steps_text(g.host_steps);
  for (int64_t n : {1, 2, 3, 4, 37, 70}) EXPECT_EQ(compare_factorizations(k, launches, n), "") << "n = " << n;
  // the column's division before the pivot's square root: refused, the pair named
  LoopKernel wrong = transformed(k, [&] {
    std::string s = steps;
    s.replace(s.find("insn_3, insn_1"), 14, "insn_1, insn_3");
    return s;
  }());
  std::string e = error_of([&] { generate(wrong); });
  EXPECT_NE(e.find("'insn_1' at i = 1, j = 0 reads the value 'insn_3' at i = 0 writes"), std::string::npos) << e;
}

// The automatic space finds the same schedules from isl's scheduler: for
// cholesky and lu, whose loops all carry dependences as written; not for a
// time loop that is already the step (jacobi-1d: the nests sketch's own).
// Every configuration's first choices run right.
TEST(IslSchedule, TheAutomaticSpaceSchedulesFactorizationsRightLooking) {
  for (const char* name : {"cholesky", "lu"}) {
    LoopKernel k = polybench(name);
    tune::Space space = tune::auto_space(k, "cuda");
    int index = -1;
    const tune::Sketch* sk = sketch_named(space, "nests, isl schedule", &index);
    ASSERT_NE(sk, nullptr) << name << "\n" << space.str();
    tune::Configuration first{index, std::vector<int>(sk->choices.size(), 0)};
    std::string script = space.script(first);
    EXPECT_NE(script.find("rename_iname step_insn_1 step existing_ok=true"), std::string::npos) << script;
    EXPECT_NE(script.find("outer_tag=g.0"), std::string::npos) << script;
    LoopKernel t = apply_transforms(k, space.steps(first));
    for (int64_t n : {2, 3, 37, 70}) EXPECT_EQ(compare_factorizations(k, t, n), "") << name << " n = " << n << "\n" << script;
    GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
    EXPECT_GE(g.launches.size(), 3u) << name;
  }
  EXPECT_EQ(sketch_named(tune::auto_space(polybench("jacobi_1d"), "cuda"), "nests, isl schedule"), nullptr);
}

// ludcmp is lu with its updates through one scalar w, which as written
// orders every statement after every other: each web of w gets a copy per
// iteration of its loops (rename_temporary within, expand_array), and isl's
// schedule has three phases (the factorization, the forward and the back
// substitution), each a step of its own on the host, with the copies'
// initializations as parallel phases before them. The barriers between
// phases split loops the kernel as written shares (i1 holds both the
// initialization and the factorization): the program is checked as a whole.
// An order of the phases' statements the dependences forbid is refused.
TEST(IslSchedule, LudcmpsScalarGetsACopyPerIterationAndItsPhasesEachAStep) {
  LoopKernel k = polybench("ludcmp");
  tune::Space space = tune::auto_space(k, "cuda");
  int index = -1;
  const tune::Sketch* sk = sketch_named(space, "nests, isl schedule", &index);
  ASSERT_NE(sk, nullptr) << space.str();
  tune::Configuration first{index, std::vector<int>(sk->choices.size(), 0)};
  std::string script = space.script(first);
  for (const char* step : {"rename_temporary w w_0 within=", "expand_array w_0 \"i1, j1\"", "rename_iname step_0_insn_1 step_0",
                           "rename_iname step_1_insn_7 step_1", "rename_iname step_2_insn_10 step_2"})
    EXPECT_NE(script.find(step), std::string::npos) << step << "\n" << script;
  LoopKernel t = apply_transforms(k, space.steps(first));
  for (int64_t n : {2, 3, 37, 70}) EXPECT_EQ(compare_factorizations(k, t, n), "") << " n = " << n << "\n" << script;
  std::mt19937_64 rng(3);
  tune::Configuration other = space.random_in(index, rng);
  LoopKernel u = apply_transforms(k, space.steps(other));
  for (int64_t n : {5, 41}) EXPECT_EQ(compare_factorizations(k, u, n), "") << " n = " << n << "\n" << space.script(other);
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  EXPECT_GE(g.launches.size(), 8u);
  std::string host = host_steps_text(g.host_steps);
  // (the back substitution's step is its loop as written: one launch, its row sums in one thread)
  for (const char* loop : {"for step_0 in", "for step_1 in"}) EXPECT_NE(host.find(loop), std::string::npos) << host;
  // the division of column s's L entries after the updates that read them: refused
  std::string wrong = script.substr(0, script.find("remove_unused_inames\n"));
  size_t at = wrong.find("reorder_instructions \"");
  ASSERT_NE(at, std::string::npos);
  size_t end = wrong.find('\n', at);
  wrong.replace(at, end - at, "reorder_instructions \"insn_3, insn_0, insn_5, insn_4, insn_1, insn_2, insn_6, insn_8, insn_7, insn_9, insn_10, insn_11\"");
  std::string e = error_of([&] { generate(apply_transforms(k, parse_transform_script(wrong))); });
  EXPECT_NE(e.find("reads the value"), std::string::npos) << e;
}

// rename_iname existing_ok: the two loops become one over the union of their
// ranges; refused where an instruction would gain iterations, where the two
// are related in one domain, or where an instruction runs in both.
TEST(JoinInames, TheJoinedLoopKeepsEachInstructionsIterations) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j < n + 2}", "{[p]: 0 <= p < i}"},
                             "a[i] = 2 * a[i] {id=s}\nb[j] = b[j] + 1 {id=t}\nc[i, p] = a[i] + p {id=u}",
                             {"a: float64[n], b: float64[n + 2], c: float64[n, n]", "..."}, "join");
  // j's range is longer: s would run i = n and n + 1
  std::string e = error_of([&] { transformed(k, "rename_iname i j existing_ok=true\n"); });
  EXPECT_NE(e.find("instruction 's' would run other iterations in the joined range of 'j'"), std::string::npos) << e;
  // a range inside the other's joins it; the loops fuse (i's statements run after j's)
  LoopKernel short_j = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j < n}"}, "a[i] = 2 * a[i] {id=s}\nb[j] = a[j] + 1 {id=t}",
                                   {"a: float64[n], b: float64[n]", "..."}, "join2");
  LoopKernel joined = transformed(short_j, "rename_iname j i existing_ok=true\n");
  EXPECT_FALSE(joined.has_iname("j"));
  for (int64_t n : {1, 7, 33}) EXPECT_SAME_RESULTS(short_j, joined, {{"n", n}});
  // one domain: related
  LoopKernel square = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < n}"}, "c[i] = 1 {id=s}\nd[j] = 2 {id=t}",
                                  {"c: float64[n], d: float64[n]", "..."}, "sq");
  e = error_of([&] { transformed(square, "rename_iname i j existing_ok=true\n"); });
  EXPECT_NE(e.find("are dimensions of one domain"), std::string::npos) << e;
  // an instruction in both loops
  e = error_of([&] { transformed(k, "rename_iname p i existing_ok=true\n"); });
  EXPECT_NE(e.find("instruction 'u' runs in both loops"), std::string::npos) << e;
  // without existing_ok the name must be fresh, as before
  e = error_of([&] { transformed(short_j, "rename_iname j i\n"); });
  EXPECT_NE(e.find("the name 'i' is already used"), std::string::npos) << e;
}

TEST(ReorderInstructions, TheListTakesItsPlacesAndTheCheckJudgesIt) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i] = 2 * x[i] {id=s}\nb[i] = 3 * x[i] {id=t}\nc[i] = a[i] + b[i] {id=u}",
                             {"x: float64[n], a: float64[n], b: float64[n], c: float64[n]", "..."}, "order");
  LoopKernel swapped = transformed(k, "reorder_instructions \"t, s\"\n");
  EXPECT_EQ(swapped.instructions[0].id, "t");
  EXPECT_EQ(swapped.instructions[1].id, "s");
  EXPECT_EQ(swapped.instructions[2].id, "u");
  for (int64_t n : {1, 9}) EXPECT_SAME_RESULTS(k, swapped, {{"n", n}});
  // u before s reads a before it is written: refused when generated
  LoopKernel wrong = transformed(k, "reorder_instructions \"u, s\"\n");
  EXPECT_NE(error_of([&] { generate(wrong); }).find("reorder"), std::string::npos);
  EXPECT_NE(error_of([&] { transformed(k, "reorder_instructions \"s, nosuch\"\n"); }).find("no instruction 'nosuch'"), std::string::npos);
  EXPECT_NE(error_of([&] { transformed(k, "reorder_instructions \"s, s\"\n"); }).find("listed twice"), std::string::npos);
}

// floyd-warshall: no loop is parallel as written (row and column k are read
// by the other rows of step k and written in it). Split around k, its nine
// pieces are ordered by isl in phases of each k, each piece's loops
// parallel; by hand first, then from the automatic space.
TEST(IndexSetSplit, FloydWarshallRunsInPhasesOfEachStep) {
  LoopKernel k = polybench("floyd_warshall");
  LoopKernel split = transformed(k, "split_index_set i k\nsplit_index_set j k\n");
  ASSERT_EQ(split.instructions.size(), 9u);
  EXPECT_EQ(split.instructions[0].id, "insn_0_lt_lt");
  EXPECT_TRUE(split.instructions[4].origin_part);
  EXPECT_EQ(split.instructions[4].origin_of, "insn_0");
  for (int64_t n : {1, 2, 5, 30}) EXPECT_EQ(compare_paths(k, split, n), "") << "n = " << n;
  // the pieces after k's row and column first: refused, the pair named
  LoopKernel wrong = transformed(split, "reorder_instructions \"insn_0_gt_gt, insn_0_lt_lt\"\n");
  std::string e = error_of([&] { generate(wrong); });
  EXPECT_NE(e.find("reorder dependent iterations"), std::string::npos) << e;

  tune::Space space = tune::auto_space(k, "cuda");
  int index = -1;
  const tune::Sketch* sk = sketch_named(space, "nests, index-set split", &index);
  ASSERT_NE(sk, nullptr) << space.str();
  std::mt19937_64 rng(7);
  for (int draw = 0; draw < 2; ++draw) {
    tune::Configuration c = draw == 0 ? tune::Configuration{index, std::vector<int>(sk->choices.size(), 0)} : space.random_in(index, rng);
    LoopKernel t = apply_transforms(k, space.steps(c));
    for (int64_t n : {3, 37}) EXPECT_EQ(compare_paths(k, t, n), "") << "n = " << n << "\n" << space.script(c);
    GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
    EXPECT_GE(g.launches.size(), 5u);
    EXPECT_NE(host_steps_text(g.host_steps).find("for step in"), std::string::npos) << host_steps_text(g.host_steps);
  }
}

TEST(IndexSetSplit, RefusalsNameTheInameAndTheReason) {
  LoopKernel k = polybench("floyd_warshall");
  auto refused = [&](const LoopKernel& kernel, const std::string& script, const std::string& part) {
    std::string e = error_of([&] { transformed(kernel, script); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  refused(k, "split_index_set nosuch k\n", "no iname 'nosuch'");
  refused(k, "split_index_set i \"k * k\"\n", "'k * k' is not an affine expression");
  refused(k, "split_index_set i k within=id:nosuch\n", "no instruction matching");
  LoopKernel square = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < n}"}, "c[i, j] = 1", {"c: float64[n, n]", "..."}, "sq");
  refused(square, "split_index_set i 3\n", "shares its domain with other inames");
  refused(polybench("cholesky"), "split_index_set i 3\n", "the bounds of 'j' use 'i'");
}
