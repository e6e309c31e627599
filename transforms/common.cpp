// Helpers shared by the transformation files (common.h).
#include "common.h"

#include <isl/constraint.h>

#include <algorithm>
#include <set>

#include "loom/constraints.h"
#include "loom/isl_util.h"

#include "loom/error.h"

namespace loom::transforms {

namespace {

class AccessMapper : public ExprMutator {
 public:
  AccessMapper(const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn) : t_(t), fn_(fn) {}

 protected:
  Expr mutate_subscript(const Subscript& n, const Expr& self) override {
    if (n.name != t_) return ExprMutator::mutate_subscript(n, self);
    std::vector<Expr> idx;
    for (auto& i : n.indices) idx.push_back(mutate(i));
    return fn_(idx, n.type);
  }
  Expr mutate_var(const Var& n, const Expr& self) override { return n.name == t_ ? fn_({}, n.type) : self; }

 private:
  const std::string& t_;
  const std::function<Expr(std::vector<Expr>, Type)>& fn_;
};

}  // namespace

Expr map_temporary_accesses(const Expr& e, const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn) {
  return AccessMapper(t, fn).mutate(e);
}

void map_temporary_accesses(Instruction& insn, const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn) {
  AccessMapper m(t, fn);
  if (insn.lhs.defined()) insn.lhs = m.mutate(insn.lhs);  // (barriers and no-ops have no sides)
  if (insn.rhs.defined()) insn.rhs = m.mutate(insn.rhs);
  for (auto& p : insn.predicates) p = m.mutate(p);
}


void refuse(const LoopKernel& k, const std::string& what, const std::string& why) {
  throw TransformError(what + " on kernel '" + k.name + "': " + why);
}

std::string unique_name(const LoopKernel& k, const std::string& base) {
  std::string n = base;
  for (int i = 0; k.name_taken(n); ++i) {
    // bounded: a name that always looks taken (a character isl cuts it at) must not loop forever
    if (i == 10000) refuse(k, "a fresh name", "no free name of the form '" + base + "_N'");
    n = base + "_" + std::to_string(i);
  }
  return n;
}

std::string unique_instruction_id(const LoopKernel& k, const std::string& base) {
  auto taken = [&](const std::string& id) {
    for (auto& insn : k.instructions)
      if (insn.id == id) return true;
    return false;
  };
  std::string n = base;
  for (int i = 0; taken(n); ++i) n = base + "_" + std::to_string(i);
  return n;
}

isl::set pairs_where(const isl::set& pairs, const std::string& n, PairOrder order) {
  isl_set* s = pairs.copy();
  int src = islu::find_dim(s, isl_dim_set, "src:" + n), dst = islu::find_dim(s, isl_dim_set, "dst:" + n);
  if (src < 0 || dst < 0) return isl::manage(s);
  isl_local_space* ls = isl_local_space_from_space(isl_set_get_space(s));
  bool equal = order == PairOrder::Equal;
  isl_constraint* c = equal ? isl_constraint_alloc_equality(ls) : isl_constraint_alloc_inequality(ls);
  c = isl_constraint_set_coefficient_si(c, isl_dim_set, dst, 1);  // dst - src = 0, or dst - src - 1 >= 0
  c = isl_constraint_set_coefficient_si(c, isl_dim_set, src, -1);
  if (!equal) c = isl_constraint_set_constant_si(c, -1);
  return isl::manage(isl_set_add_constraint(s, c));
}

InstructionMatch parse_match(const LoopKernel& k, const std::string& what, const std::string& text) {
  try {
    return InstructionMatch::parse(text);
  } catch (const Error& e) {
    refuse(k, what, e.what());
  }
}

std::vector<std::string> name_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : spec + ",") {
    if (c == ',' || c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

void drop_proven_predicates(const LoopKernel& r, Instruction& insn) {
  if (insn.predicates.empty()) return;
  // Each predicate is proved on the domain of the inames it mentions only:
  // it holds on the instruction's domain iff it holds on that projection,
  // and isl works on two or three dimensions instead of all of them (the
  // prefetches' guards were most of matmul_prefetch's transform time).
  isl::set assumptions = r.assumptions.defined() ? islu::to_isl(r.assumptions) : isl::set();
  auto proven = [&](const Expr& p) {
    auto b = p.as<Binary>();
    if (!b || (b->op != BinOp::Lt && b->op != BinOp::Le && b->op != BinOp::Gt && b->op != BinOp::Ge)) return false;
    try {
      std::set<std::string> vars;
      collect_free_vars(p, vars);
      std::vector<std::string> inames;
      for (auto& v : vars)
        if (insn.within_inames.count(v)) inames.push_back(v);
      // an affine comparison (one constraint): one emptiness question (see holds_on_iteration_domain)
      std::vector<AffineConstraint> c;
      comparison_constraints(p, false, c);
      if (c.size() == 1)
        if (auto holds = islu::holds_on_iteration_domain(r, inames, c[0], assumptions)) return *holds;
      isl::set domain = islu::iteration_domain(r, inames);
      if (!assumptions.is_null()) domain = domain.intersect_params(assumptions);
      isl::pw_aff x = islu::pw_aff_from_expr(b->a, domain.space()), y = islu::pw_aff_from_expr(b->b, domain.space());
      if (x.is_null() || y.is_null()) return false;
      isl::set holds = b->op == BinOp::Lt ? x.lt_set(y) : b->op == BinOp::Le ? x.le_set(y) : b->op == BinOp::Gt ? x.gt_set(y) : x.ge_set(y);
      return domain.is_subset(holds);
    } catch (const Error&) {
      return false;
    }
  };
  insn.predicates.erase(std::remove_if(insn.predicates.begin(), insn.predicates.end(), proven), insn.predicates.end());
  // a guard written twice (a footprint's bound and the array's: n - 32 i - d
  // - 1 >= 0 and 32 i + d < n) is tested once
  std::set<AffineConstraint> seen;
  insn.predicates.erase(std::remove_if(insn.predicates.begin(), insn.predicates.end(),
                                       [&](const Expr& p) {
                                         std::vector<AffineConstraint> c;
                                         try {
                                           comparison_constraints(p, false, c);
                                         } catch (const Error&) {
                                           return false;
                                         }
                                         return c.size() == 1 && !seen.insert(c[0]).second;
                                       }),
                        insn.predicates.end());
}

void rewrite_rule_bodies(LoopKernel& k, const std::set<std::string>& names, const std::function<Expr(const Expr&)>& f) {
  for (auto& [n, rule] : k.substitutions.edit()) {
    std::map<std::string, Expr> fresh;
    for (auto& p : rule.params) {
      if (!names.count(p)) continue;
      std::string base = p + "_arg", nw = base;
      for (int i = 0; k.has_iname(nw) || k.find_argument(nw) || k.find_temporary(nw) || names.count(nw) ||
                      std::find(rule.params.begin(), rule.params.end(), nw) != rule.params.end();
           ++i)
        nw = base + "_" + std::to_string(i);
      fresh[p] = make_var(nw, k.options.index_dtype);
      p = nw;
    }
    if (!fresh.empty()) rule.body = substitute(rule.body, fresh);
    rule.body = f(rule.body);
  }
}

std::vector<bool> same_launch(const LoopKernel& k, const std::set<size_t>& insns) {
  std::vector<bool> out(k.instructions.size(), false);
  for (size_t u : insns)
    for (int step : {-1, 1})
      for (long i = long(u); i >= 0 && i < long(k.instructions.size()); i += step) {
        if (k.instructions[size_t(i)].kind == Instruction::GlobalBarrier) break;
        out[size_t(i)] = true;
      }
  return out;
}

}  // namespace loom::transforms
