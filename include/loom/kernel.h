// LoopKernel and its parts: Instruction, Argument, Temporary, InameTag,
// SubstitutionRule. A LoopKernel is a value: transformations take a const
// reference and return a new kernel. Its parts (instructions, domains,
// arguments, temporaries, rules, tags, priorities, slabs) are immutable and
// shared (Part<T>, copy on write through edit()), and the Exprs and Domains
// inside them are shared too: copying a kernel copies a few pointers, a
// transformation copies only the parts it changes, and an auto-scheduler
// can hold many variants that share what they have in common.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <unordered_map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/domain.h"
#include "loom/error.h"
#include "loom/expr.h"
#include "loom/part.h"
#include "loom/type.h"

namespace loom {

// How an iname is executed. Seq ("for") is a plain loop; Unroll ("unr") a
// fully unrolled one; Ilp ("ilp", "ilp.unr") an unrolled loop whose private
// temporaries get one copy per iteration (instruction-level parallelism),
// IlpSeq ("ilp.seq") the same as a plain loop; Vec ("vec") is unrolled
// (vector types come later, loopy's fallback for vec). MatrixM, MatrixN and
// MatrixK ("mma.m", "mma.n", "mma.k", set by tensor_core) are the rows,
// columns and reduction of one warp-level matrix instruction: the warp runs
// them as one logical thread (loops, the accumulator private to it, one copy
// per (m, n) as ILP gives), and code generation spreads the (m, n) elements
// over the warp's 32 lanes (codegen/warp_matrices.cpp).
struct InameTag {
  enum Kind : uint8_t { Seq, Group, Local, Unroll, Ilp, IlpSeq, Vec, MatrixM, MatrixN, MatrixK };
  Kind kind = Seq;
  int axis = 0;  // for Group/Local: 0..2

  bool is_hardware() const { return kind == Group || kind == Local; }
  bool is_unrolled() const { return kind == Unroll || kind == Ilp || kind == Vec; }
  bool is_ilp() const { return kind == Ilp || kind == IlpSeq || kind == MatrixM || kind == MatrixN; }
  bool is_matrix() const { return kind == MatrixM || kind == MatrixN || kind == MatrixK; }
  std::string str() const;  // "g.0", "l.1", "unr", "for"
  static std::optional<InameTag> parse(const std::string& s);
  friend bool operator==(InameTag a, InameTag b) { return a.kind == b.kind && a.axis == b.axis; }
};

struct Instruction {
  // GlobalBarrier (`... gbarrier`, loopy's global barrier): the kernel runs
  // as several launches in order, split where these stand (top level only;
  // src/preprocess/global_barriers.cpp).
  enum Kind : uint8_t { Assign, Barrier, NoOp, GlobalBarrier };
  // The tag of a global barrier a transformation adds where the kernel as
  // written has none (rfactor's second launch, read_initial_values's copy):
  // the launches on either side of it answer to one launch of the kernel as
  // written (split_global_barriers).
  static constexpr const char* kAddedBarrierTag = "added";
  // The tag of the instructions that fill or copy back a stand-in (StandIn),
  // and of the barrier before a copy back.
  static constexpr const char* kStandInCopyTag = "stand_in_copy";
  Kind kind = Assign;
  std::string id;
  Expr lhs;  // Var or Subscript (Assign only)
  Expr rhs;
  std::set<std::string> within_inames;
  bool inames_given = false;            // {inames=...}: not inferred from expressions
  std::set<std::string> depends_on;     // instruction ids
  std::vector<Expr> predicates;         // all must hold (conjunction)
  std::set<std::string> no_sync_with;
  std::set<std::string> tags;
  int priority = 0;
  // {atomic} (loopy's AtomicUpdate): x[I] = x[I] + e on a global array, done
  // as one atomic update, so threads and blocks may add into one element.
  bool atomic = false;
  // A copy of global memory into a local temporary that need not complete
  // before the next instruction (add_prefetch/double_buffer's async_copy):
  // CUDA prints it as cp.async on targets that have it and waits at the
  // next barrier; elsewhere it is a plain copy. Text: the flag {async}.
  bool async_copy = false;
  SourceLoc loc;
  // Where this instruction's instances come from in the kernel as written
  // (LoopKernel::original): each iname of the original instruction (its
  // loops and its reductions' inames) as an expression in the current inames.
  // Transformations that rename or substitute inames keep it current; an
  // instruction a transformation adds has none. The legality check of
  // reorderings (src/schedule/reorder_check.cpp) compares dataflow through it.
  std::optional<std::map<std::string, Expr>> origin;
  // Whose work the instances do: this instruction's id, or (a common
  // subexpression computed just before its user) the user's id.
  std::string origin_of;
  // This instruction does part of origin_of's instances, and other parts do
  // the rest (split_index_set's pieces): its instances are origin_of's
  // where it runs, at its own times (a common subexpression runs at its
  // user's).
  bool origin_part = false;

