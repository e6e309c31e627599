// order_data_bounds: loops whose bounds are values the kernel computes
// (loopy's data-dependent domains: `<> row_len = ptr[i+1] - ptr[i]` and
// {[jj]: 0 <= jj < row_len}). isl sees such a name as a parameter, fixed for
// the whole launch; it is one only within the loops its writers run in. So
// every writer must run in loops that enclose each instruction the value
// bounds, and outside the loops it bounds, each such instruction waits for
// the writers (a dependency, whatever the text order), and the value is a
// private integer scalar. Code generation then places every bound and guard
// on it after its writers (codegen/fast_path.cpp), and check_bounds leaves
// accesses it bounds to the runtime checks.
#include "loom/preprocess.h"

namespace loom {

LoopKernel order_data_bounds(const LoopKernel& k) {
  auto bounded = k.data_parameter_inames();
  if (bounded.empty()) return k;
  auto fail = [&](const std::string& why) { throw KernelError("kernel '" + k.name + "': " + why); };
  LoopKernel r = k;
  auto& insns = r.instructions.edit();
  for (auto& [p, inames] : bounded) {
    const Temporary* t = k.find_temporary(p);
    std::string what = "loop bound '" + p + "' (a value the kernel computes)";
    if (!t->shape.empty()) fail(what + " is an array; a bound is one integer");
    if (t->dtype.known() && !t->dtype.is_int()) fail(what + " has type " + t->dtype.name() + "; a bound is an integer");
    if (k.assumptions.defined() && k.assumptions.has_param(p))
      // (a promise about data the call cannot check: it would let accesses it bounds go unchecked)
      fail(what + " appears in the assumptions, which constrain the call's parameters; constrain it in its domain "
           "({[jj]: 0 <= jj < " + p + " and " + p + " <= 64} guards the loop), or use trust_unproven_accesses");
    if (t->space == AddressSpace::Local || t->space == AddressSpace::Global)
      fail(what + " is in " + to_string(t->space) + " memory; a bound lives in each thread's registers (make it private)");
    std::vector<const Instruction*> writers;
    for (auto& w : k.instructions)
      if (w.kind == Instruction::Assign && w.assignee_name() == p) writers.push_back(&w);
    if (writers.empty()) fail(what + " is never assigned");
    for (auto* w : writers)
      for (auto& n : w->within_inames)
        if (inames.count(n))
          fail("instruction '" + w->id + "' computes " + what + " inside loop '" + n + "', which that value bounds");
    for (auto& insn : insns) {
      std::set<std::string> in = insn.iteration_inames();
      std::string inside;
      for (auto& n : in)
        if (inames.count(n)) inside = n;
      if (inside.empty()) continue;
      for (auto* w : writers) {
        for (auto& n : w->within_inames)
          if (!in.count(n))
            fail("instruction '" + insn.id + "' runs in loop '" + inside + "', bounded by " + what + ", outside loop '" + n +
                 "' where '" + w->id + "' computes it: the bound would be another iteration's (compute it in the loops around '" +
                 inside + "')");
        insn.depends_on.insert(w->id);
      }
    }
  }
  return r;
}

}  // namespace loom
