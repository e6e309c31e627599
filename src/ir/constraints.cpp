// Reading affine constraints from domains (see loom/constraints.h).
#include "loom/constraints.h"
#include "loom/bounded_memo.h"
#include "loom/isl_util.h"

#include <isl/constraint.h>
#include <isl/set.h>

#include <algorithm>
#include <unordered_map>
#include <optional>
#include <set>
#include <string>

namespace loom {

namespace {

struct Fail {
  std::string why;
};

bool fits(isl_val* v, int64_t& out) {
  bool ok = isl_val_is_int(v) && isl_val_get_den_si(v) == 1;
  if (ok) {
    long n = isl_val_get_num_si(v);
    out = n;
    // isl_val_get_num_si saturates silently; guard against huge values
    ok = n > -(1L << 40) && n < (1L << 40);
  }
  isl_val_free(v);
  return ok;
}

// The constraints of one basic set without existentials into out, over its
// parameters and set dimensions by name (an equality becomes two
// inequalities); returns why not ("" when read). Does not take bs.
std::string basic_set_constraints(isl_basic_set* bs, std::vector<AffineConstraint>& out) {
  if (isl_basic_set_dim(bs, isl_dim_div) != 0) return "a domain has existential variables";
  struct Ctx {
    std::vector<AffineConstraint>* out;
    std::string error;
    std::vector<std::string> names[2];  // parameters, set dimensions (read once: asking per coefficient copied the space each time)
  } ctx{&out, "", {}};
  isl_space* space = isl_basic_set_get_space(bs);
  ctx.names[0] = islu::dim_names(space, isl_dim_param);
  ctx.names[1] = islu::dim_names(space, isl_dim_set);
  isl_space_free(space);
  isl_basic_set_foreach_constraint(
      bs,
      [](isl_constraint* con, void* user) -> isl_stat {
        auto* c = static_cast<Ctx*>(user);
        AffineConstraint k;
        for (int ti = 0; ti < 2; ++ti) {
          isl_dim_type t = ti == 0 ? isl_dim_param : isl_dim_set;
          const auto& names = c->names[ti];
          for (size_t i = 0; i < names.size(); ++i) {
            if (!isl_constraint_involves_dims(con, t, unsigned(i), 1)) continue;
            int64_t v = 0;
            if (!fits(isl_constraint_get_coefficient_val(con, t, int(i)), v)) c->error = "a coefficient is too large";
            if (v == 0) continue;
            k.coef[names[i]] = v;
          }
        }
        if (!fits(isl_constraint_get_constant_val(con), k.constant)) c->error = "a constant is too large";
        c->out->push_back(k);
        if (isl_constraint_is_equality(con)) {  // (an iname of extent 1: x = 0)
          AffineConstraint neg = k;
          for (auto& [v, a] : neg.coef) a = -a;
          neg.constant = -neg.constant;
          c->out->push_back(neg);
        }
        isl_constraint_free(con);
        return isl_stat_ok;
      },
      &ctx);
  return ctx.error;
}

// cs with v projected out exactly by isl, when the result is one basic set
// without existentials (an equality becomes two inequalities); nullopt else.
std::optional<std::vector<AffineConstraint>> isl_projection(const std::vector<AffineConstraint>& cs, const std::string& v) {
  std::set<std::string> vars;
  for (auto& c : cs)
    for (auto& [x, a] : c.coef) vars.insert(x);
  std::vector<std::string> names(vars.begin(), vars.end());
  std::string text = "{ [";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  text += "] : ";
  for (size_t i = 0; i < cs.size(); ++i) {
    text += i ? " and " : "";
    text += std::to_string(cs[i].constant);
    for (auto& [x, a] : cs[i].coef) text += (a < 0 ? " - " : " + ") + std::to_string(a < 0 ? -a : a) + "*" + x;
    text += " >= 0";
  }
  text += " }";
  isl_set* s = isl_set_read_from_str(isl_context(), text.c_str());
  if (!s) return std::nullopt;
  int pos = isl_set_find_dim_by_name(s, isl_dim_set, v.c_str());
  if (pos < 0) {
    isl_set_free(s);
    return std::nullopt;
  }
  s = isl_set_remove_redundancies(isl_set_coalesce(isl_set_project_out(s, isl_dim_set, unsigned(pos), 1)));
  if (!s || isl_set_n_basic_set(s) != 1) {
    isl_set_free(s);
    return std::nullopt;
  }
  std::vector<AffineConstraint> out;
  isl_basic_set* bs = isl_set_simple_hull(isl_set_copy(s));
  isl_set_free(s);
  std::string why = basic_set_constraints(bs, out);
  isl_basic_set_free(bs);
  if (!why.empty()) return std::nullopt;
  return out;
}

std::vector<AffineConstraint> read_constraints_uncached(const Domain& d);

// The constraints of a domain that is one basic set without existentials
// (an equality becomes two inequalities). Memoized by the domain's set:
// domains are immutable and shared by every copy of a kernel, and the checks
// and code generation read the same domains again (the entry holds the
// domain, so its set's address is not reused while cached).
std::vector<AffineConstraint> read_constraints(const Domain& d) {
  struct Read {
    Domain held;
    std::vector<AffineConstraint> constraints;
    std::string why_not;
  };
  static BoundedMemo<const isl_set*, Read> memo;
  auto read = memo.find(d.get());
  if (!read) {
    Read fresh{d, {}, ""};
    try {
      fresh.constraints = read_constraints_uncached(d);
    } catch (const Fail& f) {
      fresh.why_not = f.why;
    }
    read = memo.add(d.get(), std::move(fresh));
  }
  if (!read->why_not.empty()) throw Fail{read->why_not};
  return read->constraints;
}

std::vector<AffineConstraint> read_constraints_uncached(const Domain& d) {
  isl_set* s = d.get();
  if (isl_set_n_basic_set(s) != 1) throw Fail{"a domain is a union of basic sets"};
  std::vector<AffineConstraint> out;
  std::string why;
  std::pair<std::vector<AffineConstraint>*, std::string*> ctx{&out, &why};
  isl_set_foreach_basic_set(
      s,
      [](isl_basic_set* bs, void* user) -> isl_stat {
        auto* r = static_cast<std::pair<std::vector<AffineConstraint>*, std::string*>*>(user);
        *r->second = basic_set_constraints(bs, *r->first);
        isl_basic_set_free(bs);
        return isl_stat_ok;
      },
      &ctx);
  if (!why.empty()) throw Fail{why};
  return out;
}


}  // namespace

std::optional<std::vector<AffineConstraint>> read_domain_constraints(const Domain& d) {
  try {
    return read_constraints(d);
  } catch (const Fail&) {
    return std::nullopt;
  }
}

std::optional<std::vector<std::vector<AffineConstraint>>> read_domain_constraints(const LoopKernel& k, std::string* why_not) {
  try {
    std::vector<std::vector<AffineConstraint>> out;
    for (auto& d : k.domains) out.push_back(read_constraints(d));
    return out;
  } catch (const Fail& f) {
    if (why_not) *why_not = f.why;
    return std::nullopt;
  }
}

namespace {

// The tightest value the constant bounds of one sign give v (v >= ceil(-c/a)
// for lower bounds, v <= floor(c/-a) for upper ones), when the bounds of that
// sign that mention other variables hold wherever v takes that value (checked
// over the other variables' ranges); nullopt otherwise, or without a constant bound.
std::optional<int64_t> constant_extreme(const std::string& v, const std::vector<AffineConstraint>& bounds, bool lower,
                                        const Ranges& ranges) {
  auto floor_div = [](int64_t p, int64_t q) { return p / q - ((p % q != 0) && ((p < 0) != (q < 0))); };
  std::optional<int64_t> best;
  for (auto& c : bounds) {
    if (c.coef.size() != 1) continue;
    int64_t a = c.coef.at(v);
    int64_t b = lower ? -floor_div(c.constant, a) : floor_div(c.constant, -a);  // ceil(-c/a) = -floor(c/a)
    best = !best ? b : lower ? std::max(*best, b) : std::min(*best, b);
  }
  if (!best) return std::nullopt;
  for (auto& c : bounds) {
    if (c.coef.size() == 1) continue;
    // a*v + rest >= 0 must hold for v at the extreme and rest at its smallest
    __int128 min = __int128(c.coef.at(v)) * *best + c.constant;
    for (auto& [x, a] : c.coef) {
      if (x == v) continue;
      auto it = ranges.find(x);
      if (it == ranges.end()) return std::nullopt;
      int64_t end = a > 0 ? it->second.first : it->second.second;
      if (end == INT64_MIN || end == INT64_MAX) return std::nullopt;
      min += __int128(a) * end;
    }
    if (min < 0) return std::nullopt;
  }
  return best;
}

// cs with v = value; constraints that become constant are dropped when true.
std::vector<AffineConstraint> substitute_value(const std::vector<AffineConstraint>& cs, const std::string& v, int64_t value) {
  std::vector<AffineConstraint> out;
  for (auto c : cs) {
    auto it = c.coef.find(v);
    if (it != c.coef.end()) {
      c.constant += it->second * value;
      c.coef.erase(it);
    }
    if (c.coef.empty()) {
      if (c.constant >= 0) continue;
      out.push_back(c);  // never true: kept, so the instruction gets a false guard
      continue;
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

}  // namespace

namespace {
std::optional<std::vector<AffineConstraint>> instruction_constraints_uncached(
    const LoopKernel& k_, const std::vector<std::vector<AffineConstraint>>& domain_constraints_, const Instruction& insn,
    std::string* why_not);
}  // namespace

std::optional<std::vector<AffineConstraint>> instruction_constraints(
    const LoopKernel& k, const std::vector<std::vector<AffineConstraint>>& domain_constraints, const Instruction& insn,
    std::string* why_not) {
  // Memoized: the answer depends on the kernel's domains (domain_constraints
  // are theirs), its temporaries' names and the instruction's inames; the
  // bounds and race checks and the fast path each ask for every instruction.
  // The entry holds the domains and temporaries parts, so they are not
  // changed in place or freed (and their addresses reused) while cached.
  // (an empty part is keyed 0: it is empty wherever it is)
  struct Constraints {
    Part<std::vector<Domain>> domains;
    Part<std::map<std::string, Temporary>> temporaries;
    std::optional<std::vector<AffineConstraint>> result;
    std::string why_not;
  };
  static BoundedMemo<std::string, Constraints> memo;
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(k.domains.identity())) + "," +
                    std::to_string(reinterpret_cast<uintptr_t>(k.temporaries.identity())) + "|";
  for (auto& n : insn.within_inames) key += n + ",";
  auto found = memo.find(key);
  if (!found) {
    Constraints fresh{k.domains, k.temporaries, {}, ""};
    fresh.result = instruction_constraints_uncached(k, domain_constraints, insn, &fresh.why_not);
    found = memo.add(key, std::move(fresh));
  }
  if (why_not) *why_not = found->why_not;
  return found->result;
}

namespace {
std::optional<std::vector<AffineConstraint>> instruction_constraints_uncached(
    const LoopKernel& k_, const std::vector<std::vector<AffineConstraint>>& domain_constraints_, const Instruction& insn,
    std::string* why_not) {
  try {
    std::vector<int> needed;
    std::vector<std::string> todo(insn.within_inames.begin(), insn.within_inames.end());
    while (!todo.empty()) {
      std::string n = todo.back();
      todo.pop_back();
      int d = k_.domain_of(n);
      if (d < 0) throw Fail{"unknown iname"};
      if (std::find(needed.begin(), needed.end(), d) != needed.end()) continue;
      needed.push_back(d);
      for (auto& c : domain_constraints_[d])
        for (auto& [v, a] : c.coef)
          if (k_.has_iname(v) && k_.domain_of(v) != d) todo.push_back(v);
    }
    std::vector<AffineConstraint> all;
    for (int d : needed) all.insert(all.end(), domain_constraints_[d].begin(), domain_constraints_[d].end());
    // keep the constraints connected (through shared inames, or a bound the
    // kernel computes, which is no assumption: row_len <= 64 beside
    // jj < row_len guards the loop) to insn's inames
    std::set<std::string> reach(insn.within_inames.begin(), insn.within_inames.end());
    std::vector<bool> kept(all.size(), false);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < all.size(); ++i) {
        if (kept[i]) continue;
        bool touches = false;
        for (auto& [v, a] : all[i].coef) touches |= reach.count(v) > 0;
        if (!touches) continue;
        kept[i] = grew = true;
        for (auto& [v, a] : all[i].coef)
          if (k_.has_iname(v) || k_.temporaries.count(v)) reach.insert(v);
      }
    }
    std::vector<AffineConstraint> out;
    for (size_t i = 0; i < all.size(); ++i)
      if (kept[i]) out.push_back(all[i]);
    // inames the instruction does not run within are projected out, when that
    // is exact without isl: every constraint on them has coefficient +-1
    // (then such a v exists iff each lower bound is at most each upper bound)
    for (;;) {
      // an iname to project out: one with unit coefficients first (a tile's
      // inner iname before the outer one it combines with)
      std::string v;
      std::set<std::string> not_unit;
      for (auto& c : out)
        for (auto& [x, a] : c.coef)
          if (a != 1 && a != -1) not_unit.insert(x);
      for (int pass = 0; pass < 2 && v.empty(); ++pass)
        for (auto& c : out)
          for (auto& [x, a] : c.coef)
            if (v.empty() && k_.has_iname(x) && !insn.within_inames.count(x) && (pass == 1 || !not_unit.count(x))) v = x;
      if (v.empty()) break;
      std::vector<AffineConstraint> lower, upper, rest;
      bool unit = true;
      for (auto& c : out) {
        auto it = c.coef.find(v);
        if (it == c.coef.end()) rest.push_back(c);
        else if (it->second > 0) lower.push_back(c);
        else upper.push_back(c);
        if (it != c.coef.end() && it->second != 1 && it->second != -1) unit = false;
      }
      if (!unit) {
        // Other coefficients (a register tile's 8*io + ii): exact when all of v's
        // lower bounds, or all its upper bounds, are constants. Then some v exists
        // iff the extreme value does (v = max of the constant lower bounds: every
        // other constraint on v is an upper bound, loosest there), so substitute it.
        Ranges ranges;
        for (auto& c : out)
          for (auto& [x, a] : c.coef)
            if (x != v) ranges[x] = {INT64_MIN, INT64_MAX};
        propagate_ranges(out, ranges);
        if (auto e = constant_extreme(v, lower, true, ranges)) out = substitute_value(out, v, *e);
        else if (auto e2 = constant_extreme(v, upper, false, ranges)) out = substitute_value(out, v, *e2);
        else if (auto projected = isl_projection(out, v)) out = *projected;
        else throw Fail{"instruction '" + insn.id + "' needs a projection of iname '" + v + "'"};
        continue;
      }
      for (auto& l : lower)
        for (auto& u : upper) {  // (v + lr >= 0) and (-v + ur >= 0)  ->  lr + ur >= 0
          AffineConstraint c = l;
          c.coef.erase(v);
          for (auto& [x, a] : u.coef)
            if (x != v) c.coef[x] += a;
          c.constant += u.constant;
          for (auto it = c.coef.begin(); it != c.coef.end();) it = it->second == 0 ? c.coef.erase(it) : std::next(it);
          if (c.coef.empty() && c.constant >= 0) continue;  // always true
          if (std::find(rest.begin(), rest.end(), c) == rest.end()) rest.push_back(c);
        }
      out = rest;
    }
    return out;
  } catch (const Fail& f) {
    if (why_not) *why_not = f.why;
    return std::nullopt;
  }
}
}  // namespace

void propagate_ranges(const std::vector<AffineConstraint>& cs, Ranges& r) {
  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  // The constraints with their variables' ranges looked up once (a map
  // lookup per term per round was most of the cost); null: a variable
  // outside `r`, whose range is unknown.
  struct Term {
    std::pair<int64_t, int64_t>* range;
    int64_t coef;
  };
  std::vector<std::vector<Term>> rows(cs.size());
  for (size_t i = 0; i < cs.size(); ++i)
    for (auto& [v, a] : cs[i].coef) {
      auto it = r.find(v);
      rows[i].push_back({it == r.end() ? nullptr : &it->second, a});
    }
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (size_t i = 0; i < cs.size(); ++i)
      for (size_t x = 0; x < rows[i].size(); ++x) {
        auto [self, a] = rows[i][x];
        if (!self) continue;
        // a*x >= -(others): the others at the end that makes the bound loosest
        int64_t others = cs[i].constant;
        bool known = true;
        for (size_t u = 0; u < rows[i].size() && known; ++u) {
          if (u == x) continue;
          auto [range, b] = rows[i][u];
          int64_t e = !range ? INT64_MAX : b > 0 ? range->second : range->first, term;
          // (an overflow leaves the bound unknown: a wrapped sum would prove wrong things)
          known = range && e != INT64_MAX && e != INT64_MIN && !__builtin_mul_overflow(b, e, &term) &&
                  !__builtin_add_overflow(others, term, &others);
        }
        if (!known || others == INT64_MIN) continue;
        if (a > 0) {
          int64_t lo = -floor_div(others, a);  // x >= ceil(-others / a)
          if (lo > self->first) self->first = lo, changed = true;
        } else {
          int64_t hi = floor_div(others, -a);  // x <= floor(others / -a)
          if (hi < self->second) self->second = hi, changed = true;
        }
      }
    if (!changed) break;
  }
}

