// occupancy (tuner.h): the static pruning of the tuner's CUDA candidates,
// from the target model (threads, registers and shared memory per block
// against the SM's): a block that does not fit is never launched.
#include "loom/tuner.h"

#include <algorithm>

namespace loom::tune {

double occupancy(const TargetInfo& t, int64_t threads, int registers, int64_t shared_bytes, std::string* limit) {
  if (threads <= 0) return 0;
  int64_t warps = (threads + t.warp_size - 1) / t.warp_size, rounded = warps * t.warp_size;
  auto why = [&](const std::string& s) {
    if (limit) *limit = s;
  };
  int64_t blocks = std::min<int64_t>(32, t.max_threads_per_sm / rounded);  // (32 resident blocks per SM on sm_80-sm_90)
  why(std::to_string(threads) + " threads per block");
  if (registers > 0) {
    int64_t per_block = int64_t((registers + 7) / 8 * 8) * rounded;  // (allocated per warp in units of 8 per thread)
    int64_t by_registers = t.registers_per_sm / per_block;
    if (by_registers < blocks) {
      blocks = by_registers;
      why(std::to_string(registers) + " registers x " + std::to_string(threads) + " threads = " + std::to_string(int64_t(registers) * threads) +
          " per block, of the SM's " + std::to_string(t.registers_per_sm));
    }
  }
  if (shared_bytes > 0) {
    int64_t by_shared = (t.max_shared_bytes + 1024) / (shared_bytes + 1024);  // (1 KiB reserved per block)
    if (by_shared < blocks) {
      blocks = by_shared;
      why(std::to_string(shared_bytes) + " bytes of shared memory per block, of the SM's " + std::to_string(t.max_shared_bytes + 1024));
    }
  }
  return double(std::max<int64_t>(0, blocks) * rounded) / double(t.max_threads_per_sm);
}

}  // namespace loom::tune
