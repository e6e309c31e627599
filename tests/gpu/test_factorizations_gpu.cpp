// PolyBench's factorizations as the automatic space schedules them from
// isl's scheduler ("nests, isl schedule"), run on CUDA: host loops over
// launches, the copies of ludcmp's scalar w in global memory, checked against
// the kernel as written in the reference interpreter on well-posed inputs
// (A diagonally dominant: no pivoting needed) at sizes no tile divides.
#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/tuner.h"

using namespace loom;
using namespace loom::testing;

namespace {

std::string gpu_vs_reference_dominant(const LoopKernel& reference, const LoopKernel& transformed, int64_t n) {
  std::map<std::string, int64_t> params{{"n", n}};
  auto ref = make_host_arrays(reference, params, 11);
  HostArray& a = ref.at("A");
  for (int64_t i = 0; i < n; ++i) a.set(i * n + i, a.get(i * n + i) + double(n) + 1);
  auto gpu = ref;
  interpret(generate(reference), args_of(reference, ref, params));
  cuda::CudaKernel(transformed).call_host(args_of(transformed, gpu, params));
  return compare_written(reference, ref, gpu);
}

}  // namespace

TEST(GpuFactorizations, IslSchedulesRunAsLaunchesInHostLoops) {
  REQUIRE_GPU();
  for (const char* name : {"lu", "ludcmp", "cholesky"}) {
    LoopKernel k = parse_kernel_file(source_dir() + "/examples/polybench/" + name + ".loom").kernel;
    tune::Space space = tune::auto_space(k, "cuda");
    int tested = 0;
    for (size_t i = 0; i < space.sketches().size(); ++i) {
      if (space.sketches()[i].name != "nests, isl schedule") continue;
      tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
      LoopKernel t = apply_transforms(k, space.steps(first));
      for (int64_t n : {2, 37, 70}) EXPECT_EQ(gpu_vs_reference_dominant(k, t, n), "") << name << " n = " << n << "\n" << space.script(first);
      ++tested;
    }
    EXPECT_EQ(tested, 1) << name << "\n" << space.str();
  }
}
