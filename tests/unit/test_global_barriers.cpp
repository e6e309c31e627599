// Global barriers (`... gbarrier`) and global temporaries: a kernel runs as
// launches in order. The CPU oracle against a one-launch kernel computing
// the same (a whole-array sum reduced across blocks, a two-pass
// normalization), the CUDA C (one function per launch, compiled by NVRTC),
// the JSON and kernel-text round trips, and the refusals.
#include <gtest/gtest.h>

#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }

const char* kTwoStageSum = R"(kernel sum2
domains:
  {[b, t]: b >= 0 and 0 <= t < 64 and 64 * b + t < n}
  {[s]: 0 <= 64 * s < n}
arguments:
  a: float32[n], total: float32[1], n: int32
temporaries:
  partial: float32[(n + 63) // 64] global
instructions:
  partial[b] = sum(t, a[64 * b + t])  {id=blocks}
  ... gbarrier  {id=gb}
  total[0] = sum(s, partial[s])  {id=final}
)";

}  // namespace

TEST(GlobalBarriers, ASumAcrossBlocksMatchesOneLaunch) {
  LoopKernel plain = make_kernel({"{[i]: 0 <= i < n}"}, "total[0] = sum(i, a[i])", {"a: float32[n], total: float32[1], n: int32"}, "sum2");
  LoopKernel k = kernel_of(kTwoStageSum);
  GeneratedKernel g = generate(k);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(g.launches[0].kernel.name, "sum2");
  EXPECT_EQ(g.launches[1].kernel.name, "sum2_1");
  ASSERT_EQ(g.global_temporaries.size(), 1u);
  EXPECT_EQ(g.global_temporaries[0].name, "partial");
  std::vector<std::map<std::string, int64_t>> sizes{{{"n", 1}}, {{"n", 63}}, {{"n", 64}}, {{"n", 65}}, {{"n", 5000}}, {{"n", 0}}};
  check_transformed(plain, k, sizes);
  // on the GPU's axes: blocks reduce in parallel, then one block of threads reduces the partial sums
  LoopKernel t = apply_transforms(k, parse_transform_script("tag_inames b:g.0 t:l.0\nsplit_iname s 32 inner_tag=l.0\n"));
  check_transformed(plain, t, sizes);
  std::string src = cuda::print_source(generate(t));
  EXPECT_NE(src.find("__global__ void __launch_bounds__(64) sum2("), std::string::npos) << src;
  EXPECT_NE(src.find("__global__ void __launch_bounds__(32) sum2_1("), std::string::npos) << src;
  EXPECT_NE(src.find("float *__restrict__ partial"), std::string::npos) << src;  // the first launch writes it
  EXPECT_NE(src.find("float const *__restrict__ partial"), std::string::npos) << src;  // the second reads it
}

TEST(GlobalBarriers, ThreeLaunchesAndAnInPlaceUpdate) {
  // normalize by the maximum: max across blocks, then every element divided by it
  LoopKernel k = kernel_of(R"(kernel normalize
domains:
  {[b, t]: b >= 0 and 0 <= t < 32 and 32 * b + t < n}
  {[s]: 0 <= 32 * s < n}
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n], n: int32
temporaries:
  part: float32[(n + 31) // 32] global
  top: float32[1] global
instructions:
  part[b] = max(t, abs(a[32 * b + t]))  {id=blocks}
  ... gbarrier  {id=g1}
  top[0] = max(s, part[s])  {id=one}
  ... gbarrier  {id=g2}
  out[i] = a[i] / top[0]  {id=scale}
transforms:
  tag_inames b:g.0 t:l.0
  split_iname i 128 outer_tag=g.0 inner_tag=l.0
)");
  LoopKernel plain = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j < n}"}, "<float32> m = max(j, abs(a[j]))  {id=m}\nout[i] = a[i] / m  {dep=m}",
                                 {"a: float32[n], out: float32[n], n: int32"}, "normalize");
  EXPECT_EQ(generate(k).launches.size(), 3u);
  check_transformed(plain, k, {{{"n", 1}}, {{"n", 33}}, {{"n", 1000}}});
}

TEST(GlobalBarriers, BarriersFirstLastOrTwiceMakeNoEmptyLaunch) {
  std::string text = kTwoStageSum;
  // a global barrier at the end, one at the start, and a second one right after the first
  std::string trailing = text + "  ... gbarrier  {id=gb_end}\n";
  std::string leading = text;
  leading.replace(leading.find("  partial[b] ="), 0, "  ... gbarrier  {id=gb_start}\n");
  std::string doubled = text;
  doubled.replace(doubled.find("  total[0] ="), 0, "  ... gbarrier  {id=gb_again}\n");
  LoopKernel plain = make_kernel({"{[i]: 0 <= i < n}"}, "total[0] = sum(i, a[i])", {"a: float32[n], total: float32[1], n: int32"}, "sum2");
  for (auto& t : {trailing, leading, doubled}) {
    GeneratedKernel g = generate(kernel_of(t));
    ASSERT_EQ(g.launches.size(), 2u) << t;
    EXPECT_EQ(g.launches[0].kernel.name, "sum2");
    EXPECT_EQ(g.launches[1].kernel.name, "sum2_1");
    for (auto& l : g.launches) EXPECT_FALSE(l.kernel.instructions.empty());
    check_transformed(plain, kernel_of(t), {{{"n", 65}}, {{"n", 0}}});
  }
}

