// tensor_core: a product's 16x8x16 tile on the warp-level matrix instruction
// (mma.sync m16n8k16). Each schedule runs on the CPU target (and the
// interpreter) against the untransformed kernel at sizes that leave partial
// tiles, outputs poisoned first: the lane code every target shares, with
// the fragment layout, the guards made from the tile's bounds and the
// accumulators' four elements per lane. The CUDA C issues mma.sync (ldmatrix
// where an operand sits in shared memory in aligned rows) and compiles with
// NVRTC where it is present. Refusals name the reason.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/half.h"
#include "loom/interpreter.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::count_of;
using loom::testing::error_of;
using loom::testing::interpreted_vs_reference;

namespace {

LoopKernel product(const std::string& dtype = "bfloat16", const std::string& body = "float32(a[i, k]) * float32(b[k, j])") {
  return make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, " + body + ")",
                     {"a: " + dtype + "[n, l], b: " + dtype + "[l, m], c: float32[n, m]"}, "mm");
}

LoopKernel scheduled(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

// one warp per 16 x 8 tile of c, operands read from global memory
const std::string kOneWarp =
    "split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 16\n"
    "tensor_core i_inner j_inner k_inner\n";

// 2 x 2 warps of 32 x 16 (2 x 2 tiles each, ILP), tiles of a and b in shared memory
const std::string kWarpTiles =
    "split_iname i 64 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
    "split_iname i_inner 32 outer_tag=l.1\nsplit_iname i_inner_inner 16 outer_tag=ilp\n"
    "split_iname j_inner 16 outer_tag=l.2\nsplit_iname j_inner_inner 8 outer_tag=ilp\n"
    "split_iname k 32\nsplit_iname k_inner 16 outer_tag=unr\n"
    "tensor_core i_inner_inner_inner j_inner_inner_inner k_inner_inner\n"
    "add_prefetch a i_inner_outer,i_inner_inner_outer,i_inner_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=8 default_tag=for\n"
    "tag_inames ak:l.0\nsplit_iname ar 2 inner_tag=l.1\nsplit_iname ar_outer 2 inner_tag=l.2\n"
    "add_prefetch b k_inner_outer,k_inner_inner,j_inner_outer,j_inner_inner_outer,j_inner_inner_inner dim_arg_names=bk,bc padding=8 default_tag=for\n"
    "tag_inames bc:l.0\nsplit_iname bk 2 inner_tag=l.1\nsplit_iname bk_outer 2 inner_tag=l.2\n";

const std::vector<std::map<std::string, int64_t>> kSizes = {
    {{"n", 64}, {"m", 32}, {"l", 32}},   // whole tiles
    {{"n", 37}, {"m", 45}, {"l", 21}},   // partial tiles in i, j and k
    {{"n", 5}, {"m", 3}, {"l", 7}},      // one partial tile of each
    {{"n", 17}, {"m", 9}, {"l", 0}}};    // no k: c is zero


}  // namespace

