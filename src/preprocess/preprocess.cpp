// The preprocessing pipeline: the passes in the order they run.
#include "loom/preprocess.h"

namespace loom {

LoopKernel preprocess(const LoopKernel& k, const TargetInfo& target, bool common_subexpressions, UnprovenAccessSet* unproven) {
  LoopKernel r = expand_substitutions(k);
  r = resolve_address_spaces(r);
  r = infer_types(r);
  r = realize_reductions(r, target);
  r = privatize_ilp(r);
  if (common_subexpressions) r = eliminate_common_subexpressions(r);
  r = order_data_bounds(r);
  r = add_dependencies(r);
  check_kernel(r, target);
  check_atomic_updates(r);
  UnprovenAccessSet left = check_bounds(r);
  if (unproven) *unproven = std::move(left);
  std::vector<std::string> hardware;
  for (auto& n : r.all_inames())
    if (r.tag_of(n).is_hardware()) hardware.push_back(n);
  check_races(r, hardware);
  check_global_dependences(r);
  return r;
}

}  // namespace loom
