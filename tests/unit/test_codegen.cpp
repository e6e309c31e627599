// Codegen: the fast path against isl's AST generator (same results on
// random inputs, same grid sizes), grid-size computation, launch limits,
// the CUDA printer, and NVRTC compiling every example for sm_90.
#include <gtest/gtest.h>

#include <set>

#include "loom/interpreter.h"
#include "loom/parser.h"
#include "loom/transforms.h"

#include <cmath>
#include <cstdlib>

#include "loom/cuda.h"
#include "oracle.h"

using namespace loom;
using loom::testing::args_of;

namespace {

// Runs g on fresh inputs (seeded) and returns the written arrays.
std::map<std::string, HostArray> run(const GeneratedKernel& g, const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  auto arrays = make_host_arrays(k, params, 3);
  interpret(g, args_of(k, arrays, params));
  return arrays;
}

// same_geometry: the fast path's launch box is sound but may be larger than
// isl's exact one when bounds come through loop inames of over-approximated range.
std::string fast_vs_isl(const LoopKernel& k, const std::vector<std::map<std::string, int64_t>>& param_sets,
                        bool same_geometry = true) {
  GeneratedKernel fast = generate(k), isl = generate(k, nullptr, CodegenPath::Isl);
  if (!fast.fast_path) return "the fast path did not apply: " + fast.isl_reason;
  std::string problems;
  for (auto& params : param_sets) {
    LaunchDims a = launch_dims(fast, params), b = launch_dims(isl, params);
    if (same_geometry && (a.grid != b.grid || a.block != b.block)) problems += "different launch geometry\n";
    auto x = run(fast, k, params), y = run(isl, k, params);
    for (auto& [name, arr] : x) {
      Comparison c = compare(y.at(name), arr, 0, 0);
      if (!c.ok) problems += name + ": " + c.str() + "\n";
    }
  }
  return problems;
}

std::vector<std::map<std::string, int64_t>> sizes(const LoopKernel& k, std::vector<int64_t> values) {
  std::vector<std::map<std::string, int64_t>> out;
  for (size_t i = 0; i < values.size(); ++i) {
    std::map<std::string, int64_t> p;
    int j = 0;
    for (auto& name : k.parameters()) p[name] = values[(i + j++) % values.size()];
    if (assumptions_hold(k, p)) out.push_back(p);  // (a kernel's assumptions: m >= 1 for a histogram's bins)
  }
  return out;
}

}  // namespace

class FastPathExamples : public loom::testing::ExampleTest {};

TEST_P(FastPathExamples, MatchIsl) {
  // (row_sums_short_vec needed isl's AST generator until a warp reduction's
  // init stopped running on full-range copies of the y-axis inames: every
  // example takes the fast path now)
  const std::string& name = GetParam();
  KernelFile f = loom::testing::example(name);
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  if (!t.data_parameters().empty()) {  // loops bounded by values the kernel computes: isl's generator is refused them
    EXPECT_TRUE(generate(t).fast_path) << name;
    EXPECT_TRUE(generate(f.kernel).fast_path) << name;
    return;
  }
  EXPECT_EQ(fast_vs_isl(t, loom::testing::example_sizes(f, t, {0, 1, 5, 16, 17, 33})), "") << name;
  EXPECT_EQ(fast_vs_isl(f.kernel, sizes(f.kernel, {0, 1, 7, 20})), "") << name << " untransformed";
}
LOOM_EVERY_EXAMPLE(FastPathExamples);

TEST(FastPath, SplitsOfSequentialAndUnrolledLoops) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j] * a[i, j])", {"..."});
  LoopKernel t = split_iname(split_iname(k, "j", 8), "j_inner", 2);
  t = tag_inames(split_iname(t, "i", 4), "i_inner:l.0, i_outer:g.0, j_inner_inner:unr");
  EXPECT_EQ(fast_vs_isl(t, sizes(t, {1, 3, 8, 9, 17, 31})), "");
}

TEST(FastPath, LaunchBoundsThroughLoopInamesAreSound) {
  // found by the random schedules: i_outer's lower bound reached through chunked loop inames
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i] + b[i]", {"..."});
  LoopKernel t = chunk_iname(chunk_iname(split_iname(k, "i", 3, {InameTag{InameTag::Group, 1}, std::nullopt}), "i_inner", 1),
                             "i_inner_inner", 2);
  GeneratedKernel g = generate(t);
  ASSERT_EQ(g.hardware_inames.size(), 1u);
  EXPECT_LE(eval_int(g.hardware_inames[0].lower, {{"n", 19}}), 0);
  EXPECT_EQ(fast_vs_isl(t, {{{"n", 19}}, {{"n", 1}}, {{"n", 3}}}, false), "");
}

