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

// PolyBench's whole programs (in-place updates, work arrays, several nests),
// half their steps the nests sketches' own: distribution, accumulations read
// as sums, barriers, skews, copies from before the kernel, expansions,
// index-set splits, reorderings, first-thread statements, joined loops.
TEST(RandomSchedules, WholeProgramStepsKeepWhatPolyBenchComputes) {
  int accepted = 0, refused = 0;
  for (const std::string& name : {"trmm", "doitgen", "syrk", "syr2k", "gemm", "2mm", "atax", "bicg", "mvt", "gemver", "jacobi_1d", "jacobi_2d"}) {
    LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/" + name + ".loom").kernel;
    const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
    std::mt19937 rng(unsigned(std::hash<std::string>()(name) % 100000) + (seed_env ? unsigned(std::atoi(seed_env)) : 0u));
    for (int trial = 0; trial < loom::testing::scaled(6); ++trial) {
      std::string log;
      LoopKernel t;
      try {
        t = loom::testing::random_schedule(k, rng, log, true);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\n" << name << ", the step after:\n" << log;
        continue;
      }
      if (std::getenv("LOOM_RANDOM_VERBOSE")) std::fprintf(stderr, "%s: %s\n", name.c_str(), log.c_str());
      try {
        generate(t);
      } catch (const KernelError& e) {
        ++refused;
        continue;
      }
      ++accepted;
      std::map<std::string, int64_t> sizes;
      for (auto& p : k.parameters()) sizes[p] = p == "tsteps" ? 3 : 7 + int64_t(rng() % 9);
      try {
        EXPECT_EQ(loom::testing::compare_kernels(k, t, sizes), "") << name << ": " << log;
      } catch (const ArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos) << name << ": " << log << ": " << e.what();
      }
    }
  }
  EXPECT_GT(accepted, loom::testing::scaled(12));
  std::printf("whole-program random schedules: %d accepted and checked, %d refused\n", accepted, refused);
}
