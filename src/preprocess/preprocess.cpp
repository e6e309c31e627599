// The preprocessing pipeline: the passes in the order they run.
#include "loom/preprocess.h"

namespace loom {

LoopKernel preprocess(const LoopKernel& k) {
  LoopKernel r = expand_substitutions(k);
  r = infer_types(r);
  r = realize_reductions(r);
  r = add_dependencies(r);
  check_kernel(r);
  return r;
}

}  // namespace loom
