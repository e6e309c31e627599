// The reference interpreter against values computed by hand: it is the
// oracle of the other tests, so it is checked on its own.
#include <gtest/gtest.h>

#include "loom/interpreter.h"
#include "loom/cuda.h"
#include "oracle.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

using namespace loom;

TEST(Interpreter, AxpyWithAFloatScalarArgument) {
  KernelFile f = loom::testing::example("axpy");
  std::map<std::string, int64_t> params{{"n", 21}};
  auto arrays = make_host_arrays(f.kernel, params, 9);
  HostArray x = arrays.at("x"), y0 = arrays.at("y");
  interpret(generate(apply_transforms(f.kernel, f.transforms)), loom::testing::args_of(f.kernel, arrays, params, 2.5));
  for (int64_t i = 0; i < 21; ++i)
    EXPECT_FLOAT_EQ(float(arrays.at("y").get(i)), float(2.5f * float(x.get(i)) + float(y0.get(i)))) << i;
}

TEST(Interpreter, IntegerSemanticsFollowPython) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "q[i] = (i - 5) // 3\nr[i] = (i - 5) % 3\np[i] = 2 ** i",
                             {"q: int32[n], r: int32[n], p: int64[n]", "..."});
  std::map<std::string, int64_t> params{{"n", 10}};
  auto arrays = make_host_arrays(k, params, 1);
  interpret(generate(k), loom::testing::args_of(k, arrays, params));
  for (int64_t i = 0; i < 10; ++i) {
    int64_t a = i - 5;
    int64_t fq = a >= 0 ? a / 3 : -((-a + 2) / 3);
    EXPECT_EQ(arrays.at("q").get(i), fq) << i;
    EXPECT_EQ(arrays.at("r").get(i), a - 3 * fq) << i;
    EXPECT_EQ(arrays.at("p").get(i), double(int64_t(1) << i)) << i;
  }
}

TEST(Interpreter, OutOfBoundsAccessIsReported) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i + 1]", {"a: float32[n], out: float32[n]"});
  auto arrays = make_host_arrays(k, {{"n", 4}}, 1);
  EXPECT_THROW(interpret(generate(k), loom::testing::args_of(k, arrays, {{"n", 4}})), Error);
}

TEST(Arguments, ParametersFromShapesAndClearErrors) {
  KernelFile f = loom::testing::example("matmul");
  HostArray a(types::float32, {4, 3}), b(types::float32, {3, 5}), c(types::float32, {4, 5});
  ArgMap args{{"a", ArgValue::of(a.ref())}, {"b", ArgValue::of(b.ref())}, {"c", ArgValue::of(c.ref())}};
  auto p = bind_parameters(f.kernel, args);
  EXPECT_EQ(p, (std::map<std::string, int64_t>{{"n", 4}, {"l", 3}, {"m", 5}}));
  HostArray bad(types::float32, {3, 6});
  args["b"] = ArgValue::of(bad.ref());
  try {
    bind_parameters(f.kernel, args);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'c' must have shape (4, 6)"), std::string::npos) << e.what();
  }
  HostArray d(types::float64, {4, 3});
  args["b"] = ArgValue::of(b.ref());
  args["a"] = ArgValue::of(d.ref());
  EXPECT_THROW(bind_parameters(f.kernel, args), ArgumentError);
  args.erase("a");
  EXPECT_THROW(bind_parameters(f.kernel, args), ArgumentError);
}

namespace {
SplitOptions slabs_0_1() {
  SplitOptions o;
  o.slabs = {0, 1};
  return o;
}
}  // namespace

// Code generated under "assume" may drop bounds checks (slabs, exact grids),
// so a call whose sizes break the assumptions is refused by every runner,
// with the values and the assumptions in the message, before anything runs.
TEST(Arguments, CallsThatBreakTheAssumptionsAreRefused) {
  KernelFile f = loom::testing::example("matmul");
  LoopKernel k = assume(split_iname(f.kernel, "i", 4, slabs_0_1()),
                        "n >= 1 and m mod 2 = 0");
  for (auto& bad : std::vector<std::map<std::string, int64_t>>{{{"n", 0}, {"m", 4}, {"l", 3}},
                                                              {{"n", 5}, {"m", 3}, {"l", 3}}}) {
    auto arrays = make_host_arrays(k, bad, 1);
    try {
      interpret(generate(k), loom::testing::args_of(k, arrays, bad));
      ADD_FAILURE() << "the interpreter ran a call that breaks the assumptions";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("break the kernel's assumptions"), std::string::npos) << e.what();
    }
#ifdef LOOM_HAS_CPU_TARGET
    EXPECT_THROW(cpu::CpuKernel(k).call(loom::testing::args_of(k, arrays, bad)), ArgumentError);
#endif
  }
  // sizes inside the assumptions run, repeatedly (the accepted values are cached)
  for (int rep = 0; rep < 2; ++rep) EXPECT_SAME_RESULTS(f.kernel, k, {{"n", 9}, {"m", 6}, {"l", 5}});
}

