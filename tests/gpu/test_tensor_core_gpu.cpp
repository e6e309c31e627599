// Tensor cores on the GPU: float16, TF32 and float64 products (the bfloat16 ones are
// examples, run by test_examples_gpu.cpp) against the interpreter of the
// kernel as written, at sizes with partial tiles; an epilogue on the lanes.
#include <cstring>

#include "gpu_oracle.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/tuner.h"

using namespace loom;
using loom::testing::gpu_vs_reference;

namespace {

LoopKernel product(const std::string& dtype, const std::string& body, const std::string& extra_args = "", const std::string& epilogue = "") {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, body + epilogue,
                     {"a: " + dtype + "[n, l], b: " + dtype + "[l, m], c: float32[n, m]" + extra_args}, "mm");
}

const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"n", 64}, {"m", 32}, {"l", 48}}, {{"n", 37}, {"m", 45}, {"l", 21}}, {{"n", 5}, {"m", 3}, {"l", 7}}};

const std::string kWarpTiles =
    "split_iname i 32 outer_tag=g.1\nsplit_iname j 16 outer_tag=g.0\nsplit_iname i_inner 16 outer_tag=ilp\n"
    "split_iname j_inner 8 outer_tag=ilp\nsplit_iname k K\n";

std::string tiles(int k) {
  std::string s = kWarpTiles;
  s.replace(s.find("K\n"), 2, std::to_string(k) + "\n");
  return s;
}

}  // namespace

TEST(GpuTensorCore, Float16OperandsWithBiasAndReluOnTheLanes) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                             "<> s = sum(k, float32(a[i, k]) * float32(b[k, j])) {id=prod}\nc[i, j] = max(s + bias[j], 0.0f) {dep=prod}",
                             {"a: float16[n, l], b: float16[l, m], bias: float32[m], c: float32[n, m]"}, "mm");
  LoopKernel t = apply_transforms(k, parse_transform_script(tiles(16) + "tensor_core i_inner_inner j_inner_inner k_inner\n"));
  for (auto& p : kSizes) EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("n");
}

TEST(GpuTensorCore, Tf32AsTheKernelSaysIt) {
  REQUIRE_GPU();
  LoopKernel k = product("float32", "c[i, j] = sum(k, round_tf32(a[i, k]) * round_tf32(b[k, j]))");
  LoopKernel t = apply_transforms(k, parse_transform_script(tiles(8) + "tensor_core i_inner_inner j_inner_inner k_inner\n"));
  for (auto& p : kSizes) EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("n");
}

TEST(GpuTensorCore, WgmmaReadsCoreMatricesWithoutASwizzleAndFloat16) {
  // (the swizzled bfloat16 schedule is the gemm_bf16_wgmma example)
  REQUIRE_GPU();
  if (cuda::device().arch() != "sm_90a") GTEST_SKIP() << "wgmma needs sm_90a";
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[j, k]))",
                             {"a: float16[n, l], b: float16[m, l], c: float32[n, m]"}, "mm_nt");
  auto core = [](const std::string& t) {
    return "split_array_axis " + t + " 0 8\nsplit_array_axis " + t + " 2 8\ntag_array_axes " + t + " N3,N1,N2,N0\npad_array_axis " + t + " 2 1\n";
  };
  std::string s = "assume n mod 64 = 0 and m mod 128 = 0 and l mod 64 = 0\nsplit_iname i 64 outer_tag=g.1\nsplit_iname j 128 outer_tag=g.0\n"
                  "split_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\ntensor_core i_inner j_inner k_inner_inner shape=m64n128k16\n"
                  "add_prefetch a i_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for\n" + core("a_fetch") +
                  "split_iname ak 8 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\ntag_inames ax:l.0\n"
                  "add_prefetch b j_inner,k_inner_outer,k_inner_inner dim_arg_names=bn,bk padding=0 default_tag=for\n" + core("b_fetch") +
                  "split_iname bk 8 inner_tag=vec\nsplit_iname bn 16\njoin_inames bn_inner,bk_outer new_iname=bx\ntag_inames bx:l.0\n"
                  "double_buffer a_fetch k_outer stages=3\ndouble_buffer b_fetch k_outer stages=3\n";
  LoopKernel t = apply_transforms(k, parse_transform_script(s));
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 64}, {"m", 128}, {"l", 64}}, {{"n", 320}, {"m", 384}, {"l", 448}}})
    EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("n");
}

