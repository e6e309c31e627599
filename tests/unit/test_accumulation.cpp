// accumulation_to_reduction (transforms/accumulation.cpp): accumulations
// written as loops read as reductions, checked against the kernel as
// written on random inputs (poisoned outputs, odd sizes), then split across
// threads as a reduction; and the refusals with their reasons.
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
LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// PolyBench's gemm: C scaled, then the products accumulated into it over k.
const char* const kGemm = R"(kernel gemm
domains:
  {[i, j, k]: 0 <= i < ni and 0 <= j < nj and 0 <= k < nk}
arguments:
  ni: int32, nj: int32, nk: int32, alpha: float64, beta: float64
  A: float64[ni, nk], B: float64[nk, nj], C: float64[ni, nj]
instructions:
  for i, j
    C[i, j] = C[i, j] * beta  {id=scale}
    for k
      C[i, j] = C[i, j] + alpha * A[i, k] * B[k, j]  {id=acc}
    end
  end
)";

}  // namespace

TEST(AccumulationToReduction, GemmsAccumulationBecomesASumOverK) {
  LoopKernel k = kernel_of(kGemm);
  LoopKernel r = transformed(k, "accumulation_to_reduction id:acc\n");
  const Instruction* acc = nullptr;
  for (auto& insn : r.instructions)
    if (insn.id == "acc") acc = &insn;
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->rhs.str(), "C[i, j] + sum(k, alpha * A[i, k] * B[k, j])");
  EXPECT_EQ(acc->within_inames, (std::set<std::string>{"i", "j"}));
  check_transformed(k, r, {{{"ni", 5}, {"nj", 7}, {"nk", 9}}, {{"ni", 1}, {"nj", 3}, {"nk", 0}}});
  // the sum across the threads of a block: a row's terms spread over l.0
  // (the scaling distributed into a launch of its own, where it has no k)
  LoopKernel t = transformed(r, "distribute_loops i,j after=id:scale\nadd_global_barrier scale\n"
                                "split_iname k 32 inner_tag=l.0\nsplit_iname j_2 2 outer_tag=g.0 inner_tag=l.1\ntag_inames i_2:g.1\n"
                                "tag_inames i:g.1 j:g.0\n");
  check_transformed(k, t, {{{"ni", 5}, {"nj", 7}, {"nk", 70}}, {{"ni", 3}, {"nj", 1}, {"nk", 33}}});
}

// trisolv's x[i] = x[i] - L[i, j] x[j] over j < i (insn_1 of PolyBench's):
// x[j] is never x[i] (isl), so the loop's order does not matter to what it reads.
TEST(AccumulationToReduction, TrisolvsSubtractionReadsOnlyOtherElements) {
  LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/trisolv.loom").kernel;
  LoopKernel r = transformed(k, "accumulation_to_reduction id:insn_1\n");
  check_transformed(k, r, {{{"n", 7}}, {{"n", 1}}, {{"n", 40}}});
  LoopKernel t = transformed(r, "split_iname j 4 inner_tag=unr\n");  // (the terms summed four at a time)
  check_transformed(k, t, {{{"n", 7}}, {{"n", 45}}});
}

TEST(AccumulationToReduction, Refusals) {
  // the terms read the accumulated row itself (s[j] is s[i] at j = i)
  LoopKernel self = kernel_of(R"(kernel self
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  n: int32, s: float32[n]
instructions:
  for i, j
    s[i] = s[i] + s[j]  {id=acc}
  end
)");
  std::string e = error_of([&] { transformed(self, "accumulation_to_reduction id:acc\n"); });
  EXPECT_NE(e.find("the terms of 'acc' read s[j], which may be s[i] itself: the loop's order matters"), std::string::npos) << e;
  LoopKernel gemm = kernel_of(kGemm);
  e = error_of([&] { transformed(gemm, "accumulation_to_reduction id:scale\n"); });  // (x = x * beta: no loop of its own)
  EXPECT_NE(e.find("'scale' has no loop to reduce"), std::string::npos) << e;
  e = error_of([&] { transformed(gemm, "accumulation_to_reduction id:acc inames=j\n"); });
  EXPECT_NE(e.find("the left-hand side of 'acc' names 'j'"), std::string::npos) << e;
  // a loop holding another instruction is no reduction of this one
  LoopKernel two = kernel_of(R"(kernel two
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  n: int32, a: float32[n, n], s: float32[n], t: float32[n]
instructions:
  for i, j
    s[i] = s[i] + a[i, j]  {id=acc}
    t[j] = 2 * a[i, j]  {id=other}
  end
)");
  e = error_of([&] { transformed(two, "accumulation_to_reduction id:acc\n"); });
  EXPECT_NE(e.find("'acc' has no loop to reduce"), std::string::npos) << e;
  e = error_of([&] { transformed(two, "accumulation_to_reduction id:acc inames=j\n"); });
  EXPECT_NE(e.find("loop 'j' holds 'other' too"), std::string::npos) << e;
  e = error_of([&] { transformed(two, "accumulation_to_reduction id:other\n"); });
  EXPECT_NE(e.find("'other' is not an accumulation (x = x + f, x = f + x, x = x - f or x = x * f): 2 * a[i, j]"), std::string::npos) << e;
  e = error_of([&] { transformed(gemm, "accumulation_to_reduction id:nothing\n"); });
  EXPECT_NE(e.find("no instruction matches 'id:nothing'"), std::string::npos) << e;
}

