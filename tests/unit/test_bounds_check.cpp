// Subscripts Loom cannot prove in bounds (i*i, idx[i]) are checked at run time
// on the CPU target and in the reference interpreter: an access outside its
// array stops the call with the instruction, the array and the index, never
// memory corruption (issue 9; loopy-compatibility item 11). `loom run`'s
// random inputs give index arrays values inside the extent they index.
#include <gtest/gtest.h>

#include <set>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "transform_check.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

using namespace loom;
using loom::testing::error_of;

namespace {

ArgMap args_of(std::map<std::string, HostArray>& arrays) {
  ArgMap args;
  for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
  return args;
}

}  // namespace

TEST(CpuBoundsCheck, RandomIndexArraysStayInsideWhatTheyIndex) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[idx[i]] = a[j2[i]] {id=scatter}",
                             {"out: float32[m]", "idx: int32[n]", "j2: int64[n]", "a: float32[7]", "..."});
  auto arrays = make_host_arrays(k, {{"n", 1000}, {"m", 13}}, 5);
  for (int64_t i = 0; i < 1000; ++i) {
    EXPECT_GE(arrays.at("idx").get(i), 0);
    EXPECT_LT(arrays.at("idx").get(i), 13);
    EXPECT_LT(arrays.at("j2").get(i), 7);
  }
  std::set<double> seen;  // spread over the range, not one value
  for (int64_t i = 0; i < 1000; ++i) seen.insert(arrays.at("idx").get(i));
  EXPECT_EQ(seen.size(), 13u);
}

TEST(CpuBoundsCheck, TheInterpreterStopsAtAnAccessOutside) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i*i] = 17", {"a: float32[n]"});
  auto arrays = make_host_arrays(k, {{"n", 10}}, 1);
  ArgMap args = args_of(arrays);
  std::string e = error_of([&] { interpret(generate(k), args); });
  EXPECT_NE(e.find("out-of-bounds access to 'a'"), std::string::npos) << e;
}

#ifdef LOOM_HAS_CPU_TARGET
TEST(CpuBoundsCheck, ANonAffineWriteOutsideStopsWithTheInstructionArrayAndIndex) {
  // loopy's a[i*i] = 17 over 0 <= i < n: once corrupted the heap on the CPU target
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "a[i*i] = 17 {id=square}", {"a: float32[n]"});
  cpu::CpuKernel ck(k);
  HostArray a(types::float32, {100});
  a.fill_random(3);
  HostArray before = a;
  ArgMap args{{"a", ArgValue::of(a.ref())}};
  std::string e = error_of([&] { ck.call(args); });
  EXPECT_NE(e.find("instruction 'square' accesses 'a' at element"), std::string::npos) << e;
  EXPECT_NE(e.find("outside its 100 elements"), std::string::npos) << e;
  // the accesses inside happened (i = 0..9), the others were skipped
  for (int64_t i = 0; i < 100; ++i) {
    bool square = false;
    for (int64_t j = 0; j < 10; ++j) square |= j * j == i;
    EXPECT_EQ(a.get(i), square ? 17.0 : before.get(i)) << i;
  }
}

TEST(CpuBoundsCheck, AScatterAndAGatherThroughIndexArrays) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[idx[i]] = a[src[i]] {id=move}",
                             {"out: float32[n]", "idx: int32[n]", "src: int32[n]", "a: float32[n]"});
  cpu::CpuKernel ck(k);
  for (int64_t n : {1, 37, 1000}) {
    auto arrays = make_host_arrays(k, {{"n", n}}, 7);
    auto reference = arrays;
    ck.call(args_of(arrays), 1);  // one worker: duplicate indices keep the last write, as the interpreter does
    interpret(generate(k), args_of(reference));
    Comparison c = compare(reference.at("out"), arrays.at("out"));
    EXPECT_TRUE(c.ok) << n << ": " << c.str();
  }
  auto arrays = make_host_arrays(k, {{"n", 50}}, 7);
  arrays.at("idx").set(17, 50);  // one past the end
  std::string e = error_of([&] { ck.call(args_of(arrays)); });
  EXPECT_NE(e.find("instruction 'move' accesses 'out' at element 50, outside its 50 elements"), std::string::npos) << e;
  arrays = make_host_arrays(k, {{"n", 50}}, 7);
  arrays.at("src").set(3, -1);
  e = error_of([&] { ck.call(args_of(arrays)); });
  EXPECT_NE(e.find("accesses 'a' at element -1"), std::string::npos) << e;
}

TEST(CpuBoundsCheck, ProvenAccessesCarryNoCheck) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 2*a[i]", {"..."});
  cpu::CpuKernel ck(k);
  EXPECT_EQ(ck.ir().find("out_of_bounds"), std::string::npos);
  LoopKernel g = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[idx[i]]", {"out: float32[n]", "idx: int32[n]", "a: float32[n]"});
  cpu::CpuKernel cg(g);
  EXPECT_NE(cg.ir().find("out_of_bounds"), std::string::npos);
}
#endif
