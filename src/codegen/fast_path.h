// Internal to codegen: the fast path (fast_path.cpp). For kernels whose
// domains are boxes with affine bounds (single basic sets, no existentials,
// no equalities, each instruction's constraints over its own inames and the
// parameters), loop bounds, guards and launch extents are read straight from
// the constraints, with no isl operation per kernel. Anything else returns
// nullopt with the reason, and codegen falls back to isl.
#pragma once
#include <optional>
#include <string>

#include "hardware_axes.h"

namespace loom::codegen {

struct FastResult {
  std::vector<HardwareIname> inames;
  std::array<Expr, 3> grid;
  std::array<int64_t, 3> block{1, 1, 1};
  StmtPtr body;
};

std::optional<FastResult> try_fast_path(const LoopKernel& k, const Linearization& L, std::string* why_not = nullptr);

}  // namespace loom::codegen
