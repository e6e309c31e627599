// Reliability II and the loopy issue's silent wrong results, on the GPU:
// float-to-integer conversions mean the same as on the CPU target and in the
// interpreter (NaN 0, clamped to the range), a nested domain does not narrow
// the grid of an instruction outside it, and the target model read from the
// device. Skipped where there is no GPU.
#include <cmath>

#include "gpu_oracle.h"

using namespace loom;

TEST(GpuReliability, FloatToIntegerConversionsSaturateAsEverywhere) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "u32[i] = f[i]\nu64[i] = d[i]\nu8[i] = f[i]\ni8[i] = d[i]\ni32[i] = f[i]\ni64[i] = d[i]\nu16[i] = h[i]",
                             {"f: float32[n], d: float64[n], h: float16[n]",
                              "u32: uint32[n], u64: uint64[n], u8: uint8[n], i8: int8[n], i32: int32[n], i64: int64[n], u16: uint16[n]"});
  LoopKernel t = tag_inames(split_iname(k, "i", 4), "i_outer:g.0, i_inner:l.0");
  std::vector<double> in = {std::nan(""), -1e30, 1e30, -3.7, 3.7, 300.5, -0.5, 4e9, 1e19, -129, 127.9, 65535.5};
  int64_t n = int64_t(in.size());
  auto ref = make_host_arrays(k, {{"n", n}}, 5);
  for (int64_t i = 0; i < n; ++i)
    for (const char* a : {"f", "d", "h"}) ref.at(a).set(i, in[size_t(i)]);
  auto gpu = ref;
  interpret(generate(k), loom::testing::args_of(k, ref, {{"n", n}}));
  cuda::CudaKernel(t).call_host(loom::testing::args_of(t, gpu, {{"n", n}}));
  EXPECT_EQ(loom::testing::compare_written(k, ref, gpu), "");
  EXPECT_EQ(gpu.at("u32").get(0), 0);           // NaN
  EXPECT_EQ(gpu.at("u32").get(1), 0);           // negative
  EXPECT_EQ(gpu.at("u32").get(2), 4294967295);  // beyond the range
}

TEST(GpuReliability, ANestedDomainDoesNotNarrowAnotherInstructionsGrid) {
  REQUIRE_GPU();
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i, j < n}", "{[k]: k = i + 5 and k < n}"}, "a[i, j] = 5 {id=set_all}\nb[i, k] = 22 {dep=set_all}",
                             {"a: float32[n, n], b: float32[n, n]"});
  LoopKernel t = split_iname(k, "i", 16, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 0}});
  for (int64_t n : {21, 37, 50}) EXPECT_EQ(loom::testing::gpu_vs_reference(k, t, {{"n", n}}), "") << n;
}

TEST(GpuReliability, TheTargetModelIsTheDevices) {
  REQUIRE_GPU();
  TargetInfo t = cuda::target_info();
  EXPECT_EQ(t.arch, cuda::device().arch());
  EXPECT_EQ(t.max_shared_bytes, cuda::device().max_shared_optin);
  std::printf("%s: %s\n", cuda::device().name.c_str(), t.str().c_str());
}
