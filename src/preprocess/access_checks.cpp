// check_bounds and check_races: proofs with isl that every array access of a
// kernel stays inside the array's shape for all parameter values allowed by
// the assumptions, and that no two hardware threads write one element of a
// global array (or, within a block, of a local temporary). A violation is an
// error with a concrete witness (parameter and iname values) from isl.
// Accesses whose index is not affine cannot be proved either way and are
// left to the runtime (the interpreter checks every access). The common
// cases (split tiles, thread-indexed stores) are proved first from the
// domains' constraints without isl; isl decides the rest.
#include <isl/constraint.h>
#include <isl/map.h>

#include <sstream>

#include <algorithm>
#include <optional>

#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

struct GuardedAccess {
  const Subscript* access;
  std::vector<Expr> guards;  // conditions under which it executes
  bool unprovable_guard = false;
};

// Accesses with the conditions that guard them (GuardedExprVisitor):
// if_then_else branches and the right operands of `and` / `or`.
class AccessCollector : public GuardedExprVisitor {
 public:
  std::vector<GuardedAccess> out;

 protected:
  void visit_subscript(const Subscript& s) override {
    out.push_back({&s, guards, false});
    ExprVisitor::visit_subscript(s);
  }
};

using islu::condition_set;
using islu::witness;

std::string access_str(const Subscript& s) {
  std::string r = s.name + "[";
  for (size_t i = 0; i < s.indices.size(); ++i) r += (i ? ", " : "") + s.indices[i].str();
  return r + "]";
}

std::vector<std::string> inames_of(const LoopKernel& k, const Instruction& insn) {
  std::vector<std::string> v;
  for (auto& n : k.all_inames())
    if (insn.within_inames.count(n)) v.push_back(n);
  return v;
}

// ---- cheap proofs from the domains' constraints (no isl operation) ----

// c >= 0 for some domain constraint c equal to e plus a non-positive constant: then e >= 0.
bool implied_directly(const std::vector<AffineConstraint>& cs, const AffineConstraint& e) {
  for (auto& c : cs)
    if (c.coef == e.coef && c.constant <= e.constant) return true;
  return false;
}

// e >= 0 by interval arithmetic over bounds of its variables that every
// point satisfying cs has (propagated through the constraints: the outer
// part of a split, 0 <= 4 * o + i with 0 <= i < 4, has o >= 0).
bool nonnegative_by_intervals(const std::vector<AffineConstraint>& cs, const AffineConstraint& e) {
  Ranges ranges = propagated_ranges(cs);
  for (auto& [v, a] : e.coef)
    if (!ranges.count(v)) return false;  // a variable no constraint bounds
  int64_t min = e.constant;
  for (auto& [v, a] : e.coef) {
    auto [lo, hi] = ranges.at(v);
    int64_t end = a > 0 ? lo : hi, term;
    if (end == INT64_MIN || end == INT64_MAX || __builtin_mul_overflow(a, end, &term) || __builtin_add_overflow(min, term, &min)) return false;
  }
  return min >= 0;
}

bool provably_nonnegative(const std::vector<AffineConstraint>& cs, const AffineConstraint& e) {
  return implied_directly(cs, e) || nonnegative_by_intervals(cs, e);
}

class Checker {
 public:
  explicit Checker(const LoopKernel& k) : k_(k) {
    if (k.assumptions.defined()) assumptions_ = islu::to_isl(k.assumptions);
    if (auto dc = read_domain_constraints(k)) domain_constraints_ = *dc;
    else readable_ = false;
  }

