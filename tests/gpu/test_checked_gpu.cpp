// GPU tests of the run-time checked accesses (UnprovenAccesses: subscripts
// the bounds proof left open) and of loops bounded by values the kernel
// computes: CSR row sums under two schedules match the interpreter; an
// access outside its array raises the CPU target's message after the launch
// and the kernel runs again afterwards; trust_unproven_accesses removes the
// check. Skipped where there is no GPU.
#include "gpu_oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

namespace {

LoopKernel csr(const std::string& transforms) {
  KernelFile f = parse_kernel_text(
      "kernel csr\ndomains:\n  {[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < row_len}\ninstructions:\n"
      "  <int32> row_start = ptr[i]\n  <int32> row_len = ptr[i + 1] - row_start\n  out[i] = sum(jj, vals[row_start + jj])\n"
      "arguments:\n  ptr: int32[n + 1], vals: float32[nnz], out: float32[n]\n" +
      (transforms.empty() ? "" : "transforms:\n" + transforms));
  return apply_transforms(f.kernel, f.transforms);
}

}  // namespace

TEST(CheckedGpu, CsrRowSumsMatchTheReference) {
  REQUIRE_GPU();
  for (auto s : {"split_iname jj 32 inner_tag=l.0\nsplit_iname i 8 outer_tag=g.0 inner_tag=l.1\n",
                 "split_iname i 64 outer_tag=g.0 inner_tag=l.0\n"})
    for (int64_t n : {1, 37, 1000})
      EXPECT_EQ(loom::testing::gpu_vs_reference(csr(""), csr(s), {{"n", n}, {"nnz", 40 * n + 3}}), "") << s << " n = " << n;
}

TEST(CheckedGpu, AnAccessOutsideItsArrayIsReportedAfterTheLaunch) {
  REQUIRE_GPU();
  // a[i*i] = 17 (the example): i*i reaches 16 in an array of 10
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i * i] = 17", {"a: float32[m]"}, "squares");
  cuda::CudaKernel ck(k);  // (one thread: i*i on threads would be refused as a possible race)
  HostArray a(types::float32, {10});
  ArgMap args{{"a", ArgValue::of(a.ref())}, {"n", ArgValue::of_int(5)}};
  std::string e = error_of([&] { ck.call_host(args); });
  EXPECT_NE(e.find("instruction 'insn_0' accesses 'a' at element 16, outside its 10 elements"), std::string::npos) << e;
  // the record is reset: a call that stays inside runs
  args["n"] = ArgValue::of_int(4);
  EXPECT_EQ(error_of([&] { ck.call_host(args); }), "no error");
  EXPECT_EQ(a.get(9), 17.0);
  // trusted: no check in the source
  EXPECT_EQ(cuda::CudaKernel(trust_unproven_accesses(k)).source().find("loom_checked"), std::string::npos);
}

TEST(CheckedGpu, AConditionsReadThroughDataIsChecked) {
  REQUIRE_GPU();
  KernelFile f = parse_kernel_text(
      "kernel cond_gather\ndomains:\n  {[i]: 0 <= i < n}\ninstructions:\n  out[i] = 1  {if=keep[idx[i]] > 0}\n"
      "arguments:\n  idx: int32[n], keep: float32[n], out: float32[n]\n"
      "transforms:\n  split_iname i 4 outer_tag=g.0 inner_tag=l.0\n");
  cuda::CudaKernel ck(apply_transforms(f.kernel, f.transforms));
  HostArray idx(types::int32, {6}), keep(types::float32, {6}), out(types::float32, {6});
  for (int64_t e = 0; e < 6; ++e) idx.set(e, double(5 - e)), keep.set(e, e % 2 ? 1.0 : -1.0);
  ArgMap args{{"idx", ArgValue::of(idx.ref())}, {"keep", ArgValue::of(keep.ref())}, {"out", ArgValue::of(out.ref())}};
  EXPECT_EQ(error_of([&] { ck.call_host(args); }), "no error");
  EXPECT_EQ(out.get(0), 1.0);  // keep[5] > 0
  idx.set(3, 6);
  std::string e = error_of([&] { ck.call_host(args); });
  EXPECT_NE(e.find("instruction 'insn_0' accesses 'keep' at element 6, outside its 6 elements"), std::string::npos) << e;
}

// A kernel of several launches (examples/csr_row_sums_flagged.loom: four)
// is checked once, after its last launch: the first access outside its
// array is reported, the record is reset, and a valid call runs.
TEST(CheckedGpu, ALaunchSequenceIsCheckedAfterItsLastLaunch) {
  REQUIRE_GPU();
  KernelFile f = loom::testing::example("csr_row_sums_flagged");
  cuda::CudaKernel ck(apply_transforms(f.kernel, f.transforms));
  const int64_t n = 5, nnz = 1000;
  HostArray ptr(types::int32, {n + 1}), vals(types::float32, {nnz}), out(types::float32, {n});
  for (int64_t e = 0; e < nnz; ++e) vals.set(e, 1.0);
  for (int64_t i = 0; i <= n; ++i) ptr.set(i, double(i * nnz / n));
  ArgMap args{{"ptr", ArgValue::of(ptr.ref())}, {"vals", ArgValue::of(vals.ref())}, {"out", ArgValue::of(out.ref())}};
  EXPECT_EQ(error_of([&] { ck.call_host(args); }), "no error");
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out.get(i), 200.0);
  ptr.set(n, double(nnz + 300));  // the last row runs 300 past vals
  std::string e = error_of([&] { ck.call_host(args); });
  // (its tail in vals, or its whole chunk's sum past partial's 4 elements)
  EXPECT_TRUE(e.find("accesses 'vals' at element 1") != std::string::npos || e.find("accesses 'partial' at element 4") != std::string::npos) << e;
  ptr.set(n, double(nnz));
  EXPECT_EQ(error_of([&] { ck.call_host(args); }), "no error");
  EXPECT_EQ(out.get(n - 1), 200.0);
}
