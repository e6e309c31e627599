// Witness points: an integer point that satisfies a system of affine
// constraints, found greedily without isl. A point that is found is checked
// exactly, so it settles a question in one direction (a range is attained, a
// predicate fails somewhere); a point that is not found settles nothing and
// the caller asks isl. The tuner's variants ask such questions by the
// thousand (is this guard needed? does this block index take two values?),
// and each isl answer is an integer program.
#include <algorithm>
#include <climits>

#include "loom/constraints.h"

namespace loom {

namespace {

bool finite(int64_t v) { return v != INT64_MIN && v != INT64_MAX; }

// Whether every constraint holds at p (every variable of cs must be in p).
bool satisfies(const std::vector<AffineConstraint>& cs, const std::map<std::string, int64_t>& p) {
  for (auto& c : cs) {
    int64_t sum = c.constant, term;
    for (auto& [v, a] : c.coef) {
      auto it = p.find(v);
      if (it == p.end() || __builtin_mul_overflow(a, it->second, &term) || __builtin_add_overflow(sum, term, &sum)) return false;
    }
    if (sum < 0) return false;
  }
  return true;
}

}  // namespace

std::optional<std::map<std::string, int64_t>> find_point(const std::vector<AffineConstraint>& cs, const std::map<std::string, int64_t>& fixed,
                                                          const AffineConstraint* lower_this) {
  std::map<std::string, int64_t> point = fixed;
  std::set<std::string> open;
  for (auto& c : cs)
    for (auto& [v, a] : c.coef)
      if (!point.count(v)) open.insert(v);
  // One variable at a time: the bounds the fixed ones leave (interval
  // propagation), the narrowest variable first, at the end of its range that
  // lowers `lower_this` (else its lower end); a variable with no finite end
  // takes 0. Then the point is checked exactly.
  while (!open.empty()) {
    Ranges ranges;
    for (auto& v : open) ranges[v] = {INT64_MIN, INT64_MAX};
    for (auto& [v, x] : point) ranges[v] = {x, x};
    propagate_ranges(cs, ranges);
    std::string pick;
    int best = 3;  // 0: both ends finite, 1: one end, 2: none
    uint64_t width = UINT64_MAX;
    for (auto& v : open) {
      auto [lo, hi] = ranges.at(v);
      if (finite(lo) && finite(hi) && hi < lo) return std::nullopt;  // no room left (the greedy choices, or no point at all)
      int kind = finite(lo) && finite(hi) ? 0 : finite(lo) || finite(hi) ? 1 : 2;
      uint64_t w = kind == 0 ? uint64_t(hi) - uint64_t(lo) : UINT64_MAX;
      if (kind < best || (kind == best && w < width)) pick = v, best = kind, width = w;
    }
    auto [lo, hi] = ranges.at(pick);
    int64_t dir = 0;
    if (lower_this)
      if (auto it = lower_this->coef.find(pick); it != lower_this->coef.end()) dir = it->second;
    int64_t value = 0;
    if (finite(lo) && finite(hi)) value = dir < 0 ? hi : lo;
    else if (finite(lo)) value = lo;
    else if (finite(hi)) value = hi;
    point[pick] = value;
    open.erase(pick);
  }
  if (!satisfies(cs, point)) return std::nullopt;
  return point;
}

}  // namespace loom
