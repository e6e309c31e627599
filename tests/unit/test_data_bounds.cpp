// Loops bounded by values the kernel computes (loopy's data-dependent
// domains; src/preprocess/data_bounds.cpp): CSR row sums and a nested
// dependent reduction under several schedules, on the interpreter and the CPU
// target, checked against sums computed here from the same data (lengths 0,
// 1, under and over a warp, rows beyond a block's); data that sends an access
// outside its array is caught at run time; kernels that place the bound
// where it is not known yet are refused with the reason.
#include <gtest/gtest.h>

#include <random>

#include "loom/interpreter.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "oracle.h"
#include "transform_check.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

using namespace loom;
using loom::testing::error_of;

namespace {

const char* kCsr =
    "kernel csr_row_sums\n"
    "domains:\n"
    "  {[i]: 0 <= i < n}\n"
    "  {[jj]: 0 <= jj < row_len}\n"
    "instructions:\n"
    "  <int32> row_start = ptr[i]\n"
    "  <int32> row_len = ptr[i + 1] - row_start\n"
    "  out[i] = sum(jj, vals[row_start + jj])\n"
    "arguments:\n"
    "  ptr: int32[n + 1], vals: float32[nnz], out: float32[n]\n";

LoopKernel csr(const std::string& transforms = "") {
  KernelFile f = parse_kernel_text(std::string(kCsr) + (transforms.empty() ? "" : "transforms:\n" + transforms));
  return apply_transforms(f.kernel, f.transforms);
}

struct Csr {
  std::vector<int64_t> ptr;
  std::vector<float> vals;
};

Csr random_csr(int64_t n, int64_t max_len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Csr c;
  c.ptr.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = int64_t(rng() % uint64_t(max_len + 1));
    if (i % 7 == 3) len = 0;  // empty rows
    c.ptr.push_back(c.ptr.back() + len);
  }
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t e = 0; e < c.ptr.back(); ++e) c.vals.push_back(u(rng));
  return c;
}

using Runner = std::function<void(const LoopKernel&, const ArgMap&)>;

std::vector<std::pair<std::string, Runner>> runners() {
  std::vector<std::pair<std::string, Runner>> r;
  r.push_back({"interpreter", [](const LoopKernel& k, const ArgMap& a) { interpret(generate(k), a); }});
#ifdef LOOM_HAS_CPU_TARGET
  r.push_back({"cpu", [](const LoopKernel& k, const ArgMap& a) { cpu::CpuKernel(k).call(a); }});
#endif
  return r;
}

// Runs k on c, out poisoned first; the row sums it wrote.
std::vector<double> run_csr(const LoopKernel& k, const Csr& c, const Runner& run) {
  int64_t n = int64_t(c.ptr.size()) - 1;
  HostArray ptr(types::int32, {n + 1}), vals(types::float32, {int64_t(c.vals.size())}), out(types::float32, {n});
  for (int64_t i = 0; i <= n; ++i) ptr.set(i, double(c.ptr[size_t(i)]));
  for (size_t e = 0; e < c.vals.size(); ++e) vals.set(int64_t(e), c.vals[e]);
  out.poison();
  run(k, {{"ptr", ArgValue::of(ptr.ref())}, {"vals", ArgValue::of(vals.ref())}, {"out", ArgValue::of(out.ref())}});
  std::vector<double> r;
  for (int64_t i = 0; i < n; ++i) r.push_back(out.get(i));
  return r;
}

void expect_row_sums(const LoopKernel& k, const Csr& c, const std::string& what) {
  for (auto& [name, run] : runners()) {
    std::vector<double> got = run_csr(k, c, run);
    for (size_t i = 0; i + 1 < c.ptr.size(); ++i) {
      double want = 0;
      for (int64_t e = c.ptr[i]; e < c.ptr[i + 1]; ++e) want += c.vals[size_t(e)];
      ASSERT_NEAR(got[i], want, 1e-4 * (1 + std::abs(want))) << what << " on " << name << ", row " << i;
    }
  }
}

}  // namespace

TEST(DataBounds, CsrRowSumsUnderSchedules) {
  const std::vector<std::string> schedules = {
      "",
      "split_iname i 16 outer_tag=g.0 inner_tag=l.0\n",
      "split_iname jj 32 inner_tag=l.0\nsplit_iname i 8 outer_tag=g.0 inner_tag=l.1\n",
      "split_iname jj 8 inner_tag=l.0\nsplit_iname jj_outer 2 inner_tag=unr\nsplit_iname i 4 outer_tag=g.0 inner_tag=l.1\n",
      "split_iname jj 4\nsplit_iname i 5 outer_tag=g.0\n",
      "split_iname jj 64 inner_tag=l.0\ntag_inames i:g.0\n",
      // found by the random kernels: an int32 bound beside int64 inames (the CPU target's compare of two widths)
      "set_index_dtype int64\nsplit_iname jj 8\n",
  };
  for (auto [n, max_len] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {37, 5}, {101, 40}, {19, 150}}) {
    Csr c = random_csr(n, max_len, uint64_t(n * 131 + max_len));
    for (auto& s : schedules) expect_row_sums(csr(s), c, "schedule '" + s + "', n = " + std::to_string(n));
  }
}

