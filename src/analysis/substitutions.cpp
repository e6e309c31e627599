// expand_substitutions: replaces calls of substitution rules (f(x) := ...)
// by the rule's body with the arguments substituted, recursively.
#include "loom/analysis.h"

namespace loom {

namespace {

class RuleExpander : public ExprMutator {
 public:
  explicit RuleExpander(const LoopKernel& k) : k_(k) {}

 protected:
  Expr mutate_call(const Call& c, const Expr& self) override {
    auto it = k_.substitutions.find(c.name);
    if (it == k_.substitutions.end()) return ExprMutator::mutate_call(c, self);
    const SubstitutionRule& rule = it->second;
    if (rule.params.size() != c.args.size())
      throw KernelError("kernel '" + k_.name + "': substitution rule '" + rule.name + "' takes " +
                        std::to_string(rule.params.size()) + " argument(s), called with " + std::to_string(c.args.size()));
    if (++depth_ > 64)
      throw KernelError("kernel '" + k_.name + "': substitution rule '" + rule.name + "' expands recursively");
    std::map<std::string, Expr> bind;
    for (size_t i = 0; i < c.args.size(); ++i) bind[rule.params[i]] = mutate(c.args[i]);
    Expr r = mutate(substitute(rule.body, bind));
    --depth_;
    return r;
  }
  Expr mutate_var(const Var& v, const Expr& self) override {
    // a rule without parameters may be used as a plain name: f := 2*x
    auto it = k_.substitutions.find(v.name);
    if (it == k_.substitutions.end() || !it->second.params.empty()) return self;
    if (++depth_ > 64) throw KernelError("kernel '" + k_.name + "': substitution rule '" + v.name + "' expands recursively");
    Expr r = mutate(it->second.body);
    --depth_;
    return r;
  }

 private:
  const LoopKernel& k_;
  int depth_ = 0;
};

}  // namespace

Expr expand_rule_calls(const LoopKernel& k, const Expr& e) { return RuleExpander(k).mutate(e); }

LoopKernel expand_substitutions(const LoopKernel& k) {
  if (k.substitutions.empty()) return k;
  LoopKernel r = k;
  RuleExpander ex(k);
  for (auto& insn : r.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = ex.mutate(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = ex.mutate(insn.rhs);
    for (auto& p : insn.predicates) p = ex.mutate(p);
  }
  r.substitutions.edit().clear();
  return r;
}

}  // namespace loom
