// Atomic updates ({atomic}, loopy's AtomicUpdate): histograms and sums into
// global memory from many threads and blocks, checked against the reference
// interpreter on the CPU target (blocks on several worker threads); the
// forms Loom refuses, and the write without {atomic} refused with the
// declaration that makes it legal.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "loom/transforms.h"
#include "transform_check.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

using namespace loom;
using loom::testing::error_of;

namespace {

LoopKernel histogram(const std::string& options) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "hist[bins[i]] = hist[bins[i]] + 1 {id=count" + options + "}",
                             {"hist: int32[m]", "bins: int32[n]"}, "histogram");
  return split_iname(k, "i", 128, SplitOptions{.outer_tag = InameTag::parse("g.0"), .inner_tag = InameTag::parse("l.0")});
}

}  // namespace

TEST(Atomics, TheKernelLanguageAndJsonCarryTheFlag) {
  LoopKernel k = histogram(", atomic");
  EXPECT_TRUE(k.instruction("count").atomic);
  EXPECT_NE(k.instruction("count").str().find("atomic"), std::string::npos);
  std::string cuda = cuda::print_source(generate(k));
  // (hist[bins[i]] cannot be proven in bounds: the access is checked at run time)
  EXPECT_NE(cuda.find("atomicAdd(&((*loom_checked(hist, bins["), std::string::npos) << cuda;
  cuda = cuda::print_source(generate(trust_unproven_accesses(k)));
  EXPECT_NE(cuda.find("atomicAdd(&(hist[bins["), std::string::npos) << cuda;
}

TEST(Atomics, WithoutTheFlagTheWriteIsRefusedNamingIt) {
  std::string e = error_of([] { generate(histogram("")); });
  EXPECT_NE(e.find("which Loom cannot analyse, on parallel inames"), std::string::npos) << e;
  EXPECT_NE(e.find("{atomic}"), std::string::npos) << e;
}

TEST(Atomics, FormsThatAreNotAnAtomicAddAreRefused) {
  auto refused = [](const std::string& insn, const std::vector<std::string>& args) {
    return error_of([&] { generate(make_kernel({"{[i]: 0 <= i < n}"}, insn, args)); });
  };
  EXPECT_NE(refused("out[0] = 2 * out[0] {atomic}", {"out: float32[1]", "..."}).find("must have the form out[...] = out[...] + value"),
            std::string::npos);
  EXPECT_NE(refused("out[0] = out[1] + a[i] {atomic}", {"out: float32[2]", "a: float32[n]"}).find("must have the form"),
            std::string::npos);
  EXPECT_NE(refused("out[0] = out[0] + a[i] {atomic}", {"out: float16[1]", "a: float16[n]"}).find("atomic adds take float32"),
            std::string::npos);
  EXPECT_NE(refused("<float32> t = t + a[i] {atomic}", {"a: float32[n]"}).find("global array argument"), std::string::npos);
}

#ifdef LOOM_HAS_CPU_TARGET
TEST(CpuAtomics, HistogramAndSumMatchTheReference) {
  LoopKernel hist = histogram(", atomic");
  LoopKernel sum = make_kernel({"{[i]: 0 <= i < n}"}, "total[0] = total[0] + a[i] {id=add, atomic}", {"total: float64[1]", "a: float64[n]"});
  sum = split_iname(sum, "i", 64, SplitOptions{.outer_tag = InameTag::parse("g.0"), .inner_tag = InameTag::parse("l.0")});
  for (const LoopKernel* k : {&hist, &sum}) {
    cpu::CpuKernel ck(*k);
    for (int64_t n : {1, 129, 100003}) {
      std::map<std::string, int64_t> params{{"n", n}, {"m", 17}};
      auto arrays = make_host_arrays(*k, params, 9);
      auto reference = arrays;
      ArgMap got, want;
      for (auto& [name, a] : arrays) got[name] = ArgValue::of(a.ref());
      for (auto& [name, a] : reference) want[name] = ArgValue::of(a.ref());
      ck.call(got, 4);  // blocks on four worker threads meet on the same elements
      interpret(generate(*k), want);
      for (auto& a : k->arguments)
        if (k->is_written(a.name)) {
          Comparison c = compare(reference.at(a.name), arrays.at(a.name), 1e-9, 1e-9);
          EXPECT_TRUE(c.ok) << k->name << " n=" << n << " " << a.name << ": " << c.str();
        }
    }
  }
}
#endif