  // "a" for a[i] = ..., "acc" for acc = ..., "" otherwise (the name lives in
  // the left-hand side's node: no copy, since lookups ask it in loops)
  const std::string& assignee_name() const;
  // Names the right-hand side and the predicates read: arrays, temporaries,
  // scalars, inames and parameters.
  std::set<std::string> read_names() const;
  // Whether the instruction reads `name` (an array, temporary, scalar or
  // iname): on its right-hand side, in a predicate or in an index of its
  // left-hand side.
  bool reads(const std::string& name) const;
  // The inames of its iteration space: within_inames and its reductions' inames.
  std::set<std::string> iteration_inames() const;
  std::string str() const;            // one line in the kernel language
};

// A global temporary that stands for an array argument, whose accesses the
// reorder check (src/schedule/reorder_check.cpp) reads as that array's:
// InitialValues: a copy of it as it was before the kernel, made by a launch
// before it (read_initial_values); its reads are the array's reads of values
// from before the kernel. Expansion: a copy of it for each iteration of
// some loops, their indices (from 0) its leading `leading_axes` axes
// (expand_array, which expands the kernel as written too: its accesses are
// compared as its own), and a launch after the kernel copies the last
// iteration's back. The instructions that copy, and the barrier before the
// copy back, are tagged Instruction::kStandInCopyTag.
struct StandIn {
  enum Kind : uint8_t { None, InitialValues, Expansion };
  Kind kind = None;
  std::string array;
  int leading_axes = 0;
  explicit operator bool() const { return kind != None; }
  std::string str() const;  // "", "initial values of B", "expansion of sum over 2 loops"
};

struct Argument {
  enum Kind : uint8_t { Array, Value };
  Kind kind = Array;
  std::string name;
  Type dtype;
  std::vector<Expr> shape;    // in parameters; empty for Value
  std::vector<Expr> strides;  // in elements; empty: C order (row-major, contiguous)
  bool shape_inferred = false;
  bool dtype_inferred = false;
  Expr offset;                // in elements, from the data pointer; undefined: 0
  // The axis tag_array_axes tagged `vec` (-1: none): its extent is the lanes
  // of one vector (stride 1), and the CUDA target must move its `vec`
  // accesses as vectors or refuse the kernel.
  int vector_axis = -1;
  // A launch's argument made from a global temporary that stands for an
  // array (Temporary::stand_in).
  StandIn stand_in;
  std::string str() const;    // "a: float32[n, m] strides=(1, n) offset=2"
  // The strides in use: the given ones, or C order from the shape.
  std::vector<Expr> element_strides() const;
  // C order from the data pointer itself: no strides of its own and no
  // offset (or a literal 0), as a tensor map or a vector store assumes.
  bool plain_layout() const;
};

enum class AddressSpace : uint8_t { Auto, Private, Local, Global };
const char* to_string(AddressSpace s);

// Why `vector_axis` cannot be a's vector axis (an axis of extent 2 or 4
// forming a CUDA vector type, stride 1, a whole number of vectors from the
// start), or "" when it can.
std::string vector_axis_problem(const Argument& a, int vector_axis);

// Row-major (C order) strides of a shape.
std::vector<Expr> row_major_strides(const std::vector<Expr>& shape);
// Fortran order: the first index varies fastest.
std::vector<Expr> column_major_strides(const std::vector<Expr>& shape);

struct Temporary {
  std::string name;
  Type dtype;  // unknown until type inference when declared with <>
  std::vector<Expr> shape;  // empty: scalar
  AddressSpace space = AddressSpace::Auto;
  // The array this temporary is a zero-filled copy of (add_prefetch with
  // fill_value=0: the box is written whole, 0 where it leaves the array), or
  // "". round_up_reduction relies on it: a read of such a temporary at a
  // point whose original access is outside the array yields 0.
  std::string zero_fill_of;
  // The array argument this global temporary stands for, if any.
  StandIn stand_in;
  // The sequential loop whose iterations alternate between this temporary's
  // two copies (double_buffer), or "". Each iteration fills the copy the next
  // one reads, so the loop must stay a loop of one block: check_kernel
  // refuses the kernel if it is later tagged parallel, split or joined away.
  std::string double_buffered_in;
  // How many iterations ahead the fill runs (stages - 1 unless asked for
  // fewer); 0 when not double-buffered.
  int double_buffer_ahead = 0;
  // 128: the 16-byte pieces of each 128-byte row of the temporary are
  // XOR-swizzled by the row's position in its 1024-byte block (CUTLASS's
  // Swizzle<3,4,3>, wgmma's 128-byte swizzle mode), on the CUDA target: the
  // byte at flat offset b lives at b ^ ((b >> 3) & 0x70). A permutation
  // inside each row, so only the addresses printed change; 0: none.
  int swizzle_bytes = 0;
  // Filled by the tensor memory accelerator where the CUDA target has it
  // (tma_copy): one thread issues each fill as a bulk tensor copy that
  // completes on an mbarrier per copy of the tile (codegen/bulk_copies.cpp);
  // other targets copy as before.
  bool bulk_copy = false;

