// Dependences between threads and blocks through global memory (issue 9's
// cases): refused across blocks with a witness, refused within one
// instruction across threads, ordered by a barrier Loom places between two
// instructions of one block, and writes through indices isl cannot analyse
// refused on parallel inames unless declared; legal kernels that look alike
// pass and compute what the untransformed kernel computes.
#include <gtest/gtest.h>

#include <optional>

#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "loom/codegen.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

namespace {

LoopKernel scheduled(const std::string& text) {
  KernelFile f = parse_kernel_text(text);
  return apply_transforms(f.kernel, f.transforms);
}

std::string generate_error(const std::string& text) {
  return error_of([&] { generate(scheduled(text)); });
}

}  // namespace

TEST(GlobalDependences, InPlaceUpdatesAcrossBlocksAreRefusedWithAWitness) {
  std::string prefix = generate_error(R"(kernel prefix
domains:
  {[i]: 1 <= i < n}
arguments:
  a: float32[n]
instructions:
  a[i] = a[i] + a[i - 1]
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)");
  EXPECT_NE(prefix.find("instruction 'insn_0' reads a at an element that another block writes"), std::string::npos) << prefix;
  EXPECT_NE(prefix.find("i_outer (first) = "), std::string::npos) << prefix;
  std::string jacobi = generate_error(R"(kernel jacobi
domains:
  {[i, j]: 1 <= i < n - 1 and 1 <= j < n - 1}
arguments:
  u: float32[n, n]
instructions:
  u[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
transforms:
  split_iname i 16 outer_tag=g.1 inner_tag=l.1
  split_iname j 16 outer_tag=g.0 inner_tag=l.0
)");
  EXPECT_NE(jacobi.find("different blocks, which nothing can order"), std::string::npos) << jacobi;
  // within one block: no barrier orders an instruction with itself
  std::string one_block = generate_error(R"(kernel prefix_block
domains:
  {[i]: 1 <= i < 64}
arguments:
  a: float32[64]
instructions:
  a[i] = a[i] + a[i - 1]
transforms:
  tag_inames i:l.0
)");
  EXPECT_NE(one_block.find("another thread of the block writes in the same instruction"), std::string::npos) << one_block;
}

TEST(GlobalDependences, TwoInstructionsAcrossBlocksAreRefusedAndWithinABlockGetABarrier) {
  const char* across = R"(kernel shift
domains:
  {[i]: 0 <= i < n - 1}
arguments:
  a: float32[n], b: float32[n]
instructions:
  b[i] = a[i + 1]  {id=rd}
  a[i] = 0  {id=wr, dep=rd}
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)";
  std::string e = generate_error(across);
  EXPECT_NE(e.find("instruction 'wr' writes a and instruction 'rd' reads an element of it that the other writes, in different blocks"),
            std::string::npos)
      << e;
  const char* within = R"(kernel shift_block
domains:
  {[i]: 0 <= i < 63}
arguments:
  a: float32[64], b: float32[64]
instructions:
  b[i] = a[i + 1]  {id=rd}
  a[i] = 0  {id=wr, dep=rd}
transforms:
  tag_inames i:l.0
)";
  LoopKernel k = scheduled(within);
  std::string src = cuda::print_source(generate(k));
  size_t rd = src.find("b[i] = a[i + 1]"), bar = src.find("__syncthreads()"), wr = src.find("a[i] = 0");
  ASSERT_NE(bar, std::string::npos) << src;
  EXPECT_LT(rd, bar);
  EXPECT_LT(bar, wr);
  EXPECT_SAME_RESULTS(parse_kernel_text(within).kernel, k, {});
}

TEST(GlobalDependences, NonAffineWritesOnParallelInamesNeedADeclaration) {
  std::string sq = generate_error(R"(kernel sq
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[(i * i) % n] = a[i]
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)");
  EXPECT_NE(sq.find("which Loom cannot analyse, on parallel inames"), std::string::npos) << sq;
  const char* scatter = R"(kernel scatter
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n], idx: int32[n]
instructions:
  out[idx[i]] = a[i]  {id=sc%s}
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)";
  char text[512];
  std::snprintf(text, sizeof text, scatter, "");
  std::string e = generate_error(text);
  EXPECT_NE(e.find("writes out through index idx[64 * i_outer + i_inner]"), std::string::npos) << e;
  EXPECT_NE(e.find("{nosync=sc}"), std::string::npos) << e;
  std::snprintf(text, sizeof text, scatter, ", nosync=sc");  // declared injective: accepted
  EXPECT_EQ(generate_error(text), "no error");
}

