// eliminate_common_subexpressions: a subexpression an instruction computes
// more than once (two operations or more, e.g. (a[i] - m) * (a[i] - m);
// not plain index arithmetic, which every compiler shares) is computed once, by a new instruction into a private temporary, just
// before it. Occurrences that run only under a condition (an if_then_else
// branch, the right side of and/or) are not hoisted on their own: that
// would evaluate them where the condition protects them (say, an access
// that is in bounds only when the condition holds).
#include <unordered_map>

#include "loom/preprocess.h"

namespace loom {

namespace {

int operations(const Expr& e) {
  struct V : ExprVisitor {
    int n = 0;
    void visit_binary(const Binary& b) override {
      ++n;
      ExprVisitor::visit_binary(b);
    }
    void visit_call(const Call& c) override {
      ++n;
      ExprVisitor::visit_call(c);
    }
    void visit_unary(const Unary& u) override {
      ++n;
      ExprVisitor::visit_unary(u);
    }
    void visit_select(const Select& s) override {
      ++n;
      ExprVisitor::visit_select(s);
    }
  } v;
  v.visit(e);
  return v.n;
}

// Integer arithmetic of inames and parameters: every compiler shares it; left as written.
bool index_arithmetic(const Expr& e) {
  if (!e.type().is_int() && !e.type().is_bool()) return false;
  bool loads = false;
  for_each_subscript(e, [&](const Subscript&) { loads = true; });
  return !loads;
}

// Counts candidate subexpressions; `unconditional` records those evaluated
// whenever the instruction runs.
class Counter : public ExprVisitor {
 public:
  std::unordered_map<Expr, int, ExprHash, ExprEqual> count;
  std::unordered_map<Expr, bool, ExprHash, ExprEqual> unconditional;
  std::vector<Expr> order;  // first appearance

  void add(const Expr& e) {
    if (e.kind() == ExprKind::Reduce || operations(e) < 2 || index_arithmetic(e)) return visit(e);
    if (count[e]++ == 0) order.push_back(e);
    if (guarded_ == 0) unconditional[e] = true;
    visit(e);
  }

 protected:
  void visit_binary(const Binary& b) override {
    if (is_logical(b.op)) {
      add(b.a);
      ++guarded_;
      add(b.b);
      --guarded_;
      return;
    }
    add(b.a);
    add(b.b);
  }
  void visit_unary(const Unary& u) override { add(u.a); }
  void visit_call(const Call& c) override {
    for (auto& a : c.args) add(a);
  }
  void visit_cast(const Cast& c) override { add(c.value); }
  void visit_subscript(const Subscript& s) override {
    for (auto& i : s.indices) add(i);
  }
  void visit_select(const Select& s) override {
    add(s.cond);
    ++guarded_;
    add(s.t);
    add(s.f);
    --guarded_;
  }

 private:
  int guarded_ = 0;
};

class Replacer : public ExprMutator {
 public:
  Replacer(const Expr& what, const Expr& with) : what_(what), with_(with) {}

 protected:
  Expr mutate_binary(const Binary& b, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_binary(b, self);
  }
  Expr mutate_call(const Call& c, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_call(c, self);
  }
  Expr mutate_unary(const Unary& u, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_unary(u, self);
  }
  Expr mutate_select(const Select& s, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_select(s, self);
  }
  Expr mutate_cast(const Cast& c, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_cast(c, self);
  }
  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    return self.same_as(what_) ? with_ : ExprMutator::mutate_subscript(s, self);
  }

 private:
  Expr what_, with_;
};

}  // namespace

LoopKernel eliminate_common_subexpressions(const LoopKernel& k) {
  LoopKernel r = k;
  std::vector<Instruction> out;
  int next = 0;
  for (const Instruction& original : k.instructions) {
    Instruction insn = original;
    if (insn.kind == Instruction::Assign) {
      for (;;) {
        Counter c;
        c.add(insn.rhs);
        Expr best;
        for (auto& e : c.order)  // the largest repeated one first
          if (c.count[e] >= 2 && c.unconditional[e] && (!best.defined() || operations(e) > operations(best))) best = e;
        if (!best.defined()) break;
        std::string name;
        do {
          name = "cse_" + std::to_string(next++);
        } while (r.find_temporary(name) || r.find_argument(name) || r.has_iname(name));
        r.temporaries.edit()[name] = Temporary{name, best.type(), {}, AddressSpace::Private, {}, {}};
        Instruction def;
        def.id = insn.id + "_" + name;
        def.lhs = make_var(name, best.type());
        def.rhs = best;
        def.within_inames = insn.within_inames;
        def.inames_given = true;
        def.depends_on = insn.depends_on;
        def.predicates = insn.predicates;
        def.priority = insn.priority;
        def.loc = insn.loc;
        // its reads are the user's, done just before it (see reorder_check)
        def.origin = insn.origin;
        def.origin_of = insn.origin_of.empty() ? insn.id : insn.origin_of;
        insn.depends_on.insert(def.id);
        Replacer rep(best, def.lhs);
        Expr replaced = rep.mutate(insn.rhs);
        if (replaced.get() == insn.rhs.get()) throw KernelError("kernel '" + k.name + "': internal: CSE made no progress on '" + insn.id + "'");
        insn.rhs = replaced;
        out.push_back(def);
      }
    }
    out.push_back(insn);
  }
  r.instructions = out;
  return r;
}

}  // namespace loom
