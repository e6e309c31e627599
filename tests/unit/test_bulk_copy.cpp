// tma_copy: tiles the tensor memory accelerator fills. The transformed
// kernel runs on the CPU target (plain copies) against the untransformed
// one, outputs poisoned first, at sizes that are and are not multiples of
// the tiles; the CUDA C issues one bulk tensor copy per fill (one thread,
// an mbarrier per copy of the tile), its readers wait on that mbarrier,
// the tensor maps are parameters, and it compiles with NVRTC for sm_90a
// where NVRTC is present. Refusals name the reason: the architecture, a
// tile that is not double-buffered, guards on the fill's own inames, what
// is not a copy. (The GPU runs are tests/gpu's, over examples/.)
#include <gtest/gtest.h>

#include <random>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::compare_kernels;
using loom::testing::count_of;
using loom::testing::error_of;
using loom::testing::interpreted_vs_reference;

namespace {

LoopKernel product_nt() {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[j, k]))",
                     {"a: bfloat16[n, l], b: bfloat16[m, l], c: float32[n, m]"}, "mm_nt");
}

LoopKernel sgemm() {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                     {"a: float32[n, l], b: float32[l, m], c: float32[n, m]"}, "sgemm");
}

LoopKernel scheduled(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// 128 x N tiles of c on two warpgroups (wgmma), 64-wide k tiles fetched
// into swizzled tiles, double-buffered; `fetch` adds to both add_prefetch.
std::string warpgroups(int n_tile, const std::string& assumptions, const std::string& fetch, const std::string& pipeline) {
  std::string nt = std::to_string(n_tile);
  return assumptions + "split_iname i 128 outer_tag=g.1\nsplit_iname j " + nt + " outer_tag=g.0\nsplit_iname i_inner 64 outer_tag=l.1\n"
         "split_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\ntensor_core i_inner_inner j_inner k_inner_inner shape=m64n" + nt + "k16\n"
         "add_prefetch a i_inner_outer,i_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for" + fetch + "\n"
         "swizzle_array a_fetch\nsplit_iname ak 8 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\ntag_inames ax:l.0\n"
         "split_iname ar_outer 2 inner_tag=l.1\n"
         "add_prefetch b j_inner,k_inner_outer,k_inner_inner dim_arg_names=bn,bk padding=0 default_tag=for" + fetch + "\n"
         "swizzle_array b_fetch\nsplit_iname bk 8 inner_tag=vec\nsplit_iname bn 16\njoin_inames bn_inner,bk_outer new_iname=bx\ntag_inames bx:l.0\n"
         "split_iname bn_outer 2 inner_tag=l.1\n" + pipeline;
}

// 32 x 32 tiles of c, a thread each; 32-wide k tiles of a and b fetched by the block
std::string cuda_cores(const std::string& assumptions, const std::string& fetch, const std::string& pipeline) {
  return assumptions + "split_iname i 32 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 32 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 32\n"
         "add_prefetch a i_inner,k_inner dim_arg_names=ar,ak padding=0 default_tag=for" + fetch + "\ntag_inames ar:l.1,ak:l.0\n"
         "add_prefetch b k_inner,j_inner dim_arg_names=bk,bc padding=0 default_tag=for" + fetch + "\ntag_inames bk:l.1,bc:l.0\n" + pipeline;
}

const std::string kPipeline = "double_buffer a_fetch k_outer stages=3 ahead=1\ndouble_buffer b_fetch k_outer stages=3 ahead=1\ntma_copy a_fetch,b_fetch\n";

void expect_compiles_for_sm90a(const std::string& cuda) {
  if (!cuda::nvrtc_available()) return;
  cuda::CompileResult r = cuda::compile(cuda, "sm_90a");
  EXPECT_GT(r.cubin.size(), 0u) << r.log;
  EXPECT_EQ(r.log.find("serialized"), std::string::npos) << r.log;  // (ptxas says when a branch made it serialize the wgmma)
}

}  // namespace

