// Global barriers (`... gbarrier`) and global temporaries: a kernel runs as
// launches in order. The CPU oracle against a one-launch kernel computing
// the same (a whole-array sum reduced across blocks, a two-pass
// normalization), the CUDA C (one function per launch, compiled by NVRTC),
// the JSON and kernel-text round trips, and the refusals.
#include <gtest/gtest.h>

#include "loom/cuda.h"
#include "loom/interpreter.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }

// The kernel of text with its line BARRIER replaced by `line` ("" or a global barrier).
LoopKernel with_line(const std::string& text, const std::string& line) {
  std::string t = text;
  t.replace(t.find("BARRIER"), 7, line);
  return kernel_of(t);
}

// PolyBench's jacobi-1d as written, BARRIER between its two sweeps.
const char* const kJacobi1d = R"(kernel jacobi_1d
domains:
  {[t]: 0 <= t < tsteps}
  {[i1]: 1 <= i1 < n - 1}
  {[i2]: 1 <= i2 < n - 1}
arguments:
  tsteps: int32, n: int32, A: float64[n], B: float64[n]
instructions:
  for t
    for i1
      B[i1] = 0.33333 * (A[i1 - 1] + A[i1] + A[i1 + 1])  {id=b}
    end
BARRIER
    for i2
      A[i2] = 0.33333 * (B[i2 - 1] + B[i2] + B[i2 + 1])  {id=a}
    end
  end
)";

const char* const kBarrierLine = "    ... gbarrier  {id=gb}";

// text without the barrier (every loop sequential: the reference) and with
// it, transformed by script.
std::pair<LoopKernel, LoopKernel> plain_and_transformed(const std::string& text, const std::string& script) {
  return {with_line(text, ""), apply_transforms(with_line(text, kBarrierLine), parse_transform_script(script))};
}

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
    std::string e = error_of([&] {
      KernelFile f = parse_kernel_text(text);
      generate(apply_transforms(f.kernel, f.transforms));
    });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  refused(R"(kernel unrolled
domains:
  {[t]: 0 <= t < 4}
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
instructions:
  for t
    for i
      a[i] = a[i] + 1  {id=add}
    end
    ... gbarrier  {id=gb}
  end
transforms:
  tag_inames t:unr
)",
          "global barrier 'gb' stands inside loop 't', tagged unr; a sequential loop around a global barrier runs on the host");
  refused(R"(kernel apart
domains:
  {[t]: 0 <= t < 4}
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float32[n]
instructions:
  a[i] = 2 * a[i]  {id=first, inames=t:i}
  b[i] = 1  {id=between}
  ... gbarrier  {id=gb, inames=t}
  a[i] = a[i] + 1  {id=second, inames=t:i}
)",
          "loop 't' runs on the host around global barriers, so its instructions must be consecutive in the instruction list; 'gb' comes "
          "after instructions outside it (after 'first')");
  refused(R"(kernel strided
domains:
  {[t]: 0 <= t < 8 and t mod 2 = 0}
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
instructions:
  for t
    for i
      a[i] = a[i] + t  {id=add}
    end
    ... gbarrier  {id=gb}
  end
)",
          "loop 't' runs on the host around global barriers, and its domain is not an interval");
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
          "temporary 't' (private) is written in one launch and read in another by 'use'");
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
  EXPECT_NE(e.find("temporary 'a_fetch' (private) is written in one launch and read in another by 'final'"), std::string::npos) << e;
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

// A sequential loop around a global barrier runs on the host: PolyBench's
// jacobi-1d with a barrier between its two sweeps in the time loop, each
// sweep on the GPU's axes, against the kernel as PolyBench writes it (no
// barrier, every loop sequential), at no time step, one, several, and sizes
// that leave partial blocks.
TEST(HostLoops, ATimeLoopRunsItsLaunchesOnceAnIteration) {
  auto [plain, t] = plain_and_transformed(kJacobi1d, "split_iname i1 32 outer_tag=g.0 inner_tag=l.0\n"
                                                      "split_iname i2 32 outer_tag=g.0 inner_tag=l.0\n");
  LoopKernel k = with_line(kJacobi1d, kBarrierLine);
  GeneratedKernel g = generate(t);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(host_steps_text(g.host_steps), "for t in [0, tsteps - 1] { launch 1; launch 2 }");
  // the host loop's iname is a scalar argument of each launch
  EXPECT_NE(g.launches[0].kernel.find_argument("t"), nullptr);
  std::vector<std::map<std::string, int64_t>> sizes{{{"tsteps", 0}, {"n", 40}}, {{"tsteps", 1}, {"n", 3}},
                                                   {{"tsteps", 3}, {"n", 37}}, {{"tsteps", 5}, {"n", 100}}};
  check_transformed(plain, t, sizes);
  check_transformed(plain, k, sizes);
  std::string src = cuda::print_source(g);
  EXPECT_NE(src.find("// Runs as for t in [0, tsteps - 1] { launch 1; launch 2 }"), std::string::npos) << src;
  EXPECT_NE(src.find("int const t)"), std::string::npos) << src;
}

