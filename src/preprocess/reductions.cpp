// realize_reductions: sequential realization of sum/product/max/min. Each
// reduction becomes a private accumulator, an init instruction (within the
// instruction's inames) and an update instruction (within those plus the
// reduction's inames); the reduction's value is then the accumulator.
// Nested reductions realize inside their enclosing update. Reductions over
// hardware-parallel inames (tree/warp reductions) come with a later issue
// and are refused here with a clear error.
#include <cmath>
#include <limits>

#include "loom/preprocess.h"

namespace loom {

namespace {

Expr neutral(ReduceOp op, Type t) {
  auto f = [&](double v) { return t.is_float() ? make_float(v, t) : make_int(int64_t(v), t); };
  switch (op) {
    case ReduceOp::Sum: return f(0);
    case ReduceOp::Product: return f(1);
    case ReduceOp::Max:
      if (t.is_float()) return make_float(-std::numeric_limits<double>::infinity(), t);
      if (!t.is_signed_int()) return make_int(0, t);
      return make_int(t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits() - 1)), t);
    case ReduceOp::Min:
      if (t.is_float()) return make_float(std::numeric_limits<double>::infinity(), t);
      if (t.bits() == 64) return make_int(t.is_signed_int() ? std::numeric_limits<int64_t>::max() : -1, t);
      return make_int(t.is_signed_int() ? (int64_t(1) << (t.bits() - 1)) - 1 : (int64_t(1) << t.bits()) - 1, t);
  }
  return Expr();
}

Expr combine(ReduceOp op, Expr acc, Expr x, Type t) {
  switch (op) {
    case ReduceOp::Sum: return make_binary(BinOp::Add, acc, x, t);
    case ReduceOp::Product: return make_binary(BinOp::Mul, acc, x, t);
    case ReduceOp::Max: return make_call("max", {acc, x}, t);
    case ReduceOp::Min: return make_call("min", {acc, x}, t);
  }
  return Expr();
}

class Realizer : public ExprMutator {
 public:
  Realizer(LoopKernel& k, const Instruction& insn, std::vector<Instruction>& out)
      : k_(k), insn_(insn), out_(out), scope_(insn.within_inames) {}
  std::set<std::string> final_updates;  // what the rewritten instruction must wait for

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr&) override {
    for (auto& n : r.inames) {
      if (scope_.count(n))
        fail("reduces over '" + n + "', but the instruction already runs within '" + n + "'");
      if (k_.tag_of(n).is_hardware())
        fail("reduction over '" + n + "', which is tagged '" + k_.tag_of(n).str() +
             "': parallel reductions over hardware axes are not supported yet; leave reduction inames sequential");
    }
    std::string acc = unique_name("acc_" + insn_.assignee_name());
    k_.temporaries[acc] = Temporary{acc, r.type, {}, AddressSpace::Private};
    Instruction init;
    init.id = unique_id(insn_.id + "_" + acc + "_init");
    init.lhs = make_var(acc, r.type);
    init.rhs = neutral(r.op, r.type);
    init.within_inames = scope_;
    init.inames_given = true;
    init.depends_on = insn_.depends_on;
    init.predicates = insn_.predicates;
    init.priority = insn_.priority;
    init.loc = insn_.loc;
    out_.push_back(init);

    // the body runs within the reduction inames; nested reductions realize there
    std::set<std::string> saved = scope_, saved_final = final_updates;
    scope_.insert(r.inames.begin(), r.inames.end());
    final_updates.clear();
    Expr body = mutate(r.body);
    std::set<std::string> inner = final_updates;
    scope_ = saved;
    final_updates = saved_final;

    Instruction upd;
    upd.id = unique_id(insn_.id + "_" + acc + "_update");
    upd.lhs = make_var(acc, r.type);
    upd.rhs = combine(r.op, make_var(acc, r.type), body, r.type);
    upd.within_inames = scope_;
    upd.within_inames.insert(r.inames.begin(), r.inames.end());
    upd.inames_given = true;
    upd.depends_on = insn_.depends_on;
    upd.depends_on.insert(init.id);
    upd.depends_on.insert(inner.begin(), inner.end());
    upd.predicates = insn_.predicates;
    upd.priority = insn_.priority;
    upd.loc = insn_.loc;
    out_.push_back(upd);
    final_updates.insert(upd.id);
    return make_var(acc, r.type);
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw KernelError("kernel '" + k_.name + "', instruction '" + insn_.id + "': " + why);
  }
  std::string unique_name(const std::string& base) {
    std::string n = base;
    for (int i = 0; k_.find_temporary(n) || k_.find_argument(n) || k_.has_iname(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }
  std::string unique_id(const std::string& base) {
    auto taken = [&](const std::string& id) {
      for (auto& i : k_.instructions)
        if (i.id == id) return true;
      for (auto& i : out_)
        if (i.id == id) return true;
      return false;
    };
    std::string n = base;
    for (int i = 0; taken(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }

  LoopKernel& k_;
  const Instruction& insn_;
  std::vector<Instruction>& out_;
  std::set<std::string> scope_;
};

}  // namespace

LoopKernel realize_reductions(const LoopKernel& k) {
  LoopKernel r = k;
  std::vector<Instruction> out;
  for (const Instruction& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) {
      out.push_back(insn);
      continue;
    }
    Realizer rz(r, insn, out);
    Instruction copy = insn;
    copy.rhs = rz.mutate(insn.rhs);
    for (auto& p : copy.predicates) p = rz.mutate(p);
    copy.depends_on.insert(rz.final_updates.begin(), rz.final_updates.end());
    out.push_back(copy);
  }
  r.instructions = std::move(out);
  return r;
}

}  // namespace loom