TEST(TensorCore, OneWarpPerTileMatchesOnEveryTarget) {
  LoopKernel t = scheduled(product(), kOneWarp);
  EXPECT_EQ(t.tag_of("i_inner").str(), "mma.m");
  EXPECT_EQ(t.tag_of("k_inner").str(), "mma.k");
  check_transformed(product(), t, kSizes);
  EXPECT_EQ(interpreted_vs_reference(product(), t, kSizes[1]), "");
  GeneratedKernel g = generate(t);
  EXPECT_EQ(g.block[0], 32);  // the lanes
  std::string cuda = cuda::print_source(g);
  EXPECT_EQ(count_of(cuda, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {"), 1u) << cuda;
  EXPECT_EQ(count_of(cuda, "ldmatrix"), 0u);  // (operands in global memory, guarded)
}

TEST(TensorCore, WarpTilesFromSharedMemoryMatch) {
  LoopKernel t = scheduled(product(), kWarpTiles);
  check_transformed(product(), t, kSizes);
  EXPECT_EQ(interpreted_vs_reference(product(), t, kSizes[2]), "");
  GeneratedKernel g = generate(t);
  EXPECT_EQ(g.threads_per_block(), 32 * 2 * 2);
  std::string cuda = cuda::print_source(g);
  // four products per warp and k step of 16, two steps per k tile; accumulators in registers
  size_t products = count_of(cuda, "loom_mma_m16n8k16_bf16(acc_");
  EXPECT_TRUE(products == 8 || products == 16) << cuda;  // (16: the whole k tile apart from the partial one)
  EXPECT_NE(cuda.find("float acc_c[16];"), std::string::npos) << cuda;
}

TEST(TensorCore, WholeTilesLoadFragmentsWithLdmatrix) {
  LoopKernel t = scheduled(product(), "assume n mod 64 = 0 and m mod 32 = 0 and l mod 32 = 0\n" + kWarpTiles +
                                          "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n");
  check_transformed(product(), t, {kSizes[0], {{"n", 128}, {"m", 64}, {"l", 96}}});
  std::string cuda = cuda::print_source(generate(t));
  // A once per row of tiles and k step, B once per column of tiles: each loaded once for the two products that share it
  EXPECT_EQ(count_of(cuda, "loom_ldmatrix_x4(&"), 4u) << cuda;
  EXPECT_EQ(count_of(cuda, "loom_ldmatrix_x2_trans(&"), 4u) << cuda;
}

TEST(TensorCore, VectorCopiesOfBfloat16TilesAreAsynchronous) {
  LoopKernel t = scheduled(product(), "assume n mod 64 = 0 and m mod 32 = 0 and l mod 32 = 0\n"
                                      "split_iname i 64 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
                                      "split_iname i_inner 32 outer_tag=l.1\nsplit_iname i_inner_inner 16 outer_tag=ilp\n"
                                      "split_iname j_inner 16 outer_tag=l.2\nsplit_iname j_inner_inner 8 outer_tag=ilp\n"
                                      "split_iname k 32\nsplit_iname k_inner 16 outer_tag=unr\n"
                                      "tensor_core i_inner_inner_inner j_inner_inner_inner k_inner_inner\n"
                                      "add_prefetch a i_inner_outer,i_inner_inner_outer,i_inner_inner_inner,k_inner_outer,k_inner_inner "
                                      "dim_arg_names=ar,ak padding=8 default_tag=for\n"
                                      "split_iname ak 8 inner_tag=vec\nsplit_iname ar 8\njoin_inames ar_inner,ak_outer new_iname=ax\n"
                                      "tag_inames ax:l.0\nsplit_iname ar_outer 2 inner_tag=l.1\nsplit_iname ar_outer_outer 2 inner_tag=l.2\n"
                                      "add_prefetch b k_inner_outer,k_inner_inner,j_inner_outer,j_inner_inner_outer,j_inner_inner_inner "
                                      "dim_arg_names=bk,bc padding=8 default_tag=for\n"
                                      "split_iname bc 8 inner_tag=vec\nsplit_iname bk 8\njoin_inames bk_inner,bc_outer new_iname=bx\n"
                                      "tag_inames bx:l.0\nsplit_iname bk_outer 2 inner_tag=l.1\nsplit_iname bk_outer_outer 2 inner_tag=l.2\n"
                                      "double_buffer a_fetch k_outer\ndouble_buffer b_fetch k_outer\n");
  check_transformed(product(), t, {kSizes[0], {{"n", 128}, {"m", 96}, {"l", 64}}});
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count_of(cuda, "loom_cp_async<16>"), 4u) << cuda;  // a and b, before the loop and inside it
}

TEST(TensorCore, Float16OperandsAndAnEpilogue) {
  // bias and ReLU after the product: ordinary instructions on the tile's lanes
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                             "<> s = sum(k, float32(a[i, k]) * float32(b[k, j])) {id=prod}\n"
                             "c[i, j] = max(s + bias[j], 0.0f) {dep=prod}",
                             {"a: float16[n, l], b: float16[l, m], bias: float32[m], c: float32[n, m]"}, "mm");
  LoopKernel t = scheduled(k, kOneWarp);
  check_transformed(k, t, kSizes);
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_NE(cuda.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos) << cuda;
}

TEST(TensorCore, RefusesWhatTheInstructionCannotRun) {
  auto refusal = [](const LoopKernel& k, const std::string& script) { return error_of([&] { scheduled(k, script); }); };
  EXPECT_NE(refusal(product(), "split_iname i 32\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner\n")
                .find("iname 'i_inner' must run over 0..15"),
            std::string::npos);
  EXPECT_NE(refusal(product(), "split_iname i 16\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner shape=m16n8k8\n")
                .find("shape"),
            std::string::npos);
  // products rounded to bfloat16, float32 operands
  EXPECT_NE(refusal(product("bfloat16", "a[i, k] * b[k, j]"), kOneWarp).find("is computed in bfloat16"), std::string::npos);
  EXPECT_NE(refusal(product("float32", "a[i, k] * b[k, j]"), kOneWarp).find("float16 or bfloat16"), std::string::npos);
  // one factor over both m and n
  EXPECT_NE(refusal(product("bfloat16", "float32(a[i, k]) * float32(b[k, j] + a[i, k])"), kOneWarp).find("one factor must depend"),
            std::string::npos);
  EXPECT_NE(refusal(product(), "split_iname i 16 inner_tag=l.0\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner\n")
                .find("is tagged l.0"),
            std::string::npos);
}

TEST(TensorCore, TheLanesAxisIsTheWarps) {
  // a tile of a fetched by 64 threads along l.0: l.0 is the 32 lanes
  LoopKernel t = scheduled(product(), "split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 64\n"
                                      "split_iname k_inner 16 outer_tag=unr\ntensor_core i_inner j_inner k_inner_inner\n"
                                      "add_prefetch a i_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak default_tag=for\n"
                                      "tag_inames ak:l.0\n");
  EXPECT_NE(error_of([&] { generate(t); }).find("axis l.0 holds the warp's 32 lanes"), std::string::npos) << error_of([&] { generate(t); });
  // sm_75 has no bf16 m16n8k16
  std::string old = error_of([&] { generate(scheduled(product(), kOneWarp), TargetInfo::cuda("sm_75")); });
  EXPECT_NE(old.find("architecture sm_75 has no m16n8k16 matrix instruction for bfloat16"), std::string::npos) << old;
  // ... which the CPU target and the interpreter do not need
  EXPECT_EQ(interpreted_vs_reference(product(), scheduled(product(), kOneWarp), kSizes[2]), "");
}

TEST(TensorCore, AWriteTheLanesWouldShareIsARace) {
  // d[i] is written at every j: one lane per (i, j) element, so lanes of one row meet
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                             "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))\nd[i] = 2.0f {inames=i:j}",
                             {"a: bfloat16[n, l], b: bfloat16[l, m], c: float32[n, m], d: float32[n]"}, "mm");
  LoopKernel t = scheduled(k, kOneWarp);
  EXPECT_NE(error_of([&] { generate(t); }).find("write race"), std::string::npos);
}

