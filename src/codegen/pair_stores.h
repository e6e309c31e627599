// Internal to codegen: pair_adjacent_stores (pair_stores.cpp), the CUDA pass
// that moves two adjacent 4-byte stores of a global array as one 8-byte one.
#pragma once
#include "loom/codegen.h"

namespace loom::codegen {

// In every run of statements, two consecutive assignments of adjacent
// elements of a private temporary (a register tile's accumulators) to
// elements f and f + 1 of one global array (the same indices but the last,
// which grows by one), whose elements are 4 bytes and whose f is even for every value the
// kernel's assumptions allow (proven term by term: a product with an even
// factor, a parameter the assumptions make even), become one `vec` loop of
// two lanes whose store moves as a float2/int2 (the lanes computed as
// before): a warpgroup's accumulators are written back two adjacent columns
// per lane, and 8-byte stores halve the store instructions of the epilogue.
// The array's address must then be a multiple of 8 (argument_alignment,
// checked at launch). CUDA kernels only; other targets print the stores.
void pair_adjacent_stores(GeneratedKernel& g);

}  // namespace loom::codegen
