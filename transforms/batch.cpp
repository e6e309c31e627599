// to_batched (loopy's name): the kernel run for a batch of independent
// problems. A new iname ibatch over 0 <= ibatch < nbatches (a constant, or a
// parameter that becomes an argument) runs every instruction; the arguments
// named in batch_varying_args get a leading batch axis (a scalar argument
// becomes an array of nbatches values), and so do the kernel's local, global
// and auto temporaries, since problems run side by side must not share them
// (private ones are per thread already; sequential=true keeps every
// temporary shared and the batch loop in order, as loopy does). The kernel
// is a new computation, so its reference for the legality checks is batched
// the same way.
#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// Prepends the batch index to the accesses of the batched names: a[i] is
// a[ibatch, i], a batched scalar x is x[ibatch].
struct AddBatchIndex : ExprMutator {
  const std::set<std::string>& batched;
  Expr index;
  AddBatchIndex(const std::set<std::string>& b, Expr i) : batched(b), index(std::move(i)) {}

  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    Expr inner = ExprMutator::mutate_subscript(s, self);
    if (!batched.count(s.name)) return inner;
    auto* rebuilt = inner.as<Subscript>();
    std::vector<Expr> idx{index};
    idx.insert(idx.end(), rebuilt->indices.begin(), rebuilt->indices.end());
    return make_subscript(s.name, idx, s.type);
  }
  Expr mutate_var(const Var& v, const Expr& self) override {
    if (!batched.count(v.name)) return self;
    return make_subscript(v.name, {index}, v.type);
  }
};

LoopKernel batched(const LoopKernel& k, const std::string& nbatches, const std::vector<std::string>& varying,
                   const std::string& iname, bool sequential) {
  const std::string what = "to_batched(" + nbatches + ")";
  LoopKernel r = k;
  // the batch count: a constant or a parameter
  bool constant = !nbatches.empty() && nbatches.find_first_not_of("0123456789") == std::string::npos;
  Expr count;
  if (constant) {
    if (nbatches.size() > 12) refuse(k, what, "the batch count is too large");
    count = make_int(std::stoll(nbatches), k.options.index_dtype);
  } else {
    if (nbatches.empty() || !(std::isalpha(static_cast<unsigned char>(nbatches[0])) || nbatches[0] == '_') ||
        nbatches.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos)
      refuse(k, what, "the batch count is a non-negative integer or a parameter's name");
    if (k.has_iname(nbatches) || k.find_temporary(nbatches) ||
        (k.find_argument(nbatches) && k.find_argument(nbatches)->kind == Argument::Array))
      refuse(k, what, "'" + nbatches + "' is already an iname, array or temporary of the kernel");
    count = make_var(nbatches, k.options.index_dtype);
    if (!k.find_argument(nbatches))
      r.arguments.edit().push_back(Argument{Argument::Value, nbatches, k.options.index_dtype, {}, {}, false, false});
  }
  r.domains.edit().insert(r.domains.edit().begin(),
                          Domain::parse(constant ? "{[" + iname + "]: 0 <= " + iname + " < " + nbatches + "}"
                                                 : "[" + nbatches + "] -> {[" + iname + "]: 0 <= " + iname + " < " + nbatches + "}"));
  // what gets a batch axis
  std::set<std::string> names;
  auto params = k.parameters();
  for (auto& v : varying) {
    const Argument* a = k.find_argument(v);
    const Temporary* t = k.find_temporary(v);
    if (!a && !t) {
      std::vector<std::string> known;
      for (auto& x : k.arguments) known.push_back(x.name);
      refuse(k, what, "no argument or temporary '" + v + "'" + did_you_mean(v, known));
    }
    if (a && a->kind == Argument::Value && std::find(params.begin(), params.end(), v) != params.end())
      refuse(k, what, "'" + v + "' is a parameter of the domains or shapes; a batch of them would be a batch of different loops");
    names.insert(v);
  }
  if (!sequential)
    for (auto& [n, t] : k.temporaries)
      if (t.space != AddressSpace::Private) names.insert(n);
  for (auto& a : r.arguments.edit()) {
    if (!names.count(a.name)) continue;
    if (a.kind == Argument::Value) {
      a.kind = Argument::Array;
      a.shape = {count};
      continue;
    }
    a.shape.insert(a.shape.begin(), count);
    a.strides.clear();  // (loopy's batched arrays are C order: the batch axis outermost)
    if (a.vector_axis >= 0) ++a.vector_axis;
  }
  for (auto& [n, t] : r.temporaries.edit())
    if (names.count(n)) t.shape.insert(t.shape.begin(), count);
  // every access of a batched name indexed by the batch, every instruction in the batch loop
  AddBatchIndex add(names, make_var(iname, k.options.index_dtype));
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind == Instruction::Assign) {
      insn.lhs = add.mutate(insn.lhs);
      insn.rhs = add.mutate(insn.rhs);
    }
    for (auto& p : insn.predicates) p = add.mutate(p);
    insn.within_inames.insert(iname);
    if (insn.origin) (*insn.origin)[iname] = make_var(iname, k.options.index_dtype);
  }
  for (auto& [n, rule] : r.substitutions.edit()) rule.body = add.mutate(rule.body);
  if (r.original) r.original = std::make_shared<const LoopKernel>(batched(*r.original, nbatches, varying, iname, sequential));
  return r;
}

}  // namespace

LoopKernel to_batched(const LoopKernel& k, const std::string& nbatches, const std::vector<std::string>& batch_varying_args,
                      const std::string& batch_iname_prefix, bool sequential) {
  return batched(k, nbatches, batch_varying_args, transforms::unique_name(k, batch_iname_prefix), sequential);
}

void register_batch_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"to_batched",
           "The kernel for a batch of independent problems: every instruction in a new loop over the batch, a leading batch "
           "axis on the arguments named and on the shared temporaries (loopy's to_batched).",
           {P{"nbatches", P::String, true, "the batch count: an integer, or a parameter's name (added as an argument)"}.of(P::Type::Text),
            P{"batch_varying_args", P::String, false, "the arguments (or temporaries) that differ per problem"}.of(P::Type::Names).otherwise(""),
            P{"batch_iname_prefix", P::String, false, "the batch iname's name (made unique)"}.of(P::Type::Name).otherwise("ibatch"),
            P{"sequential", P::String, false, "keep the temporaries shared and the batch loop in order"}.of(P::Type::Bool).otherwise("false")},
           [](const LoopKernel& k, const TransformArgs& a) {
             return to_batched(k, a.str("nbatches"), transforms::name_list(a.has("batch_varying_args") ? a.str("batch_varying_args") : ""),
                               a.has("batch_iname_prefix") ? a.str("batch_iname_prefix") : "ibatch", a.flag("sequential", false));
           },
           /*changes_interface=*/true});
}

}  // namespace loom