TEST(DataBounds, WriterOrderAndTextOrder) {
  // the reduction written before the bound's writer: it still waits for it
  KernelFile f = parse_kernel_text(
      "kernel late\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < row_len}\ninstructions:\n"
      "  <int32> row_start = ptr[i]\n  out[i] = sum(jj, vals[row_start + jj])\n  <int32> row_len = ptr[i + 1] - row_start\n"
      "arguments:\n  ptr: int32[n + 1], vals: float32[nnz], out: float32[n]\n");
  expect_row_sums(f.kernel, random_csr(23, 9, 5), "reduction before the writers");
  // a bound with a guard of its own (a constraint on the value alone), the rows capped at 6 elements
  KernelFile g = parse_kernel_text(
      "kernel capped\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < row_len and row_len <= 6}\ninstructions:\n"
      "  <int32> row_start = ptr[i]\n  <int32> row_len = ptr[i + 1] - row_start\n  out[i] = sum(jj, vals[row_start + jj])\n"
      "arguments:\n  ptr: int32[n + 1], vals: float32[nnz], out: float32[n]\n");
  Csr c = random_csr(41, 9, 11);
  for (auto& [name, run] : runners()) {
    std::vector<double> got = run_csr(g.kernel, c, run);
    for (size_t i = 0; i + 1 < c.ptr.size(); ++i) {
      double want = 0;
      if (c.ptr[i + 1] - c.ptr[i] <= 6)
        for (int64_t e = c.ptr[i]; e < c.ptr[i + 1]; ++e) want += c.vals[size_t(e)];
      ASSERT_NEAR(got[i], want, 1e-4) << name << ", row " << i;
    }
  }
}

TEST(DataBounds, NestedDependentReduction) {
  // loopy's test_nested_dependent_reduction: a[i] = sum(j, j) for 0 <= j < i + ell[i]
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j < i + sumlen}"},
                             "<int32> sumlen = ell[i]\na[i] = sum(j, j)", {"ell: int32[n], a: int32[n]"}, "nested");
  for (auto s : {"", "split_iname i 4 outer_tag=g.0 inner_tag=l.0\n", "split_iname j 8 inner_tag=l.0\ntag_inames i:g.0\n"}) {
    LoopKernel t = apply_transforms(k, parse_transform_script(s));
    for (auto& [name, run] : runners()) {
      int64_t n = 29;
      HostArray ell(types::int32, {n}), a(types::int32, {n});
      for (int64_t i = 0; i < n; ++i) ell.set(i, double((i * 7) % 11));
      a.poison();
      run(t, {{"ell", ArgValue::of(ell.ref())}, {"a", ArgValue::of(a.ref())}});
      for (int64_t i = 0; i < n; ++i) {
        int64_t len = i + (i * 7) % 11;
        EXPECT_EQ(int64_t(a.get(i)), len * (len - 1) / 2) << s << " on " << name << ", i = " << i;
      }
    }
  }
}

TEST(DataBounds, AccessesThroughDataAreCheckedAtRunTime) {
  // the last row runs 5 past vals: every target stops with the access named
  Csr c = random_csr(12, 6, 3);
  c.ptr.back() += 5;
  for (auto& [name, run] : runners())
    for (auto s : {"", "split_iname jj 32 inner_tag=l.0\nsplit_iname i 8 outer_tag=g.0 inner_tag=l.1\n"}) {
      std::string e = error_of([&] { run_csr(csr(s), c, run); });
      EXPECT_NE(e.find("vals"), std::string::npos) << name << ": " << e;
    }
  // an access affine in the bounded iname alone (x[jj], x of 8): checked, not refused, not trusted
  KernelFile f = parse_kernel_text(
      "kernel short_x\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < len}\ninstructions:\n"
      "  <int32> len = lens[i]\n  out[i] = sum(jj, x[jj])\narguments:\n  lens: int32[n], x: float32[8], out: float32[n]\n");
  for (auto& [name, run] : runners()) {
    HostArray lens(types::int32, {3}), x(types::float32, {8}), out(types::float32, {3});
    for (int64_t e = 0; e < 8; ++e) x.set(e, double(e));
    lens.set(0, 8), lens.set(1, 0), lens.set(2, 3);
    ArgMap args{{"lens", ArgValue::of(lens.ref())}, {"x", ArgValue::of(x.ref())}, {"out", ArgValue::of(out.ref())}};
    run(f.kernel, args);
    EXPECT_EQ(out.get(0), 28.0);
    EXPECT_EQ(out.get(1), 0.0);
    EXPECT_EQ(out.get(2), 3.0);
    lens.set(1, 9);
    EXPECT_NE(error_of([&] { run(f.kernel, args); }).find("'x'"), std::string::npos) << name;
  }
}

