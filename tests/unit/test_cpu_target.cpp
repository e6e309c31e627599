// The LLVM CPU target: every example against the reference interpreter
// (two independent implementations), GPU semantics (barriers between
// regions, local memory, private values across barriers), dtypes and math,
// short-circuit guards, refusals, and the compile cache.
#include <gtest/gtest.h>

#ifdef LOOM_HAS_CPU_TARGET
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "loom/interpreter.h"
#include "loom/cpu.h"
#include "loom/half.h"
#include "oracle.h"

using namespace loom;
using loom::testing::args_of;

namespace {

// CPU target on `k` vs the interpreter on `reference`, same inputs.
std::string cpu_vs_interpreter(const LoopKernel& reference, const LoopKernel& k, const std::map<std::string, int64_t>& params,
                               int threads = 0) {
  auto ref = make_host_arrays(reference, params, 21);
  auto out = ref;
  interpret(generate(reference), args_of(reference, ref, params));
  cpu::CpuKernel(k).call(args_of(k, out, params), threads);
  return loom::testing::compare_written(reference, ref, out);
}

const char* kReverse = R"(kernel block_reverse
domains:
  {[g, t]: 0 <= g < nb and 0 <= t < 64}
arguments:
  a: float32[64 * nb], out: float32[64 * nb]
  ...
temporaries:
  tile: float32[64] local
instructions:
  <> v = 2 * a[64 * g + t]          {id=load}
  tile[t] = v                       {id=w, dep=load, inames=g:t}
  ... lbarrier                      {id=bar, dep=w}
  out[64 * g + t] = tile[63 - t] + 2 * a[64 * g + t]  {id=r, dep=bar}
transforms:
  tag_inames g:g.0 t:l.0
)";

}  // namespace

class CpuTargetExamples : public loom::testing::ExampleTest {};

TEST_P(CpuTargetExamples, MatchTheInterpreter) {
  const std::string& name = GetParam();
  KernelFile f = loom::testing::example(name);
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  for (auto& params : loom::testing::example_sizes(f, t, {0, 1, 19, 70}, 3)) {
    std::string size = std::to_string(params.begin()->second);
    EXPECT_EQ(cpu_vs_interpreter(f.kernel, f.kernel, params), "") << name << " untransformed, size " << size;
    EXPECT_EQ(cpu_vs_interpreter(f.kernel, t, params), "") << name << " transformed, size " << size;
    EXPECT_EQ(cpu_vs_interpreter(f.kernel, t, params, 1), "") << name << " one thread, size " << size;
  }
}
LOOM_EVERY_EXAMPLE(CpuTargetExamples);

TEST(CpuTarget, LocalMemoryAndABarrierBetweenWriteAndReadPhases) {
  LoopKernel k = parse_kernel_text(kReverse).kernel;
  KernelFile f = parse_kernel_text(kReverse);
  k = apply_transforms(f.kernel, f.transforms);
  std::map<std::string, int64_t> params{{"nb", 5}};
  auto arrays = make_host_arrays(k, params, 4);
  HostArray a = arrays.at("a");
  cpu::CpuKernel(k).call(args_of(k, arrays, params));
  for (int64_t g = 0; g < 5; ++g)
    for (int64_t t = 0; t < 64; ++t)  // thread t reads what thread 63 - t wrote
      EXPECT_FLOAT_EQ(float(arrays.at("out").get(64 * g + t)), float(2 * a.get(64 * g + 63 - t) + 2 * a.get(64 * g + t)));
}

