// Test oracle: runs a reference kernel and a transformed one on the same
// random inputs (outputs poisoned first, so an element the transformed
// kernel leaves unwritten fails) on the CPU target (the LLVM JIT; the
// reference interpreter where Loom is built without LLVM), and compares every
// written array with a tolerance chosen by dtype.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "loom/codegen.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif
#include "loom/parser.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "loom/transforms.h"

namespace loom::testing {

// Whether the suite runs under AddressSanitizer (make test-asan): the
// suites that repeat one check many times (random schedules, mutants,
// every example at its default sizes) then do a quarter of the work, so the
// sanitized suite stays runnable (it took 44 minutes on two cores); every
// kernel and transformation still passes through the instrumented code.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
// n, or a quarter of it (at least 1) under the sanitizers.
inline int scaled(int n) { return kSanitized ? std::max(1, n / 4) : n; }

inline std::string source_dir() {
  const char* d = std::getenv("LOOM_SOURCE_DIR");
#ifdef LOOM_SOURCE_DIR
  if (!d) d = LOOM_SOURCE_DIR;
#endif
  return d ? d : ".";
}

// Every kernel in examples/, by name (adding an example adds it to every suite).
inline std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(source_dir() + "/examples"))
    if (e.path().extension() == ".loom") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A test run once per example, each run a test of its own (so a sharded
// suite spreads the examples over its shards, and a failure names its
// example): `class CpuTargetExamples : public ExampleTest {};`, then
// TEST_P(CpuTargetExamples, ...) and LOOM_EVERY_EXAMPLE(CpuTargetExamples).
class ExampleTest : public ::testing::TestWithParam<std::string> {};
#define LOOM_EVERY_EXAMPLE(suite)                                                                    \
  INSTANTIATE_TEST_SUITE_P(, suite, ::testing::ValuesIn(::loom::testing::example_names()),           \
                           [](const ::testing::TestParamInfo<std::string>& i) { return i.param; })

// Each parameter at the smallest power of two (at most its value) the
// kernel's assumptions allow, the others as they are (a product's
// 256 x 512 x 320 becomes 128 x 256 x 64 for tiles of 128 x 256 x 64).
inline std::map<std::string, int64_t> smallest_allowed(const LoopKernel& k, std::map<std::string, int64_t> p) {
  for (auto& [name, v] : p)
    for (int64_t c = 1; c < v; c *= 2) {
      int64_t was = v;
      v = c;
      if (assumptions_hold(k, p)) break;
      v = was;
    }
  return p;
}

// Parameter sets for an example: each of `sizes` for every parameter (m
// gets size + m_offset), those the transformed kernel's assumptions allow,
// and the file's defaults (which must meet them; under the sanitizers each
// made as small as the assumptions allow).
inline std::vector<std::map<std::string, int64_t>> example_sizes(const KernelFile& f, const LoopKernel& transformed,
                                                                  const std::vector<int64_t>& sizes, int64_t m_offset = 0) {
  std::vector<std::map<std::string, int64_t>> out;
  for (int64_t size : sizes) {
    std::map<std::string, int64_t> p;
    for (auto& name : f.kernel.parameters()) p[name] = size + (name == "m" ? m_offset : 0);
    if (assumptions_hold(transformed, p)) out.push_back(p);
  }
  if (!f.defaults.empty()) out.push_back(kSanitized ? smallest_allowed(transformed, f.defaults) : f.defaults);
  return out;
}

inline KernelFile example(const std::string& name) { return parse_kernel_file(source_dir() + "/examples/" + name + ".loom"); }

// A kernel of the PolyBench port, as PolyBench writes it (examples/polybench).
inline LoopKernel polybench(const std::string& name) { return parse_kernel_file(source_dir() + "/examples/polybench/" + name + ".loom").kernel; }

// float16 and bfloat16 through arithmetic, math, casts both ways, comparisons
// and reductions (the CUDA printer's 16-bit paths).
inline LoopKernel half_precision_kernel() {
  return make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"},
                     "h[i] = max(j, x[i, j] * 0.5 + sqrt(abs(x[i, j])))\nb[i] = sum(j, y[i, j])\n"
                     "f[i] = float32(h[i]) + float32(b[i]) * 2\nc[i] = int32(h[i] * 4) + sum(j, int32(x[i, j] > 0.25))",
                     {"x: float16[n, m], y: bfloat16[n, m], h: float16[n], b: bfloat16[n], f: float32[n], c: int32[n]"},
                     "halves");
}

inline ArgMap args_of(const LoopKernel& k, std::map<std::string, HostArray>& arrays,
                      const std::map<std::string, int64_t>& params, double scalar = 1.5) {
  ArgMap args;
  for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
  for (auto& a : k.arguments)
    if (a.kind == Argument::Value && !args.count(a.name))
      args[a.name] = params.count(a.name) ? ArgValue::of_int(params.at(a.name)) : ArgValue::of_float(scalar);
  return args;
}

// Runs k on the oracle's target.
inline void run_on_host(const LoopKernel& k, const ArgMap& args) {
#ifdef LOOM_HAS_CPU_TARGET
  cpu::CpuKernel(k).call(args);
#else
  interpret(generate(k), args);
#endif
}

// "" when every array `reference` writes has the same values in `expected`
// and `actual` (within its dtype's tolerance), else a description.
inline std::string compare_written(const LoopKernel& reference, const std::map<std::string, HostArray>& expected,
                                   const std::map<std::string, HostArray>& actual) {
  std::string problems;
  int written = 0;
  for (auto& a : reference.arguments) {
    if (a.kind != Argument::Array || !reference.is_written(a.name)) continue;
    ++written;
    Comparison c = compare(expected.at(a.name), actual.at(a.name));
    if (!c.ok) problems += a.name + ": " + c.str() + "\n";
  }
  if (written == 0) problems = "the kernel writes no array: nothing to compare\n";
  return problems;
}

// Returns "" when every written array matches, else a description.
inline std::string compare_kernels(const LoopKernel& reference, const LoopKernel& transformed,
                                   const std::map<std::string, int64_t>& params, uint64_t seed = 7) {
  auto ref_arrays = make_host_arrays(reference, params, seed);
  auto out_arrays = ref_arrays;
  run_on_host(reference, args_of(reference, ref_arrays, params));
  run_on_host(transformed, args_of(transformed, out_arrays, params));
  return compare_written(reference, ref_arrays, out_arrays);
}

// The same comparison with both kernels in the reference interpreter (the
// transformed one as it generates for the interpreter's target model).
inline std::string interpreted_vs_reference(const LoopKernel& reference, const LoopKernel& transformed,
                                            const std::map<std::string, int64_t>& params, uint64_t seed = 3) {
  auto expected = make_host_arrays(reference, params, seed);
  auto actual = expected;
  interpret(generate(reference, TargetInfo::interpreter()), args_of(reference, expected, params));
  interpret(generate(transformed, TargetInfo::interpreter()), args_of(transformed, actual, params));
  return compare_written(reference, expected, actual);
}

#define EXPECT_SAME_RESULTS(ref, transformed, ...) \
  EXPECT_EQ(::loom::testing::compare_kernels((ref), (transformed), __VA_ARGS__), "")

}  // namespace loom::testing
