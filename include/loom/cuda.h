// The cuda target: CUDA C from a GeneratedKernel, compiled in-process by
// NVRTC to CUBIN, loaded and launched through the CUDA Driver API. libnvrtc
// and libcuda are loaded at run time (dlopen), so Loom builds and generates
// code anywhere; asking to compile without NVRTC, or to launch without a
// driver and GPU, raises CudaError saying which library or device is missing.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/runtime.h"

namespace loom::cuda {

// The run-time checked accesses of a printed module (loom/codegen.h's
// UnprovenAccesses): the table the bounds record's access ids index, and per
// function (launch) the argument indices whose extents follow its bounds
// record parameter (none: the function takes neither).
struct CheckedSource {
  std::vector<CheckedAccess> accesses;
  std::vector<std::vector<int>> extents_of;
};
std::string print_source(const GeneratedKernel& g, CheckedSource* checked = nullptr);

// ---- NVRTC ----
struct CompileResult {
  std::string cubin;
  std::string log;   // NVRTC/ptxas messages (ptxas -v: registers, spills)
  std::string arch;  // "sm_90"
  int registers = -1;  // -1: unknown (no ptxas report, e.g. NVRTC served the CUBIN from a cache)
  int spill_bytes = 0;
  double seconds = 0;
  bool cached = false;
  // The disk cache (loom/disk_cache.h): "loaded from DIR", "stored in DIR",
  // "not stored: WHY" or "off"; empty when served from memory.
  std::string disk_cache;
};

bool nvrtc_available(std::string* why = nullptr);
// The CUDA driver's version ("13.0"), or "none" where libcuda does not load.
std::string driver_version();
std::string nvrtc_version();
// Compiles to CUBIN for arch ("sm_90"). Results are cached in memory by the
// hash of source, arch and NVRTC version. A compile error raises CudaError
// with NVRTC's log and the offending source lines.
CompileResult compile(const std::string& source, const std::string& arch);
// The PTX of the source for arch's virtual architecture (sm_90 -> compute_90).
std::string compile_ptx(const std::string& source, const std::string& arch);

// ---- Driver API ----
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_shared_optin = 0;  // bytes of shared memory a block may opt in to
  // The architecture code is compiled for: sm_XY, and sm_90a on 9.0 devices
  // (code compiled here runs on this device only, so its arch-specific
  // features, wgmma among them, come at no cost to anything else).
  std::string arch() const {
    int cc = cc_major * 10 + cc_minor;
    return "sm_" + std::to_string(cc) + (cc == 90 ? "a" : "");
  }
};

// The target model for an architecture ("" = this machine's GPU, or the
// generic sm_90 model without one); for the GPU's own architecture, its
// measured limits (the shared memory a block may opt in to).
TargetInfo target_info(const std::string& arch = "");

// Whether libcuda loads and a GPU is present (why: the reason when not).
bool gpu_available(std::string* why = nullptr);
const DeviceInfo& device();  // device 0; CudaError when none
// Waits until the GPU has finished all work (cuCtxSynchronize); CudaError on a fault.
void synchronize();

// Device memory (RAII).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  void* ptr() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t n);
  void download(void* host, size_t n) const;

 private:
  uint64_t ptr_ = 0;
  size_t bytes_ = 0;
};

// Refuses (CudaError) a grid beyond CUDA's limits (2^31-1 x 65535 x 65535),
// naming the kernel: each launch asks, and the tuner before it measures.
void check_grid(const std::string& kernel, const LaunchDims& dims);

// A compiled kernel ready to launch: generate, print, compile (cached),
// load on first launch.
class CudaKernel {
 public:
  // arch: "" = the GPU's, or sm_90 when there is none.
  explicit CudaKernel(const LoopKernel& k, std::string arch = "");
  // One already generated for arch's target model (cuda::target_info(arch)).
  CudaKernel(GeneratedKernel g, const std::string& arch);
  ~CudaKernel();
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  const GeneratedKernel& generated() const { return gen_; }
  const std::string& source() const { return source_; }
  const CompileResult& binary() const { return bin_; }

  // Launches on device arrays (ArrayRef::data are device pointers);
  // parameters are inferred from shapes. Returns the launch geometry used
  // (a kernel with global barriers: its launches in order, and the first's).
  // stream: a CUstream (nullptr: the legacy default stream).
  LaunchDims launch(const ArgMap& device_args, void* stream = nullptr);
  // The launch itself, for callers that bound these arguments before (the
  // parameters and geometry launch() computed for the same shapes and
  // values): skips the binding and its checks.
  void launch_bound(const ArgMap& device_args, const std::map<std::string, int64_t>& params, const LaunchDims& dims,
                    void* stream = nullptr);
  // The launch path of callers that keep the arguments between launches (the
  // Python per-call path): the parameters as cuLaunchKernel takes them, one
  // 8-byte slot per argument in signature order (array pointers checked for
  // the alignment vector accesses need), and a launch from such slots, whose
  // array pointers the caller may replace (keeping that alignment). One
  // launch only: a kernel with global barriers refuses them (Error).
  std::vector<uint64_t> pack_arguments(const ArgMap& device_args, const std::map<std::string, int64_t>& params) const;
  void launch_slots(void** slot_pointers, const LaunchDims& dims, void* stream);
  // What the driver reports for the loaded function (loads it; needs a GPU).
  struct Attributes {
    int registers = -1, local_bytes = -1, max_threads_per_block = -1;
  };
  Attributes attributes();
  // Milliseconds per launch: median of `reps` timed launches after warmup.
  double time(const ArgMap& device_args, int reps = 20);
  // The same, launch i on argument set i mod n (the tuner rotates copies of
  // its inputs so that a small kernel's data is not always in L2): device
  // event times in ms, median and minimum.
  struct Timing {
    double median = 0, min = 0, max = 0;
    int reps = 0;
  };
  Timing time_each(const std::vector<ArgMap>& device_args_sets, int reps = 20);
  // Copies host arrays in, launches, copies written arrays back.
  void call_host(const ArgMap& host_args);

 private:
  void load();
  // One function per launch of a kernel with global barriers: its
  // temporaries allocated on the stream, the launches in order.
  LaunchDims launch_program(const ArgMap& args, const std::map<std::string, int64_t>& params, void* stream);
  // After launches (each: its function, 0 or a program's launch, and its
  // parameters) with run-time checked accesses: waits for them and raises
  // ArgumentError naming the first access that left its array (the bounds
  // record then reset). A program's launches are checked once, after the
  // last: a checked access outside its array touches scratch instead, so
  // the later launches run safely, and one synchronization replaces one
  // per launch.
  void check_accesses(void* stream, const std::vector<std::pair<size_t, void**>>& launched);
  GeneratedKernel gen_;
  std::string source_;
  CheckedSource checked_;
  DeviceBuffer bounds_;  // the bounds record the checked accesses write (allocated with the module)
  CompileResult bin_;
  void* module_ = nullptr;
  void* function_ = nullptr;
  int64_t shared_bytes_ = 0;  // dynamic shared memory per launch
  // a kernel with global barriers: each launch's function and dynamic shared memory
  std::vector<void*> launch_functions_;
  std::vector<int64_t> launch_shared_bytes_;
};

}  // namespace loom::cuda