TEST(CpuTarget, AMissingBarrierGivesWrongResultsAsOnTheGpu) {
  std::string text = kReverse;
  text.replace(text.find("  ... lbarrier                      {id=bar, dep=w}\n"), std::string("  ... lbarrier                      {id=bar, dep=w}\n").size(), "");
  text.replace(text.find("dep=bar"), 7, "dep=w");
  KernelFile f = parse_kernel_text(text);
  LoopKernel unsynced = apply_transforms(f.kernel, f.transforms);
  // Loom places the barrier itself: the same results as the kernel with the written barrier
  KernelFile written = parse_kernel_text(kReverse);
  EXPECT_EQ(cpu_vs_interpreter(apply_transforms(written.kernel, written.transforms), unsynced, {{"nb", 2}}), "");
  // ... unless told that no synchronization is wanted; then it runs as a GPU would
  LoopKernel k = add_nosync(unsynced, "id:w", "id:r");
  std::map<std::string, int64_t> params{{"nb", 2}};
  auto arrays = make_host_arrays(k, params, 4);
  HostArray a = arrays.at("a");
  cpu::CpuKernel(k).call(args_of(k, arrays, params));
  int64_t wrong = 0;
  for (int64_t t = 0; t < 64; ++t)
    wrong += float(arrays.at("out").get(t)) != float(2 * a.get(63 - t) + 2 * a.get(t));
  EXPECT_GT(wrong, 0);  // thread t < 32 reads tile[63 - t] before thread 63 - t wrote it
}

TEST(CpuTarget, BarriersThatNotEveryThreadReachesAreRefused) {
  auto refused = [](const LoopKernel& k) {
    try {
      cpu::CpuKernel c(k);
    } catch (const KernelError& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  // a condition on the barrier
  LoopKernel k = make_kernel({"{[t]: 0 <= t < 32}"}, "x[t] = 1 {id=w}\n... lbarrier {id=b, dep=w, if=t < 16}\ny[t] = x[31 - t] {dep=b}",
                             {"x: float32[32], y: float32[32]"});
  EXPECT_NE(refused(tag_inames(k, "t:l.0")).find("has a condition"), std::string::npos);
  // a barrier within a thread iname: reached once per iteration of each thread
  LoopKernel within = make_kernel({"{[t]: 0 <= t < 32}"}, "x[t] = 1 {id=w}\n... lbarrier {id=b, dep=w, inames=t}\ny[t] = x[31 - t] {dep=b}",
                                  {"x: float32[32], y: float32[32]"});
  EXPECT_NE(refused(tag_inames(within, "t:l.0")).find("runs within thread iname 't'"), std::string::npos);
  // a loop around a barrier whose range depends on a thread iname runs over
  // the projection (the same for every thread): accepted
  LoopKernel loop = make_kernel({"{[t]: 0 <= t < 32}", "{[q]: 0 <= q < t}"},
                                "x[t] = 1 {id=w}\n... lbarrier {id=b, dep=w, inames=q}\ny[t] = x[31 - t] {dep=b}",
                                {"x: float32[32], y: float32[32]"});
  EXPECT_EQ(refused(tag_inames(loop, "t:l.0")), "compiled");
}

TEST(CpuTarget, DtypesCastsAndMathAgreeWithTheInterpreter) {
  LoopKernel k = make_kernel(
      {"{[i]: 0 <= i < n}"},
      "o8[i] = i8[i] * 3 - 7\n"
      "o16[i] = (i16[i] // 4) % 5\n"
      "o64[i] = i64[i] * 1000003 + (i - 11) // 3 + (i - 11) % 4\n"
      "ou[i] = u32[i] // 3 + u32[i] % 7\n"
      "of[i] = sqrt(abs(f32[i])) + exp(f32[i]) * tanh(f32[i]) + max(f32[i], 0.25) + float32(i8[i]) / 3\n"
      "od[i] = log1p(abs(f64[i])) + pow(f64[i], 2.0) + floor(f64[i] * 10) / 10 + fma(f64[i], 2.0, 1.0) + float64(o64[i] % 3)\n"
      "ob[i] = f32[i] > 0 and i8[i] < 0\n"
      "oi[i] = if_then_else(f32[i] > 0, int32(f32[i] * 100), -int32(-f64[i] * 100))",
      {"i8: int8[n], i16: int16[n], i64: int64[n], u32: uint32[n], f32: float32[n], f64: float64[n]",
       "o8: int8[n], o16: int16[n], o64: int64[n], ou: uint32[n], of: float32[n], od: float64[n], ob: bool[n], oi: int32[n]", "..."});
  for (int64_t n : {1, 33}) {
    EXPECT_EQ(cpu_vs_interpreter(k, k, {{"n", n}}), "") << n;
    EXPECT_EQ(cpu_vs_interpreter(k, tag_inames(split_iname(k, "i", 8), "i_outer:g.0, i_inner:l.0"), {{"n", n}}), "") << n;
  }
}

TEST(CpuTarget, HalfPrecisionArithmetic) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"},
                             "h[i] = sum(j, x[i, j] * 0.5 + x[i, j])\nb[i] = max(j, y[i, j] * y[i, j])\nf[i] = float32(h[i]) + float32(b[i])",
                             {"x: float16[n, 8], y: bfloat16[n, 8], h: float16[n], b: bfloat16[n], f: float32[n]", "..."});
  EXPECT_EQ(cpu_vs_interpreter(k, k, {{"n", 13}}), "");
  // and the conversions themselves: exact values, rounding, specials
  EXPECT_EQ(half_bits_to_float(float_to_half_bits(1.5f)), 1.5f);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);                  // overflow: inf
  EXPECT_EQ(half_bits_to_float(0x0001), 5.9604645e-08f);         // the smallest subnormal
  EXPECT_EQ(float_to_half_bits(1.0f + 1.0f / 2048), 0x3c00);     // a tie rounds to even
  EXPECT_EQ(bfloat16_bits_to_float(float_to_bfloat16_bits(3.140625f)), 3.140625f);
}

