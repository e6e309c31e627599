// round_up_reduction: a sum's last, partial tile computed whole (Halide's
// RoundUp tail strategy, Triton's masked loads with `other=0`). The bounds
// that cut the given reduction inames short (constraints with a parameter,
// e.g. `32*k_outer + k_inner < l`) are dropped from their domain, keeping
// the tile's own shape (`0 <= k_inner < 32`) and every other iname's range,
// so code generation sees full tiles only: no guarded copy of the unrolled
// body, fewer registers.
//
// Legal when every extra term is exactly zero: each reduction over these
// inames is a sum whose body is a product of reads of zero-filled
// temporaries (add_prefetch with fill_value=0), and at every extra point the
// access each factor replaced (the instruction as written, through its
// origin) lies outside its array, where the temporary holds 0. Then each
// extra term is 0 * ... * 0 = +0 and the sums are unchanged (a sum that is
// exactly -0.0 becomes +0.0). Anything else is refused with the reason; the
// check is exact (isl, over the extra points under the assumptions).
#include <isl/set.h>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::ReductionsOver;
using transforms::refuse;

namespace {

// The factors of a product (a * b * c -> a, b, c).
void factors_of(const Expr& e, std::vector<Expr>& out) {
  if (auto b = e.as<Binary>(); b && b->op == BinOp::Mul) {
    factors_of(b->a, out);
    factors_of(b->b, out);
    return;
  }
  out.push_back(e);
}

// The domain with iname x's parametric bounds dropped: x keeps the
// constraints without parameters (its tile), every other iname the range it
// had (x eliminated).
isl::set without_parametric_bounds(const isl::set& d, const std::string& x) {
  int pos = islu::find_dim(d.get(), isl_dim_set, x);
  isl_set* others = isl_set_eliminate(d.copy(), isl_dim_set, unsigned(pos), 1);
  unsigned nparam = unsigned(isl_set_dim(d.get(), isl_dim_param));
  isl_set* tile = isl_set_drop_constraints_involving_dims(d.copy(), isl_dim_param, 0, nparam);
  return isl::manage(isl_set_coalesce(isl_set_intersect(others, tile)));
}

}  // namespace

