// Linearization: the order of loops and instructions. Hardware-parallel
// inames are not loops (they become blockIdx/threadIdx in codegen); every
// other iname of an instruction becomes an enclosing loop. Instructions are
// ordered by their dependencies, then by priority (higher first), then by
// their order in the text; an instruction enters the loop of its outermost
// missing iname, and loops nest in iname order: loop priorities
// (prioritize_loops) first, then the order of the domains' dimensions.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include <isl/cpp.h>

#include <optional>

#include "loom/kernel.h"

namespace loom {

struct ScheduleItem {
  enum Kind { Loop, Insn };
  Kind kind = Insn;
  std::string name;  // iname (Loop) or instruction id (Insn)
  bool unroll = false;
  std::vector<ScheduleItem> body;
};

struct Linearization {
  std::vector<ScheduleItem> items;
  // per instruction: its sequential inames, outermost first
  std::map<std::string, std::vector<std::string>> loop_inames;
  std::vector<std::string> hardware_inames;  // in iname order
  std::string str() const;
};

Linearization linearize(const LoopKernel& preprocessed);

// A value passed through a private or local temporary from one instruction to
// another inside a loop both run within must stay in one instance of that loop
// (unless isl proves that each iteration writes elements of its own, or the
// loop is ILP-privatized); refused with KernelError otherwise, with two
// iterations that overwrite one element. linearize() checks it.
void check_loop_instances(const LoopKernel& k, const Linearization& L);

// An ILP or vec iname opened as several loops (one instruction's instances
// all before another's) must not reverse the order of two accesses to one
// element from different iterations (split_loop_check.cpp); refused with
// KernelError otherwise. linearize() checks it.
void check_split_ilp_loops(const LoopKernel& k, const Linearization& L);

// Local memory one thread writes and another reads needs a barrier between
// them (src/schedule/barrier_check.cpp). place_local_barriers inserts the
// barriers that are missing (into L, and as barrier instructions into the
// returned kernel) until none is missing, or throws KernelError; code
// generation relies on that and does not check again. check_local_barriers
// throws KernelError when one is missing from a given schedule.
LoopKernel place_local_barriers(const LoopKernel& k, Linearization& L);
void check_local_barriers(const LoopKernel& k, const Linearization& L);

// The polyhedral legality test of reorderings (src/schedule/reorder_check.cpp):
// a transformed kernel must give every read its value from the same write
// instance as the kernel as written (k.original), and leave every element
// the same final write; KernelError with a witness otherwise.
void check_reorderings(const LoopKernel& k, const Linearization& L);

// The order check of a program whose launches answer to no launches of the
// kernel as written (LaunchProgram::checked_as_a_whole): k (with its global
// barriers) run as one sequential program — its host loops around each
// launch's instances, in any order within a launch, which the races and
// cross-block checks of each launch make equivalent — must have the
// dataflow of the kernel as written (check_reorderings on that program).
// host_loops: the loops that run on the host (outside every launch's).
void check_program_order(const LoopKernel& k, const std::set<std::string>& host_loops);

// The instances of a kernel as it stands (one tuple per instruction, named
// by its id, dimensions `keys`: its loops) and the dependences between them
// (flow, anti, output: each instance from every earlier one touching the
// same element), for isl's scheduler. Nothing where isl cannot follow an
// access or exceeds its work bound.
struct KernelDependences {
  isl::union_set instances;
  isl::union_map deps;
  std::map<std::string, std::vector<std::string>> keys;
};
std::optional<KernelDependences> dependences_of(const LoopKernel& k);

// In a kernel that reads copies of arrays taken before it runs (global
// temporaries standing for them, StandIn::InitialValues: read_initial_values), in its
// own order: a read of such a copy where the array itself would by then hold
// a value the kernel wrote (as a witness: the parameters and both
// instances), "" where every such read sees the array as it was before the
// kernel, nothing where isl cannot follow an access or exceeds its work bound.
std::optional<std::string> overwritten_initial_reads(const LoopKernel& k);

// Whether `array` may have a copy for each iteration of `loops`
// (expand_array), in the kernel as it stands: every read of it gets its
// value from a write in the same iteration of those loops, and every
// iteration writes every element of it (so the last one leaves every final
// value, and the copy back copies nothing it did not write). "" when it may, else the reason with a witness; nothing where isl
// cannot follow an access or exceeds its work bound.
std::optional<std::string> expansion_problem(const LoopKernel& k, const std::string& array, const std::vector<std::string>& loops);

// Where the values an instruction `store` of k writes are read, in k as it
// stands: `readers`, the instructions every read of the array of which gets
// its value from the store; `mixed`, those that read some of its values and
// some of other writes' (or from before the kernel); `live_out`, whether
// some of them are the array's final values. Nothing where isl cannot
// follow an access, exceeds its work bound, or the store or a reader is a
// reduction's part.
struct StoreReaders {
  std::set<std::string> readers, mixed;
  bool live_out = false;
};
std::optional<StoreReaders> store_readers(const LoopKernel& k, const std::string& store);

// k as preprocessing takes it: its global temporaries (copies a launch
// takes, expansions) as the arguments each launch gets them as.
LoopKernel with_global_temporaries_as_arguments(const LoopKernel& k);

// The webs of a temporary in k as it stands: the instructions that access
// it, grouped so that every value flows within a group (each read's writes
// in the read's group), in kernel order; nothing where isl cannot follow an
// access or exceeds its work bound.
std::optional<std::vector<std::vector<std::string>>> temporary_webs(const LoopKernel& k, const std::string& temporary);

// Whether `after` (`before` with some accesses of `temporary` renamed to
// `renamed`) reads the same values: every read gets its value from the same
// write in both. "" when it does, else the reason with a witness; nothing
// where isl cannot follow an access or exceeds its work bound.
std::optional<std::string> renaming_problem(const LoopKernel& before, const LoopKernel& after, const std::string& temporary,
                                            const std::string& renamed);

}  // namespace loom