TEST(TensorCore, AWholeKTileSplitsItsNestPerStatement) {
  // k of 16 in one tile: init, update and store share the (m, n) loops; the
  // update gets a nest of its own (one mma.sync per 16x8 tile), guarded by
  // the warp's own bound (nb) around the instruction rather than per element
  LoopKernel k = make_kernel({"{[b, i, j, k]: 0 <= b < nb and 0 <= i, j, k < 16}"},
                             "c[b, i, j] = sum(k, float32(a[b, i, k]) * float32(x[b, k, j]))",
                             {"a: bfloat16[nb, 16, 16], x: bfloat16[nb, 16, 16], c: bfloat16[nb, 16, 16]"}, "bmm");
  LoopKernel t = scheduled(k, "split_iname b 8 outer_tag=g.0 inner_tag=l.1\nsplit_iname j 8 outer_tag=ilp\ntensor_core i j_inner k\n");
  check_transformed(k, t, {{{"nb", 37}}, {{"nb", 1}}, {{"nb", 16}}});
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count_of(cuda, "loom_mma_m16n8k16_bf16(acc_"), 2u) << cuda;
  EXPECT_EQ(count_of(cuda, "__float2bfloat16_rn(0.0f)"), 0u) << cuda;  // no element guards
}

TEST(TensorCore, Tf32IsAnExplicitRoundingOfFloat32Operands) {
  // float32 operands run as TF32 only when asked: the sum's factors become
  // round_tf32(x) * round_tf32(y) in the kernel, which the untransformed kernel
  // written with the same rounding matches on every target
  const std::string script = "split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 8\n"
                             "tensor_core i_inner j_inner k_inner tf32=true\n";
  LoopKernel f32 = product("float32", "a[i, k] * b[k, j]");
  EXPECT_NE(error_of([&] { scheduled(f32, "split_iname i 16\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner\n"); })
                .find("tensor_core tf32=true"),
            std::string::npos);
  LoopKernel t = scheduled(f32, script);
  EXPECT_NE(t.instructions[0].rhs.str().find("round_tf32(a["), std::string::npos) << t.instructions[0].rhs.str();
  EXPECT_EQ(t.tag_of("k_inner").str(), "mma.k");
  LoopKernel rounded = product("float32", "round_tf32(a[i, k]) * round_tf32(b[k, j])");
  check_transformed(rounded, t, kSizes);
  EXPECT_EQ(interpreted_vs_reference(rounded, t, kSizes[1]), "");
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count_of(cuda, "loom_mma_m16n8k8_tf32(acc_"), 1u) << cuda;
  EXPECT_NE(cuda.find("? loom_round_tf32(a["), std::string::npos) << cuda;
  // m16n8k8 is the TF32 shape
  EXPECT_NE(error_of([&] { scheduled(f32, "split_iname i 16\nsplit_iname j 8\nsplit_iname k 8\ntensor_core i_inner j_inner k_inner shape=m16n8k8\n"); })
                .find("pass tf32=true"),
            std::string::npos);
}