TEST(DataBounds, BoundsWhereTheyAreNotKnownAreRefused) {
  auto refusal = [](const std::string& instructions, const std::string& transforms = "") {
    return error_of([&] {
      KernelFile f = parse_kernel_text("kernel bad\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < row_len}\ninstructions:\n" +
                                       instructions + "arguments:\n  ptr: int32[n + 1], vals: float32[nnz], out: float32[n]\n" +
                                       (transforms.empty() ? "" : "transforms:\n" + transforms));
      generate(apply_transforms(f.kernel, f.transforms));
    });
  };
  // computed inside the loop it bounds
  EXPECT_NE(refusal("  <int32> row_len = ptr[i + 1] - ptr[i] + 0 * jj\n  out[i] = sum(jj, vals[ptr[i] + jj])\n")
                .find("inside loop 'jj', which that value bounds"),
            std::string::npos);
  // a float bound
  EXPECT_NE(refusal("  <float32> row_len = ptr[i + 1] - ptr[i]\n  out[i] = sum(jj, vals[ptr[i] + jj])\n").find("has type float32"),
            std::string::npos);
  // read in a loop the writer is not in: the writer's i would be another row's
  EXPECT_NE(refusal("  <int32> row_len = ptr[i + 1] - ptr[i]\n  out[0] = sum(jj, vals[jj])  {id=s}\n")
                .find("outside loop 'i'"),
            std::string::npos);
  // a thread axis as long as the bound: a launch is sized before the kernel computes it
  std::string e = refusal("  <int32> row_len = ptr[i + 1] - ptr[i]\n  out[i] = sum(jj, vals[ptr[i] + jj])\n", "tag_inames jj:l.0\n");
  EXPECT_NE(e.find("the thread iname 'jj' needs a constant range"), std::string::npos) << e;
  // loops isl would have to build (a stride): isl would hoist the bound out of the loop that computes it
  e = error_of([&] {
    generate(make_kernel({"{[i]: 0 <= i < n}", "{[jj]: 0 <= jj < row_len and jj mod 2 = 0}"},
                         "<int32> row_len = ptr[i + 1] - ptr[i]\nout[i] = sum(jj, vals[ptr[i] + jj])",
                         {"ptr: int32[n + 1], vals: float32[nnz], out: float32[n]"}, "strided"));
  });
  EXPECT_NE(e.find("loop bounds computed by the kernel ('row_len') need the loop nests Loom builds itself"), std::string::npos) << e;
  // an array sized by it (shapes are known before the kernel runs), or one whose shape inference would need it
  auto text = [](const std::string& arrays, const std::string& extra = "") {
    return "kernel h\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < len}\ninstructions:\n  <int32> len = ptr[i]\n"
           "  out[i] = sum(jj, x[jj])\narguments:\n  " + arrays + "\n" + extra;
  };
  e = error_of([&] { parse_kernel_text(text("ptr: int32[n], x: float32[len], out: float32[n]")); });
  EXPECT_NE(e.find("array 'x' is sized by 'len', a temporary the kernel computes"), std::string::npos) << e;
  e = error_of([&] { parse_kernel_text(text("ptr: int32[n], out: float32[n]\n  ...")); });
  EXPECT_NE(e.find("cannot infer the shape of array 'x': its extent would be 'len'"), std::string::npos) << e;
  // a promise about data in the assumptions (it would let the accesses it bounds go unchecked)
  e = error_of([&] { generate(parse_kernel_text(text("ptr: int32[n], x: float32[m], out: float32[n]", "assumptions:\n  len <= m\n")).kernel); });
  EXPECT_NE(e.find("loop bound 'len' (a value the kernel computes) appears in the assumptions"), std::string::npos) << e;
}

TEST(DataBounds, TheBoundIsNoParameterOfTheCall) {
  LoopKernel k = csr();
  EXPECT_EQ(k.parameters(), (std::vector<std::string>{"n", "nnz"}));
  EXPECT_EQ(k.data_parameters(), (std::vector<std::string>{"row_len"}));
  EXPECT_EQ(k.data_dependent_inames(), (std::set<std::string>{"jj"}));
  // the JSON form keeps it a temporary
  LoopKernel back = kernel_from_json(kernel_to_json(k));
  EXPECT_EQ(back.data_parameters(), k.data_parameters());
  expect_row_sums(back, random_csr(9, 4, 2), "after a JSON round trip");
}

