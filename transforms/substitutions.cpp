// The substitution-rule tools around precompute (loopy's names and
// arguments): extract_subst turns every occurrence of an expression pattern
// into a call of a new rule; assignment_to_subst turns a temporary that one
// instruction assigns into a rule, so its uses recompute the value (and
// precompute can then store it where it pays); expand_subst inlines rules
// again where they are called.
#include "common.h"
#include "loom/expr_text.h"
#include "loom/match.h"
#include "loom/analysis.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

// Structural match of a pattern against an expression; the pattern's
// variables named in `params` match any expression (the same one at every
// occurrence). Types are not compared: the pattern is untyped text.
class PatternMatcher {
 public:
  explicit PatternMatcher(const std::set<std::string>& params) : params_(params) {}
  std::map<std::string, Expr> bound;

  bool match(const Expr& p, const Expr& e) {
    if (auto v = p.as<Var>(); v && params_.count(v->name)) {
      auto it = bound.find(v->name);
      if (it == bound.end()) {
        bound[v->name] = e;
        return true;
      }
      return it->second.same_as(e);
    }
    if (p.kind() != e.kind()) return false;
    switch (p.kind()) {
      case ExprKind::Int: return p.as<IntImm>()->value == e.as<IntImm>()->value;
      case ExprKind::Float: return p.as<FloatImm>()->value == e.as<FloatImm>()->value;
      case ExprKind::Var: return p.as<Var>()->name == e.as<Var>()->name;
      case ExprKind::Subscript: {
        auto a = p.as<Subscript>(), b = e.as<Subscript>();
        return a->name == b->name && all(a->indices, b->indices);
      }
      case ExprKind::Unary: {
        auto a = p.as<Unary>(), b = e.as<Unary>();
        return a->op == b->op && match(a->a, b->a);
      }
      case ExprKind::Binary: {
        auto a = p.as<Binary>(), b = e.as<Binary>();
        return a->op == b->op && match(a->a, b->a) && match(a->b, b->b);
      }
      case ExprKind::Call: {
        auto a = p.as<Call>(), b = e.as<Call>();
        return a->name == b->name && all(a->args, b->args);
      }
      case ExprKind::WarpReduce: {
        auto a = p.as<WarpReduce>(), b = e.as<WarpReduce>();
        return a->op == b->op && a->width == b->width && match(a->value, b->value);
      }
      case ExprKind::Select: {
        auto a = p.as<Select>(), b = e.as<Select>();
        return match(a->cond, b->cond) && match(a->t, b->t) && match(a->f, b->f);
      }
      case ExprKind::Reduce: {
        auto a = p.as<Reduce>(), b = e.as<Reduce>();
        return a->op == b->op && a->inames == b->inames && match(a->body, b->body);
      }
      case ExprKind::Cast: {
        auto a = p.as<Cast>(), b = e.as<Cast>();
        return a->type == b->type && match(a->value, b->value);
      }
    }
    return false;
  }

 private:
  bool all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!match(a[i], b[i])) return false;
    return true;
  }
  const std::set<std::string>& params_;
};

// Replaces each occurrence of the pattern (outermost first) by a rule call.
class PatternExtractor : public ExprMutator {
 public:
  PatternExtractor(const Expr& pattern, const std::string& rule, const std::vector<std::string>& params)
      : pattern_(pattern), rule_(rule), params_(params), param_set_(params.begin(), params.end()) {}
  int replaced = 0;
  Expr mutate_here(const Expr& e) {
    PatternMatcher m(param_set_);
    if (m.match(pattern_, e)) {
      ++replaced;
      if (params_.empty()) return make_var(rule_);
      std::vector<Expr> args;
      for (auto& p : params_) args.push_back(mutate(m.bound.at(p)));
      return make_call(rule_, args);
    }
    return Expr();
  }

 protected:
  Expr mutate_subscript(const Subscript& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_subscript(n, self); }); }
  Expr mutate_unary(const Unary& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_unary(n, self); }); }
  Expr mutate_binary(const Binary& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_binary(n, self); }); }
  Expr mutate_call(const Call& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_call(n, self); }); }
  Expr mutate_select(const Select& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_select(n, self); }); }
  Expr mutate_reduce(const Reduce& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_reduce(n, self); }); }
  Expr mutate_cast(const Cast& n, const Expr& self) override { return try_or(self, [&] { return ExprMutator::mutate_cast(n, self); }); }
  Expr mutate_var(const Var& n, const Expr& self) override { return try_or(self, [&] { return self; }); }

 private:
  template <class F>
  Expr try_or(const Expr& self, F children) {
    Expr r = mutate_here(self);
    return r.defined() ? r : children();
  }
  Expr pattern_;
  std::string rule_;
  std::vector<std::string> params_;
  std::set<std::string> param_set_;
};

