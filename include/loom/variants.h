// Many variants of a kernel, generated and compiled on every core: the
// tuner's inner loop (issue 29). Given N kernels, or one kernel and N
// transformation scripts, each variant is transformed, generated, printed
// and (optionally) compiled with NVRTC in worker processes forked from this
// one. Workers never open the GPU (NVRTC needs no driver), share nothing
// but the kernel they start from, and report each variant's source, binary
// and figures or its error; a worker that crashes (a bug, an isl abort)
// costs only the variant it was on, reported as failed with the signal, and
// the rest go on. Results come back in the order given.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loom/kernel.h"
#include "loom/script.h"
#include "loom/target_info.h"

namespace loom {

struct VariantOptions {
  int workers = 0;           // processes; 0: one per core
  bool compile = true;       // NVRTC to CUBIN (else CUDA C only)
  std::string arch;          // "" : the GPU's, or sm_90 without one
  // The target model to generate for, given: the driver is not asked (a
  // tuner whose process must not initialize CUDA before it forks passes the
  // model its measuring worker reported).
  std::optional<TargetInfo> target;
  // Seconds one variant may take to generate and compile (0: no limit): a
  // worker past it is killed, the variant reported stopped, and the others
  // go on (NVRTC can take minutes over a fully unrolled register tile).
  double seconds_per_variant = 0;
  // Sizes at which each variant's kernel features (loom/statistics.h,
  // kernel_features) are computed; empty: none.
  std::map<std::string, int64_t> feature_parameters;
};

struct VariantResult {
  bool ok = false;
  std::string error;         // why not (the transformation's or compiler's message)
  bool stopped = false;      // not refused: its worker died or ran out of time
  uint64_t hash = 0;         // structural hash of the transformed kernel
  std::string cuda;          // the CUDA C
  std::string cubin;         // with compile
  int registers = -1;        // per thread (ptxas), with compile
  int spill_bytes = 0;
  int64_t shared_bytes = 0;  // per block
  int64_t threads = 0;       // per block (the largest launch's)
  double generate_seconds = 0, compile_seconds = 0;
  std::map<std::string, double> features;  // with VariantOptions::feature_parameters
};

// Each script applied to `k`, then generated (and compiled), in parallel.
std::vector<VariantResult> compile_variants(const LoopKernel& k, const std::vector<std::vector<TransformStep>>& scripts,
                                            const VariantOptions& options = {});
// Variant i is make(i) (run in a worker), generated (and compiled), for i < n.
std::vector<VariantResult> compile_variants(size_t n, const std::function<LoopKernel(size_t)>& make, const VariantOptions& options = {});
// Each kernel generated (and compiled) as it is, in parallel.
std::vector<VariantResult> compile_variants(const std::vector<LoopKernel>& kernels, const VariantOptions& options = {});

}  // namespace loom
