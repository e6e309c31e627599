// rfactor (Halide's and TVM's name): a reduction split in two launches, so
// that a reduction too long for one block, or too few rows for the GPU, runs
// on many blocks. `out[w] = sum((k, p), e)` with `kept` = k becomes
//
//   out_partial[w, k] = sum(p, e)                     (the first launch: k may go on blocks)
//   ... gbarrier
//   out[w] = sum(k_r, out_partial[w, k_r])            (the second)
//
// with out_partial a global temporary over the instruction's inames and the
// kept ones (each extent and lower bound from isl, in the parameters) and
// k_r a copy of the kept inames over the values they take for each w. The
// operator (sum, product, max, min) is the same at both levels: it is
// associative, so the result is the reduction's over the whole set (the
// order of a reduction is free, as in loopy). A global barrier is what loopy
// writes by hand for this (examples/sum_all.loom); split_global_barriers then
// refuses what may not cross it (a private value, a dependence on a later
// instruction). Refused: argmax/argmin (an index travels with the value),
// loops bounded by values the kernel computes (the partial array's shape
// would need them), an instruction whose right-hand side is more than the
// reduction.
#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// The lower bound and the extent of iname d over the set s (its other
// dimensions projected out), as expressions in the parameters.
std::pair<Expr, Expr> bounds_of(const LoopKernel& k, const isl::set& s, const std::string& d, const std::string& what) {
  isl::set only = islu::arrange_dims(s, {d});
  isl::set context = k.assumptions.defined() ? islu::to_isl(k.assumptions) : isl::manage(isl_set_universe(isl_set_get_space(only.params().get())));
  isl::pw_aff lo = isl::manage(isl_set_dim_min(only.copy(), 0)), hi = isl::manage(isl_set_dim_max(only.copy(), 0));
  Type it = k.options.index_dtype;
  Expr low, extent;
  if (!lo.is_null() && !hi.is_null()) {
    isl_pw_aff* one = isl_pw_aff_val_on_domain(isl_set_universe(isl_pw_aff_get_domain_space(hi.get())), isl_val_one(isl_context()));
    isl::pw_aff e = isl::manage(isl_pw_aff_add(isl_pw_aff_sub(hi.copy(), lo.copy()), one));
    low = islu::expr_from_pw_aff(lo, context, it);
    extent = islu::expr_from_pw_aff(e, context, it);
  }
  if (!low.defined() || !extent.defined())
    refuse(k, what, "iname '" + d + "' has no bounds isl can write in the parameters (it needs them for the partial results' shape)");
  return {low, extent};
}

}  // namespace

