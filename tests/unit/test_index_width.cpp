// Index width: 32-bit index arithmetic is used where interval arithmetic over
// the generated loop nest proves that nothing it computes leaves the int32
// range, for one call's sizes or for every size the assumptions allow; a
// launch that could wrap around is refused, naming the expression, and
// set_index_dtype int64 takes any size.
#include <gtest/gtest.h>

#include "loom/interpreter.h"
#include "loom/cuda.h"
#include "oracle.h"

using namespace loom;

namespace {

ArgMap fake_arrays(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  ArgMap args;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    ArgValue v;
    v.kind = ArgValue::Array;
    v.array.dtype = a.dtype;
    v.array.shape = expected_shape(a, params);
    v.array.data = reinterpret_cast<void*>(uintptr_t(256));  // never read: only the binding is checked
    args[a.name] = v;
  }
  return args;
}

std::string refusal(const GeneratedKernel& g, const std::map<std::string, int64_t>& params) {
  try {
    check_index_width(g, params);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "";
}

LoopKernel vector_add_in_blocks_of(int64_t threads) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i] + b[i]", {"a: float32[n], b: float32[n], out: float32[n]"}, "vadd");
  return apply_transforms(k, parse_transform_script("split_iname i " + std::to_string(threads) + " outer_tag=g.0 inner_tag=l.0"));
}

}  // namespace

// An array of 2^32 elements: its offsets need 64 bits. Binding accepts it
// (an access may touch only part of an array); the launch is refused with
// the offset that would wrap; set_index_dtype int64 takes it.
TEST(IndexWidth, ArraysBeyond2To31ElementsNeed64BitIndices) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2 * a[i, j]",
                             {"a: float32[n, m], out: float32[n, m]"}, "big");
  GeneratedKernel g = generate(k);
  std::map<std::string, int64_t> fits{{"n", 46340}, {"m", 46340}}, beyond{{"n", 65536}, {"m", 65536}};
  EXPECT_EQ(bind_parameters(k, fake_arrays(k, beyond)), beyond);
  EXPECT_EQ(refusal(g, fits), "");  // 46340^2 <= 2^31 - 1
  std::string why = refusal(g, beyond);
  EXPECT_NE(why.find("kernel 'big': index arithmetic is 32-bit and `"), std::string::npos) << why;
  EXPECT_NE(why.find("can reach 42949"), std::string::npos) << why;  // the flattened offset, 65536*65535 + 65535 or more
  EXPECT_NE(why.find("for m=65536, n=65536: set_index_dtype int64"), std::string::npos) << why;
  LoopKernel wide = set_index_dtype(k, "int64");
  EXPECT_EQ(wide.options.index_dtype, types::int64);
  GeneratedKernel gw = generate(wide);
  EXPECT_EQ(refusal(gw, beyond), "");
  EXPECT_EQ(index_overflow(gw, {{"n", int64_t(1) << 40}, {"m", 1}}), "");
  EXPECT_SAME_RESULTS(k, wide, {{"n", 7}, {"m", 13}});
  EXPECT_NE(cuda::print_source(gw).find("long long const n"), std::string::npos);
  EXPECT_THROW(set_index_dtype(k, "float32"), TransformError);
  // a parameter beyond int32 cannot even be passed to 32-bit code
  LoopKernel scalar = make_kernel({"{[i]: 0 <= i < 4}"}, "out[i] = n", {"out: int64[4], n: int64"}, "scalar_n");
  ArgMap args = fake_arrays(scalar, {});
  args["n"] = ArgValue::of_int(int64_t(1) << 33);
  EXPECT_THROW(bind_parameters(scalar, args), ArgumentError);
}

// The last block of a loop split by 100 runs threads past the end: 100*o + t
// reaches n + 98 before its guard compares it with n. Near 2^31 that wraps
// to a negative index that passes the guard, although every array fits 32
// bits: the sizes alone cannot show it; the loop nest does.
TEST(IndexWidth, ASplitLoopsTailIsCheckedBeforeItsGuard) {
  GeneratedKernel g = generate(vector_add_in_blocks_of(100));
  const int64_t n_ok = 2147483600, n_wraps = 2147483601;  // 21474836 blocks; one more reaches 2147483699
  EXPECT_EQ(beyond_32_bit_indices(g.kernel, {{"n", n_wraps}}), "");  // (what the sizes alone say)
  EXPECT_EQ(index_overflow(g, {{"n", n_ok}}), "");
  std::string why = index_overflow(g, {{"n", n_wraps}});
  EXPECT_NE(why.find("can reach 2147483699"), std::string::npos) << why;
  EXPECT_NE(why.find("i_inner"), std::string::npos) << why;
  EXPECT_NE(refusal(g, {{"n", n_wraps}}).find("set_index_dtype int64"), std::string::npos);
  // blocks of 128 end at a multiple of 2^7, but the guard is printed as
  // n >= 128*o + t + 1: the last thread's + 1 wraps for n > 2^31 - 128
  GeneratedKernel g128 = generate(vector_add_in_blocks_of(128));
  EXPECT_EQ(index_overflow(g128, {{"n", 2147483520}}), "");
  std::string guard = index_overflow(g128, {{"n", 2147483521}});
  EXPECT_NE(guard.find("+ 1` can reach 2147483648"), std::string::npos) << guard;
}

