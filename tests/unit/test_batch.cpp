// to_batched (transforms/batch.cpp): a batch of problems. The batched kernel
// computes, slice by slice, what the kernel does on each problem (checked on
// the interpreter against the kernel run per slice), schedules of it are
// checked against it as written, and bad requests are refused.
#include <gtest/gtest.h>

#include "loom/interpreter.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel matvec() {
  return make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j] * x[j]) + alpha",
                     {"a: float32[n, m], x: float32[m], out: float32[n], alpha: float32"}, "matvec");
}

}  // namespace

TEST(ToBatched, EachSliceIsTheKernelsResult) {
  LoopKernel k = matvec();
  LoopKernel b = to_batched(k, "nb", {"a", "x", "out", "alpha"});
  ASSERT_NE(b.find_argument("nb"), nullptr);
  EXPECT_EQ(b.find_argument("alpha")->kind, Argument::Array);
  std::map<std::string, int64_t> p{{"n", 13}, {"m", 7}, {"nb", 3}};
  auto arrays = make_host_arrays(b, p, 5);
  interpret(generate(b), loom::testing::args_of(b, arrays, p));
  for (int64_t s = 0; s < 3; ++s) {
    std::map<std::string, int64_t> q{{"n", 13}, {"m", 7}};
    auto one = make_host_arrays(k, q, 1);
    for (int64_t e = 0; e < 13 * 7; ++e) one.at("a").set(e, arrays.at("a").get(s * 13 * 7 + e));
    for (int64_t e = 0; e < 7; ++e) one.at("x").set(e, arrays.at("x").get(s * 7 + e));
    ArgMap args = loom::testing::args_of(k, one, q);
    args["alpha"] = ArgValue::of_float(arrays.at("alpha").get(s));
    interpret(generate(k), args);
    for (int64_t i = 0; i < 13; ++i) EXPECT_FLOAT_EQ(float(arrays.at("out").get(s * 13 + i)), float(one.at("out").get(i))) << s << ", " << i;
  }
}

TEST(ToBatched, SchedulesOfTheBatchAreCheckedAgainstIt) {
  // a shared x (not batch-varying), a local prefetch batched with the problems, the batch on a block axis
  LoopKernel b = to_batched(matvec(), "4", {"a", "out"});
  LoopKernel t = apply_transforms(b, parse_transform_script("split_iname i 8 outer_tag=g.0 inner_tag=l.0\n"
                                                            "tag_inames ibatch:g.1\n"
                                                            "split_iname j 8\n"
                                                            "add_prefetch x j_inner default_tag=l.auto\n"));
  check_transformed(b, t, {{{"n", 13}, {"m", 9}, {"alpha", 2}}, {{"n", 16}, {"m", 32}, {"alpha", 2}}});
  // a temporary of the kernel gets the batch axis unless sequential
  LoopKernel w = parse_kernel_text("kernel w\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n], out: float32[n]\n"
                                   "temporaries:\n  t: float32[64] global\ninstructions:\n  t[i] = 2 * a[i]  {id=w}\n"
                                   "  out[i] = t[i] + 1  {dep=w}\nassumptions:\n  n <= 64\n")
                     .kernel;
  EXPECT_EQ(to_batched(w, "3", {"a", "out"}).find_temporary("t")->shape.size(), 2u);
  EXPECT_EQ(to_batched(w, "3", {"a", "out"}, "ibatch", true).find_temporary("t")->shape.size(), 1u);
  LoopKernel wb = to_batched(w, "3", {"a", "out"});
  check_transformed(wb, apply_transforms(wb, parse_transform_script("tag_inames ibatch:g.0\nsplit_iname i 16 inner_tag=l.0\n")),
                    {{{"n", 37}}, {{"n", 64}}});
}

TEST(ToBatched, BadRequestsAreRefused) {
  LoopKernel k = matvec();
  EXPECT_NE(error_of([&] { to_batched(k, "nb", {"b"}); }).find("no argument or temporary 'b'"), std::string::npos);
  EXPECT_NE(error_of([&] { to_batched(k, "nb", {"n"}); }).find("'n' is a parameter"), std::string::npos);
  EXPECT_NE(error_of([&] { to_batched(k, "i", {"a"}); }).find("already an iname"), std::string::npos);
  EXPECT_NE(error_of([&] { to_batched(k, "4x", {"a"}); }).find("integer or a parameter's name"), std::string::npos);
}