// Host loops nest, and a launch's grid may depend on the host loop's value:
// a triangular update (the shape of an LU factorization's k loop), each
// iteration over the rows below k on blocks, then a row scaled in a second
// launch of the same iteration.
TEST(HostLoops, ATriangularLoopLaunchesGridsThatDependOnTheHostIname) {
  const char* text = R"(kernel eliminate
domains:
  {[r]: 0 <= r < reps}
  {[k]: 0 <= k < n - 1}
  {[i]: k + 1 <= i < n}
  {[j]: k + 1 <= j < n}
arguments:
  reps: int32, n: int32, x: float64[n], y: float64[n]
instructions:
  for r, k
    for i
      x[i] = x[i] - 0.5 * x[k]  {id=update}
    end
BARRIER
    for j
      y[j] = y[j] + x[j] * 0.25  {id=accumulate}
    end
  end
)";
  auto [plain, t] = plain_and_transformed(text, "split_iname i 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname j 8 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_EQ(host_steps_text(generate(t).host_steps), "for r in [0, reps - 1] { for k in [0, n - 2] { launch 1; launch 2 } }");
  std::vector<std::map<std::string, int64_t>> sizes{{{"reps", 1}, {"n", 1}}, {{"reps", 2}, {"n", 2}}, {{"reps", 1}, {"n", 17}},
                                                   {{"reps", 2}, {"n", 40}}};
  check_transformed(plain, t, sizes);
}