// Bounded parameters prove every call: no per-call work, and 32-bit code
// for sizes the assumptions allow. Without bounds, each call is checked.
TEST(IndexWidth, AssumptionsProveEveryCall) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = a[i, j] + a[n - 1 - i, m - 1 - j]",
                             {"a: float32[n, m], out: float32[n, m]"}, "flip");
  std::string unbounded = index_overflow_under_assumptions(generate(k));
  EXPECT_NE(unbounded.find("no upper bound assumed for m, n"), std::string::npos) << unbounded;
  auto assumed = [&](const std::string& a) {
    return index_overflow_under_assumptions(generate(apply_transforms(k, parse_transform_script("assume " + a))));
  };
  EXPECT_EQ(assumed("n <= 40000 and m <= 40000"), "");  // 1.6e9 elements
  std::string too_big = assumed("n <= 50000 and m <= 50000");
  EXPECT_NE(too_big.find("can reach"), std::string::npos) << too_big;
  EXPECT_NE(assumed("n <= 40000"), "");  // m unbounded
  // a proven kernel launches with any size the assumptions allow
  GeneratedKernel g = generate(apply_transforms(k, parse_transform_script("assume n <= 40000 and m <= 40000")));
  EXPECT_EQ(refusal(g, {{"n", 40000}, {"m", 40000}}), "");
}

// A subscript read from memory (a gather) stands for an index inside the
// array's extent: the offsets stay 32-bit, as the values are the user's.
TEST(IndexWidth, GathersKeep32BitOffsets) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = a[idx[i], j]",
                             {"a: float32[r, m], idx: int32[n], out: float32[n, m]"}, "gather");
  GeneratedKernel g = generate(k);
  EXPECT_EQ(index_overflow(g, {{"n", 1000}, {"m", 1000}, {"r", 2000}}), "");
  std::string why = index_overflow(g, {{"n", 1000}, {"m", 100000}, {"r", 100000}});  // a holds 10^10 elements
  EXPECT_NE(why.find("can reach"), std::string::npos) << why;
}

// Both loop-nest generators: tiles with loops inside a block, prefetched,
// stay 32-bit at every size the tests use, and are caught near 2^31.
TEST(IndexWidth, TiledLoopsFromBothGenerators) {
  LoopKernel k = apply_transforms(
      make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                  {"a: float32[n, l], b: float32[l, m], c: float32[n, m]"}, "mm"),
      parse_transform_script("split_iname i 16 outer_tag=g.1 inner_tag=l.1\n"
                             "split_iname j 16 outer_tag=g.0 inner_tag=l.0\n"
                             "split_iname k 16\n"
                             "add_prefetch a i_inner,k_inner default_tag=l.auto\n"
                             "add_prefetch b k_inner,j_inner default_tag=l.auto\n"));
  for (CodegenPath path : {CodegenPath::Auto, CodegenPath::Isl}) {
    GeneratedKernel g = generate(k, nullptr, path);
    EXPECT_EQ(index_overflow(g, {{"n", 37}, {"m", 45}, {"l", 29}}), "");
    EXPECT_EQ(index_overflow(g, {{"n", 4000}, {"m", 4000}, {"l", 4000}}), "");
    std::string why = index_overflow(g, {{"n", 50000}, {"m", 50000}, {"l", 50000}});
    EXPECT_NE(why.find("can reach"), std::string::npos) << why;
  }
}

// i * m is index arithmetic too (inames and parameters), wherever it is
// used: in 32 bits it wraps for m = 10^9, in the interpreter as on the
// targets. The call is refused; with 64-bit indices it is right.
TEST(IndexWidth, IndexArithmeticInAValueIsChecked) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < 4}"}, "out[i] = i * m", {"out: int64[4], m: int32"}, "scaled");
  for (int64_t m : {int64_t(1000), int64_t(1000000000)}) {
    for (bool wide : {false, true}) {
      LoopKernel kk = wide ? set_index_dtype(k, "int64") : k;
      std::map<std::string, int64_t> params{{"m", m}};
      auto arrays = make_host_arrays(kk, params, 1);
      ArgMap args = loom::testing::args_of(kk, arrays, params);
      if (!wide && m > 1000) {
        EXPECT_THROW(interpret(generate(kk), args), ArgumentError);
        continue;
      }
      interpret(generate(kk), args);
      for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(arrays.at("out").get(i), double(i * m)) << i << " m=" << m;
    }
  }
}