TEST(TensorCore, RoundTf32RoundsToTenMantissaBitsTiesAway) {
  // 1 + 2^-11 is half an ulp of TF32 at 1: away from zero; 1 + 2^-12 rounds down; -(1 + 3 * 2^-11) -> -(1 + 2^-9)
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = round_tf32(x[i])", {"x: float32[n], out: float32[n]"}, "tf32");
  const std::vector<float> in = {1.0f + 0x1p-11f, 1.0f + 0x1p-12f, -(1.0f + 3 * 0x1p-11f), 3.0e38f, 0.0f};
  const std::vector<float> want = {1.0f + 0x1p-10f, 1.0f, -(1.0f + 0x1p-9f), 3.0e38f + 0.0f, 0.0f};
  for (bool interpreter : {false, true}) {
    HostArray x(types::float32, {int64_t(in.size())}), out(types::float32, {int64_t(in.size())});
    for (size_t i = 0; i < in.size(); ++i) x.set(int64_t(i), in[i]);
    ArgMap args{{"x", ArgValue::of(x.ref())}, {"out", ArgValue::of(out.ref())}, {"n", ArgValue::of_int(int64_t(in.size()))}};
    if (interpreter) interpret(generate(k, TargetInfo::interpreter()), args);
    else loom::testing::run_on_host(k, args);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(float(out.get(int64_t(i))), loom::round_tf32(in[i])) << i << (interpreter ? " (interpreter)" : "");
    EXPECT_EQ(float(out.get(0)), want[0]);
    EXPECT_EQ(float(out.get(1)), want[1]);
    EXPECT_EQ(float(out.get(2)), want[2]);
  }
}

