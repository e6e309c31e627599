// Affine constraints read straight from domains, without isl operations:
// what codegen's fast path and the cheap access proofs work with. A domain
// qualifies when it is one basic set without existentials (what loop domains
// and split_iname produce; an equality, such as an iname of extent 1, is read
// as two inequalities); otherwise reading it fails with the reason, and
// callers fall back to isl.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/kernel.h"

namespace loom {

// sum(coef[v] * v) + constant >= 0
struct AffineConstraint {
  std::map<std::string, int64_t> coef;  // variable -> coefficient (non-zero)
  int64_t constant = 0;
  bool operator==(const AffineConstraint& o) const { return coef == o.coef && constant == o.constant; }
  bool operator<(const AffineConstraint& o) const {
    return coef != o.coef ? coef < o.coef : constant < o.constant;
  }
};

// The constraints of each domain of k; nullopt (and why) when some domain
// does not qualify.
std::optional<std::vector<std::vector<AffineConstraint>>> read_domain_constraints(const LoopKernel& k, std::string* why_not = nullptr);
// The constraints of one domain (memoized by its set); nullopt when it does not qualify.
std::optional<std::vector<AffineConstraint>> read_domain_constraints(const Domain& d);

// The constraints an instruction runs under: those of the domains its inames
// need, connected to its inames, with the other inames projected out where
// that is exact without isl (coefficients +-1); nullopt (and why) otherwise.
std::optional<std::vector<AffineConstraint>> instruction_constraints(
    const LoopKernel& k, const std::vector<std::vector<AffineConstraint>>& domains, const Instruction& insn,
    std::string* why_not = nullptr);

// Constant ranges of variables by interval propagation over constraints:
// each variable in `ranges` (start with (INT64_MIN, INT64_MAX) for unknown,
// or a known range) is tightened by every constraint whose other variables
// have finite ranges, until nothing changes. Unbounded ends stay INT64_MIN/MAX.
using Ranges = std::map<std::string, std::pair<int64_t, int64_t>>;
void propagate_ranges(const std::vector<AffineConstraint>& cs, Ranges& ranges);
// Every variable of cs, from unknown, propagated: a box around the points of
// cs (every point is inside it; an end need not be attained).
Ranges propagated_ranges(const std::vector<AffineConstraint>& cs);

// p - q + shift (as a constraint: p - q + shift >= 0), without zero coefficients.
AffineConstraint affine_difference(AffineConstraint p, const AffineConstraint& q, int64_t shift);

// The constraints a condition (or, negated, its negation) puts on its
// variables: affine comparisons (a < b: b - a - 1 >= 0; a == b: two), the
// operands of `and`, `not`. Other conditions add nothing (fewer facts keep
// a proof sound).
void comparison_constraints(const Expr& g, bool negated, std::vector<AffineConstraint>& out);

// An integer point satisfying every constraint of cs, with the variables of
// `fixed` at their values, found greedily (interval propagation, one
// variable at a time, ends that lower `lower_this` where given) and checked
// exactly; nullopt when the greedy search finds none (there may still be
// one: ask isl then).
std::optional<std::map<std::string, int64_t>> find_point(const std::vector<AffineConstraint>& cs, const std::map<std::string, int64_t>& fixed,
                                                          const AffineConstraint* lower_this = nullptr);

// e as sum(coef * var) + constant; nullopt when not affine with integer coefficients.
std::optional<AffineConstraint> affine_form(const Expr& e);

}  // namespace loom
