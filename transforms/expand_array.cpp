// expand_array: an array argument or a temporary that each iteration of some
// loops uses as scratch space (written before it is read, within the
// iteration) gets a copy for each iteration (array expansion, Feautrier's;
// for a temporary of bounded size in registers, loopy's
// privatize_temporaries_with_inames): PolyBench's doitgen
// writes its work vector `sum` in every (r, q), so as written no two (r, q)
// may run at once; with a copy each, they may. The copy is a global
// temporary (StandIn::Expansion) whose leading axes are the loops' indices
// from their minimum; the array keeps the final values the kernel as
// written leaves in it: a launch after the kernel (a global barrier, then a
// copy, both tagged as a stand-in's) copies the last iteration's elements
// back. A temporary's copies replace it (its values end with the kernel):
// ludcmp's scalar w, one per (i, j), so that isl's scheduler may place the
// steps of one (i, j) in different launches.
//
// Legal where isl proves, in the kernel as written, that every read gets
// its value from a write in the same iteration of the loops and that every
// iteration writes every element (expansion_problem): then each iteration
// computes the same values in its own copy, and the last one's are the
// final values. The step computes the same values in the same order, so it
// is applied to the kernel as written too (as distribute_loops is): the
// reorder check then compares the copy's dataflow, the copy back included,
// and a distribution of the loops is proven on the expanded kernel.
#include <algorithm>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/schedule.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// The names expand_array adds, the same in the kernel and in the kernel as
// written (free in both).
struct ExpansionNames {
  std::string copy, barrier, back;
  std::vector<std::string> axes;  // the copy back's loops, one per axis of the array
};

// k with `array`'s accesses on its copy for each iteration of `loops`
// (leading axes: the loops' indices from `low`, of extent `extent`) and the
// copy back of the `last` iteration after a barrier.
LoopKernel expanded(const LoopKernel& k, const std::string& array, const std::vector<std::string>& loops, const std::vector<Expr>& low,
                    const std::vector<Expr>& extent, const std::vector<Expr>& last, const isl::set& running, const ExpansionNames& names) {
  const Argument* arg = k.find_argument(array);
  const Temporary* scratch = k.find_temporary(array);
  const Type dtype = arg ? arg->dtype : scratch->dtype;
  const std::vector<Expr>& shape = arg ? arg->shape : scratch->shape;
  LoopKernel r = k;
  Temporary t;
  t.name = names.copy;
  t.dtype = dtype;
  t.shape = extent;
  t.shape.insert(t.shape.end(), shape.begin(), shape.end());
  t.space = AddressSpace::Global;
  t.stand_in = {StandIn::Expansion, array, int(loops.size())};
  r.temporaries.edit()[names.copy] = t;
  std::vector<Expr> lead;
  for (size_t d = 0; d < loops.size(); ++d) lead.push_back(constant_int(low[d]) == int64_t(0) ? make_var(loops[d]) : simplify(make_var(loops[d]) - low[d]));
  for (auto& insn : r.instructions.edit())
    transforms::map_temporary_accesses(insn, array, [&](std::vector<Expr> index, Type type) {
      std::vector<Expr> at = lead;
      at.insert(at.end(), index.begin(), index.end());
      return make_subscript(names.copy, at, type);
    });
  // a temporary's values end with the kernel: nothing to copy back
  if (!arg) {
    r.temporaries.edit().erase(array);
    return r;
  }
  // after the kernel, where the loops run at all: the last iteration's copy back into the array
  std::vector<Expr> index, from = last;
  for (auto& c : names.axes) {
    index.push_back(make_var(c));
    from.push_back(make_var(c));
  }
  std::string text;
  isl_set* set = islu::shape_box(k, arg->shape, names.axes, "", &text).release();
  if (!set) refuse(k, "expand_array('" + array + "')", "the shape of '" + array + "' is not affine in the parameters (isl reads: " + text + ")");
  set = isl_set_align_params(set, isl_set_get_space(running.get()));
  r.domains.edit().push_back(Domain(isl_set_intersect_params(set, isl_set_align_params(running.copy(), isl_set_get_space(set)))));
  Instruction barrier;
  barrier.kind = Instruction::GlobalBarrier;
  barrier.id = names.barrier;
  barrier.tags = {Instruction::kStandInCopyTag};
  Instruction back;
  back.id = names.back;
  back.lhs = make_subscript(array, index, dtype);
  back.rhs = make_subscript(names.copy, from, dtype);
  back.within_inames = std::set<std::string>(names.axes.begin(), names.axes.end());
  back.inames_given = true;
  back.depends_on = {barrier.id};
  back.tags = {Instruction::kStandInCopyTag};
  std::map<std::string, Expr> own;  // (an instruction of the kernel as written too: the reorder check follows it)
  for (auto& c : names.axes) own[c] = make_var(c);
  back.origin = own;
  r.instructions.edit().push_back(barrier);
  r.instructions.edit().push_back(back);
  return r;
}

}  // namespace