TEST(CpuTarget, SixteenBitConversionsFromEveryWidthAgreeWithTheInterpreter) {
  // float64 -> float16/bfloat16 goes through float32 on every CPU (as in the interpreter);
  // on CPUs without F16C/AVX512-BF16 each conversion is a libcall that Loom defines
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "h[i] = d[i] * 3.0000001\nb[i] = d[i] / 7\nhd[i] = float64(h[i]) + float64(b[i])\n"
                             "hb[i] = float16(b[i]) * bfloat16(x[i])",
                             {"d: float64[n], x: float32[n], h: float16[n], b: bfloat16[n], hd: float64[n], hb: float32[n]"});
  EXPECT_EQ(cpu_vs_interpreter(k, k, {{"n", 37}}), "");
}

// Float to integer conversions outside the integer type's range, and NaN:
// one meaning on every target (CUDA's cvt.rzi: toward zero, clamped, NaN to
// 0), where C++ and LLVM's plain conversions leave them undefined.
TEST(CpuTarget, FloatToIntegerConversionsSaturateAndNanIsZeroOnEveryTarget) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "u32[i] = f[i]\nu64[i] = d[i]\nu8[i] = f[i]\ni8[i] = d[i]\ni32[i] = f[i]\ni64[i] = d[i]\nu16[i] = h[i]",
                             {"f: float32[n], d: float64[n], h: float16[n]",
                              "u32: uint32[n], u64: uint64[n], u8: uint8[n], i8: int8[n], i32: int32[n], i64: int64[n], u16: uint16[n]"});
  const double nan = std::nan("");
  std::vector<double> in = {nan, -1e30, 1e30, -3.7, 3.7, 300.5, -0.5, 4e9, 1e19, -129, 127.9, 65535.5};
  int64_t n = int64_t(in.size());
  auto arrays = make_host_arrays(k, {{"n", n}}, 5);
  for (int64_t i = 0; i < n; ++i)
    for (const char* a : {"f", "d", "h"}) arrays.at(a).set(i, in[size_t(i)]);
  auto cpu = arrays;
  interpret(generate(k), args_of(k, arrays, {{"n", n}}));
  cpu::CpuKernel(k).call(args_of(k, cpu, {{"n", n}}));
  EXPECT_EQ(loom::testing::compare_written(k, arrays, cpu), "");
  auto u32 = [&](int64_t i) { return uint32_t(cpu.at("u32").get(i)); };
  auto i64 = [&](int64_t i) { int64_t v; std::memcpy(&v, cpu.at("i64").bytes.data() + 8 * i, 8); return v; };
  auto u64 = [&](int64_t i) { uint64_t v; std::memcpy(&v, cpu.at("u64").bytes.data() + 8 * i, 8); return v; };
  EXPECT_EQ(u32(0), 0u);             // NaN
  EXPECT_EQ(u32(1), 0u);             // negative: 0, not 2^32 - something
  EXPECT_EQ(u32(2), 4294967295u);    // beyond: the largest value
  EXPECT_EQ(u32(3), 0u);
  EXPECT_EQ(u32(4), 3u);             // toward zero
  EXPECT_EQ(u32(7), 4000000000u);
  EXPECT_EQ(u64(8), 10000000000000000000ull);
  EXPECT_EQ(u64(2), UINT64_MAX);
  EXPECT_EQ(i64(1), INT64_MIN);
  EXPECT_EQ(i64(2), INT64_MAX);
  EXPECT_EQ(i64(0), 0);
  EXPECT_EQ(cpu.at("u8").get(5), 255);
  EXPECT_EQ(cpu.at("i8").get(9), -128);
  EXPECT_EQ(cpu.at("i8").get(10), 127);
  EXPECT_EQ(cpu.at("i32").get(3), -3);
  EXPECT_EQ(cpu.at("i32").get(7), 2147483647);
  EXPECT_EQ(cpu.at("u16").get(11), 65535);  // 65535.5 is infinity in float16: the largest value
}

