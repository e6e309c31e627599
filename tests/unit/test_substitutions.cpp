// extract_subst, assignment_to_subst and expand_subst: their effect on the
// kernel, the CPU oracle against the untransformed kernel (alone and followed
// by precompute, the way loopy scripts use them), and their refusals.
#include <gtest/gtest.h>

#include <algorithm>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel kernel_of(const std::string& text) { return parse_kernel_text(text).kernel; }

void expect_error(const std::function<void()>& f, const std::string& part) {
  std::string e = error_of(f);
  EXPECT_NE(e.find(part), std::string::npos) << e;
}

}  // namespace

TEST(Substitutions, ExtractSubstThenPrecompute) {
  LoopKernel k = kernel_of(R"(
kernel ex
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n + 1]
  out: float32[n]
instructions:
  out[i] = a[i] * a[i] + a[i + 1] * a[i + 1]
)");
  LoopKernel e = extract_subst(k, "sq", "a[x] * a[x]", "x");
  ASSERT_EQ(e.substitutions.count("sq"), 1u);
  EXPECT_EQ(e.instructions[0].rhs.str(), "sq(i) + sq(i + 1)");
  check_transformed(k, e, {{{"n", 13}}});
  LoopKernel p = precompute(split_iname(e, "i", 4), "sq", "i_inner");
  EXPECT_EQ(p.find_temporary("sq_0")->shape[0].str(), "5");
  check_transformed(k, p, {{{"n", 13}}, {{"n", 4}}});
  // a pattern without parameters matches itself only
  LoopKernel c = extract_subst(k, "a0sq", "a[i] * a[i]");
  EXPECT_EQ(c.instructions[0].rhs.str(), "a0sq + a[i + 1] * a[i + 1]");
  check_transformed(k, c, {{{"n", 6}}});
  expect_error([&] { extract_subst(k, "a", "a[x]", "x"); }, "'a' is already taken");
  expect_error([&] { extract_subst(k, "f", "a[x] * 3", "x"); }, "occurs nowhere");
  expect_error([&] { extract_subst(k, "f", "a[x]", "y"); }, "parameter 'y' does not occur");
  expect_error([&] { extract_subst(k, "f", "a[x", "x"); }, "does not parse");
}

TEST(Substitutions, AssignmentToSubstOfAScalarAndOfAnArray) {
  LoopKernel k = kernel_of(R"(
kernel a2s
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
  out: float32[n]
instructions:
  <> t = 2 * a[i] + 1  {id=deft}
  out[i] = t * t  {id=use, dep=deft}
)");
  LoopKernel s = assignment_to_subst(k, "t");
  EXPECT_EQ(s.substitutions.count("t"), 1u);
  EXPECT_EQ(s.find_temporary("t"), nullptr);
  ASSERT_EQ(s.instructions.size(), 1u);
  EXPECT_TRUE(s.instructions[0].depends_on.empty());
  check_transformed(k, s, {{{"n", 9}}});

  LoopKernel arr = kernel_of(R"(
kernel a2s_arr
domains:
  {[i]: 0 <= i < 31}
  {[q]: 0 <= q < 29}
arguments:
  a: float32[31]
  out: float32[29]
temporaries:
  t: float32[31]
instructions:
  t[i] = 3 * a[i] + 1  {id=deft}
  out[q] = t[q] + t[q + 1] + t[q + 2]  {id=use, dep=deft}
)");
  LoopKernel r = assignment_to_subst(arr, "t");
  EXPECT_EQ(r.substitutions.at("t").params, std::vector<std::string>{"i"});
  check_transformed(arr, r, {{}});
  // then computed per tile of 8 outputs, 10 values each, in local memory on the block's threads
  SplitOptions so;
  so.outer_tag = InameTag::parse("g.0");
  so.inner_tag = InameTag::parse("l.0");
  LoopKernel p = precompute(split_iname(r, "q", 8, so), "t", "q_inner");
  EXPECT_EQ(p.find_temporary("t_0")->space, AddressSpace::Local);
  check_transformed(arr, p, {{}});
  // back again: expand_subst inlines the rule and drops it
  LoopKernel x = expand_subst(r);
  EXPECT_TRUE(x.substitutions.empty());
  check_transformed(arr, x, {{}});
}

