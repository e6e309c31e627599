// The models of the CUDA architectures Loom targets (NVIDIA's CUDA C
// Programming Guide, compute capabilities: shared memory per block with the
// opt-in, cp.async from 8.0, TMA and wgmma from 9.0 (wgmma only with the
// arch-specific 9.0a), and the mma.sync shapes of the PTX ISA), the CPU
// target's and the interpreter's.
#include "loom/target_info.h"

#include <cctype>

#include "loom/error.h"

namespace loom {

namespace {

std::vector<MatrixInstruction> mma_sync(int cc) {
  std::vector<MatrixInstruction> r;
  if (cc < 80) return r;  // (sm_70/75 have other shapes; Loom's tensor-core paths start at sm_80)
  r.push_back({"mma.sync.m16n8k16.f16", 16, 8, 16, types::float32, types::float32, types::float32});
  r.back().a = r.back().b = Type(ScalarKind::Float16);
  r.push_back({"mma.sync.m16n8k16.bf16", 16, 8, 16, Type(ScalarKind::BFloat16), Type(ScalarKind::BFloat16), types::float32});
  r.push_back({"mma.sync.m16n8k8.tf32", 16, 8, 8, types::float32, types::float32, types::float32});
  r.push_back({"mma.sync.m8n8k4.f64", 8, 8, 4, types::float64, types::float64, types::float64});  // (DMMA, the FP64 tensor cores)
  if (cc >= 90)  // (Hopper's larger float64 shapes, PTX 7.8)
    for (int k : {4, 8, 16}) r.push_back({"mma.sync.m16n8k" + std::to_string(k) + ".f64", 16, 8, k, types::float64, types::float64, types::float64});
  r.push_back({"mma.sync.m16n8k32.s8", 16, 8, 32, Type(ScalarKind::Int8), Type(ScalarKind::Int8), types::int32});
  return r;
}

}  // namespace

TargetInfo TargetInfo::cuda(const std::string& arch) {
  // sm_XY or sm_XYa, XY the compute capability
  size_t digits = 3;
  while (digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[digits]))) ++digits;
  bool arch_specific = digits < arch.size() && arch.substr(digits) == "a";
  if (arch.rfind("sm_", 0) != 0 || digits == 3 || digits > 6 || (digits < arch.size() && !arch_specific))
    throw Error("'" + arch + "' is not a CUDA architecture (sm_80, sm_86, sm_89, sm_90, sm_90a, ...)");
  int cc = std::stoi(arch.substr(3, digits - 3));
  if (cc < 50) throw Error("CUDA architecture '" + arch + "' is older than any Loom generates code for (sm_50 and later)");
  TargetInfo t;
  t.kind = Cuda;
  t.arch = arch;
  t.compute_capability = cc;
  // shared memory per block with the opt-in: 227 KiB on 9.0 and 10.x, 163 KiB on 8.0 and 8.7, 99 KiB on 8.6/8.9/12.x, 64 KiB on 7.5, 96 KiB on 7.0/7.2
  if (cc == 80 || cc == 87) t.max_shared_bytes = 163 * 1024;
  else if (cc == 86 || cc == 89 || cc >= 120) t.max_shared_bytes = 99 * 1024;
  else if (cc >= 90) t.max_shared_bytes = 227 * 1024;
  else if (cc == 75) t.max_shared_bytes = 64 * 1024;
  else if (cc >= 70) t.max_shared_bytes = 96 * 1024;
  else t.max_shared_bytes = 48 * 1024;
  t.max_threads_per_sm = cc == 75 ? 1024 : cc == 86 || cc == 89 || cc >= 120 ? 1536 : 2048;
  t.async_copy = cc >= 80;
  t.tensor_memory_accelerator = cc >= 90;
  t.matrix_instructions = mma_sync(cc);
  if (cc == 90 && arch_specific) {
    // wgmma.mma_async: m64nNk16 for f16/bf16 (N a multiple of 8 up to 256), k8 for tf32; f32 accumulation
    t.matrix_instructions.push_back({"wgmma.m64n256k16.f16", 64, 256, 16, Type(ScalarKind::Float16), Type(ScalarKind::Float16), types::float32, true});
    t.matrix_instructions.push_back({"wgmma.m64n256k16.bf16", 64, 256, 16, Type(ScalarKind::BFloat16), Type(ScalarKind::BFloat16), types::float32, true});
    t.matrix_instructions.push_back({"wgmma.m64n256k8.tf32", 64, 256, 8, types::float32, types::float32, types::float32, true});
  }
  return t;
}

TargetInfo TargetInfo::cpu(const std::string& cpu_name) {
  TargetInfo t = generic_cuda();
  t.kind = Cpu;
  t.arch = cpu_name;
  return t;
}

TargetInfo TargetInfo::interpreter() {
  TargetInfo t = generic_cuda();
  t.kind = Interpreter;
  t.arch = "";
  return t;
}

const MatrixInstruction* TargetInfo::find_matrix_instruction(int m, int n, int k, Type a) const {
  for (auto& mi : matrix_instructions) {
    bool n_fits = mi.warpgroup ? n > 0 && n % 8 == 0 && n <= mi.n : mi.n == n;  // (wgmma: N a multiple of 8 up to its largest)
    if (mi.m == m && n_fits && mi.k == k && mi.a == a) return &mi;
  }
  return nullptr;
}

std::string TargetInfo::str() const {
  std::string kind_name = kind == Cuda ? "cuda" : kind == Cpu ? "cpu" : "interpreter";
  std::string s = kind_name + (arch.empty() ? "" : " " + arch) + ": " + std::to_string(max_threads_per_block) + " threads per block, " +
                  std::to_string(max_shared_bytes / 1024) + " KiB shared memory per block (" + std::to_string(static_shared_bytes / 1024) +
                  " static), " + std::to_string(max_private_bytes / 1024) + " KiB private per thread";
  if (async_copy) s += ", cp.async";
  if (tensor_memory_accelerator) s += ", TMA";
  for (auto& m : matrix_instructions) s += ", " + m.name;
  return s;
}

}  // namespace loom
