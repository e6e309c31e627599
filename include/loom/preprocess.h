// Preprocessing: from a kernel as written and transformed to one ready for
// linearization. The passes, in order (preprocess() runs them all):
//   expand_substitutions  substitution-rule calls replaced by their bodies
//   infer_types           every Expr node typed, temporaries' dtypes inferred,
//                         conversions made explicit as Casts
//   realize_reductions    sum/product/max/min become init/update instructions
//                         on a private accumulator (sequential reductions)
//   add_dependencies      read-after-write, write-after-read and
//                         write-after-write between instructions, in text order
//   check_kernel          names, inames and tags are consistent
// Each pass is a pure function in src/preprocess/<pass>.cpp.
#pragma once
#include "loom/kernel.h"

namespace loom {

LoopKernel expand_substitutions(const LoopKernel& k);
LoopKernel infer_types(const LoopKernel& k);
LoopKernel realize_reductions(const LoopKernel& k);
LoopKernel add_dependencies(const LoopKernel& k);
void check_kernel(const LoopKernel& k);

LoopKernel preprocess(const LoopKernel& k);

}  // namespace loom
