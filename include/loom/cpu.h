// The cpu target: Loom's codegen AST lowered to LLVM IR (no C source in
// between), optimized at O3 for the host CPU, and run through ORC LLJIT.
// Kernels tagged for the GPU run with GPU semantics: blocks (group inames)
// are spread over a pool of threads, threads of a block (local inames) become
// loops around each barrier-free region of the body, and private values of
// kernels with barriers get one slot per thread. Built when CMake finds LLVM
// 19 (LOOM_WITH_LLVM); LOOM_HAS_CPU_TARGET says so to code that uses it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/runtime.h"

namespace loom::cpu {

// The LLVM CPU that kernels are compiled for: the host's, or the one the
// environment variable LOOM_CPU names (x86-64-v2, say), which pins it so that
// code generation does not depend on the machine's features.
std::string target_cpu();

// The libcalls (float16/bfloat16 conversions, 128-bit arithmetic) that Loom
// defines for JIT-compiled code, so no kernel needs the host's libgcc.
std::vector<std::string> runtime_helpers();

struct CompileStats {
  double lower_seconds = 0;     // AST -> LLVM IR
  double optimize_seconds = 0;  // O3 pipeline
  double jit_seconds = 0;       // machine code
  bool cached = false;
};

// A kernel compiled for the host. Compiled code is cached in memory by the
// kernel's content, so building the same kernel twice compiles once.
class CpuKernel {
 public:
  explicit CpuKernel(const LoopKernel& k);
  explicit CpuKernel(GeneratedKernel g);
  ~CpuKernel();
  CpuKernel(const CpuKernel&) = delete;
  CpuKernel& operator=(const CpuKernel&) = delete;

  const GeneratedKernel& generated() const { return gen_; }
  const CompileStats& stats() const { return stats_; }
  // The optimized LLVM IR, as text (for `loom show --target cpu` and debugging).
  const std::string& ir() const;

  // Runs on host arrays bound by name (parameters inferred from shapes).
  // threads: worker threads for the blocks of the grid (0: the machine's cores).
  void call(const ArgMap& args, int threads = 0);

 private:
  struct Impl;
  GeneratedKernel gen_;
  CompileStats stats_;
  std::shared_ptr<Impl> impl_;
};

}  // namespace loom::cpu
