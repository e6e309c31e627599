// CUB's segmented reduction (cub::DeviceSegmentedReduce::Sum) as a peer for
// bench/gpu.py's CSR row sums: built on the GPU machine by
//   nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o libcub_segsum.so cub_segmented_sum.cu
// and called through ctypes on PyTorch's buffers and stream.
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_runtime.h>

extern "C" int cub_segmented_sum(const float* values, float* out, int segments, const int* offsets, void* scratch,
                                 size_t* scratch_bytes, void* stream) {
  cudaError_t e = cub::DeviceSegmentedReduce::Sum(scratch, *scratch_bytes, values, out, segments, offsets, offsets + 1,
                                                  static_cast<cudaStream_t>(stream));
  return int(e);
}
