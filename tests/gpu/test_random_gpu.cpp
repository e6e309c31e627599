// Random schedules on the GPU: the schedules of the CPU random test (fixed
// seeds) applied to every example; each kernel Loom accepts runs on the GPU
// and must match the untransformed kernel in the reference interpreter.
// Skipped where there is no GPU. LOOM_RANDOM_SEED=N explores other schedules.
#include "gpu_oracle.h"
#include "random_kernel.h"
#include "random_schedule.h"

#include <cstdlib>

using namespace loom;

TEST(GpuRandomSchedules, AcceptedKernelsMatchTheReference) {
  REQUIRE_GPU();
  int checked = 0;
  for (const std::string& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    std::map<std::string, int64_t> params;
    for (auto& p : f.kernel.parameters()) params[p] = p == "m" ? 23 : p == "l" ? 9 : 19;
    // LOOM_RANDOM_SEED explores other schedules (the suite's seed is fixed)
    const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
    std::mt19937 rng(unsigned(std::hash<std::string>()(name) % 100000) + 777 + (seed_env ? unsigned(std::atoi(seed_env)) : 0u));
    for (int trial = 0; trial < 12; ++trial) {
      std::string log;
      LoopKernel t = loom::testing::random_schedule(f.kernel, rng, log);
      std::unique_ptr<cuda::CudaKernel> ck;
      try {
        ck = std::make_unique<cuda::CudaKernel>(t);
      } catch (const KernelError&) {
        continue;  // refused: fine
      }
      // the usual sizes, then sizes drawn from the edge cases (empty, one, multiples, one past)
      std::map<std::string, int64_t> edge;
      for (auto& p : f.kernel.parameters()) edge[p] = std::vector<int64_t>{0, 1, 2, 16, 17, 32, 33}[rng() % 7];
      for (auto* sizes : {&params, &edge}) {
        if (!assumptions_hold(f.kernel, *sizes)) continue;  // outside the kernel's own assumptions (histogram: m >= 1)
        auto ref = make_host_arrays(f.kernel, *sizes, 3);
        auto gpu = ref;
        interpret(generate(f.kernel), loom::testing::args_of(f.kernel, ref, *sizes));
        try {
          ck->call_host(loom::testing::args_of(t, gpu, *sizes));
        } catch (const ArgumentError& e) {  // sizes outside the schedule's assumptions: refused, fine
          EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos)
              << name << ": " << log << ": " << e.what();
          continue;
        } catch (const std::exception& e) {  // a fault leaves the context unusable: name the schedule and stop
          std::string text;
          for (auto& [p, v] : *sizes) text += " " + p + "=" + std::to_string(v);
          FAIL() << name << text << ": " << log << ": " << e.what();
        }
        ++checked;
        EXPECT_EQ(loom::testing::compare_written(f.kernel, ref, gpu), "") << name << ": " << log;
      }
    }
  }
  EXPECT_GT(checked, 20);
  std::printf("GPU random schedules: %d checked\n", checked);
}

// Random kernels (in-place sweeps, running sums, shared arrays, index
// arrays among them) under random schedules on the GPU: on the CPU target
// threads run in a fixed order, so a race can hide there; here it cannot.
TEST(GpuRandomKernels, AcceptedKernelsMatchTheReference) {
  REQUIRE_GPU();
  const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
  std::mt19937 rng(4242u + (seed_env ? unsigned(std::atoi(seed_env)) : 0u));
  int checked = 0;
  for (int c = 0; c < 150; ++c) {
    loom::testing::RandomKernel rk = loom::testing::random_kernel(rng);
    std::string log;
    LoopKernel t = loom::testing::random_schedule(rk.kernel, rng, log);
    std::unique_ptr<cuda::CudaKernel> ck;
    try {
      ck = std::make_unique<cuda::CudaKernel>(t);
    } catch (const KernelError&) {
      continue;  // refused: fine
    }
    std::map<std::string, int64_t> sizes;
    for (auto& p : rk.kernel.parameters()) sizes[p] = std::vector<int64_t>{1, 3, 16, 17, 33, 40, 70}[rng() % 7];
    if (!assumptions_hold(rk.kernel, sizes)) continue;
    auto ref = make_host_arrays(rk.kernel, sizes, 5);
    auto gpu = ref;
    interpret(generate(rk.kernel), loom::testing::args_of(rk.kernel, ref, sizes));
    try {
      ck->call_host(loom::testing::args_of(t, gpu, sizes));
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos) << rk.text << log << e.what();
      continue;
    } catch (const std::exception& e) {  // a fault leaves the context unusable: name the kernel and stop
      FAIL() << rk.text << "transforms:\n" << log << e.what();
    }
    ++checked;
    EXPECT_EQ(loom::testing::compare_written(rk.kernel, ref, gpu), "") << rk.text << "transforms:\n" << log;
  }
  EXPECT_GT(checked, 40);
  std::printf("GPU random kernels: %d checked\n", checked);
}