// Found by libFuzzer: a split of length 1 made the domain hold an equality
// (x = 0), which sent a 1024-register tile to isl's AST generator for 12 s.
TEST(FastPath, AnInameOfExtentOneStaysOnTheFastPath) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2 * a[i, j]", {"a: float32[n, m], out: float32[n, m]"});
  LoopKernel t = tag_inames(split_iname(split_iname(k, "j", 8), "j_inner", 1), "i:g.0, j_inner_outer:ilp, j_inner_inner:l.0");
  GeneratedKernel g = generate(t);
  EXPECT_TRUE(g.fast_path) << g.isl_reason;
  EXPECT_SAME_RESULTS(k, t, {{"n", 3}, {"m", 13}});
}

// Found by libFuzzer: an overcomputed register-tile init (no partial-tile
// bound) beside the update and store (bounded) in one unrolled loop sent the
// kernel to isl (33 s for a 7x194 tile); the loop now runs over the bounds
// its instructions share, each keeping its own as guards.
TEST(FastPath, InstructionsWithDifferentBoundsShareALoop) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float32[n, l], b: float32[l, m], c: float32[n, m]"}, "mm");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.1\nsplit_iname j 12 outer_tag=g.0\n"
                                                           "split_iname i_inner 7 outer_tag=l.1 inner_tag=ilp\n"
                                                           "split_iname j_inner 1 outer_tag=ilp\n"));
  GeneratedKernel g = generate(t);
  EXPECT_TRUE(g.fast_path) << g.isl_reason;
  EXPECT_SAME_RESULTS(k, t, {{"n", 23}, {"m", 13}, {"l", 5}});
  EXPECT_SAME_RESULTS(k, t, {{"n", 16}, {"m", 12}, {"l", 0}});
}

// Found by libFuzzer: a register tile on a domain that starts at 8 needed the
// projection of a tile iname with coefficient 8 for the fetch; without isl's
// exact projection the kernel went to isl's AST generator (7.8 s).
TEST(FastPath, ProjectionsWithOtherCoefficientsUseIsl) {
  LoopKernel k = make_kernel({"{[i, j, k]: 8 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float32[n, l], b: float32[l, m], c: float32[n, m]"}, "mm");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 32 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
                                                           "split_iname i_inner 8 outer_tag=l.1 inner_tag=ilp\n"
                                                           "split_iname j_inner 2 outer_tag=ilp inner_tag=l.0\nsplit_iname k 8\n"
                                                           "prioritize_loops k_outer,k_inner,i_inner_inner,j_inner_outer\n"
                                                           "add_prefetch a i_inner_outer,i_inner_inner,k_inner\n"));
  GeneratedKernel g = generate(t);
  EXPECT_TRUE(g.fast_path) << g.isl_reason;
  EXPECT_SAME_RESULTS(k, t, {{"n", 45}, {"m", 37}, {"l", 19}});
}

// Found by libFuzzer: an ILP split longer than its iname's range unrolled to
// the split's length (then went to isl: 8.6 s); a block of 89x16 threads was
// refused only after isl had sized it (3.8 s).
TEST(FastPath, UnrollingStopsAtTheInamesRangeAndBigBlocksAreRefusedEarly) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2 * a[i, j]", {"a: float32[n, m], out: float32[n, m]"});
  LoopKernel t = tag_inames(split_iname(split_iname(k, "i", 64), "i_inner", 100000), "i_outer:g.0, i_inner_inner:ilp, j:g.1");
  GeneratedKernel g = generate(t);
  EXPECT_TRUE(g.fast_path) << g.isl_reason;
  EXPECT_SAME_RESULTS(k, t, {{"n", 70}, {"m", 5}});
  std::string e;
  try {
    generate(tag_inames(split_iname(split_iname(k, "i", 89), "j", 16), "i_inner:l.0, j_inner:l.1"));
  } catch (const KernelError& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("1424 threads per block (89x16x1)"), std::string::npos) << e;
}

