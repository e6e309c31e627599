// Internal to transforms/: the footprint engine shared by add_prefetch,
// precompute and buffer_array. Each of them stores, in a temporary, the values
// that some uses inside a sweep touch: array accesses a[...] (prefetch,
// buffer) or substitution-rule calls f(...) (precompute). The engine finds the
// uses, computes the box their storage indices cover (a base that depends on
// the outer inames, plus constant extents from the sweep inames' constant
// ranges), adds one loop per box axis, rewrites the uses to read the
// temporary, tags the loops and, where asked, derives with isl the exact
// condition under which a box point is used (for bodies that must not be
// evaluated outside the footprint).
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/constraints.h"
#include "loom/kernel.h"

namespace loom::transforms {

struct FootprintRequest {
  std::string what;   // "add_prefetch('a', 'i')", for errors
  std::string name;   // the array or substitution rule
  bool rule = false;  // uses are rule calls f(...) (else subscripts a[...])
  std::vector<size_t> storage_axes;  // index positions that become temporary axes, in order
  std::vector<std::string> sweep;
  std::optional<std::string> outer_inames;  // default: those the base depends on
  bool include_writes = false;              // left-hand sides count as uses (buffer_array)
  bool local = false;                       // the temporary is shared by a block's threads
  // Only the accesses whose indices use this iname ("": all): one of an
  // array's two reads (syrk's A[i, k] and A[j, k]) stored on its own.
  std::string only_using;
};
// Whether a use's arguments or indices satisfy rq.only_using.
bool selected(const FootprintRequest& rq, const std::vector<Expr>& args);

// One use and the inames around it.
struct FootprintUse {
  size_t insn;
  std::set<std::string> scope;          // within_inames + inames of enclosing reductions
  std::vector<AffineConstraint> index;  // affine form of each argument/index
  std::vector<Expr> args;               // the argument/index expressions as written
};

struct Footprint {
  std::vector<FootprintUse> uses;
  std::vector<Expr> base;        // per storage axis: the outer part + the box's low corner
  std::vector<int64_t> extent;   // per storage axis
  std::set<std::string> outer;   // inames around the storing instruction
  std::vector<Expr> fixed;       // per non-storage position: its expression (the same in every use)
};
Footprint find_footprint(const LoopKernel& k, const FootprintRequest& rq);

// The loops over the box: one new iname (and domain) per axis of extent > 1.
struct StorageLoops {
  std::vector<std::string> inames;  // the new inames, by axis
  std::vector<size_t> axes;         // the storage axis of each new iname
  std::vector<Expr> index;          // per storage axis: the iname, or 0 for extent 1
  std::vector<Expr> source;         // per storage axis: base + index
  std::set<std::string> reused;     // inames that existed with the storage axis' range (loopy reuses them)
};
// Adds the loops to r; names come from `dim_names` (comma-separated, one per
// storage axis) or are <prefix>_dim_<d>. A given name that is already an
// iname of range [0, extent) is reused, as loopy does (another range is
// refused); reused inames keep their tags.
StorageLoops add_storage_loops(LoopKernel& r, const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                               const std::string& prefix, const std::string& dim_names);

// Rewrites every use the footprint covers (the instructions in fp.uses) to
// temp[index - base] (or the scalar temp when there are no storage axes).
// A producer (the fetch or compute instruction) becomes a dependency of each
// rewritten instruction, as in loopy: the readers wait for what fills the
// temporary, and add_dependencies need not ask isl whether they meet.
void rewrite_uses(LoopKernel& r, const FootprintRequest& rq, const Footprint& fp, const std::string& temp,
                  const std::string& producer_id = "");

// Tags the storage loops: "l.auto" puts them onto the local axes the block
// already has (contiguous last axis on l.0, split by the axis' extent where the
// box is larger) when the temporary is local; "for" leaves them sequential;
// anything else is a tag for every loop. A local axis of the block that the
// box does not need takes over a loop that would stay sequential, or else
// instruction `store_id` (the one storing the temporary) runs on that axis'
// first thread only, so the threads along it do not race.
LoopKernel tag_storage_loops(LoopKernel r, const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                             const StorageLoops& loops, const std::string& tag, const std::string& store_id,
                             int64_t vector_width = 1);

// The conditions (affine, in outer inames, parameters and the storage inames)
// under which a box point is used by some iteration: the convex hull of the
// exact footprint, computed with isl; constraints the box implies are left out.
// `exact`, when given, tells whether the conditions admit used points only
// (the footprint is its own hull: no holes from strides or unions), which is
// what lets buffer_array leave out the fill of a buffer that is only written.
std::vector<Expr> footprint_conditions(const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                                       const StorageLoops& loops, bool* exact = nullptr);

// Loop priorities putting the sequential outer inames around the sweep's
// sequential inames (so the storing loops can sit between them), except
// where the kernel's priorities already say otherwise.
void order_outer_before_sweep(LoopKernel& r, const FootprintRequest& rq, const Footprint& fp);

// An expression from an affine form.
Expr expr_of(const AffineConstraint& a);

}  // namespace loom::transforms