TEST(GlobalBarriers, RoundTrips) {
  LoopKernel k = kernel_of(kTwoStageSum);
  EXPECT_NE(k.str().find("... gbarrier"), std::string::npos) << k.str();
  EXPECT_NE(k.str().find("partial: float32[(n + 63) // 64] (global)"), std::string::npos) << k.str();
  LoopKernel back = kernel_from_json(kernel_to_json(k));
  EXPECT_EQ(back.str(), k.str());
  EXPECT_EQ(generate(back).launches.size(), 2u);
}

TEST(GlobalBarriers, Refusals) {
  auto refused = [](const std::string& text, const std::string& part) {
    std::string e = error_of([&] { generate(kernel_of(text)); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  refused(R"(kernel inloop
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
instructions:
  for i
    a[i] = a[i] + 1
    ... gbarrier
  end
)",
          "stands inside the loops of 'i'; a global barrier ends a launch");
  refused(R"(kernel crossing
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  <float32> t = 2  {id=set}
  ... gbarrier
  out[i] = a[i] * t  {id=use}
)",
          "temporary 't' (private) is written before a global barrier and read after it by 'use'");
  refused(R"(kernel backwards
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]  {id=first, dep=second}
  ... gbarrier
  a[i] = 1  {id=second}
)",
          "instruction 'first' depends on 'second', which comes after a global barrier");
  // found by the GPU random schedules: the global temporary made a rule, whose body reads a private
  // prefetch of the first launch in the second (it computed wrong sums before the rule was expanded first)
  std::string e = error_of([] {
    generate(apply_transforms(kernel_of(kTwoStageSum), parse_transform_script("add_prefetch a t temporary_address_space=private default_tag=for\n"
                                                                              "assignment_to_subst partial\n")));
  });
  EXPECT_NE(e.find("temporary 'a_fetch' (private) is written before a global barrier and read after it by 'final'"), std::string::npos) << e;
}

// CSR row sums as loopy users write them (a data-dependent loop per row),
// the reference of the examples that balance the rows' work.
static LoopKernel csr_row_sums_as_written(const std::string& name) {
  return make_kernel({"{[i]: 0 <= i < n}", "{[jj]: 0 <= jj < row_len}"},
                     "<int32> row_start = ptr[i]\n<int32> row_len = ptr[i + 1] - row_start\nout[i] = sum(jj, vals[row_start + jj])",
                     {"ptr: int32[n + 1], vals: float32[nnz], out: float32[n]"}, name);
}

// A later launch whose loops are bounded by values it reads from memory
// (CSR rows, examples/csr_row_sums_balanced.loom): each launch keeps only
// the domains of its own loops, so the first launch is not asked where the
// second's bounds are written; the two launches sum each row as one warp per
// row does, at sizes with whole chunks between a row's ends, rows inside
// one chunk, no values at all, and a partial last chunk.
TEST(GlobalBarriers, ALaterLaunchMayBeBoundedByValuesItReadsFromMemory) {
  LoopKernel plain = csr_row_sums_as_written("csr_row_sums_balanced");
  KernelFile f = loom::testing::example("csr_row_sums_balanced");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  GeneratedKernel g = generate(t);
  ASSERT_EQ(g.launches.size(), 2u);
  for (auto& d : g.launches[0].kernel.domains)
    for (auto& n : d.inames()) EXPECT_TRUE(n[0] == 'c' || n[0] == 'u' || n[0] == 'q' || n[0] == 'v') << n;
  check_transformed(plain, t, {{{"n", 20}, {"nnz", 60000}}, {{"n", 301}, {"nnz", 6000}}, {{"n", 3}, {"nnz", 255}}, {{"n", 5}, {"nnz", 0}},
                               {{"n", 1}, {"nnz", 70000}}});
  check_transformed(plain, f.kernel, {{{"n", 20}, {"nnz", 60000}}});
}

// examples/csr_row_sums_flagged.loom: two launches flag the chunks that a
// row starts strictly inside (a write through ptr's values), the chunk
// launch sums only the others, each chunk's warp reducing under a
// condition it reads from memory (split[c] == 0: the same on all its lanes,
// so the shuffles stay under it, and the rows past the last chunk read no
// flag), and the rows add what they were not given. The sizes hold rows
// longer than many chunks, rows inside one, rows starting on a chunk's
// first value, no values, and a partial last chunk.
TEST(GlobalBarriers, ChunksInsideOneRowAreSummedUnderTheirFlag) {
  LoopKernel plain = csr_row_sums_as_written("csr_row_sums_flagged");
  KernelFile f = loom::testing::example("csr_row_sums_flagged");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  GeneratedKernel g = generate(t);
  ASSERT_EQ(g.launches.size(), 4u);
  std::string src = cuda::print_source(g);
  size_t chunk = src.find("csr_row_sums_flagged_2(");
  ASSERT_NE(chunk, std::string::npos);
  std::string body = src.substr(chunk, src.find("extern \"C\"", chunk) - chunk);
  size_t flag = body.find("if (split[8 * c_outer + c_inner] == 0)"), sum = body.find("= loom_warp_sum(");
  EXPECT_TRUE(flag != std::string::npos && sum != std::string::npos && flag < sum) << body;
  EXPECT_EQ(body.find("c_inner_red"), std::string::npos) << "the warp's rows keep their own domain: " << body;
  check_transformed(plain, t, {{{"n", 20}, {"nnz", 60000}}, {{"n", 301}, {"nnz", 6000}}, {{"n", 3}, {"nnz", 255}}, {{"n", 5}, {"nnz", 0}},
                               {{"n", 1}, {"nnz", 70000}}, {{"n", 2}, {"nnz", 1024}}, {{"n", 40}, {"nnz", 20000}}});
}