TEST(FastPath, FallsBackToIslWhereDomainsNeedIt) {
  // a union of two intervals, and an existential (even i): isl's AST generator handles both
  LoopKernel u = make_kernel({"{[i]: 0 <= i < n or 2n <= i < 3n}"}, "out[i] = 2 * a[i]", {"a: float32[3 * n], out: float32[3 * n]", "..."});
  GeneratedKernel g = generate(u);
  EXPECT_FALSE(g.fast_path);
  EXPECT_NE(g.isl_reason.find("union"), std::string::npos) << g.isl_reason;
  auto arrays = make_host_arrays(u, {{"n", 5}}, 1);
  HostArray a = arrays.at("a");
  interpret(g, args_of(u, arrays, {{"n", 5}}));
  for (int64_t i = 0; i < 15; ++i) {
    double got = arrays.at("out").get(i);
    if (i < 5 || i >= 10) EXPECT_EQ(got, 2 * a.get(i)) << i;
    else EXPECT_TRUE(std::isnan(got)) << i;  // never written: still poisoned
  }
  LoopKernel even = make_kernel({"{[i]: 0 <= i < n and exists (e: i = 2e)}"}, "out[i] = a[i]", {"a: float32[n], out: float32[n]", "..."});
  EXPECT_FALSE(generate(even).fast_path);
}

TEST(Grid, SizesFollowTheDomain) {
  KernelFile f = loom::testing::example("matmul");
  GeneratedKernel g = generate(apply_transforms(f.kernel, f.transforms));
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{16, 16, 1}));
  for (int64_t n : {0, 1, 15, 16, 17, 1000}) {
    LaunchDims d = launch_dims(g, {{"n", n}, {"m", n + 3}, {"l", 2}});
    EXPECT_EQ(d.grid[1], (n + 15) / 16) << n;
    EXPECT_EQ(d.grid[0], (n + 3 + 15) / 16) << n;
    EXPECT_EQ(d.grid[2], 1);
  }
  // a lower bound other than 0 shifts the iname: i = 1 + blockIdx.x
  LoopKernel k = make_kernel({"{[i]: 1 <= i < n}"}, "out[i] = a[i]", {"a: float32[n], out: float32[n]"});
  for (CodegenPath p : {CodegenPath::Auto, CodegenPath::Isl}) {
    GeneratedKernel s = generate(tag_inames(k, "i:g.0"), nullptr, p);
    ASSERT_EQ(s.hardware_inames.size(), 1u);
    EXPECT_EQ(eval_int(s.hardware_inames[0].lower, {{"n", 10}}), 1);
    EXPECT_EQ(launch_dims(s, {{"n", 10}}).grid[0], 9);
    EXPECT_EQ(launch_dims(s, {{"n", 0}}).grid[0], 0);
  }
}

TEST(Grid, LimitsAndNonConstantBlocksAreRefused) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 1", {"out: float32[n, m]", "..."});
  LoopKernel big = tag_inames(split_iname(split_iname(k, "i", 64), "j", 32), "i_inner:l.1, j_inner:l.0");
  try {
    generate(big);
    FAIL() << "2048 threads per block accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("2048 threads per block"), std::string::npos) << e.what();
  }
  LoopKernel deep = make_kernel({"{[i, j]: 0 <= i < 128 and 0 <= j < 4}"}, "out[i, j] = 1", {"out: float32[128, 4]"});
  try {
    generate(tag_inames(deep, "i:l.2"));
    FAIL() << "128 threads along l.2 accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("128 threads along l.2 (iname 'i'); CUDA allows at most 64"), std::string::npos) << e.what();
  }
  // found by libFuzzer: a split of 127 onto l.2 took isl 21 s to size before it was refused
  LoopKernel split = tag_inames(split_iname(split_iname(k, "i", 2048), "i_inner", 127), "i_outer:g.0, i_inner_outer:unr, i_inner_inner:l.2");
  try {
    generate(split);
    FAIL() << "127 threads along l.2 accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("127 threads along l.2 (iname 'i_inner_inner')"), std::string::npos) << e.what();
  }
  try {
    generate(tag_inames(k, "i:l.0"));
    FAIL() << "a parametric block size accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("local axis l.0"), std::string::npos) << e.what();
  }
}

TEST(CudaPrinter, EmitsRestrictConstAndHardwareIndices) {
  KernelFile f = loom::testing::example("vector_add");
  std::string src = cuda::print_source(generate(apply_transforms(f.kernel, f.transforms)));
  for (const char* piece : {"extern \"C\" __global__ void __launch_bounds__(256) vector_add(",
                            "float const *__restrict__ a", "float *__restrict__ out", "int const i_outer = blockIdx.x;",
                            "int const i_inner = threadIdx.x;", "out[256 * i_outer + i_inner] = a[256 * i_outer + i_inner] + b[256 * i_outer + i_inner];"})
    EXPECT_NE(src.find(piece), std::string::npos) << piece << "\n" << src;
}

