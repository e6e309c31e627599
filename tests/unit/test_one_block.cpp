// run_on_first_thread (transforms/instructions.cpp) and the automatic space's
// `nests, one block` (tuner/nests.cpp): a sequential loop whose only
// parallelism is a sum (PolyBench's trisolv and durbin) runs in one block,
// the sum across its threads and every other statement that writes memory
// on its first thread. Checked against the kernel as written on
// well-posed random inputs (a diagonally dominant L; durbin's Toeplitz row
// small, so its recursion stays bounded) at sizes no block divides.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::polybench;
using loom::testing::count_of;
using loom::testing::error_of;

namespace {

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// "" when the arrays match; `prepare` makes the random inputs well-posed.
std::string compare_prepared(const LoopKernel& ref, const LoopKernel& t, const std::map<std::string, int64_t>& params,
                             const std::function<void(std::map<std::string, HostArray>&)>& prepare) {
  auto expected = make_host_arrays(ref, params, 17);
  prepare(expected);
  auto actual = expected;
  loom::testing::run_on_host(ref, loom::testing::args_of(ref, expected, params));
  loom::testing::run_on_host(t, loom::testing::args_of(t, actual, params));
  return loom::testing::compare_written(ref, expected, actual);
}

void dominant_diagonal(std::map<std::string, HostArray>& a, int64_t n) {
  HostArray& l = a.at("L");
  for (int64_t i = 0; i < n; ++i) l.set(i * n + i, l.get(i * n + i) + double(n) + 1);
}

void small_toeplitz_row(std::map<std::string, HostArray>& a, int64_t n) {
  HostArray& r = a.at("r");
  double scale = 0.5;
  for (int64_t i = 0; i < n; ++i, scale *= 0.5) r.set(i, r.get(i) * scale);
}

}  // namespace

