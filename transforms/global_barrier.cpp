// add_global_barrier: a global barrier after the matching instructions,
// inside the given sequential loops, so that what follows it in those loops
// runs as a later launch of each of their iterations (the loops run on the
// host: src/preprocess/global_barriers.cpp). This is how a time loop's
// sweeps, or an LU factorization's steps, each get the whole GPU.
//
// Splitting a sequential program into launches must not reorder it. The
// instructions on either side of the barrier that run in all of its loops
// may share no other loop (the barrier would distribute that loop: every
// iteration's first part before any iteration's second); then each iteration
// of the barrier's loops runs its instructions in list order, and add_
// dependencies orders dependent instructions in list order too, so the
// program runs every dependent pair of instances as the kernel as written
// does. Being order-preserving, the barrier is added to the kernel as
// written as well (as assume and fix_parameters are): its launches are then
// those each transformed launch is checked against; where the kernel as
// written cannot take it (its loops there differ), the whole program is
// checked against the kernel as written instead.
#include <algorithm>

#include "common.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

// k with the barrier after the last instruction `before` matches; `checked`
// refuses what would reorder (the kernel as written is checked the same way).
LoopKernel with_barrier(const LoopKernel& k, const std::string& what, const std::string& before, const std::vector<std::string>& within,
                        const std::string& id) {
  InstructionMatch m = transforms::parse_match(k, what, before);
  long last = -1;
  for (size_t i = 0; i < k.instructions.size(); ++i)
    if (m(k.instructions[i])) last = long(i);
  if (last < 0) refuse(k, what, "no instruction matches '" + before + "'");
  if (std::any_of(k.instructions.begin(), k.instructions.end(), [&](auto& x) { return x.id == id; }))
    refuse(k, what, "an instruction with id '" + id + "' exists");
  for (auto& n : within) {
    if (!k.has_iname(n)) refuse(k, what, "no iname '" + n + "'");
    InameTag t = k.tag_of(n);
    if (t.kind != InameTag::Seq)
      refuse(k, what, "loop '" + n + "' is tagged " + t.str() + "; the loops around a global barrier run on the host, one iteration after another");
  }
  auto inside = [&](const Instruction& insn) {
    return std::all_of(within.begin(), within.end(), [&](const std::string& n) { return insn.within_inames.count(n) > 0; });
  };
  for (size_t a = 0; a <= size_t(last); ++a) {
    const Instruction& x = k.instructions[a];
    if (x.kind == Instruction::GlobalBarrier || !inside(x)) continue;
    for (size_t b = size_t(last) + 1; b < k.instructions.size(); ++b) {
      const Instruction& y = k.instructions[b];
      if (y.kind == Instruction::GlobalBarrier || !inside(y)) continue;
      for (auto& n : x.within_inames)
        if (y.within_inames.count(n) && std::find(within.begin(), within.end(), n) == within.end())
          refuse(k, what, "instructions '" + x.id + "' and '" + y.id + "', on either side of the barrier, share loop '" + n +
                              "', which the barrier would distribute (every iteration's '" + x.id + "' before any iteration's '" + y.id +
                              "'); add '" + n + "' to the loops around it, or place the barrier outside that loop");
    }
  }
  LoopKernel r = k;
  Instruction bar;
  bar.kind = Instruction::GlobalBarrier;
  bar.id = id;
  bar.within_inames.insert(within.begin(), within.end());
  bar.inames_given = true;
  r.instructions.edit().insert(r.instructions.edit().begin() + last + 1, bar);
  return r;
}

}  // namespace

LoopKernel add_global_barrier(const LoopKernel& k, const std::string& before, const std::string& within, const std::string& id) {
  const std::string what = "add_global_barrier('" + before + "', '" + within + "')";
  std::vector<std::string> loops = name_list(within);
  std::string bar_id = id.empty() ? transforms::unique_instruction_id(k, "gbarrier") : id;
  LoopKernel r = with_barrier(k, what, before, loops, bar_id);
  // Within loops the kernel as written lacks (a wavefront's time), or where
  // it would distribute a loop the kernel as written shares between the two
  // sides (the phases of isl's schedule: an initialization before a
  // factorization's steps, both in row i's loop as written), the kernel as
  // written keeps its launches, and the program is checked as a whole
  // (check_program_order).
  bool written_has_loops = r.original && std::all_of(loops.begin(), loops.end(), [&](auto& n) { return r.original->has_iname(n); });
  if (written_has_loops) {
    try {
      r.original = std::make_shared<const LoopKernel>(with_barrier(*r.original, what, before, loops, bar_id));
    } catch (const TransformError&) {
      // (a launch of its own: the whole program answers for it)
    }
  }
  return r;
}

void register_global_barrier_transforms(TransformRegistry& reg) {
  reg.add({"add_global_barrier",
           "Insert a global barrier after the instructions matching before, inside the sequential loops within (which then run on the "
           "host around the launches); refused where it would reorder the kernel.",
           {TransformParam{"before", TransformParam::String, true, "instructions the barrier follows (it goes after the last of them)"}.of(
                TransformParam::Type::Match),
            TransformParam{"within", TransformParam::String, false, "the sequential loops around the barrier ('t'; default none)"}.of(
                TransformParam::Type::Inames),
            TransformParam{"id", TransformParam::String, false, "the barrier's id (default gbarrier, or gbarrier_N where that is taken)"}.of(TransformParam::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return add_global_barrier(k, a.str("before"), a.str_or("within", ""), a.str_or("id", ""));
           }});
}

}  // namespace loom
