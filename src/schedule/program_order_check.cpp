// check_program_order (schedule.h): the legality of a program whose launches
// answer to no launches of the kernel as written — loops on the host that
// the kernel as written does not have, such as a wavefront's time after
// affine_map_inames. Each launch is checked on its own for what runs in
// parallel inside it (races between its threads, conflicts between its
// blocks, local barriers): given those, its blocks may run in any order, so
// the program computes what it computes with each launch's blocks one after
// another, the launches in order around them: the host loops outside the
// others (no loop runs in instructions of two launches,
// split_global_barriers makes sure), the global barriers kept, the tags
// kept (check_reorderings times a launch's blocks after the launches before
// it; each block runs as the launch's code says, its tile fetches where
// they are). check_reorderings compares its dataflow with the kernel as
// written's.
#include <algorithm>

#include "loom/preprocess.h"
#include "loom/schedule.h"

namespace loom {

void check_program_order(const LoopKernel& k, const std::set<std::string>& host_loops) {
  if (!k.original) return;
  LoopKernel seq = k;
  // the host loops outside every loop of the launches they run
  for (auto& insn : k.instructions)
    for (auto& h : insn.within_inames)
      if (host_loops.count(h))
        for (auto& n : insn.within_inames)
          if (!host_loops.count(n)) seq.loop_priority.edit().push_back({h, n});
  // (global temporaries, in both: arrays of the program)
  seq = with_global_temporaries_as_arguments(seq);
  seq.original = std::make_shared<const LoopKernel>(with_global_temporaries_as_arguments(*k.original));
  // preprocess's passes without its checks: each launch passes those on
  // its own, and across launches they would find what the barriers order
  LoopKernel p = add_dependencies(order_data_bounds(privatize_ilp(realize_reductions(infer_types(resolve_address_spaces(expand_substitutions(seq)))))));
  check_reorderings(p, linearize(p));
}

}  // namespace loom
