// Sketch generators of the automatic space that live in files of their own
// (auto_space.cpp calls them): each reads a kernel as written and returns a
// sketch, or nothing with the reason.
#pragma once
#include <optional>
#include <string>

#include "loom/kernel.h"
#include "loom/tuner.h"

namespace loom::tune {

// The iname along the last axis of a read whose threads along x (l.0) touch
// it with a stride: an axis before the last mentions x, the last is a lone
// iname other than x (a[i, j] read with i on x: "j"); "" otherwise. Such a
// read may be staged through shared memory, a tile at a time.
inline std::string strided_across(const Subscript& s, const std::string& x) {
  if (s.indices.empty()) return "";
  auto last = s.indices.back().as<Var>();
  bool strided = false;
  for (size_t d = 0; d + 1 < s.indices.size(); ++d) strided |= mentions_var(s.indices[d], x);
  return strided && last && last->name != x ? last->name : "";
}

// The split and loop-order lines of a product's tiles, c[y, x] = sum(r, ...):
// y by x blocks (block sizes from y_blocks, x_blocks), each thread an ilp
// strip of both, r in tiles of r_tiles (choice lists: "32|64").
std::string product_tile_lines(const std::string& y, const std::string& x, const std::string& r, const std::string& y_blocks,
                               const std::string& x_blocks, const std::string& r_tiles);

// The same with vectors of `width` elements along x (the hand-written
// sgemm_vec's shape): y by x blocks of 64|128, each thread 8|16 rows apart on
// l.1 (ilp) and vectors along x on l.0 (ilp), r in tiles of 16|32. The
// caller adds the assumption that x's extent is a multiple of width.
std::string product_vector_tile_lines(const std::string& y, const std::string& x, const std::string& r, int64_t width);

// Parallelism from dependences for whole programs (tuner/nests.cpp): each
// loop nest a launch, the loops Loom's legality checks accept on blocks and
// threads mapped there, sequential loops around parallel nests on the host
// (global barriers); a second sketch ("nests, distributed") plans the kernel
// with its loops distributed wherever that is legal (distribute_loops).
// Nothing when no loop is parallel; *why then says which loop carries which
// dependence.
std::vector<Sketch> nests_sketches(const LoopKernel& k, std::string* why);

// The kernel after per-statement schedules from isl's scheduler
// (tuner/isl_schedule.cpp): each statement's loops mapped so that one
// sequential step holds them all, the steps that did it in `lines`; nothing
// where isl's schedule has no such step or the steps are refused, or (with
// new_step_only) where the step is each statement's outermost loop already.
struct IslSchedule {
  LoopKernel kernel;
  std::string lines;
};
std::optional<IslSchedule> isl_rescheduled(const LoopKernel& k, bool new_step_only = true);

}  // namespace loom::tune