// TF32 on the warpgroup (gemm_tf32_wgmma_tma): wgmma reads the float32 tiles
// and drops the 13 low mantissa bits, as the kernel's trunc_tf32 says. The
// inputs make the two roundings differ: a = 1 + 2^-11 + 2^-12 is 1 toward
// zero and 1 + 2^-10 to nearest, b = 1, so each c is l exactly (and
// l (1 + 2^-10) if the hardware rounded). Then random inputs against the
// interpreter.
TEST(GpuTensorCore, WgmmaTf32DropsTheLowBitsAsTruncTf32Says) {
  REQUIRE_GPU();
  if (cuda::device().arch() != "sm_90a") GTEST_SKIP() << "wgmma needs sm_90a";
  KernelFile f = loom::testing::example("gemm_tf32_wgmma_tma");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  std::map<std::string, int64_t> p = {{"n", 128}, {"m", 256}, {"l", 64}};
  auto arrays = make_host_arrays(f.kernel, p, 5);
  float low_bits;
  uint32_t u = 0x3F801800u;
  std::memcpy(&low_bits, &u, 4);
  for (int64_t i = 0; i < arrays.at("a").size(); ++i) arrays.at("a").set(i, low_bits);
  for (int64_t i = 0; i < arrays.at("b").size(); ++i) arrays.at("b").set(i, 1.0);
  for (int64_t i = 0; i < arrays.at("c").size(); ++i) arrays.at("c").set(i, -7.0);
  cuda::CudaKernel ck(t);
  ck.call_host(loom::testing::args_of(t, arrays, p));
  int64_t wrong = 0;
  for (int64_t i = 0; i < arrays.at("c").size(); ++i) wrong += arrays.at("c").get(i) != 64.0;
  EXPECT_EQ(wrong, 0) << "c[0] = " << arrays.at("c").get(0) << " (64: toward zero; 64.0625: to nearest)";
  for (auto& q : std::vector<std::map<std::string, int64_t>>{{{"n", 128}, {"m", 256}, {"l", 32}}, {{"n", 384}, {"m", 512}, {"l", 416}}})
    EXPECT_EQ(gpu_vs_reference(f.kernel, t, q), "") << q.at("n");
}

TEST(GpuTensorCore, Float64OnTheFp64TensorCores) {
  // PolyBench's accumulation c += alpha a b, one warp an 8x8 tile read from
  // global memory (every fragment element guarded at the partial tiles);
  // gemm_f64.loom (tiles in shared memory) runs with the examples
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = c[i, j] + sum(k, alpha * a[i, k] * b[k, j])",
                             {"a: float64[n, l], b: float64[l, m], c: float64[n, m], alpha: float64"}, "dgemm");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 8 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 4\n"
                                                            "tensor_core i_inner j_inner k_inner\n"));
  for (auto& p : kSizes) EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("n");
  if (cuda::device().arch().rfind("sm_90", 0) != 0) return;
  for (int kk : {4, 8, 16}) {  // (Hopper's m16n8kK)
    LoopKernel h = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k " +
                                                              std::to_string(kk) + "\ntensor_core i_inner j_inner k_inner shape=m16n8k" +
                                                              std::to_string(kk) + "\n"));
    for (auto& p : kSizes) EXPECT_EQ(gpu_vs_reference(k, h, p), "") << kk << " " << p.at("n");
  }
}

// A reduction whose range starts past the row (PolyBench's trmm, k > i,
// read from a copy of B): each tile's A operand masked where k <= i, the
// zero-filled tiles in shared memory notwithstanding (they are zero only
// outside the arrays). The automatic space's tensor-core configuration once
// summed whole tiles and gave wrong results; by hand too, from global memory.
TEST(GpuTensorCore, Float64TrianglesMaskTheRowsOperand) {
  REQUIRE_GPU();
  if (cuda::device().arch().rfind("sm_90", 0) != 0) return;
  LoopKernel k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/trmm.loom").kernel;
  const std::vector<std::map<std::string, int64_t>> sizes = {{{"m", 128}, {"n", 128}}, {{"m", 38}, {"n", 46}}, {{"m", 6}, {"n", 4}}};
  LoopKernel t = apply_transforms(k, parse_transform_script(
                                         "read_initial_values B\ndistribute_loops j after=id:insn_0\ndistribute_loops i after=id:insn_0\n"
                                         "accumulation_to_reduction id:insn_0\nadd_global_barrier insn_0\n"
                                         "split_iname B_initial_1 32 outer_tag=g.0 inner_tag=l.0\n"
                                         "split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 16\n"
                                         "tensor_core i_inner j_inner k_inner shape=m16n8k16\n"
                                         "split_iname j_2 32 outer_tag=g.0 inner_tag=l.0\n"));
  for (auto& p : sizes) EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("m");
  tune::Space space = tune::auto_space(k, "cuda");
  int tested = 0;
  for (size_t i = 0; i < space.sketches().size(); ++i) {
    if (space.sketches()[i].name != "nests, tensor cores, initial copies") continue;
    tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
    LoopKernel a = apply_transforms(k, space.steps(first));
    for (auto& p : sizes) EXPECT_EQ(gpu_vs_reference(k, a, p), "") << p.at("m") << "\n" << space.script(first);
    ++tested;
  }
  EXPECT_EQ(tested, 1) << space.str();
}