class NvrtcExamples : public loom::testing::ExampleTest {};

TEST_P(NvrtcExamples, CompileForSm90) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) {
    if (std::getenv("LOOM_ALLOW_NO_NVRTC")) GTEST_SKIP() << why;
    FAIL() << why << " (set LOOM_ALLOW_NO_NVRTC=1 to skip on machines without the CUDA toolkit)";
  }
  const std::string& name = GetParam();
  KernelFile f = loom::testing::example(name);
  for (CodegenPath p : {CodegenPath::Auto, CodegenPath::Isl}) {
    if (p == CodegenPath::Isl && !f.kernel.data_parameters().empty()) continue;  // (refused: loops bounded by computed values)
    std::string src = cuda::print_source(generate(apply_transforms(f.kernel, f.transforms), nullptr, p));
    cuda::CompileResult r = cuda::compile(src, TargetInfo::generic_cuda().arch);  // (sm_90a: wgmma examples too)
    EXPECT_GT(r.cubin.size(), 100u) << name;
    // ptxas' report gives the registers; on a machine with a warm CUDA
    // compute cache NVRTC may hand back the CUBIN without running ptxas,
    // and then there is no report (registers stay -1, "unknown")
    if (r.log.find("ptxas") != std::string::npos) EXPECT_GT(r.registers, 0) << name << "\n" << r.log;
    else EXPECT_EQ(r.registers, -1) << name;
  }
}
LOOM_EVERY_EXAMPLE(NvrtcExamples);

TEST(Nvrtc, CompileErrorShowsTheLogAndTheSourceLine) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << why;
  try {
    cuda::compile("extern \"C\" __global__ void k(float* a) {\n  a[0] = undefined_thing;\n}\n", "sm_90");
    FAIL() << "bad source compiled";
  } catch (const CudaError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("undefined_thing"), std::string::npos) << m;
    EXPECT_NE(m.find("2 |   a[0] = undefined_thing;"), std::string::npos) << m;
  }
}

// float16/bfloat16 in CUDA: stored as __half/__nv_bfloat16 (the toolkit's
// headers, found by compile()), every operation computed in float and
// rounded once, as the interpreter and the CPU target do. Results on the GPU
// are checked in tests/gpu (GpuTransforms.HalfPrecision).
TEST(Nvrtc, HalfPrecisionKernelsCompile) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << why;
  LoopKernel k = loom::testing::half_precision_kernel();
  LoopKernel t = tag_inames(split_iname(k, "i", 32), "i_outer:g.0, i_inner:l.0");
  std::string src = cuda::print_source(generate(t));
  for (const char* piece : {"#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "__half const *__restrict__ x",
                            "__nv_bfloat16 *__restrict__ b", "__float2half_rn("})
    EXPECT_NE(src.find(piece), std::string::npos) << piece << "\n" << src;
  EXPECT_GT(cuda::compile(src, "sm_90").cubin.size(), 100u);
  // kernels without 16-bit floats include nothing (NVRTC compiles them faster)
  KernelFile f = loom::testing::example("vector_add");
  EXPECT_EQ(cuda::print_source(generate(f.kernel)).find("#include"), std::string::npos);
}

namespace {
// A 64x64 block tile of a matrix product, 4x4 per thread in registers (ilp),
// k in steps of 16 through prefetched tiles of a and b.
LoopKernel register_tiled_matmul(const std::string& tile_tag = "ilp") {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  std::string script = "split_iname i 64 outer_tag=g.1\nsplit_iname j 64 outer_tag=g.0\n"
                       "split_iname i_inner 4 outer_tag=l.1 inner_tag=" + tile_tag + "\n"
                       "split_iname j_inner 16 outer_tag=" + tile_tag + " inner_tag=l.0\nsplit_iname k 16\n"
                       "prioritize_loops k_outer,k_inner,i_inner_inner,j_inner_outer\n"
                       "add_prefetch a i_inner_outer,i_inner_inner,k_inner\nadd_prefetch b k_inner,j_inner_outer,j_inner_inner\n";
  return apply_transforms(k, parse_transform_script(script));
}
}  // namespace