LoopKernel round_up_reduction(const LoopKernel& k, const std::string& inames) {
  const std::string what = "round_up_reduction('" + inames + "')";
  std::vector<std::string> list = name_list(inames);
  if (list.empty()) refuse(k, what, "no inames given");
  std::set<std::string> names(list.begin(), list.end());
  for (auto& n : list)
    if (!k.has_iname(n)) refuse(k, what, "no iname '" + n + "'");

  // ---- the instructions: sums of products of zero-filled temporaries ----
  struct Affected {
    size_t insn;
    std::vector<Expr> factors;  // of its sums over the inames
  };
  std::vector<Affected> affected;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    for (auto& n : list)
      if (insn.within_inames.count(n))
        refuse(k, what, "instruction '" + insn.id + "' runs in loop '" + n + "'; only a reduction's inames can be rounded up");
    if (insn.kind != Instruction::Assign) continue;
    ReductionsOver over(names);
    over.visit(insn.rhs);
    for (auto& p : insn.predicates) over.visit(p);
    if (over.found.empty()) continue;
    Affected a{i, {}};
    for (const Reduce* r : over.found) {
      if (r->op != ReduceOp::Sum)
        refuse(k, what, "the reduction over " + r->body.str() + " in instruction '" + insn.id + "' is not a sum; extra terms change it");
      factors_of(r->body, a.factors);
    }
    for (auto& f : a.factors) {
      auto s = f.as<Subscript>();
      const Temporary* t = s ? k.find_temporary(s->name) : nullptr;
      if (!t || t->zero_fill_of.empty())
        refuse(k, what, "factor " + f.str() + " of the sum in instruction '" + insn.id +
                            "' is not a read of a temporary prefetched with fill_value=0, so an extra term need not be zero");
    }
    affected.push_back(std::move(a));
  }
  if (affected.empty()) refuse(k, what, "no reduction runs over " + inames);

  // ---- the new domains ----
  LoopKernel r = k;
  for (auto& n : list) {
    for (auto& d : r.domains.edit()) {
      if (!d.has_iname(n)) continue;
      d = islu::from_isl(without_parametric_bounds(islu::to_isl(d), n));
      break;
    }
    if (!islu::constant_range(r, n)) refuse(k, what, "iname '" + n + "' has no range without the parameters");
  }

  // ---- every extra term reads outside the arrays ----
  std::string params;  // every parameter, so that the arrays' extents can be compared too
  for (auto& p : k.parameters()) params += (params.empty() ? "" : ", ") + p;
  for (const Affected& a : affected) {
    const Instruction& insn = k.instructions[a.insn];
    std::set<std::string> all = insn.iteration_inames();
    std::vector<std::string> dims(all.begin(), all.end());
    isl::set before = islu::iteration_domain(k, dims), after = islu::iteration_domain(r, dims);
    if (k.assumptions.defined()) {
      isl::set assumed = islu::to_isl(k.assumptions);
      before = before.intersect_params(assumed);
      after = after.intersect_params(assumed);
    }
    isl::set extra = after.subtract(before).intersect_params(isl::set(after.ctx(), "[" + params + "] -> { : }"));
    if (extra.is_empty()) continue;
    if (!insn.origin || !k.original)
      refuse(k, what, "instruction '" + insn.id + "' was added by a transformation, so its reads cannot be traced to the arrays");
    const std::string& origin_id = insn.origin_of.empty() ? insn.id : insn.origin_of;
    const Instruction* orig = nullptr;
    for (auto& o : k.original->instructions)
      if (o.id == origin_id) orig = &o;
    if (!orig) refuse(k, what, "instruction '" + insn.id + "' has no instruction as written to compare with");
    for (auto& f : a.factors) {
      const std::string& array = k.find_temporary(f.as<Subscript>()->name)->zero_fill_of;
      const Argument* arg = k.find_argument(array);
      std::vector<const Subscript*> reads;
      for_each_subscript(orig->rhs, [&](const Subscript& s) {
        if (s.name == array) reads.push_back(&s);
      });
      if (!arg || reads.empty())
        refuse(k, what, "instruction '" + insn.id + "' as written does not read '" + array + "', of which " + f.str() + " is a copy");
      for (const Subscript* s : reads) {
        // where the access as written is inside the array, at the extra points
        Expr cond;
        for (size_t d = 0; d < s->indices.size() && d < arg->shape.size(); ++d) {
          Expr ix = substitute(s->indices[d], *insn.origin);
          Expr c = make_binary(BinOp::And, make_binary(BinOp::Ge, ix, make_int(0)), make_binary(BinOp::Lt, ix, arg->shape[d]));
          cond = cond.defined() ? make_binary(BinOp::And, cond, c) : c;
        }
        isl::set holds = cond.defined() ? islu::condition_set(cond, extra.space()) : extra;
        if (holds.is_null())
          refuse(k, what, "the indices of " + s->name + " in instruction '" + insn.id + "' (through its origin) are not affine");
        isl::set inside = extra.intersect(holds);
        if (!inside.is_empty())
          refuse(k, what, "an extra term of instruction '" + insn.id + "' would read " + s->name + " inside the array (" +
                              islu::witness(inside) + "), where " + f.str() + " is not zero");
      }
    }
  }
  return r;
}

void register_round_up_reduction_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"round_up_reduction",
           "Run a sum's partial last tile whole: drop the parametric bounds of its inames, where every extra term reads zero-filled temporaries.",
           {TransformParam{"inames", TransformParam::String, true, "the reduction inames whose tile is run whole ('k_inner')"}.of(TransformParam::Type::Inames)},
           [](const LoopKernel& k, const TransformArgs& a) { return round_up_reduction(k, a.str("inames")); }});
}

}  // namespace loom