TEST(GlobalDependences, LegalKernelsThatLookAlikePass) {
  // each thread reads and writes its own element; a later instruction reads what the same thread wrote
  const char* own = R"(kernel own
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], b: float32[n]
instructions:
  a[i] = 2 * a[i] + 1  {id=w}
  b[i] = a[i] * a[i]  {dep=w}
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)";
  LoopKernel k = scheduled(own);
  std::string src = cuda::print_source(generate(k));
  EXPECT_EQ(src.find("__syncthreads"), std::string::npos) << src;
  EXPECT_SAME_RESULTS(parse_kernel_text(own).kernel, k, {{"n", 100}});
  // reading through an index array is allowed
  const char* gather = R"(kernel gather
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n], idx: int32[n]
instructions:
  out[i] = a[idx[i] % n] + 1
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)";
  EXPECT_EQ(generate_error(gather), "no error");
}

// loopy compatibility item 10: a[i] = 12 and a[i+1] = 13 with no dependency
// between them are refused, as loopy refuses them; a declared order runs.
TEST(GlobalDependences, OverlappingWritesNeedADeclaredOrder) {
  auto kernel = [](const std::string& second_options) {
    return make_kernel({"{[i]: 0 <= i < n}"}, "a[i] = 12 {id=w1}\na[i+1] = 13 {id=w2" + second_options + "}", {"a: float32[n+1]"});
  };
  std::string e = error_of([&] { generate(kernel("")); });
  EXPECT_NE(e.find("instructions 'w1' and 'w2' both write elements of 'a' and no dependency orders them"), std::string::npos) << e;
  EXPECT_NE(e.find("add dep=w1 to 'w2'"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { generate(kernel(", dep=w1")); }), "no error");
  EXPECT_EQ(error_of([&] { generate(kernel(", nosync=w1")); }), "no error");
  // writes that never meet need no order
  LoopKernel apart = make_kernel({"{[i]: 0 <= i < n}"}, "a[2*i] = 12 {id=w1}\na[2*i+1] = 13 {id=w2}", {"a: float32[2*n]"});
  EXPECT_EQ(error_of([&] { generate(apart); }), "no error");
  // with the order declared, each iteration of the shared loop runs w1 then w2, as in loopy
  // (a dependency orders instances at equal values of the inames the two share)
  LoopKernel ordered = kernel(", dep=w1");
  auto arrays = make_host_arrays(ordered, {{"n", 5}}, 1);
  ArgMap args{{"a", ArgValue::of(arrays.at("a").ref())}, {"n", ArgValue::of_int(5)}};
  interpret(generate(ordered), args);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(arrays.at("a").get(i), 12);
  EXPECT_EQ(arrays.at("a").get(5), 13);
}

// Writes ordered by a chain of the dependences Loom infers (w1 -> r: r reads
// what w1 wrote; r -> w2: w2 reads what r wrote) are ordered, as loopy counts
// the dependences it adds itself (PolyBench's deriche, adi, durbin); w2's
// value is the one left.
TEST(GlobalDependences, WritesOrderedByAChainOfInferredDependencesAreOrdered) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i] = x[i] * 2 {id=w1}\ny[i] = a[i] + x[i] {id=r}\na[i] = y[i] - 1 {id=w2}",
                             {"x: float32[n], a: float32[n], y: float32[n]"});
  EXPECT_EQ(error_of([&] { generate(k); }), "no error");
  auto arrays = make_host_arrays(k, {{"n", 7}}, 3);
  auto x = arrays.at("x");
  interpret(generate(k), host_arguments(k, arrays, {{"n", 7}}));
  for (int i = 0; i < 7; ++i) {
    EXPECT_FLOAT_EQ(float(arrays.at("y").get(i)), float(3 * x.get(i)));
    EXPECT_FLOAT_EQ(float(arrays.at("a").get(i)), float(3 * x.get(i) - 1));
  }
}

