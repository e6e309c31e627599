// compile_variants: many variants generated (and compiled) in worker
// processes give what generating them one by one gives, in order; an
// illegal variant reports its reason and a crashing worker loses only its
// own unfinished variants.
#include <gtest/gtest.h>
#include <thread>
#include <chrono>

#include <csignal>
#include <random>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/variants.h"
#include "oracle.h"

using namespace loom;

namespace {

LoopKernel sgemm() {
  return parse_kernel_text("kernel mm\ndomains:\n  {[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}\narguments:\n"
                           "  a: float32[n, l], b: float32[l, m], c: float32[n, m]\ninstructions:\n  c[i, j] = sum(k, a[i, k] * b[k, j])\n")
      .kernel;
}

// A tiled SGEMM schedule of random tile sizes (some illegal: too many threads).
std::vector<std::vector<TransformStep>> random_scripts(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<TransformStep>> out;
  for (int v = 0; v < count; ++v) {
    int bi = 1 << (2 + rng() % 5), bj = 1 << (2 + rng() % 5), bk = 1 << (1 + rng() % 4);
    std::string s = "split_iname i " + std::to_string(bi) + " outer_tag=g.1 inner_tag=l.1\nsplit_iname j " + std::to_string(bj) +
                    " outer_tag=g.0 inner_tag=l.0\nsplit_iname k " + std::to_string(bk) + "\n";
    if (rng() % 2) s += "add_prefetch a i_inner,k_inner\nadd_prefetch b k_inner,j_inner\n";
    out.push_back(parse_transform_script(s, "variant " + std::to_string(v)));
  }
  // and one block of 64 x 64 threads: refused
  out.push_back(parse_transform_script("split_iname i 64 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 64 outer_tag=g.0 inner_tag=l.0\n"));
  return out;
}

}  // namespace

TEST(Variants, WorkersGiveWhatOneByOneGivesInOrder) {
  auto scripts = random_scripts(24, 7);
  VariantOptions one, many;
  one.workers = 1;
  many.workers = 3;
  one.compile = many.compile = false;
  auto a = compile_variants(sgemm(), scripts, one), b = compile_variants(sgemm(), scripts, many);
  ASSERT_EQ(a.size(), scripts.size());
  ASSERT_EQ(b.size(), scripts.size());
  int ok = 0, refused = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].ok, b[i].ok) << i;
    EXPECT_EQ(a[i].cuda, b[i].cuda) << i;
    EXPECT_EQ(a[i].error, b[i].error) << i;
    EXPECT_EQ(a[i].hash, b[i].hash) << i;
    if (b[i].ok) {
      ++ok;
      // what generating it here gives
      EXPECT_EQ(b[i].cuda, cuda::print_source(generate(apply_transforms(sgemm(), scripts[i])))) << i;
    } else {
      ++refused;
      EXPECT_NE(b[i].error.find("threads"), std::string::npos) << b[i].error;  // the only illegal ones: blocks too large
    }
  }
  EXPECT_GT(ok, 5);
  EXPECT_GT(refused, 0);
}

TEST(Variants, ACrashingWorkerLosesOnlyTheVariantItWasOn) {
  VariantOptions o;
  o.workers = 2;
  o.compile = false;
  auto r = compile_variants(6, [](size_t i) -> LoopKernel {
    if (i == 2) std::raise(SIGSEGV);  // the worker that takes variant 2 dies there
    return apply_transforms(sgemm(), parse_transform_script("split_iname i " + std::to_string(4 << i) + "\n"));
  }, o);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_FALSE(r[2].ok);
  // (under AddressSanitizer its handler reports the SIGSEGV and aborts: signal 6)
  EXPECT_NE(r[2].error.find(loom::testing::kSanitized ? "died (signal 6)" : "died (signal 11)"), std::string::npos) << r[2].error;
  for (size_t i : {0, 1, 3, 4, 5}) EXPECT_TRUE(r[i].ok) << i << ": " << r[i].error;  // the other worker took the rest
  // one worker: its crash too stays in its process
  o.workers = 1;
  auto one = compile_variants(3, [](size_t i) -> LoopKernel {
    if (i == 1) std::abort();
    return sgemm();
  }, o);
  EXPECT_TRUE(one[0].ok);
  EXPECT_NE(one[1].error.find("died (signal 6)"), std::string::npos) << one[1].error;
  EXPECT_FALSE(one[2].ok);  // (the only worker was gone)
}

TEST(Variants, AVariantPastItsTimeIsStoppedAndTheOthersGoOn) {
  VariantOptions o;
  o.workers = 2;
  o.compile = false;
  o.seconds_per_variant = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = compile_variants(6, [](size_t i) -> LoopKernel {
    if (i == 1) std::this_thread::sleep_for(std::chrono::seconds(30));  // (NVRTC over a huge unrolled tile, say)
    return apply_transforms(sgemm(), parse_transform_script("split_iname i " + std::to_string(4 << i) + "\n"));
  }, o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_FALSE(r[1].ok);
  EXPECT_TRUE(r[1].stopped);
  EXPECT_NE(r[1].error.find("took longer than 0.5 s: stopped"), std::string::npos) << r[1].error;
  for (size_t i : {0, 2, 3, 4, 5}) EXPECT_TRUE(r[i].ok) << i << ": " << r[i].error;  // the other worker took the rest
}

TEST(Variants, CompiledWithNvrtcInTheWorkers) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no NVRTC";
  auto scripts = random_scripts(6, 3);
  VariantOptions o;
  o.workers = 2;
  o.arch = "sm_90";
  auto r = compile_variants(sgemm(), scripts, o);
  for (auto& v : r)
    if (v.ok) {
      EXPECT_GT(v.cubin.size(), 1000u);
      EXPECT_EQ(v.cubin.substr(1, 3), "ELF");
    }
}
