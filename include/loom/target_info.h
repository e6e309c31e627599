// TargetInfo: what code generation may assume about where a kernel runs, as
// one value (DESIGN.md, core values): the kind (cuda, cpu, interpreter),
// the architecture (sm_80, sm_90a, ...), the limits a kernel must fit
// (threads per block, shared memory static and opt-in, private memory,
// registers, warp size) and the features it may use (cp.async, warp
// shuffles, vector widths, the tensor-core instructions the architecture
// has). Checks, preprocess and code generation take it as an argument; no
// target fact lives anywhere else as a constant. The CLI builds it from the
// device or `--arch`, Python from the device or `target_info(arch)`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "loom/type.h"

namespace loom {

// A warp-level (mma.sync) or warpgroup-level (wgmma) matrix instruction:
// shape m x n x k, input and accumulator types.
struct MatrixInstruction {
  std::string name;  // "mma.sync.m16n8k16.bf16"
  int m = 0, n = 0, k = 0;
  Type a, b, accumulator;
  bool warpgroup = false;  // wgmma (sm_90a): a warpgroup of 4 warps, operands in shared memory
};

struct TargetInfo {
  enum Kind : uint8_t { Cuda, Cpu, Interpreter };
  Kind kind = Cuda;
  std::string arch = "sm_90a";  // cuda: sm_XY or sm_XYa; cpu: the CPU LLVM compiles for ("" = the host)
  int compute_capability = 90;  // cuda: 10 * major + minor

  // limits
  int max_threads_per_block = 1024;
  int max_block_z = 64;
  int warp_size = 32;
  int64_t static_shared_bytes = 48 * 1024;  // without an opt-in
  int64_t max_shared_bytes = 227 * 1024;    // with the opt-in (dynamic shared memory)
  int64_t max_private_bytes = 512 * 1024;   // a thread's local memory
  int max_registers_per_thread = 255;
  int registers_per_sm = 65536;
  int max_threads_per_sm = 2048;

  // features
  bool async_copy = true;      // cp.async global -> shared (sm_80+)
  bool warp_shuffle = true;    // __shfl_xor_sync
  bool tensor_memory_accelerator = false;  // cp.async.bulk.tensor (sm_90+)
  std::vector<int> vector_bytes = {8, 16};  // the vector loads and stores (float2, float4)
  std::vector<MatrixInstruction> matrix_instructions;

  // The model of a CUDA architecture ("sm_80", "sm_86", "sm_89", "sm_90",
  // "sm_90a", ...); Error for a name that is not one.
  static TargetInfo cuda(const std::string& arch);
  // What Loom assumes when no device or architecture is named: sm_90's
  // limits (the largest shared memory any supported GPU gives a block).
  // (sm_90a: the H100/H200 Loom is measured on, with their arch-specific
  // wgmma; code for it runs on compute capability 9.0 only, and with a GPU
  // present Loom compiles for that GPU's architecture instead)
  static TargetInfo generic_cuda() { return cuda("sm_90a"); }
  // The LLVM CPU target and the reference interpreter run the GPU's
  // semantics, so they accept what a CUDA device of the generic model would.
  static TargetInfo cpu(const std::string& cpu_name = "");
  static TargetInfo interpreter();

  // Whether the architecture has a matrix instruction of this shape and these input types.
  const MatrixInstruction* find_matrix_instruction(int m, int n, int k, Type a) const;
  std::string str() const;  // "cuda sm_90: 1024 threads, 227 KiB shared, ..."
};

}  // namespace loom
