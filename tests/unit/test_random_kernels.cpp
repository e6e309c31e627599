// Differential testing of the whole pipeline on random kernels (random
// domains, instructions, dtypes) under random schedules: every transformed
// kernel either is refused with a clear error or computes what the
// untransformed one computes, on the CPU oracle at random and edge sizes.
// A short fixed-seed run; tools/fuzz-kernels runs it long (LOOM_FUZZ_CASES).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "loom/transforms.h"
#include "oracle.h"
#include "random_kernel.h"
#include "random_schedule.h"

using namespace loom;

TEST(RandomKernels, TransformedKernelsComputeWhatTheOriginalComputes) {
  const char* env = std::getenv("LOOM_FUZZ_CASES");
  const int cases = env ? std::atoi(env) : loom::testing::scaled(60);
  const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
  std::mt19937 rng(seed_env ? unsigned(std::atoi(seed_env)) : 2026u);
  int checked = 0, refused = 0;
  std::map<std::string, int> reasons;
  for (int c = 0; c < cases; ++c) {
    if (env && c > 0 && c % 2000 == 0) std::fprintf(stderr, "  %d cases: %d checked, %d refused\n", c, checked, refused);
    loom::testing::RandomKernel rk = loom::testing::random_kernel(rng);
    std::string log;
    auto started = std::chrono::steady_clock::now();
    // a case slow enough to look hung is a finding too (Reliability II): it is named
    struct SlowReport {
      std::chrono::steady_clock::time_point t;
      const std::string& text;
      const std::string& log;
      ~SlowReport() {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
        if (s > 2) std::fprintf(stderr, "slow random case (%.1f s):\n%stransforms:\n%s\n", s, text.c_str(), log.c_str());
      }
    } slow{started, rk.text, log};
    LoopKernel t;
    try {
      t = loom::testing::random_schedule(rk.kernel, rng, log);
    } catch (const Error& e) {  // a transformation's refusal is a TransformError: anything else is a finding
      ADD_FAILURE() << e.what() << "\n" << rk.text << "the step after:\n" << log;
      continue;
    }
    const std::string made = t.str();
    try {
      generate(t);
    } catch (const KernelError& e) {  // a refusal names why; count them by their first words
      std::string w = e.what();
      auto colon = w.find("': ");
      reasons[w.substr(colon == std::string::npos ? 0 : colon + 3, 64)]++;
      ++refused;
      continue;
    }
    // code generation leaves the kernel as it was (the analyses' isl sets are their own)
    EXPECT_EQ(t.str(), made) << rk.text << log;
    // the log replays: the same steps as a script give the same kernel
    EXPECT_EQ(apply_transforms(rk.kernel, parse_transform_script(log)).str(), t.str()) << rk.text << log;
    std::map<std::string, int64_t> sizes;
    for (auto& p : rk.kernel.parameters()) sizes[p] = std::vector<int64_t>{0, 1, 3, 16, 17, 33, 40}[rng() % 7];
    try {
      std::string problems = loom::testing::compare_kernels(rk.kernel, t, sizes);
      if (!problems.empty()) {  // shrink the schedule to the lines that still show the difference
        std::string shrunk = loom::testing::shrink_script(rk.kernel, log, [&](const LoopKernel& s) {
          try {
            return !loom::testing::compare_kernels(rk.kernel, s, sizes).empty();
          } catch (const Error&) {
            return false;
          }
        });
        ADD_FAILURE() << problems << rk.text << "transforms:\n" << shrunk << "(full schedule:\n" << log << ")";
      }
      ++checked;
    } catch (const ArgumentError& e) {  // sizes outside the schedule's assumptions are refused
      EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos) << e.what() << "\n" << log;
    } catch (const Error& e) {  // a target refusing what code generation accepted: a finding, named with its case
      ADD_FAILURE() << e.what() << "\n" << rk.text << "transforms:\n" << log;
    }
  }
  EXPECT_GT(checked, cases / 3);  // the test must exercise real schedules
  std::printf("random kernels: %d checked, %d refused\n", checked, refused);
  if (env)
    for (auto& [r, n] : reasons) std::printf("  refused %5d: %s\n", n, r.c_str());
}

TEST(RandomKernels, ShrinkingKeepsOnlyTheStepsAFailureNeeds) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = a[i, j]", {"a: float32[n, m], out: float32[n, m]"});
  std::string script = "split_iname i 4\nrename_iname j j_r\ntag_inames i_outer:g.0\nsplit_iname j_r 2\n";
  // a stand-in failure that needs the split and the tag (not the rename or the second split)
  auto fails = [](const LoopKernel& x) { return x.has_iname("i_outer") && x.tag_of("i_outer").kind == InameTag::Group; };
  EXPECT_EQ(loom::testing::shrink_script(k, script, fails), "split_iname i 4\ntag_inames i_outer:g.0\n");
}