// Replaces reads of temporary t (t[e...] or t) by calls of rule t.
class ReadsToCalls : public ExprMutator {
 public:
  explicit ReadsToCalls(const std::string& t) : t_(t) {}
  int replaced = 0;

 protected:
  Expr mutate_subscript(const Subscript& n, const Expr& self) override {
    if (n.name != t_) return ExprMutator::mutate_subscript(n, self);
    ++replaced;
    std::vector<Expr> args;
    for (auto& i : n.indices) args.push_back(mutate(i));
    return make_call(t_, args);
  }
  Expr mutate_var(const Var& n, const Expr& self) override {
    if (n.name != t_) return self;
    ++replaced;
    return self;  // a rule without parameters is used by its bare name
  }

 private:
  const std::string& t_;
};

bool calls_rule(const Expr& e, const std::string& rule) {
  bool found = false;
  struct V : ExprVisitor {
    const std::string* rule;
    bool* found;
    void visit_call(const Call& c) override {
      *found |= c.name == *rule;
      ExprVisitor::visit_call(c);
    }
    void visit_var(const Var& v) override { *found |= v.name == *rule; }
  } v;
  v.rule = &rule;
  v.found = &found;
  v.visit(e);
  return found;
}

}  // namespace

LoopKernel extract_subst(const LoopKernel& k, const std::string& subst_name, const std::string& pattern, const std::string& parameters) {
  const std::string what = "extract_subst('" + subst_name + "', '" + pattern + "')";
  if (subst_name.empty()) refuse(k, what, "give the new rule's name");
  if (k.name_taken(subst_name))
    refuse(k, what, "the name '" + subst_name + "' is already taken");
  Expr p;
  try {
    p = parse_expr(pattern);
  } catch (const Error& e) {
    refuse(k, what, std::string("the pattern does not parse: ") + e.what());
  }
  std::vector<std::string> params = name_list(parameters);
  std::set<std::string> in_pattern;
  collect_free_vars(p, in_pattern);
  for (auto& q : params)
    if (!in_pattern.count(q)) refuse(k, what, "parameter '" + q + "' does not occur in the pattern");
  LoopKernel r = k;
  PatternExtractor ex(p, subst_name, params);
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind != Instruction::Assign) continue;
    insn.rhs = ex.mutate(insn.rhs);
    for (auto& pr : insn.predicates) pr = ex.mutate(pr);
  }
  for (auto& [n, rule] : r.substitutions.edit()) rule.body = ex.mutate(rule.body);
  if (ex.replaced == 0) refuse(k, what, "the pattern occurs nowhere in the kernel's instructions");
  r.substitutions.edit()[subst_name] = SubstitutionRule{subst_name, params, p};
  return r;
}