// The run-time checks are exactly the accesses the bounds proof left open,
// on the CPU target and in the CUDA source alike; trust_unproven_accesses
// removes them (the interpreter still checks everything).
TEST(DataBounds, CheckedAccessesAreTheUnprovenOnes) {
  GeneratedKernel g = generate(csr("split_iname jj 32 inner_tag=l.0\nsplit_iname i 8 outer_tag=g.0 inner_tag=l.1\n"));
  EXPECT_EQ(g.unproven_accesses, (UnprovenAccessSet{{"insn_2_acc_out_update", "vals"}}));
  std::string src = cuda::print_source(g);
  EXPECT_NE(src.find("loom_checked_load(vals, "), std::string::npos) << src;
  EXPECT_EQ(src.find("loom_checked(ptr"), std::string::npos) << src;  // ptr[i + 1] is proven
  EXPECT_NE(src.find("long long *__restrict__ loom_bounds, long long const loom_extent_vals)"), std::string::npos) << src;
  LoopKernel trusted = trust_unproven_accesses(csr());
  EXPECT_EQ(cuda::print_source(generate(trusted)).find("loom_checked"), std::string::npos);
  // a kernel whose accesses are all proven prints no checks (a floor division by a constant is quasi-affine: isl proves it)
  KernelFile f = loom::testing::example("sgemm_vec");
  EXPECT_EQ(cuda::print_source(generate(apply_transforms(f.kernel, f.transforms))).find("loom_checked"), std::string::npos);
#ifdef LOOM_HAS_CPU_TARGET
  Csr c = random_csr(12, 6, 3);
  c.ptr.back() += 5;
  EXPECT_NE(error_of([&] { run_csr(csr(), c, runners()[1].second); }).find("outside its"), std::string::npos);
  Csr ok = random_csr(12, 6, 3);
  std::vector<double> got = run_csr(trusted, ok, runners()[1].second);  // (in bounds: the same sums, no check)
  EXPECT_NEAR(got[0], run_csr(csr(), ok, runners()[1].second)[0], 1e-6);
#endif
}

// examples/csr_row_sums_flagged.loom on rows chosen to meet the chunks of
// 256 every way: starting on a chunk's first value (256, 768, 1792, 2048),
// spanning whole chunks, empty, shorter than a chunk, ending the values
// inside a chunk.
TEST(DataBounds, FlaggedChunksOnRowsMeetingTheChunksEveryWay) {
  KernelFile f = loom::testing::example("csr_row_sums_flagged");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  Csr c;
  c.ptr.push_back(0);
  for (int64_t len : {256, 300, 0, 212, 1024, 5, 251, 600, 1, 0, 513})
    c.ptr.push_back(c.ptr.back() + len);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t e = 0; e < c.ptr.back(); ++e) c.vals.push_back(u(rng));
  expect_row_sums(t, c, "csr_row_sums_flagged");
  expect_row_sums(t, random_csr(50, 700, 11), "csr_row_sums_flagged, random rows");
}

// A condition's read through values from memory (keep[idx[i]]) is checked
// like any other read: every target stops with the instruction and the
// array named, on the GPU too (tests/gpu).
TEST(DataBounds, AConditionsReadThroughDataIsCheckedAtRunTime) {
  KernelFile f = parse_kernel_text(
      "kernel cond_gather\ndomains:\n  {[i]: 0 <= i < n}\ninstructions:\n  out[i] = 1  {if=keep[idx[i]] > 0}\n"
      "arguments:\n  idx: int32[n], keep: float32[n], out: float32[n]\n"
      "transforms:\n  split_iname i 4 outer_tag=g.0 inner_tag=l.0\n");
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  for (auto& [name, run] : runners()) {
    HostArray idx(types::int32, {6}), keep(types::float32, {6}), out(types::float32, {6});
    for (int64_t e = 0; e < 6; ++e) idx.set(e, double(5 - e)), keep.set(e, e % 2 ? 1.0 : -1.0);
    out.poison();
    ArgMap args{{"idx", ArgValue::of(idx.ref())}, {"keep", ArgValue::of(keep.ref())}, {"out", ArgValue::of(out.ref())}};
    run(k, args);
    for (int64_t e = 0; e < 6; ++e)
      if ((5 - e) % 2) EXPECT_EQ(out.get(e), 1.0) << name;
    idx.set(3, 6);
    std::string e = error_of([&] { run(k, args); });
    EXPECT_NE(e.find("'keep'"), std::string::npos) << name << ": " << e;
  }
}