// A sum of bools counts (NumPy: an integer), never adds in 1-bit arithmetic.
TEST(CpuTarget, SumsOfBoolsCountAsNumPysDo) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "c[0] = sum(i, a[i])\np[0] = product(i, a[i])",
                             {"a: bool[n], c: int32[1], p: int32[1]"});
  auto arrays = make_host_arrays(k, {{"n", 8}}, 5);
  for (int64_t i = 0; i < 8; ++i) arrays.at("a").set(i, 1);
  auto cpu = arrays;
  interpret(generate(k), args_of(k, arrays, {{"n", 8}}));
  cpu::CpuKernel(k).call(args_of(k, cpu, {{"n", 8}}));
  for (auto* r : {&arrays, &cpu}) {
    EXPECT_EQ(r->at("c").get(0), 8);
    EXPECT_EQ(r->at("p").get(0), 1);
  }
  EXPECT_EQ(cpu_vs_interpreter(k, k, {{"n", 1001}}), "");
}

TEST(CpuTarget, TheTargetCpuIsTheOneLoomCpuPins) {
  const char* pinned = std::getenv("LOOM_CPU");
  std::string cpu = cpu::target_cpu();
  EXPECT_FALSE(cpu.empty());
  if (pinned && *pinned && std::string(pinned) != "host") EXPECT_EQ(cpu, pinned);
  // the helpers LLVM's backend may call, all defined by Loom
  auto helpers = cpu::runtime_helpers();
  for (const char* h : {"__truncsfbf2", "__truncdfbf2", "__extendhfsf2", "__truncsfhf2", "__truncdfhf2", "__divti3", "__udivti3"})
    EXPECT_NE(std::find(helpers.begin(), helpers.end(), h), helpers.end()) << h;
}

TEST(CpuTarget, GuardsShortCircuitSoNoAccessGoesOutOfBounds) {
  // a[i + 1] is only read where i + 1 < n; evaluating both sides would read past the end
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "out[i] = if_then_else(i < n - 1, a[i + 1], 0.0)\nflag[i] = i < n - 1 and a[i + 1] > 0",
                             {"a: float32[n], out: float32[n], flag: bool[n]"});
  EXPECT_EQ(cpu_vs_interpreter(k, k, {{"n", 17}}), "");
}

TEST(CpuTarget, CompiledCodeIsCachedByContent) {
  KernelFile f = loom::testing::example("vector_add");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  cpu::CpuKernel a(t);
  cpu::CpuKernel b(t);
  EXPECT_TRUE(b.stats().cached);
  EXPECT_NE(a.ir().find("define"), std::string::npos);
}

