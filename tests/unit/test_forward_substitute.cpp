// forward_substitute (transforms/forward_substitute.cpp): an initialization
// to a constant folds into the sum that reads it (PolyBench's 2mm: tmp = 0,
// then tmp += ...; as a sum, tmp = 0 + sum(k, ...)), the store removed;
// checked against the kernel as written on random inputs at sizes no tile
// divides; reads that see other values too, and stores of non-constants,
// are refused with the reason; the automatic space folds doitgen's and
// 2mm's initializations.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::polybench;
using loom::testing::error_of;

namespace {

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

}  // namespace

TEST(ForwardSubstitute, AnInitializationFoldsIntoTheSumThatReadsIt) {
  LoopKernel k = polybench("2mm");
  LoopKernel t = transformed(k, "accumulation_to_reduction id:insn_1\nforward_substitute id:insn_0\n");
  EXPECT_FALSE(std::any_of(t.instructions.begin(), t.instructions.end(), [](auto& i) { return i.id == "insn_0"; }));
  std::string folded = t.instruction("insn_1").str();
  EXPECT_EQ(folded.find("tmp[i1, j1] + sum"), std::string::npos) << folded;
  EXPECT_NE(folded.find("sum(k1"), std::string::npos) << folded;
  ASSERT_NE(t.original, nullptr);
  EXPECT_EQ(t.original->instructions.size(), t.instructions.size());
  for (auto& sizes : std::vector<std::map<std::string, int64_t>>{{{"ni", 3}, {"nj", 5}, {"nk", 7}, {"nl", 2}},
                                                                 {{"ni", 1}, {"nj", 1}, {"nk", 0}, {"nl", 1}}})
    EXPECT_SAME_RESULTS(k, t, sizes);
  // then run in parallel: the fold's kernel is checked like any other
  LoopKernel p = transformed(t, "add_global_barrier insn_1 id=g\nsplit_iname j1 32 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_SAME_RESULTS(k, p, (std::map<std::string, int64_t>{{"ni", 5}, {"nj", 37}, {"nk", 6}, {"nl", 9}}));
}

TEST(ForwardSubstitute, RefusalsSayWhy) {
  LoopKernel k = polybench("2mm");
  auto refused = [&](const LoopKernel& kernel, const std::string& script, const std::string& part) {
    std::string e = error_of([&] { transformed(kernel, script); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  // as an accumulation, the sum's k > 0 reads its own earlier values
  refused(k, "forward_substitute id:insn_0\n", "instruction 'insn_1' reads them and others'");
  refused(k, "forward_substitute id:insn_1\n", "not a constant");
  refused(k, "forward_substitute id:nosuch\n", "no instruction matches 'id:nosuch'");
  // a read that sees the array as it was before the kernel where the store did not write
  LoopKernel half = parse_kernel_text(R"(
kernel half
domains:
  {[i]: 0 <= i < m and i < n}
  {[j]: 0 <= j < n}
arguments:
  x: float64[n]
  y: float64[n]
instructions:
  x[i] = 0  {id=s}
  y[j] = x[j] + 1  {id=r, dep=s}
)")
                        .kernel;
  refused(half, "forward_substitute id:s\n", "instruction 'r' reads them and others'");
}

TEST(ForwardSubstitute, TheAutomaticSpaceFoldsInitializations) {
  for (const char* name : {"2mm", "doitgen"}) {
    LoopKernel k = polybench(name);
    tune::Space space = tune::auto_space(k, "cuda");
    int folded = 0;
    for (size_t i = 0; i < space.sketches().size(); ++i) {
      tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
      std::string script = space.script(first);
      if (script.find("forward_substitute id:insn_0") == std::string::npos) continue;
      ++folded;
      if (space.sketches()[i].name.find("tensor cores") == std::string::npos) continue;
      LoopKernel t = apply_transforms(k, space.steps(first));
      std::map<std::string, int64_t> sizes = std::string(name) == "2mm"
                                                 ? std::map<std::string, int64_t>{{"ni", 19}, {"nj", 22}, {"nk", 24}, {"nl", 18}}
                                                 : std::map<std::string, int64_t>{{"nr", 3}, {"nq", 19}, {"np", 22}};
      EXPECT_SAME_RESULTS(k, t, sizes) << script;
      generate(t, TargetInfo::cuda("sm_90a"));
    }
    EXPECT_GT(folded, 0) << name << "\n" << space.str();
  }
}