// symm: row i's terms are added into the rows k < i, after those rows' own
// stores. Once the updates are a nest of their own (reordered after the
// stores, then distributed), each C[k, j] is a sum over i > k, although i
// holds every instruction as written: the reorder check reads each sum's
// terms in the kernel as written as one instance (nothing touches C[k, j]
// between them there), so the sum may run in any order, k and j in parallel.
TEST(AccumulationToReduction, ASumOverALoopThatHoldsOthersAsWrittenIsProvenThroughItsTerms) {
  LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/symm.loom").kernel;
  const std::string separated =
      "distribute_loops k after=id:insn_1\nreorder_instructions \"insn_0, insn_2, insn_3, insn_1\"\n"
      "distribute_loops j after=id:insn_3\ndistribute_loops i after=id:insn_3\n";
  LoopKernel r = transformed(k, separated + "accumulation_to_reduction id:insn_1 inames=i_2\n");
  EXPECT_EQ(r.instruction("insn_1").within_inames, (std::set<std::string>{"j_2", "k"}));
  EXPECT_NE(r.instruction("insn_1").rhs.str().find("sum(i_2, "), std::string::npos) << r.instruction("insn_1").str();
  EXPECT_EQ(r.original->instruction("insn_1").within_inames, (std::set<std::string>{"i", "j", "k"}));  // (as written: the loop)
  check_transformed(k, r, {{{"m", 5}, {"n", 7}}, {{"m", 1}, {"n", 3}}, {{"m", 13}, {"n", 2}}});
  // the stores on blocks, then each update's (k, j) on a thread, its sum split over l.1
  LoopKernel t = transformed(r, "add_global_barrier insn_3 id=g\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\ntag_inames i:g.1\n"
                                "split_iname j_2 16 outer_tag=g.0 inner_tag=l.0\ntag_inames k:g.1\n"
                                "split_iname i_2 4 inner_tag=l.1\n");
  check_transformed(k, t, {{{"m", 9}, {"n", 37}}, {{"m", 17}, {"n", 5}}});
}

// The same sum where the kernel as written reads the partial sums between
// its terms: the sum's terms are no longer one instance there, and the
// reorder check refuses it (a kernel whose reads all see the whole sum
// would otherwise match the terms folded into one). The transformed kernel
// is built by hand, with its instances' origins, as no transformation
// sequence accepted step by step reaches it.
TEST(AccumulationToReduction, ASumWhosePartialValuesAreReadAsWrittenIsRefused) {
  const std::string head = R"(kernel partial
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
  {[i_2, j_2]: 0 <= i_2 < n and 0 <= j_2 < m}
arguments:
  n: int32, m: int32, a: float64[n, m], s: float64[m], t: float64[n, m]
instructions:
)";
  LoopKernel written = kernel_of(head + R"(  for i, j
    s[j] = s[j] + a[i, j]  {id=acc}
    t[i, j] = s[j]  {id=partial}
  end
)");
  LoopKernel summed = kernel_of(head + R"(  for j_2
    s[j_2] = s[j_2] + sum(i_2, a[i_2, j_2])  {id=acc}
  end
  for i, j
    t[i, j] = s[j]  {id=partial}
  end
)");
  summed.instructions.edit()[0].origin = std::map<std::string, Expr>{{"i", make_var("i_2")}, {"j", make_var("j_2")}};
  summed.original = std::make_shared<const LoopKernel>(written);
  std::string e = error_of([&] { generate(summed); });
  EXPECT_NE(e.find("'acc' is summed as a reduction, but in the kernel as written another access to 's' stands between two terms of one sum"),
            std::string::npos) << e;
}