TEST(BulkCopy, WarpgroupTilesComeFromTheCopyEngineOneCopyPerFill) {
  std::string whole = "assume n mod 128 = 0 and m mod 64 = 0 and l mod 64 = 0 and l >= 64\n";
  LoopKernel t = scheduled(product_nt(), warpgroups(64, whole, "", kPipeline));
  EXPECT_TRUE(t.find_temporary("a_fetch")->bulk_copy);
  LoopKernel back = kernel_from_json(kernel_to_json(t));  // (JSON carries it, and the hash tells it apart)
  EXPECT_TRUE(back.find_temporary("b_fetch")->bulk_copy);
  EXPECT_NE(structural_hash(t), structural_hash(scheduled(product_nt(), warpgroups(64, whole, "", "double_buffer a_fetch k_outer stages=3 ahead=1\n"
                                                                                           "double_buffer b_fetch k_outer stages=3 ahead=1\n"))));
  std::vector<std::map<std::string, int64_t>> sizes = {{{"n", 128}, {"m", 64}, {"l", 64}}, {{"n", 256}, {"m", 192}, {"l", 256}}};
  for (auto& p : sizes) EXPECT_EQ(compare_kernels(product_nt(), t, p), "");
  EXPECT_EQ(interpreted_vs_reference(product_nt(), t, sizes[1]), "");
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  ASSERT_EQ(g.bulk_copies.size(), 2u);
  const BulkCopy* a = g.bulk_copy("a_fetch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->array, "a");
  EXPECT_EQ(a->box, (std::vector<int64_t>{64, 128}));  // (the array's last axis first)
  EXPECT_EQ(a->swizzle, 128);
  EXPECT_EQ(a->stages, 3);
  EXPECT_EQ(g.bulk_fills.size(), 4u);  // (a first fill before the loop and one in it, each tile)
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "loom_tma_load<2>((threadIdx.x | threadIdx.y | threadIdx.z) == 0, &loom_tma_bar["), 4u) << cuda;
  EXPECT_EQ(count_of(cuda, "loom_tma_wait(&loom_tma_bar["), 2u) << cuda;  // (each tile's readers, once an iteration)
  EXPECT_NE(cuda.find("loom_tma_wait(&loom_tma_bar[0 + k_outer % 3], (k_outer / 3) & 1)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("const __grid_constant__ loom_tensor_map loom_tmap_a_fetch, const __grid_constant__ loom_tensor_map loom_tmap_b_fetch)"),
            std::string::npos);
  EXPECT_EQ(cuda.find("loom_cp_async"), std::string::npos);  // (no thread copies)
  EXPECT_EQ(cuda.find("for (int ar_outer_outer"), std::string::npos);  // (the fill's own loops are gone)
  EXPECT_EQ(g.local_bytes(), 3 * (128 + 64) * 64 * 2 + 6 * 8);  // (the tiles, then 6 mbarriers)
  expect_compiles_for_sm90a(cuda);
}