Ranges propagated_ranges(const std::vector<AffineConstraint>& cs) {
  Ranges ranges;
  for (auto& c : cs)
    for (auto& [v, a] : c.coef) ranges.emplace(v, std::make_pair(INT64_MIN, INT64_MAX));
  propagate_ranges(cs, ranges);
  return ranges;
}

AffineConstraint affine_difference(AffineConstraint p, const AffineConstraint& q, int64_t shift) {
  for (auto& [v, c] : q.coef) p.coef[v] -= c;
  for (auto it = p.coef.begin(); it != p.coef.end();) it = it->second == 0 ? p.coef.erase(it) : std::next(it);
  p.constant += shift - q.constant;
  return p;
}

void comparison_constraints(const Expr& g, bool negated, std::vector<AffineConstraint>& out) {
  if (auto u = g.as<Unary>(); u && u->op == UnOp::Not) return comparison_constraints(u->a, !negated, out);
  auto b = g.as<Binary>();
  if (!b) return;
  if (b->op == BinOp::And && !negated) {
    comparison_constraints(b->a, false, out);
    comparison_constraints(b->b, false, out);
    return;
  }
  if (!is_comparison(b->op) || b->op == BinOp::Ne) return;
  auto x = affine_form(b->a), y = affine_form(b->b);
  if (!x || !y) return;
  BinOp op = b->op;
  if (negated) {
    if (op == BinOp::Eq) return;  // not (a == b): no single constraint
    op = op == BinOp::Lt ? BinOp::Ge : op == BinOp::Le ? BinOp::Gt : op == BinOp::Gt ? BinOp::Le : BinOp::Lt;
  }
  switch (op) {
    case BinOp::Lt: out.push_back(affine_difference(*y, *x, -1)); break;
    case BinOp::Le: out.push_back(affine_difference(*y, *x, 0)); break;
    case BinOp::Gt: out.push_back(affine_difference(*x, *y, -1)); break;
    case BinOp::Ge: out.push_back(affine_difference(*x, *y, 0)); break;
    case BinOp::Eq:
      out.push_back(affine_difference(*x, *y, 0));
      out.push_back(affine_difference(*y, *x, 0));
      break;
    default: break;
  }
}

