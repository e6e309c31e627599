// check_kernel: consistency checks that need no isl: dependencies name
// existing instructions, instruction inames exist, tagged inames exist,
// nothing is assigned that cannot be (value arguments, inames), and barriers
// are unconditional and outside thread inames.
#include "loom/preprocess.h"

namespace loom {

void check_kernel(const LoopKernel& k) {
  auto fail = [&](const std::string& why) { throw KernelError("kernel '" + k.name + "': " + why); };
  std::set<std::string> ids;
  for (auto& insn : k.instructions) ids.insert(insn.id);
  for (auto& insn : k.instructions) {
    for (auto& d : insn.depends_on)
      if (!ids.count(d)) fail("instruction '" + insn.id + "' depends on unknown instruction '" + d + "'");
    for (auto& n : insn.within_inames)
      if (!k.has_iname(n)) fail("instruction '" + insn.id + "' runs within unknown iname '" + n + "'");
    if (insn.kind == Instruction::Barrier) {
      // every thread of a block must reach the same barriers
      if (!insn.predicates.empty())
        fail("barrier '" + insn.id + "' has a condition (if=...): every thread of a block must reach it");
      for (auto& n : insn.within_inames)
        if (k.tag_of(n).kind == InameTag::Local)
          fail("barrier '" + insn.id + "' runs within thread iname '" + n + "': a barrier is reached once by each thread, not once per thread iteration");
    }
    // one iname per hardware axis: two would both be blockIdx.y (say), forced equal
    std::map<std::string, std::string> axis_iname;
    for (auto& n : insn.within_inames) {
      InameTag t = k.tag_of(n);
      if (!t.is_hardware()) continue;
      auto [it, fresh] = axis_iname.emplace(t.str(), n);
      if (!fresh)
        fail("instruction '" + insn.id + "' runs within inames '" + it->second + "' and '" + n + "', both tagged " + t.str() +
             ": one instruction can use each hardware axis once");
    }
    if (insn.kind != Instruction::Assign) continue;
    if (auto a = k.find_argument(insn.assignee_name()); a && a->kind == Argument::Value)
      fail("instruction '" + insn.id + "' assigns to value argument '" + a->name + "'");
  }
  for (auto& [n, tag] : k.iname_tags)
    if (!k.has_iname(n)) fail("iname '" + n + "' is tagged '" + tag.str() + "' but no domain defines it");
  int64_t local_bytes = 0;
  for (auto& [n, t] : k.temporaries) {
    if (t.space == AddressSpace::Global) fail("temporary '" + n + "': global temporaries are not supported yet");
    int64_t elems = 1;
    for (auto& d : t.shape) {
      try {
        elems *= eval_int(d, {});
      } catch (const Error&) {
        fail("temporary '" + n + "' needs a constant shape, got " + d.str());
      }
    }
    if (t.space == AddressSpace::Local) local_bytes += elems * t.dtype.bytes();
  }
  // CUDA's static shared memory per block (more needs a dynamic allocation and an opt-in)
  if (local_bytes > 48 * 1024)
    fail(std::to_string(local_bytes) + " bytes of local (shared) memory per block; at most 49152 bytes");
  // every iname an instruction uses must be one of its loops (or a reduction's)
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> used;
    collect_free_vars(insn.lhs, used);
    collect_free_vars(insn.rhs, used);
    for (auto& p : insn.predicates) collect_free_vars(p, used);
    for (auto& u : used)
      if (k.has_iname(u) && !insn.within_inames.count(u))
        fail("instruction '" + insn.id + "' uses iname '" + u + "' but runs within no loop or tag of it (its inames: " +
             [&] {
               std::string s;
               for (auto& w : insn.within_inames) s += (s.empty() ? "" : ", ") + w;
               return s.empty() ? std::string("none") : s;
             }() + ")");
  }
}

}  // namespace loom
