// Random schedules: sequences of splits and tags (blocks, threads, unrolling,
// ILP), loop priorities and reduction splits, drawn with fixed seeds, applied
// to every example; each kernel that Loom accepts must compute what the
// untransformed kernel computes (CPU oracle, sizes that are not multiples of
// anything). A refusal (TransformError, KernelError) is a fine outcome; a
// wrong number or a crash is not. LOOM_RANDOM_SEED=N explores other
// schedules, LOOM_RANDOM_VERBOSE=1 prints each one checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "loom/cuda.h"
#include "oracle.h"
#include "random_schedule.h"

using namespace loom;

TEST(RandomSchedules, AcceptedKernelsComputeWhatTheOriginalComputes) {
  int accepted = 0, refused = 0, bulk = 0;
  for (const std::string& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    std::map<std::string, int64_t> params;
    for (auto& p : f.kernel.parameters()) params[p] = p == "m" ? 23 : p == "l" ? 9 : 19;
    // LOOM_RANDOM_SEED explores other schedules; the suite's seed is fixed
    const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
    unsigned seed = unsigned(std::hash<std::string>()(name) % 100000) + (seed_env ? unsigned(std::atoi(seed_env)) : 0u);
    std::mt19937 rng(seed);
    for (int trial = 0; trial < loom::testing::scaled(10); ++trial) {
      std::string log;
      LoopKernel t;
      try {
        t = loom::testing::random_schedule(f.kernel, rng, log);
      } catch (const Error& e) {  // a transformation's refusal is a TransformError: anything else is a finding
        ADD_FAILURE() << e.what() << "\n" << name << ", the step after:\n" << log;
        continue;
      }
      // (printed before generating, so a schedule that hangs code generation is named)
      if (std::getenv("LOOM_RANDOM_VERBOSE")) std::fprintf(stderr, "%s: %s\n", name.c_str(), log.c_str());
      try {
        GeneratedKernel g = generate(t);  // refusals (limits, block sizes depending on parameters, ...) are fine
        if (!g.bulk_copies.empty()) {  // (the printer's side of the copy engine's tiles)
          std::string cuda = cuda::print_source(g);
          EXPECT_NE(cuda.find("loom_tma_load<"), std::string::npos) << name << ": " << log;
          ++bulk;
        }
      } catch (const KernelError& e) {
        if (std::getenv("LOOM_RANDOM_VERBOSE")) std::fprintf(stderr, "refused: %s\n", e.what());
        ++refused;
        continue;
      }
      ++accepted;
      // at the usual sizes, at sizes drawn from the edge cases (empty, one,
      // exact multiples, one past) and at multiples of 16; sizes that break the
      // schedule's assumptions must be refused, not run
      std::map<std::string, int64_t> edge, multiples;
      for (auto& p : f.kernel.parameters()) edge[p] = std::vector<int64_t>{0, 1, 2, 16, 17, 32, 33}[rng() % 7];
      for (auto& p : f.kernel.parameters()) multiples[p] = 48;
      for (auto* sizes : {&params, &edge, &multiples}) {
        try {
          EXPECT_EQ(loom::testing::compare_kernels(f.kernel, t, *sizes), "") << name << ": " << log;
        } catch (const ArgumentError& e) {
          EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos)
              << name << ": " << log << ": " << e.what();
        }
      }
    }
  }
  EXPECT_GT(accepted, loom::testing::scaled(20));  // the test must exercise real schedules
  std::printf("random schedules: %d accepted and checked (%d with tiles from the copy engine), %d refused\n", accepted, bulk, refused);
}
