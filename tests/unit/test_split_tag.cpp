// split_iname and tag_inames: their effect on domains and instructions, the
// errors they raise, and oracle tests (transformed vs untransformed kernel on
// random inputs, sizes that are not multiples of the split).
#include <gtest/gtest.h>

#include "loom/isl_util.h"
#include "oracle.h"

using namespace loom;
using loom::testing::compare_kernels;

namespace {
LoopKernel vadd() { return make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i] + b[i]", {"...\n"}, "vadd"); }

std::string domain_of(const LoopKernel& k, std::vector<std::string> inames) {
  return islu::from_isl(islu::iteration_domain(k, inames)).str();
}
}  // namespace

TEST(SplitIname, DomainBeforeAndAfter) {
  LoopKernel k = vadd();
  EXPECT_EQ(domain_of(k, {"i"}), "[n] -> { [i] : 0 <= i < n }");
  LoopKernel s = split_iname(k, "i", 16);
  EXPECT_FALSE(s.has_iname("i"));
  EXPECT_EQ(s.all_inames(), (std::vector<std::string>{"i_outer", "i_inner"}));
  // the same points: i = 16*i_outer + i_inner, 0 <= i_inner < 16, 0 <= i < n
  isl::set after = islu::iteration_domain(s, {"i_outer", "i_inner"});
  isl::set expected(after.ctx(), "[n] -> { [o, ii] : 0 <= ii < 16 and 0 <= 16o + ii < n }");
  EXPECT_TRUE(after.is_equal(expected)) << islu::from_isl(after).str();
  EXPECT_EQ(s.instructions[0].within_inames, (std::set<std::string>{"i_inner", "i_outer"}));
  EXPECT_EQ(s.instructions[0].rhs.str(), "a[16 * i_outer + i_inner] + b[16 * i_outer + i_inner]");
}

TEST(SplitIname, TagsNamesAndReductionInames) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j])", {"..."});
  SplitOptions o;
  o.outer_tag = InameTag{InameTag::Group, 0};
  o.inner_tag = InameTag{InameTag::Local, 0};
  LoopKernel s = split_iname(k, "i", 32, o);
  EXPECT_EQ(s.tag_of("i_outer").str(), "g.0");
  EXPECT_EQ(s.tag_of("i_inner").str(), "l.0");
  SplitOptions names;
  names.outer_iname = "jo";
  names.inner_iname = "ji";
  LoopKernel r = split_iname(s, "j", 8, names);
  auto red = r.instructions[0].rhs.as<Reduce>();
  ASSERT_TRUE(red);
  EXPECT_EQ(red->inames, (std::vector<std::string>{"jo", "ji"}));
  EXPECT_EQ(red->body.str(), "a[32 * i_outer + i_inner, 8 * jo + ji]");
}

TEST(SplitIname, DependentDomainParameterIsSubstituted) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j <= i}"}, "out[i] = sum(j, a[j])", {"..."});
  LoopKernel s = split_iname(k, "i", 4);
  // the second domain now depends on i_outer and i_inner
  auto params = s.domains[1].params();
  EXPECT_NE(std::find(params.begin(), params.end(), "i_outer"), params.end());
  EXPECT_EQ(compare_kernels(k, s, {{"n", 13}}), "");
}

TEST(SplitIname, Errors) {
  LoopKernel k = vadd();
  auto message = [](auto f) {
    try {
      f();
    } catch (const TransformError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { split_iname(k, "q", 4); }), "split_iname('q', 4) on kernel 'vadd': no iname 'q'");
  EXPECT_EQ(message([&] { split_iname(k, "i", 0); }), "split_iname('i', 0) on kernel 'vadd': the inner length must be at least 1");
  LoopKernel t = tag_inames(k, "i:g.0");
  EXPECT_NE(message([&] { split_iname(t, "i", 4); }).find("is tagged 'g.0'; split it before tagging"), std::string::npos);
  SplitOptions clash;
  clash.outer_iname = "a";
  EXPECT_NE(message([&] { split_iname(k, "i", 4, clash); }).find("the name 'a' is already used"), std::string::npos);
}