// A triangular result (c[i, j] for j <= i, PolyBench's syrk): the
// instruction computes whole tiles, and the accumulator's elements above
// the diagonal are neither initialized nor stored; by hand in bfloat16,
// and syrk in float64 from the automatic space.
TEST(GpuTensorCore, TriangularTilesStoreOnlyTheirTriangle) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j <= i and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))",
                             {"a: bfloat16[n, l], b: bfloat16[l, n], c: float32[n, n]"}, "lower");
  LoopKernel t = apply_transforms(k, parse_transform_script(tiles(16) + "tensor_core i_inner_inner j_inner_inner k_inner\n"));
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 64}, {"l", 32}}, {{"n", 37}, {"l", 21}}, {{"n", 5}, {"l", 7}}})
    EXPECT_EQ(gpu_vs_reference(k, t, p), "") << p.at("n");
  if (cuda::device().arch().rfind("sm_90", 0) != 0) return;
  LoopKernel syrk = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/syrk.loom").kernel;
  tune::Space space = tune::auto_space(syrk, "cuda");
  int tested = 0;
  for (size_t i = 0; i < space.sketches().size(); ++i) {
    if (space.sketches()[i].name != "nests, tensor cores") continue;
    tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
    LoopKernel a = apply_transforms(syrk, space.steps(first));
    for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 128}, {"m", 96}}, {{"n", 70}, {"m", 38}}, {{"n", 6}, {"m", 4}}})
      EXPECT_EQ(gpu_vs_reference(syrk, a, p), "") << p.at("n") << "\n" << space.script(first);
    ++tested;
  }
  EXPECT_EQ(tested, 1) << space.str();
}

// A sum of two products into one accumulator (PolyBench's syr2k:
// A[j, k] * alpha * B[i, k] + B[j, k] * alpha * A[i, k]): two matrix
// instructions a tile, each with its own operands; from the automatic space.
TEST(GpuTensorCore, TwoProductsIntoOneAccumulator) {
  REQUIRE_GPU();
  if (cuda::device().arch().rfind("sm_90", 0) != 0) return;
  LoopKernel syr2k = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/syr2k.loom").kernel;
  tune::Space space = tune::auto_space(syr2k, "cuda");
  int tested = 0;
  for (size_t i = 0; i < space.sketches().size(); ++i) {
    if (space.sketches()[i].name != "nests, tensor cores") continue;
    tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
    LoopKernel a = apply_transforms(syr2k, space.steps(first));
    for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 128}, {"m", 96}}, {{"n", 70}, {"m", 38}}, {{"n", 6}, {"m", 4}}})
      EXPECT_EQ(gpu_vs_reference(syr2k, a, p), "") << p.at("n") << "\n" << space.script(first);
    ++tested;
  }
  EXPECT_EQ(tested, 1) << space.str();
}

// PolyBench's symm from the automatic space: its stores, then its updates
// of the rows above (reordered, distributed), each nest one float64 product
// on the FP64 tensor cores (the updates' sum over i > k proven through its
// terms as written; the stores' sum over k < i folded into the store), two
// launches checked as one program with their tile fetches.
TEST(GpuTensorCore, SymmsTwoTriangularProductsAsLaunches) {
  REQUIRE_GPU();
  if (cuda::device().arch().rfind("sm_90", 0) != 0) return;
  LoopKernel symm = parse_kernel_file(loom::testing::source_dir() + "/examples/polybench/symm.loom").kernel;
  tune::Space space = tune::auto_space(symm, "cuda");
  int tested = 0;
  for (size_t i = 0; i < space.sketches().size(); ++i) {
    const std::string& name = space.sketches()[i].name;
    if (name != "nests, tensor cores" && name != "nests, tiles") continue;
    tune::Configuration first{int(i), std::vector<int>(space.sketches()[i].choices.size(), 0)};
    LoopKernel a = apply_transforms(symm, space.steps(first));
    for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"m", 128}, {"n", 96}}, {{"m", 70}, {"n", 38}}, {{"m", 6}, {"n", 4}}})
      EXPECT_EQ(gpu_vs_reference(symm, a, p), "") << name << " m=" << p.at("m") << "\n" << space.script(first);
    ++tested;
  }
  EXPECT_EQ(tested, 2) << space.str();
}