// The first thread writes; the others read after a barrier the placement adds.
TEST(RunOnFirstThread, OneThreadWritesAndTheBlockReadsAfterABarrier) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j < 64}"}, "x[i] = b[i] * 2 {id=s0}\ny[i, j] = x[i] + j {id=s1}",
                             {"x: float64[n], b: float64[n], y: float64[n, 64]", "..."}, "first");
  // on every thread, the write races: refused
  EXPECT_NE(error_of([&] { generate(transformed(k, "tag_inames j:l.0\n")); }).find("write race: instruction 's0'"), std::string::npos);
  LoopKernel t = transformed(k, "tag_inames j:l.0\nrun_on_first_thread id:s0\n");
  for (int64_t n : {1, 7}) EXPECT_SAME_RESULTS(k, t, {{"n", n}});
  std::string src = cuda::print_source(generate(t));
  size_t write = src.find("x[i] = b[i] * 2.0;"), sync = src.find("__syncthreads();"), read = src.find("x[i] + (double)j");
  ASSERT_NE(write, std::string::npos) << src;
  EXPECT_LT(write, sync) << src;
  EXPECT_LT(sync, read) << src;
  // refusals name the reason
  EXPECT_NE(error_of([&] { transformed(k, "run_on_first_thread id:s0 axis=g.0\n"); }).find("'g.0' is not a thread axis"), std::string::npos);
  EXPECT_NE(error_of([&] { transformed(k, "run_on_first_thread id:s0\n"); }).find("no iname runs on l.0"), std::string::npos);
  EXPECT_NE(error_of([&] { transformed(k, "tag_inames j:l.0\nrun_on_first_thread id:s1\n"); }).find("already runs within 'j' on l.0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { transformed(k, "tag_inames j:l.0\nrun_on_first_thread id:nosuch\n"); }).find("nosuch"), std::string::npos);
}

// trisolv and durbin get `nests, one block` (their sums across the block's
// threads); its configurations run right, one block of W threads.
TEST(AutoSpace, SumsInsideASequentialLoopRunInOneBlock) {
  struct Case {
    const char* name;
    std::function<void(std::map<std::string, HostArray>&, int64_t)> prepare;
  };
  for (const Case& c : {Case{"trisolv", dominant_diagonal}, Case{"durbin", small_toeplitz_row}}) {
    LoopKernel k = polybench(c.name);
    tune::Space space = tune::auto_space(k, "cuda");
    int index = -1;
    for (size_t i = 0; i < space.sketches().size(); ++i)
      if (space.sketches()[i].name == "nests, one block") index = int(i);
    ASSERT_GE(index, 0) << c.name << "\n" << space.str();
    const tune::Sketch& sk = space.sketches()[size_t(index)];
    for (int pick = 0; pick < 2; ++pick) {
      tune::Configuration conf{index, std::vector<int>(sk.choices.size(), pick)};
      std::string script = space.script(conf);
      EXPECT_NE(script.find("run_on_first_thread"), std::string::npos) << script;
      EXPECT_EQ(script.find("g.0"), std::string::npos) << script;  // (one block)
      // durbin's updates of z and y, each in a loop of its own, across the threads (z shared by the block)
      if (std::string(c.name) == "durbin") {
        EXPECT_NE(script.find("set_temporary_address_space z local"), std::string::npos) << script;
        EXPECT_NE(script.find("split_iname i2 "), std::string::npos) << script;
        EXPECT_NE(script.find("split_iname i3 "), std::string::npos) << script;
      }
      LoopKernel t = apply_transforms(k, space.steps(conf));
      for (int64_t n : {1, 5, 70})
        EXPECT_EQ(compare_prepared(k, t, {{"n", n}}, [&](auto& a) { c.prepare(a, n); }), "") << c.name << " n = " << n << "\n" << script;
      GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
      EXPECT_GE(count_of(cuda::print_source(g), "__syncthreads"), 1u) << c.name;
    }
  }
  // a sum inside two sequential loops (trmm's B[i, j] over k) is not offered one block
  tune::Space trmm = tune::auto_space(polybench("trmm"), "cuda");
  EXPECT_EQ(trmm.str().find("nests, one block"), std::string::npos);
}

// A time loop over one-dimensional sweeps (PolyBench's jacobi-1d) in one
// block: each sweep across the block's threads, the barrier placement
// ordering the sweeps; one launch, matching the kernel as written at sizes
// no block divides. A 2-d sweep (jacobi-2d) gets no such plan.
TEST(AutoSpace, OneDimensionalSweepsOfATimeLoopRunInOneBlock) {
  LoopKernel k = polybench("jacobi_1d");
  tune::Space space = tune::auto_space(k, "cuda");
  int index = -1;
  for (size_t i = 0; i < space.sketches().size(); ++i)
    if (space.sketches()[i].name == "nests, one block, time loop") index = int(i);
  ASSERT_GE(index, 0) << space.str();
  const tune::Sketch& sk = space.sketches()[size_t(index)];
  {
    tune::Configuration c{index, sk.starts.empty() ? std::vector<int>(sk.choices.size(), 0) : sk.starts.front()};
    LoopKernel t = apply_transforms(k, space.steps(c));
    GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
    EXPECT_TRUE(g.launches.empty()) << space.script(c);  // (one launch: no program of launches)
    LaunchDims dims = launch_dims(g, {{"tsteps", 500}, {"n", 2000}});
    EXPECT_EQ(dims.grid[0] * dims.grid[1] * dims.grid[2], 1) << space.script(c);
    EXPECT_EQ(dims.block[0], 1024) << space.script(c);
    std::string cuda = cuda::print_source(g);
    EXPECT_GE(count_of(cuda, "__syncthreads()"), 2u) << cuda;
    for (auto& sizes : std::vector<std::map<std::string, int64_t>>{{{"tsteps", 5}, {"n", 300}}, {{"tsteps", 2}, {"n", 3}}, {{"tsteps", 1}, {"n", 2}}})
      EXPECT_SAME_RESULTS(k, t, sizes) << space.script(c);
  }
  tune::Space two = tune::auto_space(polybench("jacobi_2d"), "cuda");
  for (auto& s : two.sketches()) EXPECT_NE(s.name, "nests, one block, time loop");
}
