// Preprocessing: from a kernel as written and transformed to one ready for
// linearization. The passes, in order (preprocess() runs them all):
//   expand_substitutions  substitution-rule calls replaced by their bodies
//   resolve_address_spaces  temporaries declared without an address space
//                         (auto) made private, local or global by loopy's rule
//   infer_types           every Expr node typed, temporaries' dtypes inferred,
//                         conversions made explicit as Casts
//   realize_reductions    sum/product/max/min become init/update instructions
//                         on a private accumulator (sequential reductions)
//   privatize_ilp         private temporaries written in ILP inames get one
//                         copy per iteration
//   eliminate_common_subexpressions  a repeated subexpression is computed once
//   order_data_bounds     loops bounded by values the kernel computes
//                         (data parameters) wait for their writers, which
//                         must run in loops around them
//   add_dependencies      read-after-write, write-after-read and
//                         write-after-write between instructions, in text
//                         order, where their accesses can meet (isl)
//   check_kernel          names, inames, tags, barriers and limits are consistent
//   check_atomic_updates  {atomic} instructions are x[I] = x[I] + e on a global
//                         array of a type the targets add atomically
//   check_bounds          every affine access stays in its array (isl proof)
//   check_races           no two threads write one element (isl proof)
//   check_global_dependences  no element of a global array written on one block
//                         or thread and read on another where nothing orders it
// Each pass is a pure function in src/preprocess/<pass>.cpp (the two proofs
// share access_checks.cpp).
#pragma once
#include <functional>
#include <isl/cpp.h>

#include <set>
#include <string>
#include <vector>

#include "loom/analysis.h"
#include "loom/kernel.h"
#include "loom/target_info.h"

namespace loom {


// Temporaries declared without an address space (auto) become private, local
// or global by loopy's rule (src/preprocess/address_spaces.cpp).
LoopKernel resolve_address_spaces(const LoopKernel& k);
// (a reduction across at most target.warp_size lanes of l.0 uses warp shuffles)
LoopKernel realize_reductions(const LoopKernel& k, const TargetInfo& target = TargetInfo::generic_cuda());
LoopKernel privatize_ilp(const LoopKernel& k);
LoopKernel eliminate_common_subexpressions(const LoopKernel& k);
LoopKernel order_data_bounds(const LoopKernel& k);
LoopKernel add_dependencies(const LoopKernel& k);
// (the target's limits: threads, shared and private memory)
void check_kernel(const LoopKernel& k, const TargetInfo& target = TargetInfo::generic_cuda());
// Returns the accesses to array arguments it could not prove either way
// (not affine, through values read from memory, bounded by such values):
// the targets check those at run time (loom/codegen.h's UnprovenAccesses).
UnprovenAccessSet check_bounds(const LoopKernel& k);
void check_races(const LoopKernel& k, const std::vector<std::string>& hardware_inames);
// Atomic instructions ({atomic}) have the form x[I] = x[I] + e on a global
// array of a type the targets add atomically (atomics.cpp).
void check_atomic_updates(const LoopKernel& k);
// The instruction with this id when it is atomic (targets ask per statement); null otherwise.
const Instruction* atomic_instruction(const LoopKernel& k, const std::string& id);
// The e of an atomic x[I] = x[I] + e; undefined for other instructions.
Expr atomic_increment(const Instruction& insn);
void check_global_dependences(const LoopKernel& k);


// (common_subexpressions=false leaves repeated subexpressions as written:
// the kernel statistics count what the user wrote, as loopy does)
// unproven: where given, the accesses check_bounds left to the run time.
LoopKernel preprocess(const LoopKernel& k, const TargetInfo& target = TargetInfo::generic_cuda(),
                      bool common_subexpressions = true, UnprovenAccessSet* unproven = nullptr);

// A kernel with global barriers (`... gbarrier`) or global temporaries runs
// as launches (global_barriers.cpp): the instructions between two global
// barriers form one launch (named <kernel>, <kernel>_1, ...), whose
// dependencies on earlier launches are met by the order; global temporaries
// become array arguments of every launch. A loop around a global barrier is
// split by it in one of two ways, as in loopy: a hardware-parallel loop
// (g./l.) is distributed (each launch runs all of its iterations: the
// barrier is grid-wide), a sequential one runs on the host around the
// launches inside it (a time loop: one launch per section per iteration),
// its iname a scalar argument of those launches.
struct HostStep {
  enum Kind : uint8_t { Launch, Loop };
  Kind kind = Launch;
  size_t launch = 0;           // Launch: its index among the program's launches
  std::string iname;           // Loop: the loop's iname
  Expr lower, upper;           // Loop: first and last value, in the parameters and outer host loops' inames
  std::vector<HostStep> body;  // Loop: what each iteration runs, in order
  static HostStep launch_step(size_t index) { return {Launch, index, "", Expr(), Expr(), {}}; }
};
std::string host_steps_text(const std::vector<HostStep>& steps);  // "launch 1; for t in [0, tsteps - 1] { launch 2; launch 3 }" (numbered from 1)

struct LaunchProgram {
  std::vector<LoopKernel> launches;
  std::vector<Argument> global_temporaries;
  std::vector<HostStep> steps;  // launches and host loops, in order (a kernel of one launch: {launch 0})
  bool has_host_loops() const;
  std::set<std::string> host_loops() const;  // the inames of every host loop
  // The launches answer to no launches of the kernel as written (host loops
  // it does not have: a wavefront's time); their order is checked on the
  // whole program instead (check_program_order, schedule.h).
  bool checked_as_a_whole = false;
};
// Any kernel without global barriers and global temporaries: {k}. KernelError
// for a global barrier under a condition or inside an unrolled, ILP or vector
// loop, a dependency on a later launch, a private or local value that
// crosses launches, or the instructions of a host loop not consecutive in the
// instruction list.
LaunchProgram split_global_barriers(const LoopKernel& k);

// Runs steps on the host: calls launch(index, values) for each launch in
// order, values being params with the host loops' inames added.
void for_each_launch(const std::vector<HostStep>& steps, const std::map<std::string, int64_t>& params,
                     const std::function<void(size_t, const std::map<std::string, int64_t>&)>& launch);

}  // namespace loom