std::optional<AffineConstraint> affine_form(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Int: return AffineConstraint{{}, e.as<IntImm>()->value};
    case ExprKind::Var: return AffineConstraint{{{e.as<Var>()->name, 1}}, 0};
    case ExprKind::Cast: return e.type().is_int() || !e.type().known() ? affine_form(e.as<Cast>()->value) : std::nullopt;
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      if (u->op != UnOp::Neg) return std::nullopt;
      auto a = affine_form(u->a);
      if (!a) return std::nullopt;
      for (auto& [v, c] : a->coef) c = -c;
      a->constant = -a->constant;
      return a;
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      auto x = affine_form(b->a), y = affine_form(b->b);
      if (!x || !y) return std::nullopt;
      auto combine = [&](int64_t sy) {
        for (auto& [v, c] : y->coef) x->coef[v] += sy * c;
        x->constant += sy * y->constant;
        for (auto it = x->coef.begin(); it != x->coef.end();) it = it->second == 0 ? x->coef.erase(it) : std::next(it);
        return x;
      };
      if (b->op == BinOp::Add) return combine(1);
      if (b->op == BinOp::Sub) return combine(-1);
      if (b->op == BinOp::Mul) {
        const AffineConstraint* c = x->coef.empty() ? &*x : y->coef.empty() ? &*y : nullptr;
        if (!c) return std::nullopt;
        AffineConstraint r = x->coef.empty() ? *y : *x;
        for (auto& [v, cv] : r.coef) cv *= c->constant;
        r.constant *= c->constant;
        for (auto it = r.coef.begin(); it != r.coef.end();) it = it->second == 0 ? r.coef.erase(it) : std::next(it);
        return r;
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace loom
