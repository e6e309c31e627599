// privatize_ilp: a private temporary written inside an ILP iname (ilp,
// ilp.seq, ilp.unr) or a vec iname gets one copy per iteration of that
// iname, as loopy does: an extra leading dimension indexed by the iname
// (minus its lower bound), so the iterations are independent and can run
// interleaved. Every instruction touching the temporary must then run
// within the iname; for vec, a temporary used outside it (a reduction's
// accumulator summed over the lanes) is left alone, and the vec loop keeps
// the plain loop's sequential meaning.
#include <algorithm>

#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

class Privatizer : public ExprMutator {
 public:
  Privatizer(std::string temp, Expr index) : temp_(std::move(temp)), index_(std::move(index)) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& self) override {
    return v.name == temp_ ? make_subscript(temp_, {index_}, v.type) : self;
  }
  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    Expr e = ExprMutator::mutate_subscript(s, self);
    if (s.name != temp_) return e;
    auto sub = e.as<Subscript>();
    std::vector<Expr> idx{index_};
    idx.insert(idx.end(), sub->indices.begin(), sub->indices.end());
    return make_subscript(temp_, idx, sub->type);
  }

 private:
  std::string temp_;
  Expr index_;
};

bool touches(const Instruction& insn, const std::string& temp) {
  bool t = insn.assignee_name() == temp || mentions_var(insn.rhs, temp);
  if (insn.rhs.defined()) for_each_subscript(insn.rhs, [&](const Subscript& s) { t |= s.name == temp; });
  return t;
}

}  // namespace

LoopKernel privatize_ilp(const LoopKernel& k) {
  std::vector<std::string> ilp;
  for (auto& n : k.all_inames())
    if (k.tag_of(n).is_ilp() || k.tag_of(n).kind == InameTag::Vec) ilp.push_back(n);
  if (ilp.empty()) return k;
  LoopKernel r = k;
  Type it = k.options.index_dtype;
  for (auto& entry : k.temporaries) {  // (no structured binding: a lambda below captures the name)
    const std::string& name = entry.first;
    const Temporary& t = entry.second;
    if (t.space == AddressSpace::Local) continue;
    for (auto& L : ilp) {
      bool written_in_L = false;
      for (auto& insn : r.instructions)
        written_in_L |= insn.kind == Instruction::Assign && insn.assignee_name() == name && insn.within_inames.count(L);
      if (!written_in_L) continue;
      if (k.tag_of(L).kind == InameTag::Vec &&
          std::any_of(r.instructions.begin(), r.instructions.end(), [&](const Instruction& insn) {
            return touches(insn, name) && !insn.within_inames.count(L);
          }))
        continue;
      auto range = islu::constant_range(k, L);
      if (!range)
        throw KernelError("kernel '" + k.name + "': ILP iname '" + L + "' needs a constant range to privatize '" + name + "'");
      auto [l, h] = *range;
      Privatizer pv(name, simplify(make_binary(BinOp::Sub, make_var(L, it), make_int(l, it), it)));
      for (auto& insn : r.instructions.edit()) {
        if (!touches(insn, name)) continue;
        if (!insn.within_inames.count(L))
          throw KernelError("kernel '" + k.name + "': instruction '" + insn.id + "' uses '" + name +
                            "', which is private to each iteration of ILP iname '" + L + "', outside of '" + L + "'");
        if (insn.lhs.defined()) insn.lhs = pv.mutate(insn.lhs);
        if (insn.rhs.defined()) insn.rhs = pv.mutate(insn.rhs);
        for (auto& p : insn.predicates) p = pv.mutate(p);
      }
      Temporary& tt = r.temporaries.edit()[name];
      tt.shape.insert(tt.shape.begin(), make_int(h - l + 1, it));
      tt.space = AddressSpace::Private;
    }
  }
  return r;
}

}  // namespace loom