TEST(TensorCore, OperandsLdmatrixCannotLoadGoElementByElement) {
  // c = a b^T with b stored by rows of k (bt[j, k]): its zero-filled tile in
  // shared memory has k contiguous, not the column n the B fragment's
  // ldmatrix (x2.trans) needs, so each lane gathers its B elements (never
  // refused, never wrong); a's tile, k contiguous, still loads with ldmatrix
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(bt[j, k]))",
                             {"a: bfloat16[n, l], bt: bfloat16[m, l], c: float32[n, m]"}, "mm");
  LoopKernel t = scheduled(k, "split_iname i 16 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 16\n"
                              "tensor_core i_inner j_inner k_inner\n"
                              "add_prefetch a i_inner,k_inner dim_arg_names=ai,ak padding=8 default_tag=for fill_value=0\n"
                              "join_inames ai,ak new_iname=ax\nsplit_iname ax 32 inner_tag=l.0\n"
                              "add_prefetch bt j_inner,k_inner dim_arg_names=bj,bk padding=8 default_tag=for fill_value=0\n"
                              "join_inames bj,bk new_iname=bx\nsplit_iname bx 32 inner_tag=l.0\n");
  check_transformed(k, t, kSizes);
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count_of(cuda, "loom_ldmatrix_x4(&"), 1u) << cuda;
  EXPECT_EQ(count_of(cuda, "loom_ldmatrix_x2_trans(&"), 0u) << cuda;
  EXPECT_NE(cuda.find("loom_pack2(bt_fetch["), std::string::npos) << cuda;
}

TEST(TensorCore, TilesBeyondTheSharedMemoryAreRefused) {
  // 256 x 256 tiles, k in 64s, four stages: 4 x (256 x 72 + 64 x 264) x 2 bytes > 227 KiB
  std::string script = "assume n mod 256 = 0 and m mod 256 = 0 and l mod 64 = 0\n"
                       "split_iname i 256 outer_tag=g.1\nsplit_iname j 256 outer_tag=g.0\n"
                       "split_iname i_inner 64 outer_tag=l.1\nsplit_iname i_inner_inner 16 outer_tag=ilp\n"
                       "split_iname j_inner 64 outer_tag=l.2\nsplit_iname j_inner_inner 8 outer_tag=ilp\n"
                       "split_iname k 64\nsplit_iname k_inner 16 outer_tag=unr\n"
                       "tensor_core i_inner_inner_inner j_inner_inner_inner k_inner_inner\n"
                       "add_prefetch a i_inner_outer,i_inner_inner_outer,i_inner_inner_inner,k_inner_outer,k_inner_inner padding=8 default_tag=for\n"
                       "add_prefetch b k_inner_outer,k_inner_inner,j_inner_outer,j_inner_inner_outer,j_inner_inner_inner padding=8 default_tag=for\n"
                       "double_buffer a_fetch k_outer stages=4\ndouble_buffer b_fetch k_outer stages=4\n";
  std::string e = error_of([&] { generate(scheduled(product(), script)); });
  EXPECT_NE(e.find("bytes of local (shared) memory per block; at most 232448 bytes on sm_90"), std::string::npos) << e;
}