TEST(TagInames, SetsAndChecksTags) {
  LoopKernel k = split_iname(vadd(), "i", 64);
  LoopKernel t = tag_inames(k, "i_outer:g.0, i_inner:l.0");
  EXPECT_EQ(t.tag_of("i_outer").str(), "g.0");
  EXPECT_EQ(t.tag_of("i_inner").str(), "l.0");
  EXPECT_EQ(tag_inames(t, "i_inner:for").tag_of("i_inner").str(), "for");
  EXPECT_THROW(tag_inames(k, "x:g.0"), TransformError);
  EXPECT_THROW(tag_inames(k, "i_outer:g.7"), TransformError);
  EXPECT_THROW(tag_inames(t, "i_outer:g.1"), TransformError);  // already g.0
  EXPECT_THROW(tag_inames(k, "i_outer"), TransformError);
  EXPECT_EQ(tag_inames(k, "i_inner:unr").tag_of("i_inner").kind, InameTag::Unroll);
}

TEST(Registry, ScriptStepsReachTransformsByName) {
  LoopKernel k = vadd();
  auto steps = parse_transform_script("split_iname i 128 outer_tag=g.0 inner_tag=l.0\n");
  LoopKernel t = apply_transforms(k, steps);
  EXPECT_EQ(t.tag_of("i_inner").str(), "l.0");
  EXPECT_THROW(apply_transforms(k, parse_transform_script("split_iname i\n")), TransformError);  // missing inner_length
  EXPECT_THROW(apply_transforms(k, parse_transform_script("split_iname i x\n")), TransformError);
  EXPECT_THROW(apply_transforms(k, parse_transform_script("spilt_iname i 4\n")), TransformError);
  EXPECT_THROW(apply_transforms(k, parse_transform_script("split_iname i 4 outer_tag=g.9\n")), TransformError);
  EXPECT_THROW(apply_transforms(k, parse_transform_script("split_iname i 4 colour=red\n")), TransformError);
  EXPECT_NE(transform_registry().find("tag_inames"), nullptr);
}

// ---- oracle tests: the reference interpreter runs both kernels ----

TEST(SplitOracle, VectorAddWithAndWithoutTail) {
  LoopKernel k = vadd();
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    EXPECT_SAME_RESULTS(k, split_iname(k, "i", 16), {{"n", n}});
    EXPECT_SAME_RESULTS(k, tag_inames(split_iname(k, "i", 16), "i_outer:g.0, i_inner:l.0"), {{"n", n}});
  }
  // split twice, unrolled innermost
  LoopKernel t = split_iname(split_iname(k, "i", 32), "i_inner", 4);
  t = tag_inames(t, "i_outer:g.0, i_inner_outer:l.0, i_inner_inner:unr");
  EXPECT_SAME_RESULTS(k, t, {{"n", 77}});
}

TEST(SplitOracle, ReductionInameSplitAndNonMultipleSizes) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = sum(j, a[i, j] * 2)", {"..."});
  LoopKernel t = split_iname(tag_inames(split_iname(k, "i", 8), "i_outer:g.0, i_inner:l.0"), "j", 5);
  for (auto [n, m] : {std::pair{13, 7}, {8, 5}, {1, 1}, {30, 0}}) EXPECT_SAME_RESULTS(k, t, {{"n", n}, {"m", m}});
}

TEST(SplitOracle, TaggedExamplesMatchTheirUntransformedKernels) {
  for (const std::string& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    LoopKernel t = apply_transforms(f.kernel, f.transforms);
    // 37: not a multiple of any split (where the assumptions allow it), and the file's defaults
    for (auto& p : loom::testing::example_sizes(f, t, {37})) EXPECT_SAME_RESULTS(f.kernel, t, p) << name;
  }
}

TEST(SplitOracle, OracleDetectsAWrongTransformation) {
  // the oracle must be able to fail: a kernel that skips the last element
  LoopKernel k = vadd();
  LoopKernel wrong = make_kernel({"{[i]: 0 <= i < n - 1}"}, "out[i] = a[i] + b[i]", {"a: float32[n], b: float32[n], out: float32[n]", "..."}, "vadd");
  EXPECT_NE(compare_kernels(k, wrong, {{"n", 10}}), "");
  LoopKernel off = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i] - b[i]", {"a: float32[n], b: float32[n], out: float32[n]"}, "vadd");
  EXPECT_NE(compare_kernels(k, off, {{"n", 10}}), "");
}
