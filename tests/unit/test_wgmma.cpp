// Warpgroup tensor-core tiles (tensor_core shape=m64nNk16: wgmma.mma_async on
// sm_90a) and the shared-memory layouts they read: swizzle_array (the
// 128-byte swizzle), tag_array_axes and pad_array_axis on temporaries (the
// unswizzled core-matrix layout). Each schedule runs on the CPU target and
// the interpreter (the warpgroup's lane code: 128 lanes, N/2 accumulator
// elements each) against the untransformed kernel, outputs poisoned first;
// the CUDA C issues one wgmma per tile with descriptors whose layout isl
// proved, and compiles with NVRTC where it is present. Refusals name the
// reason: the architecture, the layout, guards inside the tile, the lanes.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/interpreter.h"
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

// c = a b^T, both operands K-major (b stored as [m, l])
LoopKernel product_nt() {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[j, k]))",
                     {"a: bfloat16[n, l], b: bfloat16[m, l], c: float32[n, m]"}, "mm_nt");
}

LoopKernel scheduled(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// The CPU target (the warpgroup's lane code) against the untransformed kernel.
void check_on_cpu(const LoopKernel& ref, const LoopKernel& t, const std::vector<std::map<std::string, int64_t>>& sizes) {
  for (auto& p : sizes) EXPECT_EQ(compare_kernels(ref, t, p), "") << t.str();
}

// The fetch's rows spread over the block's warpgroups too (axis l.1).
std::string warpgroups(const std::string& rows_outer, int rows) {
  return rows > 64 ? "split_iname " + rows_outer + " " + std::to_string(rows / 64) + " inner_tag=l.1\n" : "";
}

// The tiles of one block: rows x 64 of c on `rows / 64` warpgroups, k tiles
// of 64; `layout` lays out the fetched tiles a_fetch[ar, ak] and b_fetch[bn, bk].
std::string warpgroup_schedule(int rows, int n_tile, const std::string& layout_a, const std::string& layout_b, bool whole = true) {
  std::string r = whole ? "assume n mod " + std::to_string(rows) + " = 0 and m mod " + std::to_string(n_tile) + " = 0 and l mod 64 = 0 and l >= 64\n" : "";
  r += "split_iname i " + std::to_string(rows) + " outer_tag=g.1\nsplit_iname j " + std::to_string(n_tile) + " outer_tag=g.0\n"
       "split_iname i_inner 64 outer_tag=l.1\nsplit_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\n"
       "tensor_core i_inner_inner j_inner k_inner_inner shape=m64n" + std::to_string(n_tile) + "k16\n"
       "add_prefetch a i_inner_outer,i_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for\n" + layout_a +
       "split_iname ak 8 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\ntag_inames ax:l.0\n" + warpgroups("ar_outer", rows) +
       "add_prefetch b j_inner,k_inner_outer,k_inner_inner dim_arg_names=bn,bk padding=0 default_tag=for\n" + layout_b +
       "split_iname bk 8 inner_tag=vec\nsplit_iname bn 16\njoin_inames bn_inner,bk_outer new_iname=bx\ntag_inames bx:l.0\n" + warpgroups("bn_outer", rows) +
       "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n";
  return r;
}

const std::string kSwizzled = "swizzle_array a_fetch\n";
const std::string kSwizzledB = "swizzle_array b_fetch\n";
// core matrices without a swizzle: [rows / 8, k / 8, rows mod 8 (padded to 9), k mod 8]
std::string core_matrices(const std::string& t) {
  return "split_array_axis " + t + " 0 8\nsplit_array_axis " + t + " 2 8\ntag_array_axes " + t + " N3,N1,N2,N0\npad_array_axis " + t + " 2 1\n";
}

const std::vector<std::map<std::string, int64_t>> kWhole = {{{"n", 128}, {"m", 64}, {"l", 64}}, {{"n", 256}, {"m", 192}, {"l", 192}}};


void expect_compiles_for_sm90a(const std::string& cuda) {
  if (!cuda::nvrtc_available()) return;
  cuda::CompileResult r = cuda::compile(cuda, "sm_90a");
  EXPECT_GT(r.cubin.size(), 0u);
  EXPECT_EQ(r.log.find("serialized"), std::string::npos) << r.log;  // (ptxas would say if it had to serialize the wgmma)
}

}  // namespace

