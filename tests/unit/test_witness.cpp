// Witness points (find_point) and the questions they answer without isl:
// constant_range, takes_two_values and holds_on_iteration_domain must give
// isl's answer on every iname and on random affine conditions of every
// example and conformance kernel (transformed), and find_point must never
// return a point that breaks a constraint.
#include <gtest/gtest.h>
#include <isl/set.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {

std::vector<LoopKernel> transformed_kernels() {
  std::vector<std::string> files;
  for (auto& n : loom::testing::example_names()) files.push_back(loom::testing::source_dir() + "/examples/" + n + ".loom");
  for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/tests/conformance"))
    if (e.path().extension() == ".loom") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<LoopKernel> out;
  for (auto& f : files) {
    std::ifstream in(f);
    std::stringstream s;
    s << in.rdbuf();
    try {
      KernelFile kf = parse_kernel_text(s.str(), f);
      out.push_back(apply_transforms(kf.kernel, kf.transforms));
    } catch (const std::exception&) {  // (kernels that are refused on purpose)
    }
  }
  return out;
}

// isl's answers, asked the long way (projection, then extrema or a subset test)
std::optional<std::pair<int64_t, int64_t>> isl_range(const LoopKernel& k, const std::string& iname) {
  isl::set d = islu::iteration_domain(k, {iname});
  int64_t ends[2];
  for (int max = 0; max < 2; ++max) {
    isl::val v = isl::manage(max ? isl_set_dim_max_val(d.copy(), 0) : isl_set_dim_min_val(d.copy(), 0));
    if (v.is_null() || !v.is_int()) return std::nullopt;  // unbounded (or empty)
    ends[max] = v.get_num_si();
  }
  return std::make_pair(ends[0], ends[1]);
}

Expr as_expr(const AffineConstraint& c) {
  Expr e = make_int(c.constant);
  for (auto& [v, a] : c.coef) e = make_binary(BinOp::Add, e, make_binary(BinOp::Mul, make_int(a), make_var(v)));
  return e;
}

bool isl_holds(const LoopKernel& k, const std::vector<std::string>& inames, const AffineConstraint& c) {
  isl::set d = islu::iteration_domain(k, inames);
  if (k.assumptions.defined()) d = d.intersect_params(islu::to_isl(k.assumptions));
  isl::space sp = d.space();
  for (auto& [v, a] : c.coef)
    if (isl_space_find_dim_by_name(sp.get(), isl_dim_set, v.c_str()) < 0 && isl_space_find_dim_by_name(sp.get(), isl_dim_param, v.c_str()) < 0)
      sp = isl::manage(isl_space_add_param_id(sp.release(), isl_id_alloc(isl_context(), v.c_str(), nullptr)));
  d = isl::manage(isl_set_align_params(d.release(), sp.copy()));
  isl::set ok = islu::condition_set(make_binary(BinOp::Ge, as_expr(c), make_int(0)), sp);
  return d.is_subset(ok);
}

}  // namespace

TEST(Witness, FoundPointsSatisfyEveryConstraint) {
  // 0 <= i < 16, 0 <= 16 * o + i < n, and i >= 12 with o fixed to 3
  auto con = [](std::map<std::string, int64_t> coef, int64_t constant) { return AffineConstraint{coef, constant}; };
  std::vector<AffineConstraint> cs = {con({{"i", 1}}, 0), con({{"i", -1}}, 15), con({{"o", 16}, {"i", 1}}, 0),
                                      con({{"n", 1}, {"o", -16}, {"i", -1}}, -1), con({{"i", 1}}, -12)};
  auto p = find_point(cs, {{"o", 3}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->at("o"), 3);
  EXPECT_GE(p->at("i"), 12);
  EXPECT_GE(p->at("n"), 16 * 3 + p->at("i") + 1);
  // no point at all: i >= 1 and i <= 0
  EXPECT_FALSE(find_point({con({{"i", 1}}, -1), con({{"i", -1}}, 0)}, {}));
  // a fixed value outside the constraints
  EXPECT_FALSE(find_point(cs, {{"i", 16}}));
}

TEST(Witness, RangesAndConditionsAgreeWithIsl) {
  std::mt19937 rng(7);
  int ranges = 0, conditions = 0;
  for (auto& k : transformed_kernels()) {
    for (auto& iname : k.all_inames()) {
      auto expected = isl_range(k, iname);
      EXPECT_EQ(islu::constant_range(k, iname), expected) << k.name << ": " << iname;
      EXPECT_EQ(islu::takes_two_values(k, iname), !expected || expected->second > expected->first) << k.name << ": " << iname;
      ++ranges;
    }
    auto params = k.parameters();
    for (auto& insn : k.instructions) {
      std::vector<std::string> inames(insn.within_inames.begin(), insn.within_inames.end());
      if (inames.empty()) continue;
      for (int t = 0; t < 4; ++t) {
        // a random condition over up to two of the instruction's inames and one parameter
        AffineConstraint c;
        std::vector<std::string> asked;
        for (int v = 0; v < 2; ++v) {
          const std::string& n = inames[rng() % inames.size()];
          c.coef[n] += int64_t(rng() % 33) - 16;
          if (std::find(asked.begin(), asked.end(), n) == asked.end()) asked.push_back(n);
        }
        if (!params.empty() && rng() % 2) c.coef[params[rng() % params.size()]] += int64_t(rng() % 5) - 2;
        for (auto it = c.coef.begin(); it != c.coef.end();) it = it->second == 0 ? c.coef.erase(it) : std::next(it);
        c.constant = int64_t(rng() % 4001) - 2000;
        std::vector<std::string> in_set;  // (the question is over the inames c names)
        for (auto& n : asked)
          if (c.coef.count(n)) in_set.push_back(n);
        isl::set assumptions = k.assumptions.defined() ? islu::to_isl(k.assumptions) : isl::set();
        auto holds = islu::holds_on_iteration_domain(k, in_set, c, assumptions);
        ASSERT_TRUE(holds) << k.name;
        EXPECT_EQ(*holds, isl_holds(k, in_set, c)) << k.name << ": " << as_expr(c).str() << " >= 0 over " << insn.id;
        ++conditions;
      }
    }
  }
  EXPECT_GT(ranges, 200);
  EXPECT_GT(conditions, 200);
}
