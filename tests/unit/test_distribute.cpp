// distribute_loops (transforms/distribute.cpp): loop distribution checked
// against the kernel as written on random inputs (poisoned outputs, sizes
// that are no multiple of anything), the copies nesting where their loops
// did, the step on the kernel as written (so a global barrier can stand
// between the parts), and the refusals with their reasons.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }

// tmp[i] from row i of A, then A[i, j] tmp[i] added into y[j]: atax's shape.
const char* const kAtax = R"(kernel atax
domains:
  {[i]: 0 <= i < m}
  {[j1]: 0 <= j1 < n}
  {[j2]: 0 <= j2 < n}
arguments:
  m: int32, n: int32, A: float64[m, n], x: float64[n], y: float64[n], tmp: float64[m]
instructions:
  for i
    tmp[i] = 0.0  {id=zero}
    for j1
      tmp[i] = tmp[i] + A[i, j1] * x[j1]  {id=row}
    end
    for j2
      y[j2] = y[j2] + A[i, j2] * tmp[i]  {id=update}
    end
  end
)";

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

}  // namespace

TEST(DistributeLoops, AtaxsLoopSplitsIntoTwoParallelNests) {
  LoopKernel k = kernel_of(kAtax);
  LoopKernel d = transformed(k, "distribute_loops i after=id:row\n");
  check_transformed(k, d, {{{"m", 5}, {"n", 7}}, {{"m", 1}, {"n", 1}}, {{"m", 0}, {"n", 3}}});
  // the parts as launches of their own: rows on threads, then columns (the copy of i inside each thread)
  LoopKernel t = transformed(d, "add_global_barrier row\nsplit_iname i 16 outer_tag=g.0 inner_tag=l.0\n"
                                "split_iname j2 16 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_EQ(generate(t).launches.size(), 2u);
  check_transformed(k, t, {{{"m", 37}, {"n", 45}}, {{"m", 3}, {"n", 1}}, {{"m", 64}, {"n", 17}}});
  // without the distribution, the barrier would distribute i itself: refused
  std::string e = error_of([&] { transformed(k, "add_global_barrier row\n"); });
  EXPECT_NE(e.find("share loop 'i', which the barrier would distribute"), std::string::npos) << e;
}

// The copies nest where their loops did: b's second part reads row i - 1 one
// column ahead, which the loop over i (outside j) has written; with the copy
// of i inside j it would not have.
TEST(DistributeLoops, TheCopiesNestWhereTheirLoopsDid) {
  LoopKernel k = kernel_of(R"(kernel shifted
domains:
  {[i]: 1 <= i < n}
  {[j]: 0 <= j < m - 1}
arguments:
  n: int32, m: int32, a: float32[n], b: float32[n, m]
instructions:
  for i
    a[i] = a[i - 1] * 0.5 + i  {id=first}
    for j
      b[i, j] = b[i - 1, j + 1] + a[i]  {id=second}
    end
  end
)");
  LoopKernel d = transformed(k, "distribute_loops i after=id:first\n");
  check_transformed(k, d, {{{"n", 9}, {"m", 6}}, {{"n", 2}, {"m", 2}}, {{"n", 33}, {"m", 17}}});
  std::vector<std::string> order;
  for (auto& dom : d.domains) order.push_back(dom.inames().front());
  EXPECT_EQ(order, (std::vector<std::string>{"i", "i_2", "j"}));
}

TEST(DistributeLoops, Refusals) {
  // trisolv: x[j] for j < i is read after row j's division wrote it; distributed after the
  // accumulation, every read would come first (after the first statement it is legal)
  LoopKernel trisolv = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/trisolv.loom").kernel;
  check_transformed(trisolv, transformed(trisolv, "distribute_loops i after=id:insn_0\n"), {{{"n", 7}}, {{"n", 1}}});
  std::string e = error_of([&] { transformed(trisolv, "distribute_loops i after=id:insn_1\n"); });
  EXPECT_NE(e.find("'insn_2' (after the split) touches an element of 'x' in an earlier iteration than 'insn_1' (before it) does"),
            std::string::npos) << e;
  EXPECT_NE(e.find("the two would run the other way round"), std::string::npos) << e;
  // a private value each iteration passes from the first part to the second
  LoopKernel scalar = kernel_of(R"(kernel scalar
domains:
  {[i]: 0 <= i < n}
arguments:
  n: int32, a: float32[n], out: float32[n]
instructions:
  for i
    <float32> s = 2 * a[i]  {id=make}
    out[i] = s + 1  {id=use}
  end
)");
  e = error_of([&] { transformed(scalar, "distribute_loops i after=id:make\n"); });
  EXPECT_NE(e.find("'use' (after the split) and 'make' (before it) both use 's', a value one of them writes in every iteration"),
            std::string::npos) << e;
  LoopKernel k = kernel_of(kAtax);
  e = error_of([&] { transformed(k, "distribute_loops i after=id:update\n"); });
  EXPECT_NE(e.find("no instruction inside the loops follows 'id:update': nothing to distribute"), std::string::npos) << e;
  e = error_of([&] { transformed(k, "distribute_loops q after=id:row\n"); });
  EXPECT_NE(e.find("no iname 'q'"), std::string::npos) << e;
  e = error_of([&] { transformed(k, "split_iname i 8 outer_tag=g.0\ndistribute_loops i_outer after=id:row\n"); });
  EXPECT_NE(e.find("loop 'i_outer' is tagged g.0; distribute it before tagging"), std::string::npos) << e;
  e = error_of([&] { transformed(k, "distribute_loops i after=id:nothing\n"); });
  EXPECT_NE(e.find("no instruction inside the loops matches 'id:nothing'"), std::string::npos) << e;
}

// After reorder_instructions the parts follow the kernel's order, not the
// kernel as written's: PolyBench's symm adds row i's contributions into the
// rows k < i before row i's own store; moved after it and distributed, the
// store's nest runs first, then the updates' (legal: the rows above are
// stored before any later row adds into them). Proven on the kernel as it
// stands; the kernel as written keeps its loops, and the reorder check
// compares the two. A distribution that would move a read before its write
// in that order is refused.
TEST(DistributeLoops, PartsFollowTheKernelsOrderAfterAReordering) {
  LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/symm.loom").kernel;
  const std::string reordered = "distribute_loops k after=id:insn_1\nreorder_instructions \"insn_0, insn_2, insn_3, insn_1\"\n";
  LoopKernel t = transformed(k, reordered + "distribute_loops j after=id:insn_3\ndistribute_loops i after=id:insn_3\n");
  EXPECT_TRUE(t.instruction("insn_1").within_inames.count("i_2")) << t.instruction("insn_1").str();
  EXPECT_FALSE(t.original->has_iname("i_2"));
  for (auto& sizes : std::vector<std::map<std::string, int64_t>>{{{"m", 5}, {"n", 7}}, {{"m", 1}, {"n", 3}}, {{"m", 13}, {"n", 2}}})
    EXPECT_SAME_RESULTS(k, t, sizes);
  // its nests then run as launches: i and j of the stores on blocks, j of the updates
  LoopKernel p = transformed(t, "add_global_barrier insn_3 id=g\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\ntag_inames i:g.1\n"
                                "split_iname j_2 16 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_SAME_RESULTS(k, p, (std::map<std::string, int64_t>{{"m", 9}, {"n", 37}}));
  // the sum's terms after the store that reads it, in other loops: refused on the kernel as it stands
  std::string e = error_of([&] {
    transformed(k, "distribute_loops k after=id:insn_1\nreorder_instructions \"insn_0, insn_3, insn_2, insn_1\"\n"
                   "distribute_loops j after=id:insn_3\n");
  });
  EXPECT_NE(e.find("'insn_2' (after the split) and 'insn_0' (before it) both use 'temp2'"), std::string::npos) << e;
}
