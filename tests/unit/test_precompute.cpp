// precompute: the effect (a temporary filled by a compute instruction over
// new inames, uses rewritten to read it), the CPU oracle against the
// untransformed kernel at multiple and non-multiple sizes, CUDA C that NVRTC
// compiles, and the refusals with their reasons.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

// a 3-point stencil written through a rule, so each value is used three times
LoopKernel stencil() {
  return parse_kernel_text(R"(
kernel st
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n + 2]
  out: float32[n]
instructions:
  f(x) := 2 * a[x] + 1
  out[i] = f(i) + f(i + 1) + f(i + 2)
)").kernel;
}

}  // namespace

TEST(Precompute, PrivateTileOfAStencilRule) {
  LoopKernel k = stencil();
  LoopKernel s = split_iname(k, "i", 16);
  PrecomputeOptions o;
  o.precompute_inames = "x0";
  LoopKernel p = precompute(s, "f", "i_inner", o);
  const Temporary* t = p.find_temporary("f_0");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->space, AddressSpace::Private);  // no sweep iname is local
  ASSERT_EQ(t->shape.size(), 1u);
  EXPECT_EQ(t->shape[0].str(), "18");  // 16 + the two halo values
  EXPECT_TRUE(p.has_iname("x0"));
  // the compute runs only where a value is used: x0 stays inside 16*i_outer + x0 < n + 2
  const Instruction& c = p.instruction("compute_f");
  EXPECT_FALSE(c.predicates.empty());
  EXPECT_EQ(p.str().find("f(i_inner"), std::string::npos) << p.str();
  check_transformed(k, p, {{{"n", 37}}, {{"n", 16}}, {{"n", 1}}, {{"n", 0}}});
}

TEST(Precompute, LocalTileOnTheBlocksThreads) {
  LoopKernel k = stencil();
  SplitOptions so;
  so.outer_tag = InameTag::parse("g.0");
  so.inner_tag = InameTag::parse("l.0");
  LoopKernel p = precompute(split_iname(k, "i", 32, so), "f", "i_inner");
  const Temporary* t = p.find_temporary("f_0");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->space, AddressSpace::Local);  // a local sweep iname: values shared by the block
  // 34 values on 32 threads: the compute iname is split by the block's extent
  EXPECT_EQ(p.tag_of("f_dim_0_inner").str(), "l.0");
  check_transformed(k, p, {{{"n", 100}}, {{"n", 64}}, {{"n", 5}}});
}

// A rule whose parameter is named like the iname (f(i) := 3 * a[i] - 1, as
// loopy's users write): split_iname i rewrote the rule's own i into
// 32 * i_outer + i_inner, and the precompute then computed the wrong values
// (every element wrong, on every target). The rule's parameter is its own.
TEST(Precompute, ARuleParameterNamedLikeTheInameIsTheRulesOwn) {
  LoopKernel k = parse_kernel_text(R"(
kernel pr
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n + 1]
  out: float32[n]
instructions:
  f(i) := 3 * a[i] - 1
  out[i] = f(i) * f(i + 1)
)").kernel;
  SplitOptions so;
  so.outer_tag = InameTag::parse("g.0");
  so.inner_tag = InameTag::parse("l.0");
  LoopKernel s = split_iname(k, "i", 32, so);
  EXPECT_EQ(s.substitutions.at("f").body.str().find("i_outer"), std::string::npos) << s.substitutions.at("f").body.str();
  LoopKernel p = precompute(s, "f", "i_inner");
  check_transformed(k, p, {{{"n", 100}}, {{"n", 64}}, {{"n", 5}}});
  // and through the other rewrites of inames and parameters
  check_transformed(k, rename_iname(k, "i", "q"), {{{"n", 9}}});
  check_transformed(k, join_inames(split_iname(k, "i", 4), "i_outer, i_inner"), {{{"n", 9}}});
  LoopKernel by_n = parse_kernel_text("kernel pn\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n + 1], out: float32[n]\n"
                                      "instructions:\n  f(n) := 3 * a[n] - 1\n  out[i] = f(i) * f(i + 1)\n")
                        .kernel;
  check_transformed(by_n, fix_parameters(by_n, {{"n", 7}}), {{{"n", 7}}});
}

