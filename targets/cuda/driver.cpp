// The CUDA Driver API through dlopen("libcuda.so.1"): device discovery, the
// primary context, device memory, module loading and launches. The few
// types and entry points Loom uses are declared here, so building needs no
// CUDA headers.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string_view>

#include "driver.h"

namespace loom::cuda {

namespace {

struct Driver {
  void* lib = nullptr;
  std::string error;
  CUcontext ctx = nullptr;
  DeviceInfo info;

#define LOOM_CU_FN(ret, name, args) ret(*name) args = nullptr;
  LOOM_CU_FUNCTIONS(LOOM_CU_FN)
#undef LOOM_CU_FN

  Driver() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = "no GPU: the CUDA driver (libcuda.so.1) is not installed on this machine";
      return;
    }
    std::string missing;
#define LOOM_CU_FN(ret, name, args)                                              \
  name = reinterpret_cast<ret(*) args>(dlsym(lib, LOOM_CU_SYMBOL(name)));        \
  if (!name && missing.empty()) missing = LOOM_CU_SYMBOL(name);
    LOOM_CU_FUNCTIONS(LOOM_CU_FN)
#undef LOOM_CU_FN
    if (!missing.empty()) {
      error = "the CUDA driver lacks " + missing + " (driver too old?)";
      lib = nullptr;
      return;
    }
    int rc = cuInit(0);
    int count = 0;
    if (rc == 0) rc = cuDeviceGetCount(&count);
    if (rc != 0 || count == 0) {
      error = "no GPU: the CUDA driver found no usable device (" + (rc ? describe(rc) : std::string("0 devices")) + ")";
      lib = nullptr;
      return;
    }
    CUdevice dev = 0;
    cuDeviceGet(&dev, 0);
    char name[256] = {0};
    cuDeviceGetName(name, sizeof name, dev);
    info.name = name;
    cuDeviceGetAttribute(&info.cc_major, 75, dev);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    cuDeviceGetAttribute(&info.cc_minor, 76, dev);  // ..._MINOR
    cuDeviceGetAttribute(&info.sm_count, 16, dev);  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    cuDeviceGetAttribute(&info.max_shared_optin, 97, dev);  // ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    rc = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (rc != 0) {
      error = "cannot create a CUDA context: " + describe(rc);
      lib = nullptr;
      return;
    }
    keep_freed_memory(dev);
  }

  // The global temporaries of a kernel with global barriers come from the
  // device's default memory pool (cuMemAllocAsync) on every call. By default
  // the pool gives freed memory back at each synchronization, so the next
  // call maps fresh pages; kept (CUDA's advice for allocations that recur),
  // they are reused. Looked up on its own: an older driver works without.
  void keep_freed_memory(CUdevice dev) {
    using GetPool = CUresult (*)(void**, CUdevice);
    using SetAttr = CUresult (*)(void*, int, void*);
    auto get_pool = reinterpret_cast<GetPool>(dlsym(lib, "cuDeviceGetDefaultMemPool"));
    auto set_attr = reinterpret_cast<SetAttr>(dlsym(lib, "cuMemPoolSetAttribute"));
    void* pool = nullptr;
    if (!get_pool || !set_attr || get_pool(&pool, dev) != 0) return;
    uint64_t keep_all = UINT64_MAX;
    set_attr(pool, 4, &keep_all);  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
  }

  std::string describe(int rc) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName) cuGetErrorName(rc, &name);
    if (cuGetErrorString) cuGetErrorString(rc, &text);
    return std::string(name ? name : "CUDA error ") + (name ? "" : std::to_string(rc)) + (text ? std::string(": ") + text : "");
  }
};

Driver& driver() {
  static Driver d;
  return d;
}

}  // namespace


const DriverApi& driver_api() {
  static DriverApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    Driver& d = driver();
    if (!d.lib) return;
#define LOOM_CU_FN(ret, name, args) api.name = d.name;
    LOOM_CU_FUNCTIONS(LOOM_CU_FN)
#undef LOOM_CU_FN
    api.cuTensorMapEncodeTiled = reinterpret_cast<EncodeTensorMapFn>(dlsym(d.lib, "cuTensorMapEncodeTiled"));
    api.ctx = d.ctx;
  });
  Driver& d = driver();
  if (!d.lib) throw CudaError(d.error);
  d.cuCtxSetCurrent(d.ctx);
  return api;
}

void check(int rc, const char* what) {
  if (rc == 0) return;
  throw CudaError(std::string(what) + " failed: " + driver().describe(rc));
}

bool gpu_available(std::string* why) {
  if (driver().lib) return true;
  if (why) *why = driver().error;
  return false;
}

const DeviceInfo& device() {
  if (!driver().lib) throw CudaError(driver().error);
  return driver().info;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  const DriverApi& d = driver_api();
  check(d.cuMemAlloc(&ptr_, std::max<size_t>(bytes, 1)), "cuMemAlloc");
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && driver().lib) driver().cuMemFree(ptr_);
}

void DeviceBuffer::upload(const void* host, size_t n) {
  if (n > bytes_) throw CudaError("upload of " + std::to_string(n) + " bytes into a buffer of " + std::to_string(bytes_));
  if (n) check(driver_api().cuMemcpyHtoD(ptr_, host, n), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, size_t n) const {
  if (n > bytes_) throw CudaError("download of " + std::to_string(n) + " bytes from a buffer of " + std::to_string(bytes_));
  if (n) check(driver_api().cuMemcpyDtoH(host, ptr_, n), "cuMemcpyDtoH");
}

std::string driver_version() {
  // cuDriverGetVersion needs no cuInit and no GPU: asked apart from the Driver above
  static const std::string v = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return std::string("none");
    auto get = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuDriverGetVersion"));
    int version = 0;
    if (!get || get(&version) != 0) return std::string("unknown");
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  }();
  return v;
}

}  // namespace loom::cuda