  // The instruction's constraints, or null when they cannot be read cheaply.
  const std::vector<AffineConstraint>* constraints(const Instruction& insn) {
    if (!readable_) return nullptr;
    auto it = insn_constraints_.find(insn.id);
    if (it == insn_constraints_.end()) {
      auto c = instruction_constraints(k_, domain_constraints_, insn);
      it = insn_constraints_.emplace(insn.id, c).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  isl::set domain(const std::vector<std::string>& inames) {
    std::string key;
    for (auto& n : inames) key += n + ",";
    auto it = domains_.find(key);
    if (it != domains_.end()) return it->second;
    isl::set d = islu::iteration_domain(k_, inames);
    if (!assumptions_.is_null()) d = isl::manage(isl_set_intersect_params(d.release(), assumptions_.copy()));
    domains_[key] = d;
    return d;
  }

  // The accesses to array arguments the proof left to the runtime: (instruction, array).
  UnprovenAccessSet unproven_accesses;

  void bounds() {
    for (auto& insn : k_.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      AccessCollector c;
      for (auto& p : insn.predicates) c.guards.push_back(p);  // predicates guard everything
      c.visit(insn.rhs);
      if (insn.lhs.as<Subscript>()) c.visit(insn.lhs);
      for (auto& p : insn.predicates) {  // a predicate's own reads run unguarded (no target short-circuits them)
        AccessCollector pc;
        pc.visit(p);
        c.out.insert(c.out.end(), pc.out.begin(), pc.out.end());
      }
      if (c.out.empty()) continue;
      const std::vector<AffineConstraint>* cs = constraints(insn);
      for (auto& ga : c.out) check_access(insn, cs, ga);
    }
  }

  void races(const std::vector<std::string>& hardware) {
    for (auto& insn : k_.instructions) {
      auto s = insn.lhs.as<Subscript>();
      if (insn.kind != Instruction::Assign || !s || insn.atomic) continue;  // atomic updates may meet on one element
      const Temporary* t = k_.find_temporary(s->name);
      bool local = t && t->space == AddressSpace::Local;
      if (t && !local) continue;  // private: one copy per thread
      // the hardware inames whose threads could collide: all for global
      // memory, the local ones within a block for local memory
      std::vector<std::string> hw;
      for (auto& h : hardware)
        if (!local || k_.tag_of(h).kind == InameTag::Local) hw.push_back(h);
      // Inside a warp matrix tile (mma.m x mma.n) each element is one lane's,
      // l.0 being the lanes: the tile's inames tell threads apart instead.
      bool in_tile = false;
      for (auto& n : insn.within_inames)
        if (k_.tag_of(n).kind == InameTag::MatrixM || k_.tag_of(n).kind == InameTag::MatrixN) {
          hw.push_back(n);
          in_tile = true;
        }
      if (hw.empty()) continue;
      // an axis whose inames the instruction runs within none of: every
      // thread (or block) along it executes the write
      std::map<std::string, std::vector<std::string>> axes;
      for (auto& h : hw) axes[k_.tag_of(h).str()].push_back(h);
      for (auto& [axis, names] : axes) {
        if (k_.tag_of(names[0]).is_matrix()) continue;
        bool within = false, wide = false;
        for (auto& h : names) {
          within |= insn.within_inames.count(h) > 0;
          wide |= extent_above_one(h);
        }
        if (!within && wide && !(in_tile && axis == "l.0"))
          throw KernelError("kernel '" + k_.name + "': write race: instruction '" + insn.id + "' writes " +
                            (local ? "local temporary '" : "array '") + s->name + "' from every thread along axis " + axis +
                            " ('" + names[0] + "'), but runs within none of that axis' inames");
      }
      check_injective(insn, *s, hw, local);
    }
  }

 private:
  bool extent_above_one(const std::string& h) {
    auto known = above_one_.find(h);
    if (known != above_one_.end()) return known->second;
    return above_one_[h] = compute_extent_above_one(h);
  }
  bool compute_extent_above_one(const std::string& h) {
    if (readable_) {
      int dom = k_.domain_of(h);
      // (bounds every point has: hi == lo is one value, hi > lo may still be one)
      Ranges ranges = propagated_ranges(domain_constraints_[size_t(dom)]);
      if (auto it = ranges.find(h); it != ranges.end() && it->second.first != INT64_MIN && it->second.second != INT64_MAX)
        return it->second.second > it->second.first;
    }
    return islu::takes_two_values(k_, h);
  }

  void check_access(const Instruction& insn, const std::vector<AffineConstraint>* cs, const GuardedAccess& ga) {
    const Subscript& s = *ga.access;
    std::vector<Expr> shape;
    if (auto a = k_.find_argument(s.name)) shape = a->shape;
    else if (auto t = k_.find_temporary(s.name)) shape = t->shape;
    // first the cheap proof, with the guards that are affine comparisons, axis by axis
    std::vector<AffineConstraint> facts;
    if (cs) {
      facts = *cs;
      for (auto& g : ga.guards) comparison_constraints(g, false, facts);
    }
    std::vector<size_t> open;
    for (size_t d = 0; d < s.indices.size() && d < shape.size(); ++d) {
      auto idx = affine_form(s.indices[d]);
      auto ext = affine_form(shape[d]);
      if (cs && idx && ext) {
        AffineConstraint upper = affine_difference(*ext, *idx, -1);  // ext - 1 - idx >= 0
        if (provably_nonnegative(facts, *idx) && provably_nonnegative(facts, upper)) continue;
      }
      open.push_back(d);
    }
    if (open.empty()) return;
    isl::set dom = domain(inames_of(k_, insn));
    isl::space sp = dom.space();
    isl::set where = dom;
    // A guard isl cannot read (split[c] == 0) is left out: an access in
    // bounds on every point of the larger set is in bounds; one that is not
    // may be kept in by that guard, so it is checked at run time then.
    bool guard_left_out = false;
    for (auto& g : ga.guards) {
      isl::set gs = condition_set(g, sp);
      if (gs.is_null()) {
        guard_left_out = true;
        continue;
      }
      where = where.intersect(gs);
    }
    for (size_t d : open) {
      // the parameters the extent or index name that the domain does not
      // (x: float32[q] read at x[b] with b < nb): in the space too, free, so
      // the proof covers every value of them (they were skipped unchecked)
      isl::space dsp = sp;
      isl::set dwhere = where;
      std::set<std::string> vars;
      collect_free_vars(shape[d], vars);
      collect_free_vars(s.indices[d], vars);
      bool added = false, data = false;
      for (auto& v : vars) data |= !k_.has_iname(v) && !parameters().count(v);
      if (data) {  // an index made of values the kernel reads (idx[i], a temporary): the runtime checks it
        unproven(insn, s);
        continue;
      }
      for (auto& v : vars)
        if (!k_.has_iname(v) && isl_space_find_dim_by_name(dsp.get(), isl_dim_param, v.c_str()) < 0) {
          dsp = isl::manage(isl_space_add_param_id(dsp.release(), isl_id_alloc(isl_context(), v.c_str(), nullptr)));
          added = true;
        }
      if (added) dwhere = isl::manage(isl_set_align_params(where.copy(), dsp.copy()));
      isl::pw_aff idx = islu::pw_aff_from_expr(s.indices[d], dsp);
      isl::pw_aff ext = islu::pw_aff_from_expr(shape[d], dsp);
      if (idx.is_null() || ext.is_null()) {  // (not affine: the runtime checks it)
        unproven(insn, s);
        continue;
      }
      isl_set* below = isl_pw_aff_lt_set(idx.copy(), isl_pw_aff_zero_on_domain(isl_local_space_from_space(dsp.copy())));
      isl_set* above = isl_pw_aff_ge_set(idx.copy(), ext.copy());
      isl::set bad = dwhere.intersect(isl::manage(isl_set_union(below, above)));
      if (added && k_.assumptions.defined())  // (the assumptions may relate the added parameters)
        bad = isl::manage(isl_set_intersect_params(bad.release(), isl_set_align_params(k_.assumptions.copy(), isl_set_get_space(bad.get()))));
      if (!bad.is_empty() && (guard_left_out || in_data_dependent_loop(s.indices[d]))) {  // bounds read from memory: the runtime checks it
        unproven(insn, s);
        continue;
      }
      if (!bad.is_empty())
        throw KernelError("kernel '" + k_.name + "': instruction '" + insn.id + "' accesses " + access_str(s) + " out of bounds: index " +
                          std::to_string(d) + " (" + s.indices[d].str() + ") leaves [0, " + shape[d].str() + ") for " +
                          witness(bad) + (k_.assumptions.defined() ? "" : " (add assumptions if such values cannot occur)"));
    }
  }

  // No two points of the instruction's domain with different hardware
  // coordinates write the same element.
  // Each index dimension over hardware inames only, mixed-radix injective
  // (sorted by coefficient, each one above the largest sum of the smaller
  // terms), every hardware iname of the instruction with extent > 1 in one.
  bool injective_cheaply(const Instruction& insn, const Subscript& s, const std::vector<std::string>& hw) {
    const std::vector<AffineConstraint>* cs = constraints(insn);
    if (!cs) return false;
    std::set<std::string> covered;
    for (auto& e : s.indices) {
      auto f = affine_form(e);
      if (!f) return false;
      // injective in (threads, loop iterations) implies no two threads meet;
      // a loop iname's term must be one of the digits (all but the largest
      // digit need a constant range)
      std::vector<std::pair<int64_t, std::string>> terms;
      for (auto& [v, c] : f->coef)
        if (k_.has_iname(v)) terms.push_back({c < 0 ? -c : c, v});  // a parameter: the same for every thread
      std::sort(terms.begin(), terms.end());
      Ranges ranges;
      for (auto& c : *cs)
        for (auto& [x, a] : c.coef)
          if (k_.has_iname(x)) ranges.emplace(x, std::make_pair(INT64_MIN, INT64_MAX));
      propagate_ranges(*cs, ranges);
      int64_t reach = 0;  // the largest spread of the smaller terms
      for (size_t t = 0; t < terms.size(); ++t) {
        if (terms[t].first <= reach) return false;
        // (the largest digit may be a loop of any spread: nothing above it
        // needs its range, and two points that differ in it differ here)
        if (std::find(hw.begin(), hw.end(), terms[t].second) != hw.end()) covered.insert(terms[t].second);
        if (t + 1 < terms.size()) {
          auto [lo, hi] = ranges.at(terms[t].second);
          if (lo == INT64_MIN || hi == INT64_MAX) return false;
          reach += terms[t].first * (hi - lo);
        }
      }
    }
    // a predicate h == c leaves one thread along h
    for (auto& p : insn.predicates)
      if (auto b = p.as<Binary>(); b && b->op == BinOp::Eq)
        if (auto v = b->a.as<Var>(); v && b->b.as<IntImm>()) covered.insert(v->name);
    for (auto& h : hw)
      if (insn.within_inames.count(h) && !covered.count(h) && extent_above_one(h)) return false;
    return true;
  }

  void check_injective(const Instruction& insn, const Subscript& s, const std::vector<std::string>& hw, bool local) {
    if (injective_cheaply(insn, s, hw)) return;
    std::vector<std::string> names = inames_of(k_, insn);
    isl::set dom = domain(names);
    for (auto& pr : insn.predicates) {  // only the points that run
      isl::set c = condition_set(pr, dom.space());
      if (c.is_null()) return;  // a condition isl cannot read: no proof either way
      dom = dom.intersect(c);
    }
    if (local)  // within one block: group inames are the same for both writers
      dom = islu::dims_to_params(dom, [&] {
        std::vector<std::string> g;
        for (auto& n : names)
          if (k_.tag_of(n).kind == InameTag::Group) g.push_back(n);
        return g;
      }());
    isl::space sp = dom.space();
    isl_multi_pw_aff* idx = nullptr;
    isl_pw_aff_list* list = isl_pw_aff_list_alloc(isl_context(), int(s.indices.size()));
    for (auto& e : s.indices) {
      isl::pw_aff p = islu::pw_aff_from_expr(e, sp);
      if (p.is_null()) {
        isl_pw_aff_list_free(list);
        return;  // not affine: cannot tell
      }
      list = isl_pw_aff_list_add(list, p.release());
    }
    isl_space* range = isl_space_add_dims(isl_space_set_from_params(isl_space_params(sp.copy())), isl_dim_set,
                                          unsigned(s.indices.size()));
    isl_space* mspace = isl_space_map_from_domain_and_range(sp.copy(), range);
    idx = isl_multi_pw_aff_from_pw_aff_list(mspace, list);
    isl_map* m = isl_map_intersect_domain(isl_map_from_multi_pw_aff(idx), dom.copy());
    // pairs of points writing the same element
    isl_map* m2 = isl_map_copy(m);  // (copy before reverse() takes m: argument order is unspecified)
    isl_map* same = isl_map_apply_range(m2, isl_map_reverse(m));
    // ... whose hardware coordinates differ
    isl_set* cur_dims = isl_set_copy(dom.get());
    isl_map* differ = nullptr;
    for (auto& h : hw) {
      int pos = isl_set_find_dim_by_name(cur_dims, isl_dim_set, h.c_str());
      if (pos < 0) continue;
      isl_space* ms = isl_space_map_from_set(isl_set_get_space(cur_dims));
      for (int dir = 0; dir < 2; ++dir) {
        isl_map* neq = isl_map_universe(isl_space_copy(ms));
        isl_local_space* ls = isl_local_space_from_space(isl_map_get_space(neq));
        isl_constraint* c = isl_inequality_alloc(ls);
        // out_h - in_h >= 1 (or in_h - out_h >= 1)
        c = isl_constraint_set_coefficient_si(c, isl_dim_out, pos, dir ? 1 : -1);
        c = isl_constraint_set_coefficient_si(c, isl_dim_in, pos, dir ? -1 : 1);
        c = isl_constraint_set_constant_si(c, -1);
        neq = isl_map_add_constraint(neq, c);
        differ = differ ? isl_map_union(differ, neq) : neq;
      }
      isl_space_free(ms);
    }
    isl_set_free(cur_dims);
    if (!differ) {
      isl_map_free(same);
      return;
    }
    isl_map* clash = isl_map_intersect(same, differ);
    bool empty = isl_map_is_empty(clash) == isl_bool_true;
    if (!empty) {
      isl::set w = isl::manage(isl_map_domain(clash));
      throw KernelError("kernel '" + k_.name + "': write race: instruction '" + insn.id + "' writes one element of " +
                        (local ? "local temporary '" : "array '") + s.name + "' from two different threads, e.g. at " +
                        witness(w) + "; the index " + access_str(s) +
                        " must differ between threads");
    }
    isl_map_free(clash);
  }

  void unproven(const Instruction& insn, const Subscript& s) {
    if (const Argument* a = k_.find_argument(s.name); a && a->kind == Argument::Array) unproven_accesses.insert({insn.id, s.name});
  }

  const std::set<std::string>& parameters() {
    if (!parameters_) {
      auto ps = k_.parameters();
      parameters_ = std::set<std::string>(ps.begin(), ps.end());
    }
    return *parameters_;
  }
  // Whether an index uses an iname bounded by a value the kernel computes:
  // where the proof fails for such an index, the targets check it at run time.
  bool in_data_dependent_loop(const Expr& index) {
    if (!data_inames_) data_inames_ = k_.data_dependent_inames();
    std::set<std::string> vars;
    collect_free_vars(index, vars);
    for (auto& v : vars)
      if (data_inames_->count(v)) return true;
    return false;
  }

  const LoopKernel& k_;
  std::optional<std::set<std::string>> parameters_, data_inames_;
  isl::set assumptions_;
  std::map<std::string, isl::set> domains_;
  bool readable_ = true;
  std::vector<std::vector<AffineConstraint>> domain_constraints_;
  std::map<std::string, std::optional<std::vector<AffineConstraint>>> insn_constraints_;
  std::map<std::string, bool> above_one_;  // per hardware iname (asked for every instruction)
};

}  // namespace

UnprovenAccessSet check_bounds(const LoopKernel& k) {
  Checker c(k);
  c.bounds();
  return c.unproven_accesses;
}

void check_races(const LoopKernel& k, const std::vector<std::string>& hardware_inames) {
  Checker(k).races(hardware_inames);
}

}  // namespace loom