  // Where it may start in local memory and how many bytes it takes there,
  // for `elements` elements: 16-byte aligned (vector accesses rely on it); a
  // swizzled one in whole 1024-byte blocks (the swizzle's period); a bulk
  // copy's destination 128-byte aligned (the copy engine's rule).
  int64_t local_alignment() const { return swizzle_bytes ? 1024 : bulk_copy ? 128 : 16; }
  int64_t local_size(int64_t elements) const {
    int64_t b = elements * dtype.bytes();
    return swizzle_bytes ? (b + 1023) / 1024 * 1024 : b;
  }
};

struct SubstitutionRule {
  std::string name;
  std::vector<std::string> params;
  Expr body;
};

// Accesses to array arguments a proof left to the run time, as (instruction
// id, array name): check_bounds finds them, the targets check them.
using UnprovenAccessSet = std::set<std::pair<std::string, std::string>>;

struct KernelOptions {
  Type index_dtype = types::int32;  // type of inames and parameters
  // Parameters whose divisibility a call must not specialize on (Triton's
  // do_not_specialize): the Python runtime assumes `p mod 16 = 0` when an
  // array's shape makes it so, unless p is named here.
  std::set<std::string> do_not_specialize;
  // Accesses check_bounds cannot prove (a[idx[i]], loops bounded by values
  // read from memory) are checked at run time on every target; a kernel
  // whose author vouches for them skips the checks (trust_unproven_accesses;
  // Triton's debug=False). The interpreter checks every access regardless.
  bool trust_unproven_accesses = false;
  // The CUDA launch order of the blocks (group_blocks): consecutive blocks
  // take this many values of g.1 for each value of g.0; 1 is CUDA's order.
  int64_t block_group = 1;
};

namespace detail {
// An index by name of the kernel's arguments or instructions, built on first
// lookup. A copy of a kernel starts without one (its vectors live
// elsewhere), so a pass that copies the kernel and looks names up stays
// linear in the kernel's size. Atomic: kernels (and the `original` they
// share) are read from several threads at once by the tuner and by Python.
struct NameIndex {
  const void* data = nullptr;  // the vector it was built from
  size_t size = 0;
  std::unordered_map<std::string, size_t> at;
};
// Which domain defines each iname, with the ids of the domains it was read
// from (Domain::id): a replaced domain shows as another id, so a stale index
// is rebuilt, never believed.
struct InameIndex {
  std::vector<uint64_t> ids;
  std::unordered_map<std::string, int> domain;
};
// A lazily built index, shared atomically; a copied kernel starts without one.
template <class Index>
class IndexCache {
 public:
  IndexCache() = default;
  IndexCache(const IndexCache&) {}
  IndexCache& operator=(const IndexCache&) {
    p_.store(nullptr);
    return *this;
  }
  std::shared_ptr<const Index> get() const { return p_.load(); }
  void set(std::shared_ptr<const Index> x) const { p_.store(std::move(x)); }

