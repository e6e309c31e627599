// Internal to codegen: launch geometry from the domain (hardware_axes.cpp).
#pragma once
#include <array>

#include "loom/codegen.h"
#include "loom/isl_util.h"

namespace loom::codegen {

struct HardwareAxes {
  std::vector<HardwareIname> inames;
  std::array<Expr, 3> grid;
  std::array<int64_t, 3> block{1, 1, 1};
  isl::set context;   // assumptions + bounds of the hardware inames (as parameters)
  isl::space params;  // all parameters, hardware inames included
};

HardwareAxes compute_hardware_axes(const LoopKernel& k, const std::vector<std::string>& hw_inames,
                                   const isl::set& assumptions, const TargetInfo& target);

// Barriers and collectives are reached by all threads together (sync_check.cpp).
void check_synchronization(const LoopKernel& k, const GeneratedKernel& g);

// The loop nest of k in the order L gives, from isl's AST generator.
StmtPtr build_loop_nest(const LoopKernel& k, const Linearization& L, const HardwareAxes& hw);

}  // namespace loom::codegen