// Writes of elements apart through a parameter outside every loop
// (`corr[m - 1, m - 1]` beside `corr[i, i]` for i < m - 1, PolyBench's
// correlation) need no order: the parameter is part of the access isl sees.
TEST(GlobalDependences, WritesApartThroughAParameterOutsideEveryLoopNeedNoOrder) {
  auto kernel = [](const std::string& range) {
    return parse_kernel_text("domains:\n  {[i]: 0 <= i < " + range +
                             "}\narguments:\n  corr: float32[m, m]\nassumptions:\n  m >= 1\ninstructions:\n"
                             "  corr[i, i] = 1 {id=diag}\n  corr[m - 1, m - 1] = 2 {id=last}\n")
        .kernel;
  };
  LoopKernel k = kernel("m - 1");
  EXPECT_EQ(error_of([&] { generate(k); }), "no error");
  // meeting writes are still refused
  LoopKernel meet = kernel("m");
  EXPECT_NE(error_of([&] { generate(meet); }).find("both write elements of 'corr'"), std::string::npos);
}

// Issue 9's catalogue of legal kernels: each is accepted, computes what the
// kernel as written computes, and gets no barrier it does not need (the
// examples are covered by the example tests).
TEST(GlobalDependences, ACatalogueOfLegalKernelsIsAcceptedWithoutABarrierTooMany) {
  struct Case {
    const char* text;
    std::map<std::string, int64_t> sizes;
    std::optional<size_t> barriers;  // none: whatever the reduction tree needs
  };
  std::vector<Case> cases = {
      // a privatized temporary: each thread writes t, then reads it itself
      {R"(kernel privatized
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  <float32> t = 2 * a[i]  {id=t}
  out[i] = t * t + t      {dep=t}
transforms:
  split_iname i 64 outer_tag=g.0 inner_tag=l.0
)",
       {{"n", 100}}, 0},
      // a reduction over threads: the tree needs its barriers, no more
      {R"(kernel rowsum
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
arguments:
  a: float32[n, m], out: float32[n]
instructions:
  out[i] = sum(j, a[i, j])
transforms:
  tag_inames i:g.0
  split_iname j 64 inner_tag=l.0
)",
       {{"n", 7}, {"m", 150}}, std::nullopt},
      // an out-of-place stencil on a 2-D block of threads
      {R"(kernel stencil
domains:
  {[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}
arguments:
  u: float32[n, m], out: float32[n, m]
instructions:
  out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]
transforms:
  split_iname i 16 outer_tag=g.1 inner_tag=l.1
  split_iname j 16 outer_tag=g.0 inner_tag=l.0
)",
       {{"n", 37}, {"m", 21}}, 0},
      // a triangular solve, one right-hand side per thread, the dependent loop sequential
      {R"(kernel trisolve
domains:
  {[i, k]: 0 <= i < n and 0 <= k < r}
  [i] -> {[j]: 0 <= j < i}
arguments:
  lower: float32[n, n], b: float32[n, r], x: float32[n, r]
instructions:
  x[i, k] = (b[i, k] - sum(j, lower[i, j] * x[j, k])) / lower[i, i]
transforms:
  split_iname k 32 outer_tag=g.0 inner_tag=l.0
)",
       {{"n", 9}, {"r", 40}}, 0},
      // an in-place sweep along a sequential loop, the other loop on threads
      {R"(kernel sweep
domains:
  {[i, j]: 1 <= i < n and 0 <= j < m}
arguments:
  a: float32[n, m]
instructions:
  a[i, j] = a[i, j] + 0.5 * a[i - 1, j]
transforms:
  split_iname j 32 outer_tag=g.0 inner_tag=l.0
  split_iname i 4 inner_tag=unr
)",
       {{"n", 11}, {"m", 70}}, 0},
  };
  for (auto& c : cases) {
    LoopKernel k = scheduled(c.text);
    std::string src;
    std::string e = error_of([&] { src = cuda::print_source(generate(k)); });
    ASSERT_EQ(e, "no error") << c.text;
    size_t barriers = 0;
    for (size_t p = src.find("__syncthreads"); p != std::string::npos; p = src.find("__syncthreads", p + 1)) ++barriers;
    if (c.barriers) EXPECT_EQ(barriers, *c.barriers) << src;
    EXPECT_SAME_RESULTS(parse_kernel_text(c.text).kernel, k, c.sizes);
  }
}
