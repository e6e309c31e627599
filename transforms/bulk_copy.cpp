// tma_copy: a local tile that copy instructions fill from one global array
// (add_prefetch's fetch, double-buffered) is filled by Hopper's tensor memory
// accelerator instead of by the threads: one thread issues one bulk tensor
// copy per fill (cp.async.bulk.tensor, its tensor map made on the host at
// launch), and the readers wait on an mbarrier per copy of the tile before
// they read it. No thread computes an address or moves a byte, and the copy
// engine fills the parts of a box that leave the array with zeros, so a
// zero-filled fetch (fill_value=0) needs no guards. CUTLASS's and Triton's
// Hopper matrix products load their tiles this way; loopy has no equivalent.
//
// Only the fill changes, so the kernel computes what it computed: the CPU
// target and the interpreter copy as before. What a bulk copy needs of the
// fill's shape (the tile a box that follows the array's last axes, a
// translation of the array's indices, the box's extents and alignment) is
// proven where the schedule is known, in code generation
// (codegen/bulk_copies.cpp), and a schedule that does not fit is refused
// there with the reason. Refused here: a temporary that is not local, that
// is written by anything but copies of one array argument, or whose
// elements are not 1, 2, 4 or 8 bytes.
#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;


LoopKernel tma_copy(const LoopKernel& k, const std::string& temporaries) {
  const std::string what = "tma_copy";
  LoopKernel r = k;
  auto names = transforms::name_list(temporaries);
  if (names.empty()) refuse(k, what, "no temporary named");
  for (auto& name : names) {
    auto it = r.temporaries.edit().find(name);
    if (it == r.temporaries.edit().end()) {
      if (k.find_argument(name)) refuse(k, what, "'" + name + "' is an argument; tma_copy fills local tiles (add_prefetch makes one)");
      std::vector<std::string> known;
      for (auto& [n, x] : k.temporaries) known.push_back(n);
      refuse(k, what, "no temporary '" + name + "'" + did_you_mean(name, known));
    }
    Temporary& t = it->second;
    if (t.space != AddressSpace::Local) refuse(k, what, "temporary '" + name + "' is not in local memory; the copy engine fills shared memory");
    int eb = t.dtype.known() ? t.dtype.bytes() : 0;
    if (eb && eb != 1 && eb != 2 && eb != 4 && eb != 8)
      refuse(k, what, "temporary '" + name + "' has " + std::to_string(eb) + "-byte elements; the copy engine moves 1, 2, 4 or 8-byte elements");
    std::string array;
    int writers = 0;
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign || insn.assignee_name() != name) continue;
      ++writers;
      auto [source, condition] = copy_source(insn.rhs);
      auto src = source.as<Subscript>();
      const Argument* a = src ? k.find_argument(src->name) : nullptr;
      if (!a || a->kind != Argument::Array)
        refuse(k, what, "instruction '" + insn.id + "' writes temporary '" + name + "' with something other than a copy of an array argument");
      if (a->dtype != t.dtype)
        refuse(k, what, "instruction '" + insn.id + "' converts " + a->dtype.name() + " to " + t.dtype.name() + "; the copy engine copies bytes");
      if (condition.defined() && t.zero_fill_of != a->name)
        refuse(k, what, "instruction '" + insn.id + "' copies under a condition other than 'inside the array'; the copy engine fills only what "
                        "leaves the array (with zeros: add_prefetch's fill_value=0)");
      if (!array.empty() && array != a->name)
        refuse(k, what, "temporary '" + name + "' is filled from both '" + array + "' and '" + a->name + "'; one tensor map describes one array");
      array = a->name;
    }
    if (!writers) refuse(k, what, "nothing writes temporary '" + name + "'");
    t.bulk_copy = true;
  }
  return r;
}

void register_bulk_copy_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"tma_copy",
           "Loom: local tiles that copies of one array argument fill (add_prefetch, then double_buffer) are filled by the tensor "
           "memory accelerator on sm_90+ (one thread issues cp.async.bulk.tensor per fill; the readers wait on an mbarrier per "
           "copy of the tile); the parts of a box outside the array are zeros (fill_value=0 needs no guards). Other targets "
           "copy as before; a schedule the copy engine cannot run is refused with the reason when the kernel is generated.",
           {P{"temporaries", P::String, true, "local temporaries, comma-separated"}.of(P::Type::Names)},
           [](const LoopKernel& k, const TransformArgs& a) { return tma_copy(k, a.str("temporaries")); }});
}

}  // namespace loom