TEST(TensorCore, Float64ProductsRunOnTheFp64TensorCores) {
  // m8n8k4 (DMMA): float64 factors of any expression on their own side
  // (PolyBench's alpha * A[i, k] * B[k, j]), float64 accumulators, two
  // elements a lane; 2 x 2 warps of 16 x 16 (2 x 2 tiles each), the tiles in
  // shared memory, partial tiles guarded
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = c[i, j] + sum(k, alpha * a[i, k] * b[k, j])",
                             {"a: float64[n, l], b: float64[l, m], c: float64[n, m], alpha: float64"}, "dgemm");
  const std::string script =
      "split_iname i 32 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0\n"
      "split_iname i_inner 16 outer_tag=l.1\nsplit_iname i_inner_inner 8 outer_tag=ilp\n"
      "split_iname j_inner 16 outer_tag=l.2\nsplit_iname j_inner_inner 8 outer_tag=ilp\n"
      "split_iname k 8\nsplit_iname k_inner 4 outer_tag=unr\n"
      "tensor_core i_inner_inner_inner j_inner_inner_inner k_inner_inner\n"
      "add_prefetch a i_inner_outer,i_inner_inner_outer,i_inner_inner_inner,k_inner_outer,k_inner_inner dim_arg_names=ar,ak padding=4 default_tag=for\n"
      "join_inames ar,ak new_iname=ax\nsplit_iname ax 32 inner_tag=l.0\nsplit_iname ax_outer 2 inner_tag=l.1\nsplit_iname ax_outer_outer 2 inner_tag=l.2\n"
      "add_prefetch b k_inner_outer,k_inner_inner,j_inner_outer,j_inner_inner_outer,j_inner_inner_inner dim_arg_names=bk,bc padding=4 default_tag=for\n"
      "tag_inames bc:l.0\nsplit_iname bk 2 inner_tag=l.1\nsplit_iname bk_outer 2 inner_tag=l.2\n";
  LoopKernel t = scheduled(k, script);
  EXPECT_EQ(t.tag_of("i_inner_inner_inner").str(), "mma.m");
  check_transformed(k, t, kSizes);
  EXPECT_EQ(interpreted_vs_reference(k, t, kSizes[1]), "");
  GeneratedKernel g = generate(t);
  EXPECT_EQ(g.threads_per_block(), 32 * 2 * 2);
  std::string cuda = cuda::print_source(g);
  EXPECT_NE(cuda.find("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {"), std::string::npos) << cuda;
  // each A and B fragment loaded once per k step, shared by the products of its row or column of tiles
  EXPECT_NE(cuda.find("double const loom_frag"), std::string::npos) << cuda;
  EXPECT_GE(count_of(cuda, "loom_mma_m8n8k4_f64(acc_"), 8u) << cuda;  // (2 x 2 tiles, two k steps: at least the partial tile's)
  EXPECT_NE(cuda.find("double acc_"), std::string::npos) << cuda;
  // the tile's shape is float64's, and float64 is not m16n8k16's
  auto refusal = [&](const std::string& s) { return error_of([&] { scheduled(k, s); }); };
  EXPECT_NE(refusal("split_iname i 16\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner\n").find("must run over 0..7"),
            std::string::npos);
  EXPECT_NE(refusal("split_iname i 64\nsplit_iname j 8\nsplit_iname k 16\ntensor_core i_inner j_inner k_inner shape=m64n8k16\n")
                .find("the FP64 tensor cores run as m8n8k4"),
            std::string::npos);
  EXPECT_NE(error_of([&] { scheduled(product(), "split_iname i 8\nsplit_iname j 8\nsplit_iname k 4\ntensor_core i_inner j_inner k_inner shape=m8n8k4\n"); })
                .find("m8n8k4 multiplies float64 values"),
            std::string::npos);
  // float32 accumulation of float64 products is another sum than the instruction's
  LoopKernel mixed = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k] * b[k, j]))",
                                 {"a: float64[n, l], b: float64[l, m], c: float32[n, m]"}, "mixed");
  EXPECT_FALSE(error_of([&] { scheduled(mixed, "split_iname i 8\nsplit_iname j 8\nsplit_iname k 4\ntensor_core i_inner j_inner k_inner shape=m8n8k4\n"); })
                   .empty());
}

TEST(TensorCore, HoppersLargerFloat64Shapes) {
  // m16n8k4, m16n8k8 and m16n8k16 (sm_90): A's K / 2 values a lane and B's
  // K / 4 in TF32's layout, four accumulator elements; sm_80 has m8n8k4 only
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float64[n, l], b: float64[l, m], c: float64[n, m]"}, "dgemm");
  for (int kk : {4, 8, 16}) {
    const std::string shape = "m16n8k" + std::to_string(kk);
    LoopKernel t = scheduled(k, "split_iname i 32 outer_tag=g.1\nsplit_iname j 16 outer_tag=g.0\nsplit_iname i_inner 16 outer_tag=ilp\n"
                                "split_iname j_inner 8 outer_tag=ilp\nsplit_iname k " + std::to_string(kk) +
                                    "\ntensor_core i_inner_inner j_inner_inner k_inner shape=" + shape + "\n");
    check_transformed(k, t, kSizes);
    std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
    EXPECT_EQ(count_of(cuda, "loom_mma_" + shape + "_f64(acc_"), 4u) << cuda;  // (2 x 2 tiles)
    EXPECT_NE(cuda.find("mma.sync.aligned." + shape + ".row.col.f64.f64.f64.f64 {%0,%1,%2,%3}"), std::string::npos) << cuda;
    std::string old = error_of([&] { generate(t, TargetInfo::cuda("sm_80")); });
    EXPECT_NE(old.find("no " + shape + " matrix instruction for float64 (float64's m16n8k4/k8/k16 need sm_90)"), std::string::npos) << old;
  }
}