LoopKernel rfactor(const LoopKernel& k, const std::string& kept_spec, const std::string& within, const std::string& temporary_name) {
  const std::string what = "rfactor('" + kept_spec + "')";
  std::vector<std::string> kept = transforms::name_list(kept_spec);
  if (kept.empty()) refuse(k, what, "no inames given");
  InstructionMatch m = InstructionMatch::parse(within.empty() ? "*" : within);
  const Instruction* insn = nullptr;
  for (auto& i : k.instructions) {
    if (i.kind != Instruction::Assign || !m(i)) continue;
    auto r = i.rhs.as<Reduce>();
    if (!r) continue;
    bool over = false;
    for (auto& n : kept) over |= std::find(r->inames.begin(), r->inames.end(), n) != r->inames.end();
    if (!over) continue;
    if (insn) refuse(k, what, "instructions '" + insn->id + "' and '" + i.id + "' both reduce over them; say which with within=");
    insn = &i;
  }
  if (!insn) refuse(k, what, "no instruction" + std::string(within.empty() ? "" : " matching '" + within + "'") +
                                 " whose right-hand side is a reduction over these inames");
  const Reduce& red = *insn->rhs.as<Reduce>();
  if (red.op != ReduceOp::Sum && red.op != ReduceOp::Product && red.op != ReduceOp::Max && red.op != ReduceOp::Min)
    refuse(k, what, "instruction '" + insn->id + "' reduces with " + std::string(to_string(red.op)) + ", whose partial results would need their index too");
  std::vector<std::string> rest;
  for (auto& n : red.inames)
    if (std::find(kept.begin(), kept.end(), n) == kept.end()) rest.push_back(n);
  for (auto& n : kept)
    if (std::find(red.inames.begin(), red.inames.end(), n) == red.inames.end())
      refuse(k, what, "instruction '" + insn->id + "' does not reduce over '" + n + "'");
  if (rest.empty()) refuse(k, what, "instruction '" + insn->id + "' reduces over these inames only: nothing is left for the first launch to reduce");
  if (insn->atomic) refuse(k, what, "instruction '" + insn->id + "' is an atomic update");

  // the instruction's own inames, then the kept ones: the partial results' axes
  std::vector<std::string> own;
  for (auto& n : k.all_inames())
    if (insn->within_inames.count(n)) own.push_back(n);
  std::set<std::string> data = k.data_dependent_inames();
  std::vector<std::string> all = own;
  all.insert(all.end(), red.inames.begin(), red.inames.end());
  for (auto& n : all)
    if (data.count(n)) refuse(k, what, "iname '" + n + "' is bounded by a value the kernel computes; the partial results' shape would need it");
  std::vector<std::string> axes = own;
  axes.insert(axes.end(), kept.begin(), kept.end());
  isl::set space = islu::iteration_domain(k, all);
  std::vector<Expr> shape, index;
  Type it = k.options.index_dtype;
  for (auto& d : axes) {
    auto [low, extent] = bounds_of(k, space, d, what);
    shape.push_back(extent);
    index.push_back(simplify(make_binary(BinOp::Sub, make_var(d, it), low, it)));
  }

  LoopKernel r = k;
  std::string partial = temporary_name.empty() ? transforms::unique_name(k, insn->assignee_name() + "_partial") : temporary_name;
  if (k.find_temporary(partial) || k.find_argument(partial) || k.has_iname(partial)) refuse(k, what, "the name '" + partial + "' is taken");
  Temporary t;
  t.name = partial;
  t.dtype = red.type;
  if (t.dtype == types::unknown) {  // (before type inference: the reduction's type as it will be inferred)
    Expr typed = infer_types(expand_substitutions(k)).instruction(insn->id).rhs;
    if (auto c = typed.as<Cast>()) typed = c->value;  // (a sum of bools counts in int32, then converts to the assignee)
    if (auto tr = typed.as<Reduce>()) t.dtype = tr->type;
  }
  if (t.dtype == types::unknown) refuse(k, what, "the type of instruction '" + insn->id + "''s reduction is not known yet");
  t.shape = shape;
  t.space = AddressSpace::Global;
  r.temporaries.edit()[partial] = t;

  // the kept inames' copies for the second launch: the values they take for
  // each value of the instruction's inames (those are its parameters)
  std::vector<std::string> copies;  // (in kept's order)
  std::map<std::string, Expr> to_copy;
  for (auto& n : kept) {
    copies.push_back(transforms::unique_name(r, n + "_r"));
    to_copy[n] = make_var(copies.back(), it);
  }
  {
    isl::set kept_set = islu::arrange_dims(space, axes);
    kept_set = islu::dims_to_params(kept_set, own);
    isl_set* s = kept_set.release();
    for (size_t d = 0; d < kept.size(); ++d)
      s = isl_set_set_dim_id(s, isl_dim_set, unsigned(d), isl_id_alloc(isl_set_get_ctx(s), copies[d].c_str(), nullptr));
    r.domains.edit().push_back(Domain(s));
  }

  std::vector<Expr> final_index;
  for (size_t a = 0; a < axes.size(); ++a) final_index.push_back(a < own.size() ? index[a] : substitute(index[a], to_copy));
  Instruction first = *insn;
  first.id = transforms::unique_instruction_id(k, insn->id + "_partial");
  first.lhs = make_subscript(partial, index, red.type);
  first.rhs = make_reduce(red.op, rest, red.body, red.type);
  first.within_inames.insert(kept.begin(), kept.end());
  first.inames_given = true;
  first.origin.reset();  // (a transformation's own instruction: the partial results are its business)
  first.origin_of.clear();
  Instruction barrier;
  barrier.kind = Instruction::GlobalBarrier;
  barrier.id = transforms::unique_instruction_id(k, insn->id + "_gbarrier");
  barrier.depends_on = {first.id};
  barrier.tags = {Instruction::kAddedBarrierTag};  // (split_global_barriers: the kernel as written had no barrier here)
  barrier.loc = insn->loc;
  Instruction second = *insn;
  second.rhs = make_reduce(red.op, copies, make_subscript(partial, final_index, red.type), red.type);
  second.depends_on = {first.id, barrier.id};

  std::vector<Instruction> out;
  for (auto& i : r.instructions) {
    if (i.id != insn->id) {
      out.push_back(i);
      continue;
    }
    out.push_back(first);
    out.push_back(barrier);
    out.push_back(second);
  }
  r.instructions.edit() = out;
  return r;
}

void register_rfactor_transforms(TransformRegistry& reg) {
  reg.add({"rfactor",
           "Halide's rfactor: out[w] = sum((k, p), e) becomes out_partial[w, k] = sum(p, e), a global barrier, and "
           "out[w] = sum(k_r, out_partial[w, k_r]), so the kept inames k may go on blocks (a reduction across blocks, in "
           "two launches); sum, product, max and min.",
           {TransformParam{"inames", TransformParam::String, true, "the reduction inames whose partial results are kept"}.of(TransformParam::Type::Inames),
            TransformParam{"within", TransformParam::String, false, "match expression (the one reducing instruction)"}.of(TransformParam::Type::Match),
            TransformParam{"temporary_name", TransformParam::String, false, "the partial results' global temporary (default <array>_partial)"}.of(TransformParam::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return rfactor(k, a.str("inames"), a.str_or("within", ""), a.str_or("temporary_name", ""));
           }});
}

}  // namespace loom