 private:
  mutable std::atomic<std::shared_ptr<const Index>> p_;
};
using NameIndexCache = IndexCache<NameIndex>;
using InameIndexCache = IndexCache<InameIndex>;
}  // namespace detail

class LoopKernel {
 public:
  std::string name = "loom_kernel";
  Part<std::vector<Domain>> domains;       // in order; later ones may use earlier inames as parameters
  Part<std::vector<Instruction>> instructions;
  // In signature order. Add, remove or replace arguments; do not rename one
  // in place (find_argument's index is rebuilt when the vector is
  // reallocated or resized, not when a name changes).
  Part<std::vector<Argument>> arguments;
  Part<std::map<std::string, Temporary>> temporaries;
  Part<std::map<std::string, SubstitutionRule>> substitutions;
  Part<std::map<std::string, InameTag>> iname_tags;  // absent: Seq
  Part<std::vector<std::vector<std::string>>> loop_priority;  // each: outer..inner
  // Loops whose full iterations get code of their own, without the guards
  // of a partial last tile (split_iname's slabs): iname -> (head, tail).
  Part<std::map<std::string, std::pair<int, int>>> slabs;
  Domain assumptions;  // parameter-only set; undefined means "no assumptions"
  KernelOptions options;
  // The kernel as written, before any transformation (null in that kernel
  // itself): the reference order that reorderings of its sequential loops
  // must keep (every read gets its value from the same write).
  std::shared_ptr<const LoopKernel> original;

  // Lookups. Throw KernelError naming the kernel when absent.
  const Instruction& instruction(const std::string& id) const;
  const Argument* find_argument(const std::string& name) const;
  const Temporary* find_temporary(const std::string& name) const;
  InameTag tag_of(const std::string& iname) const;

  std::vector<std::string> all_inames() const;  // in domain order
  bool has_iname(const std::string& iname) const;
  // Whether n names an iname, an argument, a temporary or a rule (a fresh name is none of them).
  bool name_taken(const std::string& n) const;
  // Index of the domain whose set dimensions include iname; -1 if none.
  int domain_of(const std::string& iname) const;
  // The element offset of an access to an array argument or temporary:
  // offset + sum(index_d * stride_d), typed index_dtype, simplified.
  Expr flat_index(const Subscript& access) const;
  // Whether some instruction assigns to (elements of) var.
  bool is_written(const std::string& var) const;
  // Whether some instruction reads var (right-hand side, indices, predicates).
  bool is_read(const std::string& var) const;
  // Parameters: integer names used by domains and shapes, and integer value
  // arguments (float scalars such as alpha are data, not parameters). A
  // domain's name that is a temporary is not one: see data_parameters().
  std::vector<std::string> parameters() const;
  // Data-dependent loop bounds (loopy's): names a domain uses that are
  // scalar temporaries the kernel computes (`<> row_len = ptr[i+1] - ptr[i]`,
  // then {[jj]: 0 <= jj < row_len}). isl sees them as parameters; every
  // stage treats them as values known only after their writers ran.
  std::vector<std::string> data_parameters() const;
  // Each data parameter with the inames it bounds: those of a domain that
  // uses it, or (nested domains) uses an iname it bounds.
  std::map<std::string, std::set<std::string>> data_parameter_inames() const;
  // The inames whose bounds depend on some data parameter.
  std::set<std::string> data_dependent_inames() const;

  std::string str() const;  // human-readable dump (kernel language)

 private:
  detail::NameIndexCache argument_index_, instruction_index_;
  detail::InameIndexCache iname_index_;
};

// A kernel's identity by content (src/ir/kernel_hash.cpp): the canonical
// text of every field, its 64-bit FNV-1a hash (stable across runs and
// machines), and equality of keys. Kernels that two scripts make alike are
// one kernel; domains compare as isl prints them, which the same steps
// always produce.
std::string structural_key(const LoopKernel& k);
uint64_t structural_hash(const LoopKernel& k);
bool structurally_equal(const LoopKernel& a, const LoopKernel& b);

}  // namespace loom