TEST(TensorCore, TriangularTilesGuardEachElementAndComputeWholeTiles) {
  // c[i, j] for j <= i (PolyBench's syrk): a tile on the diagonal is part
  // inside the domain. The lane code guards each element by its own row and
  // column (it once kept the row loop's variable in the column's bound and
  // computed wrong); one mma.sync computes the whole tile, and the
  // accumulator's elements outside the domain are never stored (its
  // initialization and store keep j <= i, element by element; the GPU
  // suite runs it)
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j <= i and 0 <= k < l}"}, "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))",
                             {"a: bfloat16[n, l], b: bfloat16[l, n], c: float32[n, n]"}, "lower");
  LoopKernel t = scheduled(k, kWarpTiles);  // (register tiles: ilp loops around the tile's)
  for (auto sizes : std::vector<std::map<std::string, int64_t>>{{{"n", 37}, {"l", 21}}, {{"n", 5}, {"l", 7}}, {{"n", 64}, {"l", 32}}})
    EXPECT_EQ(loom::testing::compare_kernels(k, t, sizes), "") << sizes.at("n");
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_90a")));
  EXPECT_NE(cuda.find("mma.sync.aligned.m16n8k16"), std::string::npos) << cuda;
  // a sum whose range ties the rows to the columns is refused: no zero stands in for the terms it leaves out
  LoopKernel tied = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < l and k <= i + j}"},
                                "c[i, j] = sum(k, float32(a[i, k]) * float32(b[k, j]))",
                                {"a: bfloat16[n, l], b: bfloat16[l, n], c: float32[n, n]"}, "tied");
  std::string e = error_of([&] { generate(scheduled(tied, kWarpTiles), TargetInfo::cuda("sm_90a")); });
  EXPECT_NE(e.find("ties its rows to its columns"), std::string::npos) << e;
}

// A sum of two products into one accumulator (syr2k's a[j, k] * alpha *
// b[i, k] + b[j, k] * alpha * a[i, k]): one matrix instruction each, the
// second's operands its own; results as the kernel as written's on the CPU
// target and the interpreter (the lane code), two instructions a tile and k
// step in the CUDA C. A term that is no product is refused, named.
TEST(TensorCore, TwoProductsSummedIntoOneAccumulatorAreTwoInstructions) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < l}"},
                             "c[i, j] = c[i, j] + sum(k, a[j, k] * alpha * b[i, k] + b[j, k] * alpha * a[i, k])",
                             {"a: float64[n, l], b: float64[n, l], c: float64[n, n], alpha: float64"}, "syr2k");
  const std::string script =
      "split_iname i 8 outer_tag=g.1\nsplit_iname j 8 outer_tag=g.0\nsplit_iname k 4\n"
      "tensor_core i_inner j_inner k_inner\n";
  LoopKernel t = scheduled(k, script);
  const std::vector<std::map<std::string, int64_t>> sizes = {{{"n", 16}, {"l", 8}}, {{"n", 11}, {"l", 6}}, {{"n", 3}, {"l", 0}}};
  check_transformed(k, t, sizes);
  EXPECT_EQ(interpreted_vs_reference(k, t, sizes[1]), "");
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count_of(cuda, "loom_mma_m8n8k4_f64(acc_"), 2u) << cuda;
  std::string e = error_of([&] {
    scheduled(make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < l}"}, "c[i, j] = c[i, j] + sum(k, a[j, k] * b[i, k] + a[i, k])",
                          {"a: float64[n, l], b: float64[n, l], c: float64[n, n]"}, "odd"),
              script);
  });
  EXPECT_NE(e.find("instruction 'insn_0': the summed value a[8 * i_outer + i_inner, 4 * k_outer + k_inner] is not a product of two factors"), std::string::npos) << e;
}
