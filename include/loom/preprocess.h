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
LoopKernel realize_reductions(const LoopKernel& k);
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

// A kernel with global barriers (`... gbarrier`) or global temporaries as the
// launches it runs as, in order (global_barriers.cpp): the instructions
// between two global barriers form one launch (named <kernel>, <kernel>_1,
// ...), whose dependencies on earlier launches are met by the order; global
// temporaries become array arguments of every launch (listed in
// *global_temporaries). Any other kernel: {k}. KernelError for a global
// barrier inside a loop or under a condition, a dependency on a later launch,
// or a private or local value that crosses one.
std::vector<LoopKernel> split_global_barriers(const LoopKernel& k, std::vector<Argument>* global_temporaries);

}  // namespace loom
