// Internal to the cuda target: the Driver API entry points Loom uses, as
// function pointers filled by dlsym (driver.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loom/cuda.h"

namespace loom::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

// name in Loom, its arguments; the symbol is LOOM_CU_SYMBOL(name)
#define LOOM_CU_FUNCTIONS(X)                                                                           \
  X(CUresult, cuInit, (unsigned))                                                                      \
  X(CUresult, cuDeviceGetCount, (int*))                                                                \
  X(CUresult, cuDeviceGet, (CUdevice*, int))                                                           \
  X(CUresult, cuDeviceGetName, (char*, int, CUdevice))                                                 \
  X(CUresult, cuDeviceGetAttribute, (int*, int, CUdevice))                                             \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))                                        \
  X(CUresult, cuCtxSetCurrent, (CUcontext))                                                            \
  X(CUresult, cuCtxSynchronize, ())                                                                    \
  X(CUresult, cuMemAlloc, (CUdeviceptr*, size_t))                                                      \
  X(CUresult, cuMemFree, (CUdeviceptr))                                                                \
  X(CUresult, cuMemAllocAsync, (CUdeviceptr*, size_t, CUstream))                                     \
  X(CUresult, cuMemFreeAsync, (CUdeviceptr, CUstream))                                                 \
  X(CUresult, cuMemcpyHtoD, (CUdeviceptr, const void*, size_t))                                        \
  X(CUresult, cuMemcpyDtoH, (void*, CUdeviceptr, size_t))                                              \
  X(CUresult, cuModuleLoadData, (CUmodule*, const void*))                                              \
  X(CUresult, cuModuleUnload, (CUmodule))                                                              \
  X(CUresult, cuModuleGetFunction, (CUfunction*, CUmodule, const char*))                               \
  X(CUresult, cuFuncGetAttribute, (int*, int, CUfunction))                                             \
  X(CUresult, cuFuncSetAttribute, (CUfunction, int, int))                                              \
  X(CUresult, cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                               unsigned, CUstream, void**, void**))                                    \
  X(CUresult, cuEventCreate, (CUevent*, unsigned))                                                     \
  X(CUresult, cuEventRecord, (CUevent, CUstream))                                                      \
  X(CUresult, cuEventSynchronize, (CUevent))                                                           \
  X(CUresult, cuEventElapsedTime, (float*, CUevent, CUevent))                                          \
  X(CUresult, cuEventDestroy, (CUevent))                                                               \
  X(CUresult, cuStreamSynchronize, (CUstream))                                                         \
  X(CUresult, cuGetErrorName, (CUresult, const char**))                                                \
  X(CUresult, cuGetErrorString, (CUresult, const char**))

// The _v2 entry points of the memory functions (the unversioned ones are legacy).
#define LOOM_CU_SYMBOL(name)                                                                      \
  (std::string_view(#name) == "cuMemAlloc" || std::string_view(#name) == "cuMemFree" ||           \
           std::string_view(#name) == "cuMemcpyHtoD" || std::string_view(#name) == "cuMemcpyDtoH" || \
           std::string_view(#name) == "cuEventDestroy"                                            \
       ? #name "_v2"                                                                              \
       : #name)

// cuTensorMapEncodeTiled (CUDA 12+): the tensor maps of tma_copy tiles. Looked
// up on its own: an older driver runs every other kernel.
using EncodeTensorMapFn = CUresult (*)(void* map, int dtype, unsigned rank, void* address, const uint64_t* dims, const uint64_t* strides,
                                       const unsigned* box, const unsigned* element_strides, int interleave, int swizzle, int l2_promotion,
                                       int oob_fill);

struct DriverApi {
#define LOOM_CU_FN(ret, name, args) ret(*name) args = nullptr;
  LOOM_CU_FUNCTIONS(LOOM_CU_FN)
#undef LOOM_CU_FN
  EncodeTensorMapFn cuTensorMapEncodeTiled = nullptr;  // null: the driver lacks it
  CUcontext ctx = nullptr;
};

// The loaded driver with the primary context current; CudaError when there
// is no driver or GPU.
const DriverApi& driver_api();
// Throws CudaError naming `what` and the driver's error when rc != 0.
void check(int rc, const char* what);

}  // namespace loom::cuda