// A hardware-parallel loop around a global barrier is distributed (loopy's
// rotate_v2): each launch runs all its iterations. The write through
// (i + 1) % n is one element per thread: i + 1 spans fewer than n values.
TEST(HostLoops, AParallelLoopIsDistributedOverTheBarrier) {
  LoopKernel k = kernel_of(R"(kernel rotate
domains:
  {[i]: 0 <= i < n}
arguments:
  arr: int32[n]
temporaries:
  saved: int32[n] global
instructions:
  for i
    saved[i] = arr[i]  {id=save}
    ... gbarrier  {id=gb}
    arr[(i + 1) % n] = saved[i]  {id=rotate}
  end
assumptions:
  n >= 1
)");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"));
  // loopy's rule: the parallel loop spans each launch (the kernel as written
  // runs it on the host, an element at a time, which moves arr[0] along)
  GeneratedKernel g = generate(t);
  EXPECT_EQ(host_steps_text(g.host_steps), "launch 1; launch 2");
  for (int64_t n : {1, 5, 16, 37}) {
    std::vector<int32_t> arr(static_cast<size_t>(n)), expected(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) arr[size_t(i)] = int32_t(3 * i + 1);
    for (int64_t i = 0; i < n; ++i) expected[size_t((i + 1) % n)] = arr[size_t(i)];
    ArgMap args;
    args["arr"] = ArgValue::of(ArrayRef{arr.data(), types::int32, {n}});
    args["n"] = ArgValue::of_int(n);
    interpret(g, args);
    EXPECT_EQ(arr, expected) << "n = " << n;
  }
  // an index that may wrap onto an element another thread writes is refused
  std::string e = error_of([&] {
    generate(apply_transforms(kernel_of(R"(kernel wraps
domains:
  {[i]: 0 <= i < n}
arguments:
  arr: int32[n]
instructions:
  arr[(i + 1) % (n - 1)] = i  {id=w}
)"),
                              parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\n")));
  });
  EXPECT_NE(e.find("writes arr through index (16 * i_outer + i_inner + 1) % (n - 1), which Loom cannot analyse"), std::string::npos) << e;
}

// add_global_barrier: the transformation the tuner uses to give each sweep
// of a time loop the whole GPU. Between two nests of a sequential loop it
// keeps the kernel's order (and is added to the kernel as written, so each
// launch is checked against its own); where it would distribute a loop that
// both sides share, or the loop is parallel, it is refused.
TEST(HostLoops, AGlobalBarrierAddedBetweenTheNestsOfATimeLoop) {
  LoopKernel plain = with_line(kJacobi1d, "");
  LoopKernel t = apply_transforms(plain, parse_transform_script("add_global_barrier b within=t\nadd_global_barrier a within=t\n"
                                                                "split_iname i1 32 outer_tag=g.0 inner_tag=l.0\n"
                                                                "split_iname i2 32 outer_tag=g.0 inner_tag=l.0\n"));
  EXPECT_EQ(host_steps_text(generate(t).host_steps), "for t in [0, tsteps - 1] { launch 1; launch 2 }");
  check_transformed(plain, t, {{{"tsteps", 0}, {"n", 40}}, {{"tsteps", 3}, {"n", 37}}, {{"tsteps", 4}, {"n", 100}}});
  // without the barriers the blocks of one launch would race across time steps
  std::string e = error_of([&] {
    generate(apply_transforms(plain, parse_transform_script("split_iname i1 32 outer_tag=g.0 inner_tag=l.0\n"
                                                            "split_iname i2 32 outer_tag=g.0 inner_tag=l.0\n")));
  });
  EXPECT_NE(e, "no error");
  // a barrier between two statements of one i loop would distribute it
  LoopKernel fused = parse_kernel_text(R"(kernel fused
domains:
  {[t, i]: 0 <= t < tsteps and 0 <= i < n}
arguments:
  a: float32[n], b: float32[n]
instructions:
  for t, i
    b[i] = a[i] + 1  {id=first}
    a[i] = b[i] * 2  {id=second}
  end
)").kernel;
  e = error_of([&] { add_global_barrier(fused, "first", "t"); });
  EXPECT_NE(e.find("instructions 'first' and 'second', on either side of the barrier, share loop 'i', which the barrier would distribute"),
            std::string::npos) << e;
  e = error_of([&] { add_global_barrier(apply_transforms(fused, parse_transform_script("tag_inames t:g.0\n")), "first", "t,i"); });
  EXPECT_NE(e.find("loop 't' is tagged g.0; the loops around a global barrier run on the host"), std::string::npos) << e;
  e = error_of([&] { add_global_barrier(fused, "nothing", "t"); });
  EXPECT_NE(e.find("no instruction matches 'nothing'"), std::string::npos) << e;
}

// A launch after a host loop gets none of the loop's arguments (found by the
// nests sketch on PolyBench's ludcmp: "unknown argument 'i1'"), on every
// target. (inames=j: without it loopy's rule puts the j loop inside t, among
// the loops of a's writer.)
TEST(HostLoops, ALaunchAfterAHostLoopRuns) {
  const char* text = R"(kernel after
domains:
  {[t]: 0 <= t < tsteps}
  {[i]: 0 <= i < n}
  {[j]: 0 <= j < n}
arguments:
  tsteps: int32, n: int32, a: float32[n], out: float32[n]
instructions:
  for t
    for i
      a[i] = a[i] * 0.5 + t  {id=step}
    end
BARRIER
  end
  for j
    out[j] = 2 * a[j]  {id=last, inames=j}
  end
)";
  auto [plain, t] = plain_and_transformed(text, "split_iname i 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\n");
  EXPECT_EQ(host_steps_text(generate(t).host_steps), "for t in [0, tsteps - 1] { launch 1 }; launch 2");
  check_transformed(plain, t, {{{"tsteps", 0}, {"n", 5}}, {{"tsteps", 3}, {"n", 40}}});
}