// c = a b with b stored [l, m]: b's tile is stored [n / 64, k, n mod 64]
// (MN-major for wgmma's transpose bit), a 3-D box whose coarse axis counts
// blocks of 64 columns of b.
TEST(BulkCopy, TilesThatSplitAnArrayAxisAreThreeDimensionalBoxes) {
  LoopKernel mm = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))",
                              {"a: bfloat16[n, l], b: bfloat16[l, m], c: float32[n, m]"}, "mm_nn");
  std::string script =
      "assume n mod 128 = 0 and m mod 128 = 0 and l mod 64 = 0 and l >= 64\nsplit_iname i 128 outer_tag=g.1\nsplit_iname j 128 outer_tag=g.0\n"
      "split_iname i_inner 64 outer_tag=l.1\nsplit_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\n"
      "tensor_core i_inner_inner j_inner k_inner_inner shape=m64n128k16\n"
      "add_prefetch a i_inner_outer,i_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for\n"
      "swizzle_array a_fetch\nsplit_iname ak 8 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\ntag_inames ax:l.0\n"
      "split_iname ar_outer 2 inner_tag=l.1\n"
      "add_prefetch b k_inner_outer,k_inner_inner,j_inner dim_arg_names=bk,bn padding=0 default_tag=for\n"
      "split_array_axis b_fetch 1 64\ntag_array_axes b_fetch N1,N2,N0\nswizzle_array b_fetch\nsplit_iname bn 8 inner_tag=vec\n"
      "split_iname bn_outer 8\nsplit_iname bk 16\njoin_inames bk_inner,bn_outer_inner new_iname=bx\ntag_inames bx:l.0\n"
      "split_iname bk_outer 2 inner_tag=l.1\n" + kPipeline;
  LoopKernel t = scheduled(mm, script);
  EXPECT_EQ(compare_kernels(mm, t, {{"n", 128}, {"m", 256}, {"l", 128}}), "");
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  const BulkCopy* b = g.bulk_copy("b_fetch");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->box, (std::vector<int64_t>{64, 64, 2}));  // n mod 64, k, n / 64
  EXPECT_EQ(b->array_axes, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(b->multipliers, (std::vector<int64_t>{1, 0, 64}));  // (the fine part, k whole, blocks of 64)
  std::string cuda = cuda::print_source(g);
  EXPECT_NE(cuda.find("loom_tma_load<3>("), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("(int)0, (int)(64 * (k_outer + 1)), (int)loom_floordiv(128 * j_outer, 64));"), std::string::npos) << cuda;
  expect_compiles_for_sm90a(cuda);
  // a 64-wide tile: n / 64 is always 0, an axis of one element (a tensor dimension of 1)
  std::string narrow = script;
  for (auto [from, to] : {std::pair<std::string, std::string>{"m mod 128 = 0", "m mod 64 = 0"}, {"split_iname j 128", "split_iname j 64"},
                          {"shape=m64n128k16", "shape=m64n64k16"}})
    narrow.replace(narrow.find(from), from.size(), to);
  LoopKernel tn = scheduled(mm, narrow);
  EXPECT_EQ(compare_kernels(mm, tn, {{"n", 128}, {"m", 192}, {"l", 128}}), "");
  GeneratedKernel gn = generate(tn, TargetInfo::cuda("sm_90a"));
  EXPECT_EQ(gn.bulk_copy("b_fetch")->box, (std::vector<int64_t>{64, 64, 1}));
  EXPECT_EQ(gn.bulk_copy("b_fetch")->array_axes, (std::vector<int>{1, 0, -1}));
  expect_compiles_for_sm90a(cuda::print_source(gn));
}

TEST(BulkCopy, ZeroFilledTilesNeedNoGuardsAtAnySize) {
  LoopKernel t = scheduled(product_nt(), warpgroups(64, "assume l mod 8 = 0 and l >= 8\n", " fill_value=0", kPipeline));
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 100}, {"m", 70}, {"l", 56}}, {{"n", 130}, {"m", 129}, {"l", 136}}})
    EXPECT_EQ(compare_kernels(product_nt(), t, p), "");
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_GE(count_of(cuda, "loom_tma_load<2>("), 4u);
  EXPECT_EQ(cuda.find(" ? a["), std::string::npos) << cuda;  // (the copy engine writes the zeros)
  expect_compiles_for_sm90a(cuda);
}

TEST(BulkCopy, CudaCoreTilesToo) {
  std::string whole = "assume n mod 32 = 0 and m mod 32 = 0 and l mod 32 = 0 and l >= 32\n";
  LoopKernel t = scheduled(sgemm(), cuda_cores(whole, "", kPipeline));
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 32}, {"m", 64}, {"l", 32}}, {{"n", 96}, {"m", 64}, {"l", 160}}})
    EXPECT_EQ(compare_kernels(sgemm(), t, p), "");
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90"));  // (plain sm_90 has the copy engine)
  EXPECT_EQ(g.bulk_copy("b_fetch")->box, (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(g.bulk_copy("b_fetch")->swizzle, 0);
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "loom_tma_wait(&loom_tma_bar["), 2u) << cuda;
  EXPECT_NE(cuda.find("__shared__ __align__(128) float a_fetch[3072];"), std::string::npos) << cuda;  // (static: the copy engine's alignment)
  expect_compiles_for_sm90a(cuda);
  // zero-filled tiles at sizes that are not multiples of them
  LoopKernel any = scheduled(sgemm(), cuda_cores("assume m mod 4 = 0 and l mod 4 = 0\n", " fill_value=0", kPipeline));
  EXPECT_EQ(compare_kernels(sgemm(), any, {{"n", 45}, {"m", 52}, {"l", 76}}), "");
  expect_compiles_for_sm90a(cuda::print_source(generate(any, TargetInfo::cuda("sm_90a"))));
}