TEST(Wgmma, SwizzledTilesMatchOnEveryTargetAndIssueOneInstructionPerKStep) {
  LoopKernel t = scheduled(product_nt(), warpgroup_schedule(128, 64, kSwizzled, kSwizzledB));
  EXPECT_EQ(t.find_temporary("a_fetch")->swizzle_bytes, 128);
  LoopKernel back = kernel_from_json(kernel_to_json(t));  // (JSON carries the layout)
  EXPECT_EQ(back.find_temporary("a_fetch")->swizzle_bytes, 128);
  EXPECT_EQ(cuda::print_source(generate(back, TargetInfo::cuda("sm_90a"))), cuda::print_source(generate(t, TargetInfo::cuda("sm_90a"))));
  check_on_cpu(product_nt(), t, kWhole);
  EXPECT_EQ(interpreted_vs_reference(product_nt(), t, kWhole[1]), "");
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  EXPECT_EQ(g.block[0], 128);  // a warpgroup's lanes
  EXPECT_EQ(g.block[1], 2);    // two warpgroups
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"), 4u) << cuda;  // k tile 64: 4 steps
  EXPECT_EQ(count_of(cuda, "loom_wgmma_begin();"), 1u);  // one fence for the run of 4 ...
  EXPECT_EQ(count_of(cuda, "loom_wgmma_end();"), 1u);    // ... and one wait
  EXPECT_NE(cuda.find("16u, 1024u, 1u)"), std::string::npos) << cuda;  // the 128-byte swizzle mode, 8-row blocks 1024 bytes apart
  EXPECT_NE(cuda.find("loom_cp_async<16>(&(a_fetch[loom_swizzle128<2>("), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__align__(1024)"), std::string::npos);
  expect_compiles_for_sm90a(cuda);
}

TEST(Wgmma, CoreMatricesWithoutASwizzleMatchAndDescribeTheirStrides) {
  LoopKernel t = scheduled(product_nt(), warpgroup_schedule(64, 128, core_matrices("a_fetch"), core_matrices("b_fetch")));
  EXPECT_EQ(t.find_temporary("a_fetch")->shape.size(), 5u);  // (the copies, then the 4 axes of core matrices)
  EXPECT_EQ(t.find_temporary("a_fetch")->shape[3].str(), "9");
  check_on_cpu(product_nt(), t, {{{"n", 64}, {"m", 128}, {"l", 64}}, {{"n", 192}, {"m", 256}, {"l", 192}}});
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"), 4u);
  // core matrices 9 * 16 bytes apart along k, 8-row groups 8 * 144 bytes apart, no swizzle
  EXPECT_NE(cuda.find("144u, 1152u, 0u)"), std::string::npos) << cuda;
  expect_compiles_for_sm90a(cuda);
}

TEST(Wgmma, RefusesWhatTheInstructionCannotRead) {
  LoopKernel swizzled = scheduled(product_nt(), warpgroup_schedule(128, 64, kSwizzled, kSwizzledB));
  // plain sm_90 has no wgmma (only the arch-specific sm_90a)
  std::string e = error_of([&] { generate(swizzled, TargetInfo::cuda("sm_90")); });
  EXPECT_NE(e.find("has no m64n64k16 matrix instruction for bfloat16 (wgmma needs sm_90a"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { generate(swizzled, TargetInfo::cuda("sm_80")); }).find("wgmma needs sm_90a"), std::string::npos);
  // rows of 64 plain values: neither core matrices nor a swizzle
  e = error_of([&] { generate(scheduled(product_nt(), warpgroup_schedule(128, 64, "", kSwizzledB)), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("in a layout wgmma cannot describe"), std::string::npos) << e;
  EXPECT_NE(e.find("a_fetch"), std::string::npos) << e;
  // operands straight from global memory
  LoopKernel global = scheduled(product_nt(), "assume n mod 64 = 0 and m mod 64 = 0 and l mod 16 = 0\nsplit_iname i 64 outer_tag=g.1\n"
                                              "split_iname j 64 outer_tag=g.0\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner shape=m64n64k16\n");
  e = error_of([&] { generate(global, TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("from shared memory: prefetch it into a local temporary"), std::string::npos) << e;
  // ... which the CPU target runs as the warpgroup's lane code all the same
  check_on_cpu(product_nt(), global, {{{"n", 64}, {"m", 128}, {"l", 32}}});
  // sizes that leave partial tiles: the update is guarded inside the tile
  LoopKernel partial = scheduled(product_nt(), warpgroup_schedule(128, 64, kSwizzled, kSwizzledB, false));
  e = error_of([&] { generate(partial, TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("wgmma reads whole tiles from shared memory"), std::string::npos) << e;
  check_on_cpu(product_nt(), partial, {{{"n", 100}, {"m", 70}, {"l", 50}}});  // (lane code: partial tiles run right)
  // the shape's extents
  e = error_of([&] { scheduled(product_nt(), "split_iname i 32\nsplit_iname j 64\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner shape=m64n64k16\n"); });
  EXPECT_NE(e.find("iname 'i_inner' must run over 0..63"), std::string::npos) << e;
  e = error_of([&] { scheduled(product_nt(), "split_iname i 64\nsplit_iname j 12\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner shape=m64n12k16\n"); });
  EXPECT_NE(e.find("argument 'shape' must be one of"), std::string::npos) << e;
  EXPECT_NE(e.find("m64n256k16"), std::string::npos) << e;
}

TEST(Wgmma, TheLanesAxisIsTheWarpgroup) {
  // fetches spread over 32 threads of l.0: l.0 is the warpgroup's 128 lanes
  std::string s = warpgroup_schedule(128, 64, kSwizzled, kSwizzledB);
  s.replace(s.find("split_iname ar 16"), 17, "split_iname ar 4");
  s.replace(s.find("split_iname bn 16"), 17, "split_iname bn 4");
  LoopKernel t = scheduled(product_nt(), s);
  std::string e = error_of([&] { generate(t, TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("axis l.0 holds the warpgroup's 128 lanes"), std::string::npos) << e;
}

TEST(Layouts, ATemporarysAxesReorderAndPad) {
  // a tile fetched as [ar, ak], then stored [ak, ar + 3]: every access follows
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2 * a[i, j]", {"a: float32[n, m], out: float32[n, m]"}, "copy2");
  std::string script = "split_iname i 16 outer_tag=g.0\nsplit_iname j 8 outer_tag=g.1\n"
                       "add_prefetch a i_inner,j_inner dim_arg_names=ar,ac default_tag=for padding=0\n"
                       "tag_array_axes a_fetch N0,N1\npad_array_axis a_fetch 1 3\n";
  LoopKernel t = scheduled(k, script);
  const Temporary* f = t.find_temporary("a_fetch");
  ASSERT_EQ(f->shape.size(), 2u);
  EXPECT_EQ(f->shape[0].str(), "8");   // ac (8 + 0) first now ...
  EXPECT_EQ(f->shape[1].str(), "19");  // ... then ar, padded by 3
  check_on_cpu(k, t, {{{"n", 37}, {"m", 21}}, {{"n", 16}, {"m", 8}}});
  EXPECT_NE(error_of([&] { scheduled(k, script + "tag_array_axes a_fetch stride:1,stride:16\n"); }).find("only reorder"), std::string::npos);
  EXPECT_NE(error_of([&] { scheduled(k, script + "pad_array_axis a 0 1\n"); }).find("is an argument"), std::string::npos);
  EXPECT_NE(error_of([&] { scheduled(k, script + "swizzle_array a\n"); }).find("is an argument"), std::string::npos);
  EXPECT_NE(error_of([&] { scheduled(k, script + "pad_array_axis a_fetch 2 1\n"); }).find("there is no axis 2"), std::string::npos);
  // a private temporary is not swizzled
  LoopKernel p = scheduled(k, "split_iname i 16 outer_tag=g.0\nsplit_iname j 4\nadd_prefetch a j_inner temporary_address_space=private default_tag=for\n");
  EXPECT_NE(error_of([&] { scheduled(p, "swizzle_array a_fetch\n"); }).find("not in local memory"), std::string::npos);
}

TEST(Layouts, SplitAxesOfAPrefetchTileAndTheReferenceKernel) {
  // split_array_axis of a temporary a transformation made: the kernel as
  // written (the reference run against) has no such temporary
  std::string script = "split_iname i 16 outer_tag=g.0\nadd_prefetch a i_inner,j default_tag=for padding=0\nsplit_array_axis a_fetch 1 4\n";
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 12}"}, "out[i, j] = a[i, j] + 1", {"a: float32[n, 12], out: float32[n, 12]"}, "inc");
  auto steps = parse_transform_script(script);
  LoopKernel t = apply_transforms(k, steps);
  EXPECT_EQ(t.find_temporary("a_fetch")->shape.size(), 3u);
  check_on_cpu(k, t, {{{"n", 37}}});
  LoopKernel ref = reference_kernel(k, steps, t);
  EXPECT_EQ(ref.find_argument("a")->shape.size(), 2u);
}

TEST(Layouts, JoinedLanesOfTwoAxesKeepABoxDomain) {
  // a lane over rows and chunks of a tile (rows fastest) is a box: the
  // direct loop generator takes it (no existential variables) and the
  // chunks' vector copies stay vectors
  std::string s = warpgroup_schedule(128, 64, core_matrices("a_fetch"), core_matrices("b_fetch"));
  s.replace(s.find("join_inames ar_inner,ak_outer"), 29, "join_inames ak_outer,ar_inner");
  LoopKernel t = scheduled(product_nt(), s);
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90a"));
  EXPECT_TRUE(g.fast_path) << g.isl_reason;
  EXPECT_NE(cuda::print_source(g).find("loom_cp_async<16>(&(a_fetch["), std::string::npos);
  check_on_cpu(product_nt(), t, {kWhole[0]});
  for (auto& d : t.domains) EXPECT_EQ(d.str().find("floor"), std::string::npos) << d.str();
}

TEST(Wgmma, ARunOverlapsTheNextIterationWhenItsCopiesAreNotRefilledThere) {
  // 4 copies filled 2 ahead: the copy a k tile's wgmma read is refilled two
  // iterations later, after the next wait and barrier, so the group runs on
  std::string lagged = warpgroup_schedule(128, 64, kSwizzled, kSwizzledB);
  lagged.replace(lagged.find("double_buffer a_fetch k_outer\n"), 30, "double_buffer a_fetch k_outer stages=4 ahead=2\n");
  lagged.replace(lagged.find("double_buffer b_fetch k_outer\n"), 30, "double_buffer b_fetch k_outer stages=4 ahead=2\n");
  LoopKernel t = scheduled(product_nt(), lagged);
  check_on_cpu(product_nt(), t, kWhole);
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "loom_wgmma_end_but_one();"), 1u) << cuda;
  EXPECT_NE(cuda.find("}\n  loom_wgmma_wait_all();"), std::string::npos) << cuda;  // after the k loop, before the stores
  EXPECT_LT(cuda.find("loom_wgmma_wait_all();"), cuda.find("  c["));
  expect_compiles_for_sm90a(cuda);
  // filled 3 ahead (the default), the next iteration refills that copy: wait for the group
  std::string full = warpgroup_schedule(128, 64, kSwizzled, kSwizzledB);
  full.replace(full.find("double_buffer a_fetch k_outer\n"), 30, "double_buffer a_fetch k_outer stages=4\n");
  full.replace(full.find("double_buffer b_fetch k_outer\n"), 30, "double_buffer b_fetch k_outer stages=4\n");
  cuda = cuda::print_source(generate(scheduled(product_nt(), full), TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "loom_wgmma_end_but_one();"), 0u);
  EXPECT_EQ(count_of(cuda, "loom_wgmma_end();"), 1u);
}

TEST(Wgmma, AnOperandStoredAlongItsRowsReadsWithTheTransposeBit) {
  // c = a b with b stored [l, m]: b's tile holds a 128-byte row of 64 n
  // values per k, stored [n / 64, k, n mod 64] and swizzled (MN-major)
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))",
                             {"a: bfloat16[n, l], b: bfloat16[l, m], c: float32[n, m]"}, "mm_nn");
  std::string s = "assume n mod 128 = 0 and m mod 128 = 0 and l mod 64 = 0 and l >= 64\nsplit_iname i 128 outer_tag=g.1\n"
                  "split_iname j 128 outer_tag=g.0\nsplit_iname i_inner 64 outer_tag=l.1\nsplit_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\n"
                  "tensor_core i_inner_inner j_inner k_inner_inner shape=m64n128k16\n"
                  "add_prefetch a i_inner_outer,i_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for\n"
                  "swizzle_array a_fetch\nsplit_iname ak 8 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\n"
                  "tag_inames ax:l.0\nsplit_iname ar_outer 2 inner_tag=l.1\n"
                  "add_prefetch b k_inner_outer,k_inner_inner,j_inner dim_arg_names=bk,bn padding=0 default_tag=for\n"
                  "split_array_axis b_fetch 1 64\ntag_array_axes b_fetch N1,N2,N0\nswizzle_array b_fetch\n"
                  "split_iname bn 8 inner_tag=vec\nsplit_iname bn_outer 8\nsplit_iname bk 16\njoin_inames bk_inner,bn_outer_inner new_iname=bx\n"
                  "tag_inames bx:l.0\nsplit_iname bk_outer 2 inner_tag=l.1\n"
                  "double_buffer a_fetch k_outer stages=3\ndouble_buffer b_fetch k_outer stages=3\n";
  LoopKernel t = scheduled(k, s);
  check_on_cpu(k, t, {{{"n", 128}, {"m", 128}, {"l", 64}}, {{"n", 256}, {"m", 384}, {"l", 192}}});
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "p, 1, 1, 0, 1;"), 4u) << cuda;  // b transposed, a not
  // b's 64-wide blocks 64 k rows (8 KiB) apart, its 8-row blocks 1024 bytes apart, the 128-byte swizzle
  EXPECT_NE(cuda.find("loom_wgmma_desc(&b_fetch[loom_mod(k_outer, 3) * 8192], 8192u, 1024u, 1u)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("loom_cp_async<16>(&(b_fetch["), std::string::npos);  // (the lanes' 8 values stay one vector)
  expect_compiles_for_sm90a(cuda);
  // unswizzled, an MN-major tile is refused with the layouts wgmma reads
  std::string plain = s;
  plain.replace(plain.find("swizzle_array b_fetch\n"), 22, "");
  std::string e = error_of([&] { generate(scheduled(k, plain), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("in a layout wgmma cannot describe"), std::string::npos) << e;
}

TEST(Wgmma, ZeroFilledTilesServeSizesThatAreNoMultipleOfTheTiles) {
  // fetches with fill_value=0 copy whole tiles (zeros outside the matrices),
  // so the instruction reads whole tiles and only the stores are guarded
  std::string s = warpgroup_schedule(128, 64, kSwizzled, kSwizzledB, false);
  for (const char* t : {"dim_arg_names=ar,ak padding=0 default_tag=for", "dim_arg_names=bn,bk padding=0 default_tag=for"})
    s.replace(s.find(t), std::string(t).size(), std::string(t) + " fill_value=0");
  LoopKernel t = scheduled(product_nt(), "assume l mod 8 = 0\n" + s);
  check_on_cpu(product_nt(), t, {{{"n", 100}, {"m", 70}, {"l", 56}}, {{"n", 129}, {"m", 65}, {"l", 200}}, {{"n", 5}, {"m", 3}, {"l", 8}}});
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_NE(cuda.find("loom_cp_async_zfill<16>(&(a_fetch[loom_swizzle128<2>("), std::string::npos) << cuda;
  EXPECT_GE(count_of(cuda, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"), 4u);
  expect_compiles_for_sm90a(cuda);
  // 4 copies filled 1 ahead by the copy engine: the whole k steps' version
  // of the unswitched body keeps its group in flight into the next
  // iteration, as whole tiles do
  std::string deep = s;
  for (const char* d : {"double_buffer a_fetch k_outer\n", "double_buffer b_fetch k_outer\n"})
    deep.replace(deep.find(d), std::string(d).size(), std::string(d).substr(0, std::string(d).size() - 1) + " stages=4 ahead=1\n");
  LoopKernel lagged = scheduled(product_nt(), "assume l mod 8 = 0 and l >= 8\n" + deep + "tma_copy a_fetch,b_fetch\n");
  check_on_cpu(product_nt(), lagged, {{{"n", 129}, {"m", 65}, {"l", 200}}});
  std::string lag_cuda = cuda::print_source(generate(lagged, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(lag_cuda, "loom_wgmma_end_but_one();\n      __syncthreads();"), 1u) << lag_cuda;
  EXPECT_EQ(count_of(lag_cuda, "loom_wgmma_wait_all();  // (the last iteration's group)"), 1u) << lag_cuda;
  expect_compiles_for_sm90a(lag_cuda);
}

// The right side of the instruction that writes c.
std::string plain_product_of(const LoopKernel& k) {
  for (auto& insn : k.instructions)
    if (insn.assignee_name() == "c") return insn.rhs.str();
  return "";
}

// TF32 on the warpgroup (m64nNk8): tensor_core tf32=true writes trunc_tf32
// (wgmma drops the 13 low mantissa bits of the float32 tiles it reads), a
// 128-byte swizzled row holds 32 k values, so a k tile of 32 is four
// instructions without transpose operands. The CPU target and the
// interpreter run the truncation; the untransformed kernel with the same
// factors is the reference. Refused: round_tf32 on a warpgroup (and
// trunc_tf32 on mma.sync), a k16 shape with tf32, an MN-major TF32 tile.
TEST(Wgmma, Tf32TilesDropTheLowBitsAsTheKernelSays) {
  LoopKernel plain = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[j, k])",
                                 {"a: float32[n, l], b: float32[m, l], c: float32[n, m]"}, "mm_nt_f32");
  LoopKernel truncated = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                                     "c[i, j] = sum(k, trunc_tf32(a[i, k]) * trunc_tf32(b[j, k]))",
                                     {"a: float32[n, l], b: float32[m, l], c: float32[n, m]"}, "mm_nt_f32");
  auto schedule = [](const std::string& shape_args, const std::string& b_layout) {
    return "assume n mod 128 = 0 and m mod 64 = 0 and l mod 32 = 0 and l >= 32\n"
           "split_iname i 128 outer_tag=g.1\nsplit_iname j 64 outer_tag=g.0\nsplit_iname i_inner 64 outer_tag=l.1\n"
           "split_iname k 32\nsplit_iname k_inner 8 outer_tag=unr\ntensor_core i_inner_inner j_inner k_inner_inner " + shape_args + "\n"
           "add_prefetch a i_inner_outer,i_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=0 default_tag=for\n"
           "swizzle_array a_fetch\nsplit_iname ak 4 inner_tag=vec\nsplit_iname ar 16\njoin_inames ar_inner,ak_outer new_iname=ax\n"
           "tag_inames ax:l.0\nsplit_iname ar_outer 2 inner_tag=l.1\n" + b_layout +
           "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n";
  };
  const std::string k_major_b = "add_prefetch b j_inner,k_inner_outer,k_inner_inner dim_arg_names=bn,bk padding=0 default_tag=for\n"
                                "swizzle_array b_fetch\nsplit_iname bk 4 inner_tag=vec\nsplit_iname bn 16\n"
                                "join_inames bn_inner,bk_outer new_iname=bx\ntag_inames bx:l.0\nsplit_iname bn_outer 2 inner_tag=l.1\n";
  LoopKernel t = scheduled(plain, schedule("shape=m64n64k8 tf32=true", k_major_b));
  EXPECT_NE(plain_product_of(t).find("trunc_tf32(a_fetch["), std::string::npos) << plain_product_of(t);
  check_on_cpu(truncated, t, {{{"n", 128}, {"m", 64}, {"l", 32}}, {{"n", 256}, {"m", 192}, {"l", 96}}});
  EXPECT_EQ(interpreted_vs_reference(truncated, t, {{"n", 128}, {"m", 128}, {"l", 64}}), "");
  // (the truncation is the kernel's: against the plain product it differs)
  EXPECT_NE(compare_kernels(plain, t, {{"n", 128}, {"m", 64}, {"l", 32}}), "");
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_EQ(count_of(cuda, "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"), 4u) << cuda;  // k tile 32: 4 steps
  EXPECT_EQ(count_of(cuda, ", p, 1, 1;"), 4u) << cuda;  // (no transpose operands for TF32)
  EXPECT_NE(cuda.find("16u, 1024u, 1u)"), std::string::npos) << cuda;
  expect_compiles_for_sm90a(cuda);
  // the kernel written with trunc_tf32 runs as TF32 without the flag
  LoopKernel written = scheduled(truncated, schedule("shape=m64n64k8", k_major_b));
  EXPECT_EQ(cuda::print_source(generate(written, TargetInfo::cuda("sm_90a"))), cuda);
  // refusals
  LoopKernel rounded = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                                   "c[i, j] = sum(k, round_tf32(a[i, k]) * round_tf32(b[j, k]))",
                                   {"a: float32[n, l], b: float32[m, l], c: float32[n, m]"}, "mm_nt_f32");
  std::string e = error_of([&] { scheduled(rounded, schedule("shape=m64n64k8", k_major_b)); });
  EXPECT_NE(e.find("rounds its factors with round_tf32, but the warpgroup (wgmma) reads float32 tiles and drops their low bits"), std::string::npos) << e;
  e = error_of([&] { scheduled(plain, schedule("shape=m64n64k16 tf32=true", k_major_b)); });
  EXPECT_NE(e.find("TF32 runs as m16n8k8 (a warp) or m64nNk8 (a warpgroup)"), std::string::npos) << e;
  e = error_of([&] { scheduled(plain, schedule("shape=m64n64k8", k_major_b)); });
  EXPECT_NE(e.find("m64n64k8 is a TF32 shape: pass tf32=true"), std::string::npos) << e;
  const std::string mn_major_b = "add_prefetch b k_inner_outer,k_inner_inner,j_inner dim_arg_names=bk,bn padding=0 default_tag=for\n"
                                 "swizzle_array b_fetch\nsplit_iname bn 4 inner_tag=vec\nsplit_iname bk 8\n"
                                 "join_inames bk_inner,bn_outer new_iname=bx\ntag_inames bx:l.0\nsplit_iname bk_outer 2 inner_tag=l.1\n";
  LoopKernel b_by_rows = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                                     {"a: float32[n, l], b: float32[l, m], c: float32[n, m]"}, "mm_f32");
  e = error_of([&] { generate(scheduled(b_by_rows, schedule("shape=m64n64k8 tf32=true", mn_major_b)), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("TF32 operands are K-major only"), std::string::npos) << e;
}
