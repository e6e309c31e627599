// Internal to codegen: vectorize (vectorize.cpp), the pass after the loop
// nest that turns `vec` loops into vector accesses where it can prove them.
#pragma once
#include <map>
#include <string>

#include "loom/ast.h"
#include "loom/kernel.h"

namespace loom::codegen {

// For each loop the loop nest kept for a `vec` iname (Stmt::vector_lanes):
// records on it the accesses of its assignments that are contiguous in
// the lanes and aligned to the vector's size (Stmt::vector_accesses), and
// unrolls it when there is none (loopy's fallback for vec). `alignment`
// receives the bytes each array argument's pointer must then be aligned to.
StmtPtr vectorize_loops(const LoopKernel& k, const StmtPtr& body, std::map<std::string, int64_t>& alignment);

// Arrays with a vec axis (tag_array_axes) promise vectors: KernelError when
// an access whose vec-axis index runs over a `vec` iname does not move as one
// vector in `body` (vectorize_loops calls it; isl's loop nests too).
void check_vector_axes(const LoopKernel& k, const StmtPtr& body);

}  // namespace loom::codegen