TEST(BulkCopy, RefusesWhatTheCopyEngineCannotDo) {
  std::string whole = "assume n mod 32 = 0 and m mod 32 = 0 and l mod 32 = 0 and l >= 32\n";
  LoopKernel t = scheduled(sgemm(), cuda_cores(whole, "", kPipeline));
  std::string e = error_of([&] { generate(t, TargetInfo::cuda("sm_80")); });
  EXPECT_NE(e.find("tma_copy of 'a_fetch': the target (sm_80) has no tensor memory accelerator"), std::string::npos) << e;
  EXPECT_EQ(compare_kernels(sgemm(), t, {{"n", 32}, {"m", 32}, {"l", 64}}), "");  // (the CPU target copies as written)
  // readers need the pipeline's loop to know which copy to wait for
  e = error_of([&] { generate(scheduled(sgemm(), cuda_cores(whole, "", "tma_copy a_fetch\n")), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("the tile is not double-buffered"), std::string::npos) << e;
  // partial tiles guarded inside the fill: whole boxes only (fill_value=0 is the way)
  e = error_of([&] { generate(scheduled(sgemm(), cuda_cores("", "", kPipeline)), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("runs under a guard on its own iname"), std::string::npos) << e;
  // a padded tile: the copy engine writes boxes densely
  e = error_of([&] {
    std::string padded = cuda_cores(whole, "", kPipeline);
    padded.replace(padded.find("padding=0"), 9, "padding=1");
    generate(scheduled(sgemm(), padded), TargetInfo::cuda("sm_90a"));
  });
  EXPECT_NE(e.find("the box's rows are 132 bytes; the copy engine needs multiples of 16"), std::string::npos) << e;
  // an unrolled fill iname has no loop for the one copy to replace: each
  // instance would issue the box again (found by the GPU random schedules)
  LoopKernel bmm = parse_kernel_text(R"(kernel bmm
domains:
  {[b, i, j, k]: 0 <= b < nb and 0 <= i, j, k < 16}
arguments:
  a: float32[nb, 16, 16]
  x: float32[nb, 16, 16]
  c: float32[nb, 16, 16]
instructions:
  c[b, i, j] = sum(k, a[b, i, k] * x[b, k, j])
)").kernel;
  e = error_of([&] {
    generate(scheduled(bmm, "add_prefetch a i,j,k temporary_address_space=local default_tag=unr\ndouble_buffer a_fetch b\ntma_copy a_fetch\n"),
             TargetInfo::cuda("sm_90a"));
  });
  EXPECT_NE(e.find("fill 'fetch_a_first' is tagged unr; one copy replaces the fill's own loops"), std::string::npos) << e;
  // what tma_copy itself refuses
  e = error_of([&] { scheduled(sgemm(), cuda_cores(whole, "", "tma_copy a\n")); });
  EXPECT_NE(e.find("'a' is an argument"), std::string::npos) << e;
  e = error_of([&] { scheduled(sgemm(), cuda_cores(whole, "", "tma_copy a_fetc\n")); });
  EXPECT_NE(e.find("no temporary 'a_fetc'"), std::string::npos) << e;
}

// The accumulators' write-back: two adjacent columns per lane move as one
// 8-byte store where the first column's offset is even for every size the
// assumptions allow (codegen/pair_stores.cpp); c must then be 8-byte aligned.
TEST(PairedStores, AccumulatorsGoBackTwoColumnsPerStoreWhereTheOffsetIsEven) {
  std::string whole = "assume n mod 128 = 0 and m mod 64 = 0 and l mod 64 = 0 and l >= 64\n";
  LoopKernel t = scheduled(product_nt(), warpgroups(64, whole, "", kPipeline));
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "*reinterpret_cast<float2 *>(&(c["), 16u) << cuda;  // (32 accumulators a lane)
  EXPECT_NE(cuda.find("loom_v0.x = acc_c[0];\n"), std::string::npos) << cuda;
  EXPECT_EQ(g.argument_alignment.at("c"), 8);
  expect_compiles_for_sm90a(cuda);
  // rows of odd length: no pair is aligned
  LoopKernel odd = scheduled(product_nt(), warpgroups(64, "assume l mod 8 = 0 and l >= 8\n", " fill_value=0", kPipeline));
  GeneratedKernel go = generate(odd, TargetInfo::cuda("sm_90a"));
  EXPECT_EQ(cuda::print_source(go).find("float2"), std::string::npos);
  EXPECT_EQ(go.argument_alignment.count("c"), 0u);
  // the CPU target stores element by element, as written
  EXPECT_EQ(compare_kernels(product_nt(), t, {{"n", 128}, {"m", 128}, {"l", 64}}), "");
}

// Random CUDA-core schedules with tiles from the copy engine: tile shapes,
// element types, copies and lead, zero-filled or assumed whole, padded or
// not. Each is generated for sm_90a (a refusal must name tma_copy or be
// another transformation's), printed (and compiled where NVRTC is), and run
// on the CPU target against the untransformed kernel at sizes that fit its
// assumptions.
TEST(BulkCopy, RandomCudaCoreSchedulesAreProvenOrRefused) {
  std::mt19937 rng(20261126);
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 24; ++trial) {
    int ti = std::vector<int>{8, 16, 32}[size_t(pick(3))], tj = std::vector<int>{8, 16, 32}[size_t(pick(3))];
    int tk = std::vector<int>{8, 16, 32}[size_t(pick(3))];
    bool f64 = pick(3) == 0, whole = pick(2), padded = pick(5) == 0;
    int stages = 2 + pick(3), ahead = 1 + pick(stages - 1);
    std::string dt = f64 ? "float64" : "float32";
    LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                               {"a: " + dt + "[n, l], b: " + dt + "[l, m], c: " + dt + "[n, m]"}, "mm");
    auto S = [](int v) { return std::to_string(v); };
    std::string script = whole ? "assume n mod " + S(ti) + " = 0 and m mod " + S(tj) + " = 0 and l mod " + S(tk) + " = 0 and l >= " + S(tk) + "\n"
                               : "assume m mod 2 = 0 and l mod 2 = 0\n";
    std::string fill = whole ? "" : " fill_value=0", pad = padded ? "padding=1" : "padding=0";
    script += "split_iname i " + S(ti) + " outer_tag=g.1 inner_tag=l.1\nsplit_iname j " + S(tj) + " outer_tag=g.0 inner_tag=l.0\nsplit_iname k " + S(tk) + "\n";
    script += "add_prefetch a i_inner,k_inner dim_arg_names=ar,ak " + pad + " default_tag=for" + fill + "\n";
    script += "add_prefetch b k_inner,j_inner dim_arg_names=bk,bc " + pad + " default_tag=for" + fill + "\n";
    // each fetch on the block's threads where it fits, else partly in a loop
    script += ti >= tk ? "tag_inames ar:l.1\nsplit_iname ak " + S(std::min(tk, tj)) + " inner_tag=l.0\n"
                       : "split_iname ar " + S(ti) + "\nsplit_iname ak " + S(tj) + " inner_tag=l.0\ntag_inames ar_inner:l.1\n";
    script += "split_iname bk " + S(ti) + " inner_tag=l.1\ntag_inames bc:l.0\n";
    script += "double_buffer a_fetch k_outer stages=" + S(stages) + " ahead=" + S(ahead) + "\ndouble_buffer b_fetch k_outer stages=" + S(stages) +
              " ahead=" + S(ahead) + "\ntma_copy a_fetch,b_fetch\n";
    LoopKernel t;
    try {
      t = scheduled(k, script);
    } catch (const TransformError&) {
      ++refused;  // (a split that does not divide, a tag the tile cannot take, ...)
      continue;
    }
    try {
      GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
      std::string cuda = cuda::print_source(g);
      EXPECT_NE(cuda.find("loom_tma_load<2>("), std::string::npos) << script;
      expect_compiles_for_sm90a(cuda);
      ++accepted;
    } catch (const KernelError& e) {
      EXPECT_NE(std::string(e.what()).find("tma_copy of"), std::string::npos) << script << e.what();
      ++refused;
    }
    std::map<std::string, int64_t> p = whole ? std::map<std::string, int64_t>{{"n", 2 * ti}, {"m", 3 * tj}, {"l", 2 * tk}}
                                              : std::map<std::string, int64_t>{{"n", 2 * ti + 3}, {"m", 2 * tj + 2}, {"l", 2 * tk + 4}};
    EXPECT_EQ(compare_kernels(k, t, p), "") << script;  // (the CPU target copies as written, accepted or not)
  }
  EXPECT_GT(accepted, 4);
  std::printf("random bulk-copy schedules: %d accepted, %d refused\n", accepted, refused);
}