LoopKernel assignment_to_subst(const LoopKernel& k, const std::string& lhs_name) {
  const std::string what = "assignment_to_subst('" + lhs_name + "')";
  const Temporary* t = k.find_temporary(lhs_name);
  if (!t) refuse(k, what, "'" + lhs_name + "' is not a temporary" + (k.find_argument(lhs_name) ? " (arguments stay arrays)" : ""));
  if (k.substitutions.count(lhs_name)) refuse(k, what, "a substitution rule '" + lhs_name + "' exists already");
  const Instruction* def = nullptr;
  for (auto& insn : k.instructions)
    if (insn.kind == Instruction::Assign && insn.assignee_name() == lhs_name) {
      if (def) refuse(k, what, "'" + lhs_name + "' is assigned by '" + def->id + "' and '" + insn.id + "'; only a single assignment becomes a rule");
      def = &insn;
    }
  if (!def) refuse(k, what, "'" + lhs_name + "' is never assigned");
  if (!def->predicates.empty()) refuse(k, what, "instruction '" + def->id + "' is conditional, so '" + lhs_name + "' has no value elsewhere");
  for (auto& d : k.domains)  // (a domain's bound is a value: a rule is an expression, with nothing to bound a loop by)
    for (auto& p : d.params())
      if (p == lhs_name)
        refuse(k, what, "'" + lhs_name + "' bounds the loop of '" + d.inames().front() + "' (its domain reads it); a loop bound stays a temporary");
  // the rule's parameters: the indices of the assignment, which must be distinct inames
  std::vector<std::string> params;
  if (auto s = def->lhs.as<Subscript>()) {
    for (auto& ix : s->indices) {
      auto v = ix.as<Var>();
      if (!v || !k.has_iname(v->name) || std::count(params.begin(), params.end(), v->name))
        refuse(k, what, "index " + ix.str() + " of '" + lhs_name + "' in '" + def->id + "' is not an iname of its own; the rule's parameters must be distinct inames");
      params.push_back(v->name);
    }
  }
  ReadsToCalls self_check(lhs_name);
  self_check.mutate(def->rhs);
  if (self_check.replaced) refuse(k, what, "instruction '" + def->id + "' reads '" + lhs_name + "' itself");
  // the other inames of the assignment must surround every use, so the rule's
  // free inames mean the same iteration there
  std::set<std::string> context = def->within_inames;
  for (auto& p : params) context.erase(p);
  LoopKernel r = k;
  int uses = 0;
  for (auto& insn : r.instructions.edit()) {
    if (&insn - r.instructions->data() == def - k.instructions->data() || insn.kind != Instruction::Assign) continue;
    ReadsToCalls rc(lhs_name);
    Expr rhs = rc.mutate(insn.rhs);
    std::vector<Expr> preds;
    for (auto& pr : insn.predicates) preds.push_back(rc.mutate(pr));
    if (auto s = insn.lhs.as<Subscript>())
      for (auto& ix : s->indices) rc.mutate(ix);
    if (!rc.replaced) continue;
    for (auto& c : context)
      if (!insn.within_inames.count(c))
        refuse(k, what, "instruction '" + insn.id + "' reads '" + lhs_name + "' outside iname '" + c + "', which its assignment '" + def->id + "' runs in");
    insn.rhs = rhs;
    insn.predicates = preds;
    uses += rc.replaced;
  }
  if (uses == 0) refuse(k, what, "'" + lhs_name + "' is never read");
  std::string def_id = def->id;
  std::set<std::string> def_deps = def->depends_on;
  r.substitutions.edit()[lhs_name] = SubstitutionRule{lhs_name, params, def->rhs};
  r.instructions.edit().erase(r.instructions.edit().begin() + (def - k.instructions->data()));
  r.temporaries.edit().erase(lhs_name);
  for (auto& insn : r.instructions.edit())
    if (insn.depends_on.erase(def_id)) insn.depends_on.insert(def_deps.begin(), def_deps.end());
  return r;
}

LoopKernel expand_subst(const LoopKernel& k, const std::string& within) {
  const std::string what = "expand_subst('" + within + "')";
  if (k.substitutions.empty()) return k;
  std::optional<InstructionMatch> m;
  if (!within.empty()) {
    try {
      m = InstructionMatch::parse(within);
    } catch (const Error& e) {
      refuse(k, what, e.what());
    }
  }
  LoopKernel r = k;
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind != Instruction::Assign || (m && !(*m)(insn))) continue;
    insn.rhs = expand_rule_calls(k, insn.rhs);
    for (auto& p : insn.predicates) p = expand_rule_calls(k, p);
  }
  // rules nothing calls any more go (loopy's expand_subst does the same)
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = r.substitutions.edit().begin(); it != r.substitutions->end();) {
      bool used = false;
      for (auto& insn : r.instructions) {
        used |= insn.rhs.defined() && calls_rule(insn.rhs, it->first);
        for (auto& p : insn.predicates) used |= calls_rule(p, it->first);
      }
      for (auto& [n, rule] : r.substitutions) used |= n != it->first && calls_rule(rule.body, it->first);
      if (used) {
        ++it;
      } else {
        it = r.substitutions.edit().erase(it);
        changed = true;
      }
    }
  }
  return r;
}

void register_substitution_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"extract_subst", "Turn every occurrence of an expression pattern into a call of a new substitution rule.",
           {TransformParam{"subst_name", TransformParam::String, true, "name of the new rule"}.of(TransformParam::Type::Name),
            TransformParam{"template", TransformParam::String, true, "the pattern, an expression ('a[i] * w')"}.of(TransformParam::Type::Expression),
            TransformParam{"parameters", TransformParam::String, false, "the pattern's variables that match any expression, which become the rule's parameters"}.of(TransformParam::Type::Names)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return extract_subst(k, a.str("subst_name"), a.str("template"), a.str_or("parameters", ""));
           }});
  reg.add({"assignment_to_subst", "Turn a temporary that one instruction assigns into a substitution rule its readers call.",
           {TransformParam{"lhs_name", TransformParam::String, true, "the temporary"}.of(TransformParam::Type::Temporary)},
           [](const LoopKernel& k, const TransformArgs& a) { return assignment_to_subst(k, a.str("lhs_name")); }});
  reg.add({"expand_subst", "Replace substitution-rule calls by the rules' bodies (in the matching instructions), and drop rules no longer called.",
           {TransformParam{"within", TransformParam::String, false, "instruction match (default: all)"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return expand_subst(k, a.str_or("within", "")); }});
}

}  // namespace loom
