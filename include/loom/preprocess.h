// Preprocessing: from a kernel as written and transformed to one ready for
// linearization. The passes, in order (preprocess() runs them all):
//   expand_substitutions  substitution-rule calls replaced by their bodies
//   infer_types           every Expr node typed, temporaries' dtypes inferred,
//                         conversions made explicit as Casts
//   realize_reductions    sum/product/max/min become init/update instructions
//                         on a private accumulator (sequential reductions)
//   privatize_ilp         private temporaries written in ILP inames get one
//                         copy per iteration
//   eliminate_common_subexpressions  a repeated subexpression is computed once
//   add_dependencies      read-after-write, write-after-read and
//                         write-after-write between instructions, in text
//                         order, where their accesses can meet (isl)
//   check_kernel          names, inames, tags, barriers and limits are consistent
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

#include "loom/kernel.h"

namespace loom {

LoopKernel expand_substitutions(const LoopKernel& k);
// e with every substitution-rule call of k replaced by the rule's body.
Expr expand_rule_calls(const LoopKernel& k, const Expr& e);
LoopKernel infer_types(const LoopKernel& k);

// Temporaries declared without an address space (auto) become private, local
// or global by loopy's rule (src/preprocess/address_spaces.cpp).
LoopKernel resolve_address_spaces(const LoopKernel& k);
LoopKernel realize_reductions(const LoopKernel& k);
LoopKernel privatize_ilp(const LoopKernel& k);
LoopKernel eliminate_common_subexpressions(const LoopKernel& k);
LoopKernel add_dependencies(const LoopKernel& k);
void check_kernel(const LoopKernel& k);
void check_bounds(const LoopKernel& k);
void check_races(const LoopKernel& k, const std::vector<std::string>& hardware_inames);
// Atomic instructions ({atomic}) have the form x[I] = x[I] + e on a global
// array of a type the targets add atomically (atomics.cpp).
void check_atomic_updates(const LoopKernel& k);
// The instruction with this id when it is atomic (targets ask per statement); null otherwise.
const Instruction* atomic_instruction(const LoopKernel& k, const std::string& id);
// The e of an atomic x[I] = x[I] + e; undefined for other instructions.
Expr atomic_increment(const Instruction& insn);
void check_global_dependences(const LoopKernel& k);

// Whether instances of a (access sa) and b (access sb) that touch one element
// of a global array run on different blocks, or on different threads of one
// block (exact, isl); unknown: an index isl cannot analyse (both true then).
struct GlobalConflict {
  bool across_blocks = false, across_threads = false, unknown = false;
  std::string witness;  // parameters and both iterations, for messages
};
GlobalConflict global_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb);

// Within one block (local memory, or a global array the kernel writes): the
// instances of a (through sa) and b (through sb) that touch one element on
// different threads, or on any threads when same_thread_too (an async copy's
// own thread must wait for it too), sorted by the iterations of the loops
// enclosing both (`common`, outermost first): in the same iteration, with
// a's instance in an earlier one, or with b's in an earlier one. An index isl
// cannot analyse gives all three.
struct BlockConflict {
  bool same_iteration = false, a_earlier = false, b_earlier = false;
};
BlockConflict block_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb,
                             const std::vector<std::string>& common, bool same_thread_too);

// The pairs of instances, a's with its inames prefixed "src:" and b's with
// "dst:", that touch one element through sa and sb (the kernel's assumptions
// applied); a null set when an index is not affine.
isl::set element_pairs(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb);
// Whether index expressions a and b are the same affine function of x and of
// inames in `fixed` (or parameters): then one value means one iteration of x,
// for instances that agree on `fixed` (acc[4 * i + x]); decided without isl.
bool index_tells_iterations_apart(const LoopKernel& k, const Expr& a, const Expr& b, const std::string& x,
                                  const std::set<std::string>& fixed);
// Whether two iterations of loop x of instruction w, in one instance of the
// loops `outer` around x, on one block (and one thread where w writes a
// private value), write one element: "" when every iteration writes elements
// of its own, "scalar" when no index of w's left-hand side mentions x (every
// iteration rewrites the same elements), else a witness or the reason isl
// could not tell. A double-buffered slot (x + 1) % 2 repeats every other
// iteration: overwritten.
std::string overwritten_across_iterations(const LoopKernel& k, const Instruction& w, const std::string& x,
                                          const std::set<std::string>& outer);
// A point of such a set with the two instances' inames told apart:
// "i (first) = 3, i (second) = 5".
std::string pair_witness(const isl::set& pairs);

LoopKernel preprocess(const LoopKernel& k);

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
