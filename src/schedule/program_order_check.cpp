// check_program_order (schedule.h): the legality of a program whose launches
// answer to no launches of the kernel as written — loops on the host that
// the kernel as written does not have, such as a wavefront's time after
// affine_map_inames. Each launch is checked on its own for what runs in
// parallel inside it (races between its threads, conflicts between its
// blocks, local barriers): given those, its instances may run in any order,
// so the program computes what its sequential reading computes — the host
// loops around the launches, each launch's loops sequential. That reading is
// this kernel with its global barriers left out, its loops untagged and
// the host loops outside the others (no
// loop runs in instructions of two launches, split_global_barriers makes
// sure, so leaving the barriers out fuses nothing); check_reorderings
// compares its dataflow with the kernel as written's.
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
  std::set<std::string> barriers;
  auto& insns = seq.instructions.edit();
  for (auto& insn : insns)
    if (insn.kind == Instruction::GlobalBarrier) barriers.insert(insn.id);
  insns.erase(std::remove_if(insns.begin(), insns.end(), [](const Instruction& i) { return i.kind == Instruction::GlobalBarrier; }), insns.end());
  for (auto& insn : insns)
    for (auto& b : barriers) insn.depends_on.erase(b);
  seq.iname_tags.edit().clear();
  // (each launch's own temporaries are checked in that launch; a global one
  // of the program is an array of the sequential reading too)
  for (auto& [n, t] : seq.temporaries.edit())
    if (t.space == AddressSpace::Local) t.space = AddressSpace::Private;
  // (global temporaries, in both: arrays of the sequential reading)
  seq = with_global_temporaries_as_arguments(seq);
  seq.original = std::make_shared<const LoopKernel>(with_global_temporaries_as_arguments(*k.original));
  LoopKernel p = preprocess(seq);
  check_reorderings(p, linearize(p));
}

}  // namespace loom