TEST(CpuOracle, SplitWithAndWithoutTailsAndTaggedExamples) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = a[i, j] * 2 + b[j]", {"..."});
  for (int64_t f : {1, 3, 4, 16}) {
    LoopKernel s = split_iname(k, "i", f);
    EXPECT_SAME_RESULTS(k, s, {{"n", 16}, {"m", 5}});  // no tail when f divides 16
    EXPECT_SAME_RESULTS(k, s, {{"n", 13}, {"m", 5}});  // a tail otherwise
    LoopKernel g = tag_inames(split_iname(s, "j", 4), "i_outer:g.1, i_inner:l.1, j_outer:g.0, j_inner:l.0");
    EXPECT_SAME_RESULTS(k, g, {{"n", 13}, {"m", 7}});
  }
}

// A GPU schedule's unrolled and ILP loops stay loops on the CPU target, and
// LLVM is told not to unroll them (issue 51: sgemm_any's unrolled register
// tiles made one straight-line function that took 21 s to compile; 0.24 s
// with its loops kept): the CPU's loop nest holds a loop over the unr and the
// ilp inames where CUDA's holds copies, with the same results.
TEST(CpuTarget, UnrolledAndIlpLoopsStayLoops) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"}, "out[i, j] = 2 * a[i, j]", {"a: float32[n, 8], out: float32[n, 8], n: int32"}, "twice");
  LoopKernel t = tag_inames(split_iname(k, "i", 4), "i_inner:ilp, j:unr");
  auto loops_over = [](const GeneratedKernel& g) {
    std::set<std::string> vars;
    std::function<void(const StmtPtr&)> walk = [&](const StmtPtr& s) {
      if (s->kind == Stmt::For) vars.insert(s->var);
      for (auto& c : s->children) walk(c);
    };
    walk(g.body);
    return vars;
  };
  std::set<std::string> cpu = loops_over(generate(t, TargetInfo::cpu(""))), gpu = loops_over(generate(t));
  EXPECT_TRUE(cpu.count("j") && cpu.count("i_inner")) << "CPU loops: " << cpu.size();
  EXPECT_FALSE(gpu.count("j") || gpu.count("i_inner"));
  cpu::CpuKernel compiled(t);
  EXPECT_NE(compiled.ir().find("llvm.loop.unroll.disable"), std::string::npos);
  EXPECT_SAME_RESULTS(k, t, {{"n", 13}});
}

#else
TEST(CpuTarget, NotBuilt) { GTEST_SKIP() << "built without LLVM (LOOM_WITH_LLVM=OFF)"; }
#endif

// Many loops (600 unrolled copies of a reduction loop, over 1024 basic
// blocks) are compiled without LLVM's loop optimizations, whose cost grows
// faster than the code (8 s for this kernel at O3; a 4096-copy one from the
// random-schedule test, LOOM_RANDOM_SEED=62, ran for minutes). The result
// must still be right. (The CPU target now keeps an unr loop a loop: the
// copies are made by generating for CUDA, whose loop nest the CPU target
// compiles as given.)
TEST(CpuTarget, KernelsWithManyLoopsCompileUnoptimizedAndRight) {
  KernelFile f = parse_kernel_text(R"(kernel many
domains:
  {[i, j]: 0 <= i < 600 and 0 <= j < n}
arguments:
  a: float32[600, n], out: float32[600]
instructions:
  out[i] = sum(j, a[i, j] * a[i, j])
)");
  LoopKernel unrolled = tag_inames(f.kernel, "i:unr");
  for (int64_t n : {0, 1, 5}) EXPECT_SAME_RESULTS(f.kernel, unrolled, {{"n", n}});
#ifdef LOOM_HAS_CPU_TARGET
  cpu::CpuKernel copies(generate(unrolled));  // (600 copies: compiled unoptimized)
  std::vector<float> a(600 * 5, 1.5f), out(600, -1.0f);
  copies.call({{"a", ArgValue::of(ArrayRef{a.data(), types::float32, {600, 5}})}, {"out", ArgValue::of(ArrayRef{out.data(), types::float32, {600}})}});
  EXPECT_FLOAT_EQ(out[599], 5 * 1.5f * 1.5f);
#endif
}
