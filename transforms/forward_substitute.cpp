// forward_substitute: the reads that get every value from a store of a
// constant read the constant instead, and the store goes where nothing else
// reads what it writes. PolyBench initializes an array, then accumulates
// into it (2mm's tmp[i, j] = 0, then tmp[i, j] += ...; doitgen's sum): once
// the accumulation is a sum (accumulation_to_reduction), the initial value
// folds into it (tmp[i, j] = 0 + sum(k, ...)), and the pass that zeroes the
// array, and the sum's read of it, disappear.
//
// Legal where isl proves, in the kernel as it stands, that every read of the
// array in each rewritten instruction gets its value from the store (its
// value is then the constant, at every instance), and, for the store's
// removal, that none of its values is read elsewhere or left as a final
// value. The rewritten kernel computes the same values in the same order
// (x = c; x = x + y is c + y), so the step is applied to the kernel as
// written too, where the same proof must hold: the reorder check then
// compares kernels that both read the constant.
#include <algorithm>

#include "common.h"
#include "loom/schedule.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// The stored value: a literal, converted to the array's type as the store converts it.
Expr constant_of(const Instruction& store, Type dtype) {
  Expr v = store.rhs;
  auto c = v.as<Cast>();
  Expr literal = c ? c->value : v;
  if (!literal.as<IntImm>() && !literal.as<FloatImm>()) return Expr();
  return dtype.known() && !(literal.type() == dtype) ? make_cast(dtype, literal) : v;
}

// e with every access of `array` replaced by `value`.
class ReadsReplaced : public ExprMutator {
 public:
  ReadsReplaced(std::string array, Expr value) : array_(std::move(array)), value_(std::move(value)) {}

 protected:
  Expr mutate_subscript(const Subscript& s, const Expr& self) override { return s.name == array_ ? value_ : ExprMutator::mutate_subscript(s, self); }
  Expr mutate_var(const Var& v, const Expr& self) override { return v.name == array_ ? value_ : self; }

 private:
  std::string array_;
  Expr value_;
};

// k with the store's readers reading its constant, the store removed where
// nothing else reads it; `why` says what refuses it (nothing changed then).
LoopKernel forwarded(const LoopKernel& k, const std::string& store, std::string& why) {
  const Instruction& s = k.instruction(store);
  const std::string array = s.assignee_name();
  const Argument* arg = k.find_argument(array);
  const Temporary* tmp = k.find_temporary(array);
  Type dtype = arg ? arg->dtype : tmp ? tmp->dtype : Type();
  Expr value = constant_of(s, dtype);
  if (!value.defined()) {
    why = "instruction '" + store + "' stores " + s.rhs.str() + ", not a constant";
    return k;
  }
  std::optional<StoreReaders> readers = store_readers(k, store);
  if (!readers) {
    why = "isl cannot follow the accesses of '" + array + "' (an index that is not affine, a reduction's part, or beyond its work bound)";
    return k;
  }
  if (readers->readers.empty()) {
    why = "no instruction reads only the values of '" + array + "' that instruction '" + store + "' stores" +
          (readers->mixed.empty() ? "" : " (instruction '" + *readers->mixed.begin() + "' reads them and others': make it a sum first)");
    return k;
  }
  LoopKernel r = k;
  for (auto& insn : r.instructions.edit()) {
    if (!readers->readers.count(insn.id)) continue;
    ReadsReplaced replace(array, value);
    insn.rhs = replace.mutate(insn.rhs);
    for (auto& p : insn.predicates) p = replace.mutate(p);
  }
  // (what depended on the store then waits for what the store waited for)
  if (readers->mixed.empty() && !readers->live_out) r = remove_instructions(r, "id:" + store);
  return r;
}

}  // namespace

LoopKernel forward_substitute(const LoopKernel& k, const std::string& match) {
  const std::string what = "forward_substitute('" + match + "')";
  std::vector<std::string> stores = find_instructions(k, match);
  if (stores.empty()) refuse(k, what, "no instruction matches '" + match + "'");
  const LoopKernel* as_written = k.original.get();
  LoopKernel r = k;
  std::optional<LoopKernel> written = as_written ? std::optional<LoopKernel>(*as_written) : std::nullopt;
  for (auto& id : stores) {
    const Instruction& s = r.instruction(id);
    if (s.kind != Instruction::Assign) refuse(k, what, "instruction '" + id + "' is not an assignment");
    if (!s.origin_of.empty() && s.origin_of != id) refuse(k, what, "instruction '" + id + "' is a piece of '" + s.origin_of + "' (split or copied): substitute before that");
    std::string why;
    LoopKernel next = forwarded(r, id, why);
    if (!why.empty()) refuse(k, what, why);
    if (written) {
      // the same step on the kernel as written, where it must hold as well
      bool there = std::any_of(written->instructions.begin(), written->instructions.end(), [&](auto& i) { return i.id == id; });
      if (!there) refuse(k, what, "the kernel as written has no instruction '" + id + "', where the substitution is proven too");
      LoopKernel w = forwarded(*written, id, why);
      if (!why.empty()) refuse(k, what, "in the kernel as written: " + why);
      written = w;
    }
    r = next;
  }
  if (written) r.original = std::make_shared<const LoopKernel>(*written);
  return r;
}

void register_forward_substitute_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"forward_substitute",
           "Make the reads that get every value from a store of a constant (an initialization: tmp[i, j] = 0) read the constant, and "
           "remove the store where nothing else reads what it writes: after accumulation_to_reduction, tmp[i, j] = 0 + sum(k, ...).",
           {P{"match", P::String, true, "the stores"}.of(P::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return forward_substitute(k, a.str("match")); }});
}

}  // namespace loom
