// Every stage a kernel goes through on its way to a binary, kept as text (as
// Triton's compiled.asm): the kernel as written and after each
// transformation, after preprocessing, its schedule, then the target's code:
// CUDA C, PTX and CUBIN with NVRTC's resource report, or LLVM IR. The command
// line's --emit and Python's compiled(...).asm read the same stages.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loom/kernel.h"
#include "loom/parser.h"

namespace loom {

struct StageOptions {
  std::string target = "cuda";  // cuda or cpu
  std::string arch;             // cuda: "" = the GPU's, or sm_90 without one
  // The target stages to produce ("cuda", "ptx", "cubin", "llvm"); empty: all of the target's.
  // The kernel stages cost microseconds and are always there.
  std::set<std::string> wanted;
};

struct CompileStages {
  // "input" (the kernel as given), then one entry per transformation step
  // (its script line) with the kernel after it, in the kernel language.
  std::vector<std::pair<std::string, std::string>> transforms;
  std::string kernel;        // after every transformation (kernel language)
  std::string json;          // the same kernel as JSON (docs/json-schema.md)
  std::string preprocessed;  // after preprocessing (reductions, types, ilp, ...)
  std::string schedule;      // the linearization: loops, instructions, barriers in order
  std::string target, arch;
  std::string cuda, ptx, cubin, nvrtc_log;  // cuda target; cubin is binary
  int registers = -1;                      // NVRTC's ptxas report (-1: none)
  int spill_bytes = 0;
  int64_t shared_bytes = 0;                // local (shared) memory per block
  std::string llvm;                        // cpu target: optimized LLVM IR

  // A stage by name: input, kernel, json, preprocessed, schedule, cuda,
  // ptx, cubin, llvm. KernelError naming the known stages otherwise.
  const std::string& get(const std::string& name) const;
  static std::vector<std::string> names();
};

// KernelError naming the known stages unless name is one of CompileStages::names().
void check_stage_name(const std::string& name);

// Applies the steps to `input` (recording each), generates and compiles.
CompileStages compile_stages(const LoopKernel& input, const std::vector<TransformStep>& steps, const StageOptions& options);

// A step as its script line: "split_iname i 16 outer_tag=g.0".
std::string step_text(const TransformStep& step);

}  // namespace loom