// A prefetch's fetch loops take the block of its own launch: the scaling
// launch's 128 threads along l.0 do not stretch the product's 16 (found on
// PolyBench's gemm: the product ran on 64x16 threads, three quarters of
// them idle in the product).
TEST(GlobalBarriers, APrefetchFitsTheBlockOfItsOwnLaunch) {
  const char* text = R"(kernel scaled_product
domains:
  {[i, j1]: 0 <= i < n and 0 <= j1 < m}
  {[i2, j2, k]: 0 <= i2 < n and 0 <= j2 < m and 0 <= k < l}
arguments:
  n: int32, m: int32, l: int32, c: float64[n, m], a: float64[n, l], b: float64[l, m]
instructions:
  c[i, j1] = c[i, j1] * 0.5  {id=scale}
BARRIER
  c[i2, j2] = c[i2, j2] + sum(k, a[i2, k] * b[k, j2])  {id=product}
)";
  auto [plain, t] = plain_and_transformed(text,
                                          "split_iname j1 128 outer_tag=g.0 inner_tag=l.0\n"
                                          "split_iname i 2 outer_tag=g.1 inner_tag=l.1\n"
                                          "split_iname i2 32 outer_tag=g.1\n"
                                          "split_iname j2 32 outer_tag=g.0\n"
                                          "split_iname i2_inner 4 outer_tag=l.1 inner_tag=ilp\n"
                                          "split_iname j2_inner 16 outer_tag=ilp inner_tag=l.0\n"
                                          "split_iname k 8\n"
                                          "add_prefetch a sweep_inames=i2_inner_outer,i2_inner_inner,k_inner\n"
                                          "add_prefetch b sweep_inames=k_inner,j2_inner_outer,j2_inner_inner\n");
  GeneratedKernel g = generate(t);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(g.launches[0].block, (std::array<int64_t, 3>{128, 2, 1}));
  EXPECT_EQ(g.launches[1].block, (std::array<int64_t, 3>{16, 8, 1}));
  check_transformed(plain, t, {{{"n", 37}, {"m", 45}, {"l", 19}}, {{"n", 64}, {"m", 64}, {"l", 16}}});
}

// A global temporary that an earlier launch writes may be prefetched by a
// later one (chained products: d = tmp c after tmp = a b); one the same
// launch writes is refused, naming the writer where the kernel has launches.
TEST(GlobalBarriers, AGlobalTemporaryWrittenByAnEarlierLaunchMayBePrefetched) {
  const char* text = R"(kernel chained
domains:
  {[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < n}
  {[i2, l, j2]: 0 <= i2 < n and 0 <= l < n and 0 <= j2 < n}
arguments:
  n: int32, a: float32[n, n], b: float32[n, n], c: float32[n, n], d: float32[n, n]
temporaries:
  tmp: float32[n, n] global
instructions:
  tmp[i, j] = sum(k, a[i, k] * b[k, j])  {id=first}
BARRIER
  d[i2, l] = sum(j2, tmp[i2, j2] * c[j2, l])  {id=second}
)";
  const std::string tiles =
      "split_iname i 16 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\n"
      "split_iname i2 16 outer_tag=g.1 inner_tag=l.1\nsplit_iname l 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname j2 8\n";
  auto [plain, t] = plain_and_transformed(text, tiles + "add_prefetch tmp sweep_inames=i2_inner,j2_inner\n");
  EXPECT_TRUE(t.find_temporary("tmp_fetch"));
  check_transformed(plain, t, {{{"n", 37}}, {{"n", 32}}});
  std::string e = error_of([&] { apply_transforms(with_line(text, ""), parse_transform_script(tiles + "add_prefetch tmp sweep_inames=i2_inner,j2_inner\n")); });
  EXPECT_NE(e.find("array 'tmp' is written by the kernel; only arrays it only reads (or that an earlier launch writes"), std::string::npos) << e;
  // with a global barrier elsewhere, the writer in the readers' launch is named
  std::string two = std::string(text);
  two.replace(two.find("BARRIER"), 7, "  ... gbarrier  {id=gb}\n  d[0, 0] = 0  {id=zero}\n  ... gbarrier  {id=gb2}");
  LoopKernel same = kernel_of(two.substr(0, two.find("  d[i2, l] = sum")) + "  tmp[0, 0] = 1  {id=again}\n" + two.substr(two.find("  d[i2, l] = sum")));
  e = error_of([&] { apply_transforms(same, parse_transform_script(tiles + "add_prefetch tmp sweep_inames=i2_inner,j2_inner\n")); });
  EXPECT_NE(e.find("array 'tmp' is written by 'again' in the launch that reads it"), std::string::npos) << e;
}
