// Internal to codegen: the lowering of warp matrix tiles (tensor_core's
// mma.m / mma.n / mma.k inames) onto the warp's lanes (warp_matrices.cpp).
#pragma once
#include "loom/codegen.h"

namespace loom::codegen {

// Spreads each (mma.m, mma.n) loop pair of g.body over the 32 lanes of axis
// l.0 in the instruction's fragment layout (lane = 4 * (m mod 8) + n / 2,
// element 2 * (m / 8) + n mod 2) and gives the tile's private temporaries
// (the accumulators) their four elements per lane. For CUDA, each
// (m, n, k) nest around the product's update also becomes a WarpMatrix
// block. Refuses, with the reason, a kernel whose tiles do not come out as
// such nests, or whose architecture lacks the instruction. A kernel without
// matrix inames is left as it is.
void lower_warp_matrices(GeneratedKernel& g);

}  // namespace loom::codegen
