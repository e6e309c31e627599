// Internal to codegen: plan_bulk_copies (bulk_copies.cpp), the pass after
// the loop nest that turns the fills of tma_copy tiles into bulk tensor
// copies where the target has the tensor memory accelerator.
#pragma once
#include "loom/codegen.h"

namespace loom::codegen {

// For each tma_copy temporary (Temporary::bulk_copy) of a CUDA kernel whose
// target has the copy engine: proves that each fill writes, per iteration
// of the inames around it, one box of the tile that is a translation of a
// box of the array (the tile's last axes follow the array's), that the box
// fits the engine (at most 256 elements an axis, rows of 16-byte multiples,
// a swizzled tile's rows 128 bytes, the copy aligned), that the fill's own
// loops hold nothing else and no guard on its own inames, and that the tile
// is double-buffered in a loop that starts at 0; then records the plan in
// g.bulk_copies / g.bulk_fills. KernelError with the reason otherwise (and
// for a CUDA target without the engine). Other targets copy as written.
void plan_bulk_copies(GeneratedKernel& g);

}  // namespace loom::codegen