TEST(FastPath, RegisterTilesWithPrefetchesMatchIslAtAwkwardSizes) {
  // guards everywhere (no assumptions): shared loops with per-instruction guards,
  // projections of the tile inames (coefficient 4), unrolled guarded copies
  LoopKernel t = register_tiled_matmul();
  std::vector<std::map<std::string, int64_t>> sizes{
      {{"n", 1}, {"m", 1}, {"l", 1}}, {{"n", 70}, {"m", 33}, {"l", 17}}, {{"n", 64}, {"m", 128}, {"l", 48}}};
  EXPECT_EQ(fast_vs_isl(t, sizes), "");
  LoopKernel plain = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                                 {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  for (auto& p : sizes) EXPECT_SAME_RESULTS(plain, t, p);  // and what the untransformed kernel computes
}

TEST(FastPath, AssumptionsRemoveTheGuardsAndTailBoundsOfFullTiles) {
  LoopKernel full = assume(register_tiled_matmul(), "n mod 64 = 0 and m mod 64 = 0 and l mod 16 = 0 and n >= 64 and m >= 64 and l >= 16");
  GeneratedKernel g = generate(full);
  ASSERT_TRUE(g.fast_path) << g.isl_reason;
  std::string body = to_string(g.body);
  // the register tile's 16 updates with no guard around them, in a loop of constant trip count
  EXPECT_NE(body.find("for k_inner = 0; k_inner <= 15"), std::string::npos) << body;
  size_t guards = 0;
  for (size_t p = body.find("if "); p != std::string::npos; p = body.find("if ", p + 1)) ++guards;
  EXPECT_EQ(guards, 2u) << body;  // only the fetches' bounds predicates remain
  EXPECT_EQ(fast_vs_isl(full, {{{"n", 64}, {"m", 128}, {"l", 32}}}), "");
}

TEST(Linearize, RegisterTilesNeedIlpSoTheirLoopsMaySplitAroundTheKLoop) {
  // ilp: the accumulator has one copy per tile element, so init, the k loop and the store
  // may each have their own instance of the tile loops
  EXPECT_NO_THROW(generate(register_tiled_matmul("ilp")));
  // a plain loop has one accumulator: splitting its loop would reuse it, so it is refused
  try {
    generate(register_tiled_matmul("for"));
    FAIL() << "a scalar accumulator split across loop instances was accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot place instruction"), std::string::npos) << e.what();
  }
}

TEST(FastPath, AGuardOfTheSmallerBlockInameOnAnAxisStaysUnderAssumptions) {
  // x's blocks (i_outer) and y's (j_outer) share g.0: the grid is the larger of the two, so
  // x's guard is not implied by n mod 16 = 0 even though its own tiles are full
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "x[i] = 1 {id=wx}\ny[j] = 2 {id=wy}",
                             {"x: float32[n], y: float32[m]"});
  LoopKernel t = tag_inames(split_iname(split_iname(k, "i", 16), "j", 16), "i_outer:g.0, i_inner:l.0, j_outer:g.0, j_inner:l.0");
  t = assume(t, "n mod 16 = 0 and m mod 16 = 0 and n >= 16 and m >= 16");
  GeneratedKernel g = generate(t);
  ASSERT_TRUE(g.fast_path) << g.isl_reason;
  std::string body = to_string(g.body);
  EXPECT_NE(body.find("n"), std::string::npos) << body;  // x's guard against n is kept
  EXPECT_SAME_RESULTS(k, t, {{"n", 16}, {"m", 64}});
  EXPECT_SAME_RESULTS(k, t, {{"n", 64}, {"m", 16}});
  EXPECT_EQ(fast_vs_isl(t, {{{"n", 16}, {"m", 64}}, {{"n", 48}, {"m", 32}}}), "");
}

// A grid beyond CUDA's limits at given sizes is known before any launch
// (the tuner refuses such a trial as illegal instead of failing it at the
// launch): g.1 holds at most 65535 blocks, g.0 2^31-1.
TEST(CudaLaunch, GridsBeyondCudasLimitsAreRefusedBeforeALaunch) {
  KernelFile f = parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n], out: float32[n]\n"
                                   "instructions:\n  out[i] = 2 * a[i]\n",
                                   "k.loom");
  auto grid_error = [&](const std::string& tag) {
    GeneratedKernel g = generate(apply_transforms(f.kernel, parse_transform_script("split_iname i 32 outer_tag=" + tag + " inner_tag=l.0\n", "s")));
    try {
      cuda::check_grid("k", launch_dims(g, {{"n", int64_t(1) << 24}}));
    } catch (const CudaError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(grid_error("g.1").find("grid 1x524288x1 exceeds CUDA's limits"), std::string::npos) << grid_error("g.1");
  EXPECT_EQ(grid_error("g.0"), "no error");
}
