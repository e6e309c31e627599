// GPU tests: every example runs on the GPU and matches the reference
// interpreter, at sizes that are not multiples of the split lengths and at
// the edge sizes 1 and 0. Skipped (GTEST_SKIP) where there is no GPU.
#include "gpu_oracle.h"

using namespace loom;
using loom::testing::gpu_vs_reference;

class GpuExample : public ::testing::TestWithParam<std::string> {};

// (wgmma is sm_90a's alone, float64's m16n8k16 sm_90's: such an example runs on compute capability 9.0 only)
#define REQUIRE_ARCH_FOR_EXAMPLE(name)                                                                                            \
  if (((name).find("wgmma") != std::string::npos || (name).find("f64") != std::string::npos) && cuda::device().arch() != "sm_90a") \
  GTEST_SKIP() << (name) << " needs sm_90a"

TEST_P(GpuExample, MatchesReferenceAtAwkwardSizes) {
  REQUIRE_GPU();
  REQUIRE_ARCH_FOR_EXAMPLE(GetParam());
  KernelFile f = loom::testing::example(GetParam());
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  for (auto& params : loom::testing::example_sizes(f, t, {1, 17, 130, 257}, 3))
    EXPECT_EQ(gpu_vs_reference(f.kernel, t, params), "") << GetParam() << " at size " << params.begin()->second;
}

TEST_P(GpuExample, EmptyDomainLaunchesNothing) {
  REQUIRE_GPU();
  REQUIRE_ARCH_FOR_EXAMPLE(GetParam());
  KernelFile f = loom::testing::example(GetParam());
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  std::map<std::string, int64_t> params;
  for (auto& p : f.kernel.parameters()) params[p] = 0;
  if (!assumptions_hold(t, params)) GTEST_SKIP() << "sizes 0 break " << GetParam() << "'s assumptions";
  EXPECT_EQ(gpu_vs_reference(f.kernel, t, params), "");
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuExample, ::testing::ValuesIn(loom::testing::example_names()));

TEST(Gpu, WrongShapeIsRefused) {
  REQUIRE_GPU();
  KernelFile f = loom::testing::example("vector_add");
  cuda::CudaKernel ck(apply_transforms(f.kernel, f.transforms));
  HostArray a(types::float32, {10}), b(types::float32, {11}), out(types::float32, {10});
  ArgMap args{{"a", ArgValue::of(a.ref())}, {"b", ArgValue::of(b.ref())}, {"out", ArgValue::of(out.ref())}};
  EXPECT_THROW(ck.call_host(args), ArgumentError);
}
