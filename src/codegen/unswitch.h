// Internal to codegen: unswitch (unswitch.cpp), the pass after the fast
// path's loop nest that separates a loop's full tiles from its partial last
// tile.
#pragma once
#include "loom/ast.h"
#include "loom/kernel.h"

namespace loom::codegen {

// For each sequential loop whose body holds guards that depend only on the
// loop's variable and on values the whole block shares (parameters, block
// inames, enclosing uniform loops), typically the per-step guards of an
// unrolled tile of a reduction (32 * k_outer + k_inner < l): the body becomes
// if (all those guards hold) { the body without them } else { the body }.
// The condition is the same for every thread of a block, so barriers inside
// stay reached by all of them. At most one level per loop nest (the body is
// copied once), and only where two different guards or more are saved.
StmtPtr unswitch_partial_tiles(const LoopKernel& k, const StmtPtr& body);

}  // namespace loom::codegen