LoopKernel expand_array(const LoopKernel& k, const std::string& array, const std::string& inames, const std::string& temporary_name) {
  const std::string what = "expand_array('" + array + "', '" + inames + "')";
  const Argument* arg = k.find_argument(array);
  const Temporary* scratch = k.find_temporary(array);
  if (scratch && scratch->space == AddressSpace::Local)
    refuse(k, what, "'" + array + "' is a local temporary: each block has its own already (a copy per thread: privatize_temporaries_with_inames)");
  if (scratch && scratch->stand_in) refuse(k, what, "'" + array + "' stands for an array already (its copy): expand the array itself");
  if (!scratch && (!arg || arg->kind != Argument::Array)) refuse(k, what, "'" + array + "' is not an array argument or a temporary");
  if (!(arg ? arg->dtype : scratch->dtype).known()) refuse(k, what, "'" + array + "' needs a dtype");
  std::vector<std::string> loops = transforms::name_list(inames);
  if (loops.empty()) refuse(k, what, "no loops given");
  for (auto& l : loops)
    if (!k.has_iname(l)) refuse(k, what, "no iname '" + l + "'");
  bool used = false;
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    if (insn.assignee_name() != array && !insn.reads(array)) continue;
    used = true;
    for (auto& l : loops)
      if (!insn.within_inames.count(l))
        refuse(k, what, "instruction '" + insn.id + "' accesses '" + array + "' outside loop '" + l + "'");
  }
  if (!used) refuse(k, what, "no instruction accesses '" + array + "'");
  // The kernel as written gets the copies too (the step computes the same
  // values in the same order), so later steps are proven and checked on it
  // (a distribution of the loops, now legal); the expansion is proven there.
  const LoopKernel& as_written = k.original ? *k.original : k;
  if (scratch && !as_written.find_temporary(array))
    refuse(k, what, "the kernel as written has no temporary '" + array + "', where the expansion is proven (rename a web of a temporary before transforming its loops)");
  for (auto& l : loops) {
    if (!as_written.has_iname(l)) refuse(k, what, "loop '" + l + "' is not a loop of the kernel as written, where the expansion is proven");
    for (auto& chain : as_written.loop_priority)
      if (std::count(chain.begin(), chain.end(), l))
        refuse(k, what, "the kernel as written orders loop '" + l + "' by a loop priority (the copy back takes the last iteration in domain order)");
  }
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign || !insn.origin || (insn.assignee_name() != array && !insn.reads(array))) continue;
    for (auto& l : loops) {
      auto o = insn.origin->find(l);
      auto v = o != insn.origin->end() && o->second.defined() ? o->second.as<Var>() : nullptr;
      if (!v || v->name != l)
        refuse(k, what, "loop '" + l + "' of instruction '" + insn.id + "' is not the kernel as written's (mapped or split): expand before mapping or splitting it");
    }
  }
  std::optional<std::string> problem = expansion_problem(as_written, array, loops);
  if (!problem) refuse(k, what, "isl cannot follow the accesses of '" + array + "' (an index that is not affine, or beyond its work bound)");
  if (!problem->empty()) refuse(k, what, *problem);

  // the loops' ranges (their bounding box, in the parameters) and their last iteration
  isl::set range = islu::iteration_domain(as_written, loops);
  isl::set context = islu::assumptions_of(as_written);
  std::vector<Expr> low, extent, last;
  isl_pw_multi_aff* lexmax = isl_set_lexmax_pw_multi_aff(range.copy());
  for (size_t d = 0; d < loops.size(); ++d) {
    isl_pw_aff* lo = isl_set_dim_min(range.copy(), int(d));
    isl_pw_aff* hi = isl_set_dim_max(range.copy(), int(d));
    isl_pw_aff* at = isl_pw_multi_aff_get_pw_aff(lexmax, int(d));
    Expr l = islu::expr_from_pw_aff(isl::manage(lo), context, k.options.index_dtype);
    Expr h = islu::expr_from_pw_aff(isl::manage(hi), context, k.options.index_dtype);
    Expr f = islu::expr_from_pw_aff(isl::manage(at), context, k.options.index_dtype);
    if (!l.defined() || !h.defined() || !f.defined()) {
      isl_pw_multi_aff_free(lexmax);
      refuse(k, what, "the range of '" + loops[d] + "' is not an expression of the parameters");
    }
    auto from_low = [&](const Expr& e) { return constant_int(l) == int64_t(0) ? e : simplify(e - l); };
    low.push_back(l);
    extent.push_back(simplify(from_low(h) + make_int(1)));
    last.push_back(from_low(f));
  }
  isl_pw_multi_aff_free(lexmax);
  isl::set running = isl::manage(isl_set_params(range.copy()));

  ExpansionNames names;
  auto free_in_both = [&](const std::string& base) {
    std::string n = base;
    for (int i = 0; k.name_taken(n) || as_written.name_taken(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  };
  auto free_id_in_both = [&](const std::string& base) {
    auto taken = [](const LoopKernel& x, const std::string& id) {
      return std::any_of(x.instructions.begin(), x.instructions.end(), [&](auto& i) { return i.id == id; });
    };
    std::string n = base;
    for (int i = 0; taken(k, n) || taken(as_written, n); ++i) n = base + "_" + std::to_string(i);
    return n;
  };
  names.copy = temporary_name.empty() ? free_in_both(array + "_expanded") : temporary_name;
  if (k.name_taken(names.copy) || as_written.name_taken(names.copy)) refuse(k, what, "the name '" + names.copy + "' is taken");
  names.barrier = free_id_in_both(names.copy + "_gbarrier");
  names.back = free_id_in_both(names.copy + "_back");
  if (arg)
    for (size_t d = 0; d < arg->shape.size(); ++d) names.axes.push_back(free_in_both(names.copy + "_" + std::to_string(d)));

  LoopKernel r = expanded(k, array, loops, low, extent, last, running, names);
  if (k.original) r.original = std::make_shared<const LoopKernel>(expanded(*k.original, array, loops, low, extent, last, running, names));
  return r;
}

void register_expand_array_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"expand_array",
           "Give an array argument or a temporary that every iteration of some loops writes before it reads (a work vector) a copy "
           "for each iteration, in global memory, so those loops may run in parallel; for an argument, a launch after the kernel copies "
           "the last iteration's values back.",
           {P{"var_name", P::String, true, "the array argument or temporary"}.of(P::Type::Name),
            P{"inames", P::String, true, "the loops each iteration of which gets a copy ('r, q')"}.of(P::Type::Inames),
            P{"temporary_name", P::String, false, "the copy's name (default <array>_expanded)"}.of(P::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return expand_array(k, a.str("var_name"), a.str("inames"), a.str_or("temporary_name", ""));
           }});
}

}  // namespace loom
