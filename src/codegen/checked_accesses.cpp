// Which accesses the targets check at run time (loom/codegen.h): one rule for
// the CPU target's lowering and the CUDA printer, the complement of what
// check_bounds proves (preprocess/access_checks.cpp reports what it left
// open), so an access is either proven for every size the assumptions allow
// or checked when it runs, never trusted unless the kernel says so
// (trust_unproven_accesses).
#include "loom/codegen.h"

namespace loom {

UnprovenAccesses::UnprovenAccesses(const GeneratedKernel& g) : g_(g) {}

int UnprovenAccesses::argument(const Subscript& s, const std::string& insn_id) const {
  if (g_.kernel.options.trust_unproven_accesses) return -1;
  bool listed = g_.unproven_accesses.count({insn_id, s.name}) > 0;
  if (!listed && insn_id.empty())
    for (auto& [insn, array] : g_.unproven_accesses) listed |= array == s.name;
  if (!listed) return -1;
  for (size_t i = 0; i < g_.kernel.arguments.size(); ++i)
    if (g_.kernel.arguments[i].name == s.name && g_.kernel.arguments[i].kind == Argument::Array) return int(i);
  return -1;
}

std::string checked_access_failure(const LoopKernel& k, const CheckedAccess& a, int64_t index, int64_t extent) {
  std::string who = a.instruction.empty() ? "a condition" : "instruction '" + a.instruction + "'";
  return "kernel '" + k.name + "': " + who + " accesses '" + a.array + "' at element " + std::to_string(index) +
         ", outside its " + std::to_string(extent) +
         " elements (a subscript Loom cannot prove in bounds, checked at run time; the access was skipped)";
}

}  // namespace loom