// A fused epilogue (bias, ReLU, bfloat16) computed on the accumulators: each
// element's private value, then its store; two adjacent stores go as one
// __nv_bfloat162 (4 bytes), the second value computed first. The example
// stages them in a shared tile (buffer_array, no fill: c is only written),
// which the block writes back 16 bytes a lane (c 16-byte aligned at launch);
// written to c directly, the pairs go there (c 4-byte aligned).
TEST(PairedStores, AFusedEpilogueStoresTwoSixteenBitResultsAtOnce) {
  KernelFile f = loom::testing::example("gemm_bf16_wgmma_tma_bias_relu");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "*reinterpret_cast<__nv_bfloat162 *>(&(c_buf["), 64u) << cuda;  // (128 accumulators a lane)
  EXPECT_NE(cuda.find("  s[1] = acc_s[1];\n  {  // vec loom_pair: 2 lanes"), std::string::npos) << cuda;
  EXPECT_EQ(count_of(cuda, "*reinterpret_cast<uint4 *>(&(c["), 1u) << cuda;  // (in a loop of 16)
  EXPECT_EQ(cuda.find("init_c_buf"), std::string::npos);
  EXPECT_EQ(g.argument_alignment.at("c"), 16);
  expect_compiles_for_sm90a(cuda);
  EXPECT_EQ(compare_kernels(f.kernel, t, {{"n", 128}, {"m", 256}, {"l", 64}}), "");

  std::vector<TransformStep> direct;
  for (auto& step : f.transforms) {
    if (step.name == "buffer_array") break;
    direct.push_back(step);
  }
  LoopKernel d = apply_transforms(f.kernel, direct);
  GeneratedKernel gd = generate(d, TargetInfo::cuda("sm_90a"));
  std::string direct_cuda = cuda::print_source(gd);
  EXPECT_EQ(count_of(direct_cuda, "*reinterpret_cast<__nv_bfloat162 *>(&(c["), 64u) << direct_cuda;
  EXPECT_EQ(gd.argument_alignment.at("c"), 4);
  expect_compiles_for_sm90a(direct_cuda);
}