TEST(Precompute, TwoDimensionalRuleWithAStorageAxisSubset) {
  LoopKernel k = parse_kernel_text(R"(
kernel outer
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
arguments:
  a: float32[n]
  b: float32[m]
  out: float32[n, m]
instructions:
  g(x, y) := a[x] * b[y] + x
  out[i, j] = g(i, j)
)").kernel;
  LoopKernel s = split_iname(k, "j", 8);
  PrecomputeOptions o;
  o.storage_axes = "y";
  LoopKernel p = precompute(s, "g", "j_inner", o);
  ASSERT_EQ(p.find_temporary("g_0")->shape.size(), 1u);
  check_transformed(k, p, {{{"n", 5}, {"m", 19}}, {{"n", 3}, {"m", 8}}});
  // all axes: a 1x8 box, the i axis of extent 1
  LoopKernel q = precompute(s, "g", "j_inner");
  EXPECT_EQ(q.find_temporary("g_0")->shape.size(), 2u);
  check_transformed(k, q, {{{"n", 5}, {"m", 19}}});
}

TEST(Precompute, ThroughTheRegistryWithLoopysArguments) {
  LoopKernel k = stencil();
  auto script = parse_transform_script(
      "split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"
      "precompute f i_inner temporary_name=ftile precompute_inames=xx default_tag=l.auto compute_insn_id=fill\n");
  LoopKernel p = apply_transforms(k, script);
  EXPECT_NE(p.find_temporary("ftile"), nullptr);
  EXPECT_EQ(p.instruction("fill").within_inames.count("i_outer"), 1u);
  check_transformed(k, p, {{{"n", 45}}});
}

TEST(Precompute, Refusals) {
  LoopKernel k = split_iname(stencil(), "i", 16);
  auto expect = [](const std::function<void()>& f, const std::string& part) {
    std::string e = error_of(f);
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  expect([&] { precompute(k, "g", "i_inner"); }, "no substitution rule 'g'");
  expect([&] { precompute(k, "f", "q"); }, "no iname 'q'");
  expect([&] { precompute(k, "f", "i_outer"); }, "depends on the parameters");
  PrecomputeOptions bad_axis;
  bad_axis.storage_axes = "z";
  expect([&] { precompute(k, "f", "i_inner", bad_axis); }, "storage axis 'z' is not a parameter of rule 'f'");
  PrecomputeOptions taken;
  taken.temporary_name = "a";
  expect([&] { precompute(k, "f", "i_inner", taken); }, "temporary_name 'a' is already taken");
  LoopKernel nonaffine = parse_kernel_text(R"(
kernel na
domains:
  {[i]: 0 <= i < 8}
arguments:
  a: float32[64]
  out: float32[8]
instructions:
  f(x) := a[x]
  out[i] = f(i * i)
)").kernel;
  expect([&] { precompute(nonaffine, "f", "i"); }, "is not affine");
  LoopKernel body_uses_sweep = parse_kernel_text(R"(
kernel bs
domains:
  {[i]: 0 <= i < 8}
arguments:
  a: float32[8]
  out: float32[8]
instructions:
  f(x) := a[x] + i
  out[i] = f(i)
)").kernel;
  // loopy's reading: a sweep iname the body uses directly is one more argument
  // of the rule (f(x, i)), so it becomes a storage axis; left out of the
  // storage axes, it is refused
  LoopKernel lifted = precompute(body_uses_sweep, "f", "i");
  EXPECT_EQ(lifted.substitutions.at("f").params, (std::vector<std::string>{"x", "i"}));
  EXPECT_EQ(lifted.find_temporary("f_0")->shape.size(), 2u);
  check_transformed(body_uses_sweep, lifted, {{}});
  PrecomputeOptions only_x;
  only_x.storage_axes = "x";
  expect([&] { precompute(body_uses_sweep, "f", "i", only_x); }, "depends on sweep iname 'i' but is not a storage axis");
}

// loopy's test_precompute_nested_subst: rules that use the split iname
// directly (E := a[i], D := E * E) take the swept part as an argument, through
// the nested rule too, and the compute instruction runs over the new inames.
TEST(Precompute, NestedRulesThatUseTheSweepInameDirectly) {
  LoopKernel k = parse_kernel_text(R"(
kernel nested
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n]
  b: float32[n]
instructions:
  E := a[i]
  D := E * E
  b[i] = D
)").kernel;
  LoopKernel s = split_iname(k, "i", 16, {InameTag{InameTag::Group, 0}, InameTag{InameTag::Local, 0}});
  LoopKernel p = precompute(s, "D", "i_inner");
  EXPECT_EQ(p.substitutions.at("E").params, std::vector<std::string>{"i_inner"});
  EXPECT_EQ(p.substitutions.at("D").params, std::vector<std::string>{"i_inner"});
  EXPECT_EQ(p.find_temporary("D_0")->space, AddressSpace::Local);
  check_transformed(k, p, {{{"n", 45}}, {{"n", 16}}, {{"n", 1}}});
}