TEST(Substitutions, AssignmentToSubstRefusals) {
  LoopKernel k = kernel_of(R"(
kernel bad
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  a: float32[n, n]
  out: float32[n]
  o2: float32[n]
temporaries:
  t: float32[n]
  u: float32[n, n]
instructions:
  t[i] = a[i, i]  {id=d1}
  t[i] = t[i] + 1  {id=d2, dep=d1}
  u[j, j] = a[j, 0]  {id=d3}
  out[i] = t[i] + u[i, i]  {id=use, dep=d2:d3}
  <> c = 0  {id=d4, if=n > 4}
  o2[i] = c  {id=use2, dep=d4}
)");
  expect_error([&] { assignment_to_subst(k, "t"); }, "only a single assignment becomes a rule");
  expect_error([&] { assignment_to_subst(k, "u"); }, "not an iname of its own");
  expect_error([&] { assignment_to_subst(k, "a"); }, "'a' is not a temporary (arguments stay arrays)");
  expect_error([&] { assignment_to_subst(k, "zz"); }, "'zz' is not a temporary");
  expect_error([&] { assignment_to_subst(k, "c"); }, "is conditional");
  // a loop bound read from memory stays a temporary: as a rule it would leave the loop of jj unbounded
  // (the random schedules found it on csr_row_sums_flagged's full_len, LOOM_RANDOM_SEED=303)
  LoopKernel rows = kernel_of(R"(
kernel rows
domains:
  {[i]: 0 <= i < n}
  {[jj]: 0 <= jj < len}
arguments:
  ptr: int32[n + 1]
  vals: float32[nnz]
  out: float32[n]
instructions:
  <int32> len = ptr[i + 1] - ptr[i]
  out[i] = sum(jj, vals[ptr[i] + jj])
)");
  expect_error([&] { assignment_to_subst(rows, "len"); }, "'len' bounds the loop of 'jj' (its domain reads it); a loop bound stays a temporary");
}

TEST(Checks, ADomainBoundedByANameWithoutAValueIsRefused) {
  // what a transformation that dropped the bound's temporary or argument would leave
  LoopKernel k = kernel_of("kernel unbound\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  n: int32\n"
                           "instructions:\n  a[i] = 1\n");
  generate(k);
  auto& args = k.arguments.edit();
  args.erase(std::remove_if(args.begin(), args.end(), [](const Argument& a) { return a.name == "n"; }), args.end());
  expect_error([&] { generate(k); }, "the domain of 'i' is bounded by 'n', which is no argument of the kernel, no iname and no temporary it computes");
}

TEST(Substitutions, ExpandSubstWithin) {
  LoopKernel k = kernel_of(R"(
kernel ew
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
  x: float32[n]
  y: float32[n]
instructions:
  f(v) := 2 * a[v]
  x[i] = f(i)  {id=s1}
  y[i] = f(i) + 1  {id=s2}
)");
  LoopKernel one = expand_subst(k, "id:s1");
  EXPECT_EQ(one.substitutions.count("f"), 1u);  // s2 still calls it
  EXPECT_EQ(one.instruction("s1").rhs.str(), "2 * a[i]");
  check_transformed(k, one, {{{"n", 7}}});
  LoopKernel all = expand_subst(one);
  EXPECT_TRUE(all.substitutions.empty());
  check_transformed(k, all, {{{"n", 7}}});
  expect_error([&] { expand_subst(k, "id:("); }, "expand_subst");
}

// An array used only inside a rule's body is an argument too, with its shape
// inferred from the expanded uses (as loopy infers it).
TEST(Substitutions, ArraysUsedOnlyInRuleBodiesAreInferred) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "f(x) := 2 * a[x] + 1\nout[i] = f(i) + f(i + 2)");
  const Argument* a = k.find_argument("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->shape.size(), 1u);
  EXPECT_EQ(a->shape[0].str(), "n + 2");
  check_transformed(k, precompute(split_iname(k, "i", 8), "f", "i_inner"), {{{"n", 19}}});
}