// A partial tile's write-back: each store is guarded, and two stores pair
// where their guards hold together for every size the assumptions allow
// (m even: column 2q + 1 exists wherever 2q does); with m of any parity they
// stay apart. The copy engine's fills of the unswitched body's two versions
// go out before each version waits for the current tiles.
TEST(PairedStores, GuardedStoresPairWhereTheirGuardsAgree) {
  KernelFile f = loom::testing::example("gemm_bf16_wgmma_tma_any");
  auto assuming = [&](const std::string& assumption) {
    std::vector<TransformStep> steps = parse_transform_script(assumption), all = f.transforms;
    all.insert(all.begin(), steps.begin(), steps.end());
    return apply_transforms(f.kernel, all);
  };
  LoopKernel even = assuming("assume m mod 2 = 0\n"), any = assuming("");
  std::string cuda = cuda::print_source(generate(even, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "*reinterpret_cast<float2 *>(&(c["), 64u) << cuda;
  EXPECT_NE(cuda.find("&& loom_mod(lane, 4) * 2 < m - 256 * j_outer)\n  {\n    {  // vec loom_pair: 2 lanes"), std::string::npos) << cuda;
  EXPECT_EQ(cuda::print_source(generate(any, TargetInfo::cuda("sm_90a"))).find("float2"), std::string::npos);
  // fills, then the waits, in both versions of the body
  size_t loop = cuda.find("for (int k_outer");
  ASSERT_NE(loop, std::string::npos);
  size_t fill = cuda.find("loom_tma_load<2>", loop), wait = cuda.find("loom_tma_wait(&", loop), branch = cuda.find("if (", loop);
  EXPECT_LT(branch, fill);
  EXPECT_LT(fill, wait) << cuda.substr(loop, 2000);
  EXPECT_EQ(count_of(cuda, "loom_tma_wait(&"), 4u);  // (two tiles, two versions)
  expect_compiles_for_sm90a(cuda);
  EXPECT_EQ(compare_kernels(f.kernel, even, {{"n", 130}, {"m", 250}, {"l", 200}}), "");
  EXPECT_EQ(compare_kernels(f.kernel, any, {{"n", 130}, {"m", 251}, {"l", 200}}), "");
}
