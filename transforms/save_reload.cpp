// save_and_reload_temporaries (loopy's): a global barrier ends a launch, so a
// private temporary written before one and read after it cannot keep its
// value in registers. Each such temporary becomes a global one with a leading
// axis per hardware-parallel iname its writers run in (one element per
// thread, as the registers held it), and every access names those inames:
// the writers save into it, the readers after the barrier read it back.
// Refused, with the reason: a reader that does not run in the writers'
// parallel inames (it would read another thread's value), or writers that
// disagree on them. Local temporaries across a global barrier are refused
// too (a block's shared tile would need the block's inames only; declare it
// global). Temporaries that do not cross a global barrier are left as they
// are, so the transformation may run on any kernel.
#include <isl/aff.h>

#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

LoopKernel save_and_reload_temporaries(const LoopKernel& k) {
  const std::string what = "save_and_reload_temporaries";
  // the global barriers' positions in the instruction list
  std::vector<size_t> barriers;
  for (size_t i = 0; i < k.instructions.size(); ++i)
    if (k.instructions[i].kind == Instruction::GlobalBarrier) barriers.push_back(i);
  if (barriers.empty()) return k;
  LoopKernel r = k;
  Type it = k.options.index_dtype;
  bool changed = false;
  for (auto& [name, t] : k.temporaries) {
    if (t.space == AddressSpace::Global) continue;
    std::vector<size_t> writers, readers;
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      const Instruction& insn = k.instructions[i];
      if (insn.kind != Instruction::Assign) continue;
      if (insn.assignee_name() == name) writers.push_back(i);
      if (insn.reads(name)) readers.push_back(i);
    }
    bool crosses = false;
    for (size_t b : barriers)
      crosses |= std::any_of(writers.begin(), writers.end(), [&](size_t w) { return w < b; }) &&
                 std::any_of(readers.begin(), readers.end(), [&](size_t x) { return x > b; });
    if (!crosses) continue;
    if (t.space == AddressSpace::Local)
      refuse(k, what, "local temporary '" + name + "' crosses a global barrier; declare it global (a block's tile saved per block is not generated)");
    // the writers' hardware-parallel inames, in domain order: one saved element per thread
    std::vector<std::string> axes;
    for (auto& n : k.all_inames())
      if (k.instructions[writers[0]].within_inames.count(n) && k.tag_of(n).is_hardware()) axes.push_back(n);
    for (size_t w : writers)
      for (auto& n : axes)
        if (!k.instructions[w].within_inames.count(n))
          refuse(k, what, "the writers of temporary '" + name + "' run in different parallel inames ('" + k.instructions[w].id + "' not in '" + n + "')");
    for (size_t x : readers)
      for (auto& n : axes)
        if (!k.instructions[x].within_inames.count(n))
          refuse(k, what, "instruction '" + k.instructions[x].id + "' reads temporary '" + name + "' outside the parallel iname '" + n +
                              "' its writers run in, so it would read another thread's value");
    // each axis's extent: one past the iname's largest value (its smallest must be 0 or more)
    isl::set dom = islu::iteration_domain(k, axes);
    isl::set context = islu::assumptions_of(k);
    std::vector<Expr> shape;
    for (auto& n : axes) {
      isl::pw_aff lo = islu::min_over(dom, make_var(n, it)), hi = islu::max_over(dom, make_var(n, it));
      if (lo.is_null() || hi.is_null()) refuse(k, what, "the range of iname '" + n + "' is not affine");
      // (where the smallest value is defined but not >= 0)
      isl::set negative = isl::manage(isl_set_subtract(isl_pw_aff_domain(lo.copy()), isl_pw_aff_nonneg_set(lo.copy())));
      if (!negative.intersect_params(context).is_empty()) refuse(k, what, "iname '" + n + "' may be negative; it cannot index the saved values");
      shape.push_back(islu::expr_from_pw_aff(isl::manage(isl_pw_aff_add_constant_val(hi.copy(), isl_val_one(isl_context()))), context, it));
    }
    changed = true;
    Temporary& saved = r.temporaries.edit()[name];
    std::vector<Expr> full = shape;
    full.insert(full.end(), t.shape.begin(), t.shape.end());
    saved.shape = full;
    saved.space = AddressSpace::Global;
    if (!saved.dtype.known()) {  // (`<> t`: a global array is declared with its dtype, the one inferred)
      LoopKernel typed = infer_types(expand_substitutions(k));
      if (const Temporary* tt = typed.find_temporary(name); tt && tt->dtype.known()) saved.dtype = tt->dtype;
      else refuse(k, what, "the dtype of temporary '" + name + "' is unknown; declare it (<float32> " + name + " = ...)");
    }
    auto lead = [&](std::vector<Expr> idx, Type type) {
      std::vector<Expr> with;
      for (auto& n : axes) with.push_back(make_var(n, it));
      with.insert(with.end(), idx.begin(), idx.end());
      return make_subscript(name, with, type);
    };
    // a scalar becomes an array: its plain name in every instruction turns into the subscript first
    for (auto& insn : r.instructions.edit()) {
      if (t.shape.empty()) {
        auto as_access = [&](const Expr& e) { return substitute(e, {{name, make_subscript(name, {}, t.dtype)}}); };
        if (insn.kind == Instruction::Assign) {
          insn.lhs = as_access(insn.lhs);
          insn.rhs = as_access(insn.rhs);
        }
        for (auto& p : insn.predicates) p = as_access(p);
      }
      transforms::map_temporary_accesses(insn, name, lead);
    }
  }
  // The kernel before this step keeps one value per thread across a launch
  // boundary, which Loom refuses (its meaning depends on the parallel
  // inames): the result is a kernel as written, the reference of later steps.
  if (changed) r.original = nullptr;
  return r;
}

void register_save_reload_transforms(TransformRegistry& reg) {
  reg.add({"save_and_reload_temporaries",
           "Private temporaries written before a global barrier and read after it become global temporaries with one "
           "element per thread (an axis per parallel iname of their writers): saved before the barrier, reloaded after "
           "(loopy's save_and_reload_temporaries; Loom's global barriers stand outside every loop).",
           {},
           [](const LoopKernel& k, const TransformArgs&) { return save_and_reload_temporaries(k); }});
}

}  // namespace loom
