// print_cuda_source: CUDA C for a GeneratedKernel. One extern "C" __global__
// function with __restrict__ pointers (const where never written),
// __launch_bounds__ from the block size, hardware inames bound to
// blockIdx/threadIdx, temporaries declared at the top, multi-dimensional
// subscripts flattened in row-major order, and Python semantics for // and %
// through small inline helpers. Needs no headers, so NVRTC compiles it as is,
// except for float16/bfloat16: those are stored as __half/__nv_bfloat16
// (cuda_fp16.h/cuda_bf16.h, found in the toolkit by compile()) and every
// operation on them is computed in float and rounded once, which is what the
// interpreter and the CPU target do (float carries enough bits that rounding
// twice, double to float to half, never differs from rounding once).
// Tiles the tensor memory accelerator fills (GeneratedKernel::bulk_copies)
// take their tensor maps as trailing __grid_constant__ parameters and their
// mbarriers after the temporaries; one thread issues each fill as one bulk
// copy in place of the fill's own loops, and the pipelined loop's readers
// wait on the copy they read before their first statement that reads it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "loom/cuda.h"
#include "loom/functions.h"
#include "loom/preprocess.h"

namespace loom::cuda {

namespace {

// The inline helpers the printed code may call, each printed only where the
// kernel calls it (NVRTC parses less, and a kernel's code says only what it
// does: loopy's test_assume asserts that its code has no `if`).
struct Helper {
  const char* name;
  const char* text;
};
const Helper kHelpers[] = {
    {"loom_report", R"(// An access Loom cannot prove in bounds (a[idx[i]], a loop bounded by a value
// read from memory): outside [0, extent) it reads or writes the bounds
// record's scratch words instead, and the thread keeps the first such access
// and index in registers (selects, no branch: loads still overlap); at its
// end the thread reports them in the record, and the host raises the error
// after the launch.
__device__ __forceinline__ bool loom_in_bounds(long long off, long long extent, int id, int &bad, long long &bad_index) {
  bool ok = (unsigned long long)off < (unsigned long long)extent;
  bad_index = ok || bad >= 0 ? bad_index : off;
  bad = ok || bad >= 0 ? bad : id;
  return ok;
}
template <class T> __device__ __forceinline__ T *loom_checked(T *p, long long off, long long extent, int id, long long *rec, int &bad,
                                                               long long &bad_index) {
  return loom_in_bounds(off, extent, id, bad, bad_index) ? p + off : reinterpret_cast<T *>(rec + 4);
}
// The same for a value read (the right-hand side): an unconditional load
// from the array or from zeros nothing writes (a branch around the load, or
// an address that may be the record the kernel writes, keeps the compiler
// from overlapping the loads).
__device__ const long long loom_read_scratch[4] = {0, 0, 0, 0};
template <class T> __device__ __forceinline__ T loom_checked_load(const T *__restrict__ p, long long off, long long extent, int id, int &bad,
                                                                   long long &bad_index) {
  return *(loom_in_bounds(off, extent, id, bad, bad_index) ? p + off : reinterpret_cast<const T *>(loom_read_scratch));
}
__device__ __forceinline__ void loom_report(long long *rec, int bad, long long bad_index) {
  if (bad >= 0 && atomicCAS(reinterpret_cast<unsigned long long *>(rec), 0ull, 1ull) == 0ull) {
    rec[1] = bad;
    rec[2] = bad_index;
  }
}
)"},
    {"loom_floordiv", R"(// Python semantics for // on integers (loopy's floor division)
template <class T> __device__ __forceinline__ T loom_floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
)"},
    {"loom_mod", R"(// Python semantics for % on integers (loopy's modulo)
template <class T> __device__ __forceinline__ T loom_mod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)"},
    {"loom_warp_sum", R"(// Reductions across `width` lanes of a warp (butterfly: every lane gets the result)
template <class T> __device__ __forceinline__ T loom_warp_sum(T v, int width, unsigned mask) {
  for (int o = width / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o, width);
  return v;
}
)"},
    {"loom_warp_product", R"(template <class T> __device__ __forceinline__ T loom_warp_product(T v, int width, unsigned mask) {
  for (int o = width / 2; o > 0; o >>= 1) v *= __shfl_xor_sync(mask, v, o, width);
  return v;
}
)"},
    {"loom_warp_max", R"(template <class T> __device__ __forceinline__ T loom_warp_max(T v, int width, unsigned mask) {
  for (int o = width / 2; o > 0; o >>= 1) { T w = __shfl_xor_sync(mask, v, o, width); v = w > v ? w : v; }
  return v;
}
)"},
    {"loom_warp_min", R"(template <class T> __device__ __forceinline__ T loom_warp_min(T v, int width, unsigned mask) {
  for (int o = width / 2; o > 0; o >>= 1) { T w = __shfl_xor_sync(mask, v, o, width); v = w < v ? w : v; }
  return v;
}
)"},
    {"loom_cvt_sat", R"(// Float to integer, as cvt.rzi does and every Loom target agrees: toward
// zero, clamped to [lo, hi] (T's range), NaN to 0 (a C++ cast leaves those undefined)
template <class T, class F> __device__ __forceinline__ T loom_cvt_sat(F x, T lo, T hi) {
  return x != x ? T(0) : x <= F(lo) ? lo : x >= F(hi) ? hi : T(x);
}
)"},
    {"loom_pack2", R"(// Two 16-bit values in one 32-bit register, lo in the low half (a matrix fragment's unit)
template <class T> __device__ __forceinline__ unsigned loom_pack2(T lo, T hi) {
  return unsigned(*reinterpret_cast<unsigned short *>(&lo)) | (unsigned(*reinterpret_cast<unsigned short *>(&hi)) << 16);
}
)"},
    {"loom_mma_m16n8k16_bf16", R"(// A warp's D = A B + D on the tensor cores: m16n8k16, bfloat16 operands, float32 accumulator (sm_80+)
__device__ __forceinline__ void loom_mma_m16n8k16_bf16(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1,
                                                       unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
)"},
    {"loom_mma_m16n8k16_f16", R"(// A warp's D = A B + D on the tensor cores: m16n8k16, float16 operands, float32 accumulator (sm_80+)
__device__ __forceinline__ void loom_mma_m16n8k16_f16(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1,
                                                      unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
)"},
    {"loom_swizzle128", R"(// The element a swizzled temporary keeps at flat offset o: its 16-byte pieces XORed
// within each 128-byte row by the row's place in its 1024-byte block (Swizzle<3,4,3>)
template <int B, class T> __device__ __forceinline__ T loom_swizzle128(T o) {
  T b = o * B;
  return (b ^ ((b >> 3) & 0x70)) / B;
}
)"},
    {"loom_wgmma_desc", R"(// A wgmma operand's shared-memory descriptor (sm_90a): the tile's address, the strides of its
// layout in bytes, and its swizzle (mode 0: none; 1: 128 bytes, the tile's 1024-byte blocks aligned)
__device__ __forceinline__ unsigned long long loom_wgmma_desc(const void *tile, unsigned lbo, unsigned sbo, unsigned mode) {
  unsigned long long a = (unsigned long long)((static_cast<unsigned>(__cvta_generic_to_shared(tile)) & 0x3FFFF) >> 4);
  return a | ((unsigned long long)(lbo >> 4) << 16) | ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)mode << 62);
}
)"},
    {"loom_wgmma_begin", R"(// Before a warpgroup's run of wgmma: the tiles written through the generic proxy become
// visible to the tensor cores' reads, and the accumulators' registers are fenced
__device__ __forceinline__ void loom_wgmma_begin() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
)"},
    {"loom_wgmma_end", R"(// After a warpgroup's run of wgmma: commit them as one group and wait for it
__device__ __forceinline__ void loom_wgmma_end() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
)"},
    {"loom_wgmma_end_but_one", R"(// At the end of a pipelined loop's iteration: commit the warpgroup's run and wait for the
// older groups only, so this one runs on while the next iteration starts
__device__ __forceinline__ void loom_wgmma_end_but_one() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
}
)"},
    {"loom_wgmma_wait_all", R"(// After a pipelined loop: wait for the warpgroup's last group of wgmma
__device__ __forceinline__ void loom_wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
)"},
    {"loom_tma_init", R"(// Tiles the tensor memory accelerator fills (tma_copy): the tensor map the host makes at
// launch (a kernel parameter), and one mbarrier per copy of a tile, completed by its bulk copy
struct __align__(64) loom_tensor_map { unsigned long long opaque[16]; };
__device__ __forceinline__ void loom_tma_init(unsigned long long *bars, int n) {
#if __CUDA_ARCH__ >= 900
  for (int i = 0; i < n; ++i)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bars + i))) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
)"},
    {"loom_tma_load", R"(// A bulk tensor copy of a box of an array into a tile, issued where `issue` holds (one
// thread): the mbarrier expects the box's bytes and completes when they have arrived
// (zeros where the box leaves the array); the box's first element, the array's last axis
// first. Predicated rather than branched around: a branch between a warpgroup's wgmma
// groups in flight makes ptxas serialize them.
template <int R> __device__ __forceinline__ void loom_tma_load(bool issue, unsigned long long *bar, unsigned bytes, const loom_tensor_map *map,
                                                               void *dst, int c0, int c1 = 0, int c2 = 0, int c3 = 0, int c4 = 0) {
#if __CUDA_ARCH__ >= 900
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar)), d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  unsigned long long m = reinterpret_cast<unsigned long long>(map);
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n}\n"
               :: "r"(b), "r"(bytes), "r"(d), "l"(m), "r"(int(issue)) : "memory");
  if (R == 1)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "@p cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];\n}\n"
                 :: "r"(d), "l"(m), "r"(c0), "r"(b), "r"(int(issue)) : "memory");
  else if (R == 2)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n"
                 "@p cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n}\n"
                 :: "r"(d), "l"(m), "r"(c0), "r"(c1), "r"(b), "r"(int(issue)) : "memory");
  else if (R == 3)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "@p cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n}\n"
                 :: "r"(d), "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(b), "r"(int(issue)) : "memory");
  else if (R == 4)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %7, 0;\n"
                 "@p cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n}\n"
                 :: "r"(d), "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(b), "r"(int(issue)) : "memory");
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %8, 0;\n"
                 "@p cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n}\n"
                 :: "r"(d), "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(b), "r"(int(issue)) : "memory");
#endif
}
)"},
    {"loom_tma_wait", R"(// Waits until the mbarrier's phase of this parity has completed: the tile's copy has arrived
__device__ __forceinline__ void loom_tma_wait(unsigned long long *bar, int parity) {
#if __CUDA_ARCH__ >= 900
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar)), done = 0;
  while (!done)
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(b), "r"(parity) : "memory");
#endif
}
)"},
    {"loom_ldmatrix_x4", R"(// Four 8x8 matrices of 16-bit values from shared memory, a warp's A fragment (each lane names one row)
__device__ __forceinline__ void loom_ldmatrix_x4(const void *row, unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3) {
  unsigned p = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p));
}
)"},
    {"loom_ldmatrix_x2_trans", R"(// Two 8x8 matrices of 16-bit values from shared memory, transposed: a B fragment stored by rows of k
__device__ __forceinline__ void loom_ldmatrix_x2_trans(const void *row, unsigned &r0, unsigned &r1) {
  unsigned p = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(p));
}
)"},
    {"loom_cp_async_wait_pending", R"(// A pipeline's barrier (double_buffer with stages > 2): this iteration's
// copies become one group, and all but the newest N groups must have arrived.
template <int N> __device__ __forceinline__ void loom_cp_async_wait_pending() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#endif
}
)"},
    {"loom_round_tf32", R"(// To TF32 (10-bit mantissa), nearest with ties away from zero, as cvt.rna.tf32.f32 does
__device__ __forceinline__ float loom_round_tf32(float x) {
  unsigned u = __float_as_uint(x);
  return (u & 0x7f800000u) == 0x7f800000u ? x : __uint_as_float((u + 0x1000u) & 0xffffe000u);
}
)"},
    {"loom_trunc_tf32", R"(// To TF32 (10-bit mantissa) toward zero: the 13 low bits dropped, as the warpgroup's tensor cores read float32
__device__ __forceinline__ float loom_trunc_tf32(float x) {
  unsigned u = __float_as_uint(x);
  return (u & 0x7f800000u) == 0x7f800000u ? x : __uint_as_float(u & 0xffffe000u);
}
)"},
    {"loom_mma_m16n8k8_tf32", R"(// A warp's D = A B + D on the tensor cores: m16n8k8, TF32 operands, float32 accumulator (sm_80+)
__device__ __forceinline__ void loom_mma_m16n8k8_tf32(float &d0, float &d1, float &d2, float &d3, unsigned a0, unsigned a1,
                                                      unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
)"},
    {"loom_mma_m8n8k4_f64", R"(// A warp's D = A B + D on the FP64 tensor cores: m8n8k4, float64 operands and accumulator (sm_80+)
// (not volatile: it reads registers only, so loads may be shared and moved across it)
__device__ __forceinline__ void loom_mma_m8n8k4_f64(double &d0, double &d1, double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n" : "+d"(d0), "+d"(d1) : "d"(a), "d"(b));
}
)"},
    {"loom_mma_m16n8k4_f64", R"(// m16n8k4 on the FP64 tensor cores (sm_90)
__device__ __forceinline__ void loom_mma_m16n8k4_f64(double &d0, double &d1, double &d2, double &d3, double a0, double a1, double b0) {
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3) : "d"(a0), "d"(a1), "d"(b0));
}
)"},
    {"loom_mma_m16n8k8_f64", R"(// m16n8k8 on the FP64 tensor cores (sm_90)
__device__ __forceinline__ void loom_mma_m16n8k8_f64(double &d0, double &d1, double &d2, double &d3, double a0, double a1, double a2,
                                                     double a3, double b0, double b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3) : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
}
)"},
    {"loom_mma_m16n8k16_f64", R"(// m16n8k16 on the FP64 tensor cores (sm_90)
__device__ __forceinline__ void loom_mma_m16n8k16_f64(double &d0, double &d1, double &d2, double &d3, double a0, double a1, double a2,
                                                      double a3, double a4, double a5, double a6, double a7, double b0, double b1,
                                                      double b2, double b3) {
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3)
      : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(a4), "d"(a5), "d"(a6), "d"(a7), "d"(b0), "d"(b1), "d"(b2), "d"(b3));
}
)"},
    {"loom_ipow", R"(template <class T> __device__ __forceinline__ T loom_ipow(T a, T b) {
  T r = 1;
  for (; b > 0; b >>= 1, a *= a)
    if (b & 1) r *= a;
  return r;
}
)"},
};

// The helpers `code` calls, in their order above.
std::string helpers_for(const std::string& code) {
  std::string out;
  for (auto& h : kHelpers)
    if (code.find(std::string(h.name) + "(") != std::string::npos || code.find(std::string(h.name) + "<") != std::string::npos) out += h.text;
  return out.empty() ? out : out + "\n";
}

// Global to shared memory copies that do not wait for the data (cp.async,
// sm_80+; double_buffer's fills), and the wait every barrier of such a kernel
// does first. Older architectures copy through registers.
const char* kAsyncPrelude = R"(// Asynchronous copies global -> shared (cp.async on sm_80+)
template <int N> __device__ __forceinline__ void loom_cp_async(void *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(d), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" :: "r"(d), "l"(src), "n"(N) : "memory");
#else
  if (N == 16) *static_cast<int4 *>(dst) = *static_cast<const int4 *>(src);
  else if (N == 8) *static_cast<int2 *>(dst) = *static_cast<const int2 *>(src);
  else *static_cast<int *>(dst) = *static_cast<const int *>(src);
#endif
}
// The zero-fill form: copies N bytes when `full`, else writes N zero bytes
// and reads nothing (a prefetch's fill_value=0 where the box leaves the array).
template <int N> __device__ __forceinline__ void loom_cp_async_zfill(void *dst, const void *src, bool full) {
#if __CUDA_ARCH__ >= 800
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  int n = full ? N : 0;
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(n) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" :: "r"(d), "l"(src), "n"(N), "r"(n) : "memory");
#else
  if (N == 16) *static_cast<int4 *>(dst) = full ? *static_cast<const int4 *>(src) : int4{0, 0, 0, 0};
  else if (N == 8) *static_cast<int2 *>(dst) = full ? *static_cast<const int2 *>(src) : int2{0, 0};
  else *static_cast<int *>(dst) = full ? *static_cast<const int *>(src) : 0;
#endif
}
__device__ __forceinline__ void loom_cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
)";

// The range of an integer type as C literals (loom_cvt_sat compares in the
// float type, where hi rounds to the first value beyond the range or is exact)
std::pair<std::string, std::string> integer_range(Type t) {
  switch (t.kind) {
    case ScalarKind::Int8: return {"-128", "127"};
    case ScalarKind::Int16: return {"-32768", "32767"};
    case ScalarKind::Int32: return {"(-2147483647 - 1)", "2147483647"};
    case ScalarKind::Int64: return {"(-9223372036854775807LL - 1)", "9223372036854775807LL"};
    case ScalarKind::UInt8: return {"0", "255"};
    case ScalarKind::UInt16: return {"0", "65535"};
    case ScalarKind::UInt32: return {"0u", "4294967295u"};
    default: return {"0ull", "18446744073709551615ull"};
  }
}

std::string c_type(Type t, const std::string& context) {
  if (t.lanes != 1) throw KernelError(context + ": vector types are not supported by the cuda target yet");
  switch (t.kind) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int8: return "signed char";
    case ScalarKind::Int16: return "short";
    case ScalarKind::Int32: return "int";
    case ScalarKind::Int64: return "long long";
    case ScalarKind::UInt8: return "unsigned char";
    case ScalarKind::UInt16: return "unsigned short";
    case ScalarKind::UInt32: return "unsigned int";
    case ScalarKind::UInt64: return "unsigned long long";
    case ScalarKind::Float32: return "float";
    case ScalarKind::Float64: return "double";
    case ScalarKind::Float16: return "__half";
    case ScalarKind::BFloat16: return "__nv_bfloat16";
    case ScalarKind::Unknown: break;
  }
  throw KernelError(context + ": untyped value (internal error)");
}

bool is_half(Type t) { return t.kind == ScalarKind::Float16 || t.kind == ScalarKind::BFloat16; }

// A float expression rounded to a 16-bit float type.
std::string round_to(Type t, const std::string& float_expr) {
  return std::string(t.kind == ScalarKind::Float16 ? "__float2half_rn(" : "__float2bfloat16_rn(") + float_expr + ")";
}

std::string float_literal(double v, Type t) {
  if (is_half(t)) return round_to(t, float_literal(v, types::float32));
  bool f32 = t.kind == ScalarKind::Float32;
  if (std::isnan(v)) return f32 ? "__int_as_float(0x7fffffff)" : "__longlong_as_double(0x7ff8000000000000ULL)";
  if (std::isinf(v)) {
    if (f32) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
    return v > 0 ? "__longlong_as_double(0x7ff0000000000000ULL)" : "__longlong_as_double(0xfff0000000000000ULL)";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return f32 ? s + "f" : s;
}

std::string int_literal(int64_t v, Type t) {
  if (t.is_bool()) return v ? "true" : "false";
  if (t.bits() == 64) {
    if (!t.is_signed_int()) return std::to_string(uint64_t(v)) + "ULL";
    if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
    return std::to_string(v) + "LL";
  }
  if (!t.is_signed_int()) return std::to_string(uint64_t(v) & ((uint64_t(1) << t.bits()) - 1)) + "U";
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  std::string s = std::to_string(v);
  return t.kind == ScalarKind::Int32 ? s : "((" + c_type(t, "") + ")" + s + ")";
}

int c_precedence(const Expr& e) {
  if (auto b = e.as<Binary>()) {
    switch (b->op) {
      case BinOp::Or: return 1;
      case BinOp::And: return 2;
      case BinOp::BitOr: return 3;
      case BinOp::BitXor: return 4;
      case BinOp::BitAnd: return 5;
      case BinOp::Eq: case BinOp::Ne: return 6;
      case BinOp::Lt: case BinOp::Le: case BinOp::Gt: case BinOp::Ge: return 7;
      case BinOp::Shl: case BinOp::Shr: return 8;
      case BinOp::Add: case BinOp::Sub: return 9;
      case BinOp::Mul: case BinOp::Div: case BinOp::TruncDiv: case BinOp::TruncRem: return 10;
      default: return 12;  // printed as calls
    }
  }
  if (e.as<Unary>() || e.as<Cast>()) return 11;
  if (auto i = e.as<IntImm>()) return i->value < 0 ? 11 : 12;
  if (auto f = e.as<FloatImm>()) return f->value < 0 ? 11 : 12;
  if (e.as<Select>()) return 0;
  return 12;
}

class Printer {
 public:
  // checked: the module's table of run-time checked accesses (shared by its functions; never null)
  Printer(const GeneratedKernel& g, CheckedSource* checked) : g_(g), k_(g.kernel), unproven_(g), checked_(checked) {
    for (auto& insn : k_.instructions) has_async_ |= insn.async_copy && !g_.bulk_fill(insn.id);  // (every barrier then waits for the copies)
  }

  // group_blocks: the launch is one-dimensional (CudaKernel launches
  // g.0 * g.1 blocks along x); block p takes (loom_bx, loom_by) so that
  // consecutive blocks walk `group` values of g.1 for each value of g.0 (the
  // last group of g.1 may be shorter: Triton's GROUP_SIZE_M arithmetic).
  std::string block_order() {
    if (!(g_.grid[2].as<IntImm>() && g_.grid[2].as<IntImm>()->value == 1))
      throw KernelError("kernel '" + k_.name + "': group_blocks orders a grid of g.0 and g.1; this kernel also has g.2 (join it into g.0 or g.1)");
    std::string it = c_type(k_.options.index_dtype, "");
    std::ostringstream os;
    os << "  // blocks in groups of " << k_.options.block_group << " along g.1 (group_blocks): neighbours share tiles in L2\n";
    os << "  " << it << " const loom_gx = " << expr(simplify(g_.grid[0]), 0) << ", loom_gy = " << expr(simplify(g_.grid[1]), 0) << ";\n";
    // (a group of at most loom_gy rows: the span stays within the launch's gx * gy blocks, which fit the index type)
    os << "  " << it << " const loom_span = (loom_gy < " << k_.options.block_group << " ? loom_gy : " << k_.options.block_group
       << ") * loom_gx, loom_first = " << it << "(blockIdx.x) / loom_span * " << k_.options.block_group << ";\n";
    os << "  " << it << " const loom_rows = loom_gy - loom_first < " << k_.options.block_group << " ? loom_gy - loom_first : "
       << k_.options.block_group << ";\n";
    os << "  " << it << " const loom_by = loom_first + " << it << "(blockIdx.x) % loom_span % loom_rows, loom_bx = " << it
       << "(blockIdx.x) % loom_span / loom_rows;\n";
    return os.str();
  }

  // The kernel function (print_source puts the prelude and headers before it).
  std::string function() {
    std::ostringstream os;
    os << "extern \"C\" __global__ void __launch_bounds__(" << g_.threads_per_block() << ") " << k_.name << "(";
    bool first = true;
    std::set<std::string> written;  // (one pass: is_written per argument would be quadratic)
    for (auto& insn : k_.instructions)
      if (insn.kind == Instruction::Assign) written.insert(insn.assignee_name());
    for (auto& a : k_.arguments) {
      os << (first ? "" : ", ");
      first = false;
      std::string t = c_type(a.dtype, "argument '" + a.name + "'");
      if (a.kind == Argument::Array) os << t << (written.count(a.name) ? "" : " const") << " *__restrict__ " << a.name;
      else os << t << " const " << a.name;
    }
    os << kCheckedParams << ")\n{\n";
    static const char* axes = "xyz";
    const bool grouped = k_.options.block_group > 1 && std::any_of(g_.hardware_inames.begin(), g_.hardware_inames.end(),
                                                                   [](auto& h) { return h.tag.kind == InameTag::Group; });
    if (grouped) os << block_order();
    for (auto& h : g_.hardware_inames) {
      os << "  " << c_type(k_.options.index_dtype, "") << " const " << h.name << " = ";
      if (grouped && h.tag.kind == InameTag::Group) os << (h.tag.axis == 0 ? "loom_bx" : "loom_by");
      else os << (h.tag.kind == InameTag::Group ? "blockIdx." : "threadIdx.") << axes[h.tag.axis];
      if (!(h.lower.as<IntImm>() && h.lower.as<IntImm>()->value == 0)) os << " + " << expr(h.lower, 10);
      os << ";\n";
    }
    // above 48 KiB, local memory is one dynamic allocation carved into the
    // temporaries (16-byte aligned); CudaKernel opts in and passes its size
    bool dynamic = g_.local_bytes() > g_.target.static_shared_bytes;
    int64_t align = 16;
    for (auto& [n, t] : k_.temporaries) align = std::max(align, t.local_alignment());
    if (dynamic) os << "  extern __shared__ __align__(" << align << ") unsigned char loom_shared[];\n";
    int64_t offset = 0;
    for (auto& [n, t] : k_.temporaries) {
      std::string ct = c_type(t.dtype, "temporary '" + n + "'");
      if (dynamic && t.space == AddressSpace::Local) {
        int64_t elems = 1;
        for (auto& d : t.shape) elems *= eval_int(d, {});
        offset = (offset + t.local_alignment() - 1) / t.local_alignment() * t.local_alignment();
        if (t.shape.empty())  // a scalar reads and writes by name: a reference
          os << "  " << ct << " &" << n << " = *reinterpret_cast<" << ct << " *>(loom_shared + " << offset << ");\n";
        else
          os << "  " << ct << " *const " << n << " = reinterpret_cast<" << ct << " *>(loom_shared + " << offset << ");\n";
        offset += t.local_size(elems);
        continue;
      }
      // (16-byte aligned: vector accesses of local memory rely on it)
      os << "  " << (t.space == AddressSpace::Local ? "__shared__ __align__(" + std::to_string(t.local_alignment()) + ") " : "") << ct << " " << n;
      if (!t.shape.empty()) {
        int64_t size = 1;
        for (auto& d : t.shape) {
          try {
            size *= eval_int(d, {});
          } catch (const Error&) {
            throw KernelError("kernel '" + k_.name + "': temporary '" + n + "' needs a constant shape, got " + d.str());
          }
        }
        if (t.space == AddressSpace::Local) size = t.local_size(size) / std::max(1, t.dtype.bytes());  // (a swizzled one: whole blocks)
        os << "[" << size << "]";
      }
      os << ";\n";
    }
    if (int64_t n = g_.bulk_barriers()) {  // (after the temporaries, as local_bytes counts them)
      if (dynamic)
        os << "  unsigned long long *const loom_tma_bar = reinterpret_cast<unsigned long long *>(loom_shared + " << (offset + 7) / 8 * 8 << ");\n";
      else
        os << "  __shared__ __align__(8) unsigned long long loom_tma_bar[" << n << "];\n";
      os << "  if ((threadIdx.x | threadIdx.y | threadIdx.z) == 0) loom_tma_init(loom_tma_bar, " << n << ");\n  __syncthreads();\n";
    }
    std::ostringstream body;
    stmt(body, g_.body, 1);
    end_wgmma_run(body, 1);
    if (!checked_arrays_.empty()) os << "  int loom_bad = -1;  // the first checked access that left its array, and its index\n  long long loom_bad_index = 0;\n";
    os << body.str();
    if (!checked_arrays_.empty()) os << "  loom_report(loom_bounds, loom_bad, loom_bad_index);\n";
    os << "}\n";
    // the bounds record and the extents of the arrays whose accesses are checked, once the body says which
    std::string code = os.str(), extra;
    std::vector<int> extents;
    if (!checked_arrays_.empty()) {
      extra = ", long long *__restrict__ loom_bounds";
      for (int a : checked_arrays_) {
        extra += ", long long const loom_extent_" + k_.arguments[size_t(a)].name;
        extents.push_back(a);
      }
    }
    for (auto& c : g_.bulk_copies) extra += ", const __grid_constant__ loom_tensor_map loom_tmap_" + c.temporary;
    code.replace(code.find(kCheckedParams), std::string(kCheckedParams).size(), extra);
    checked_->extents_of.push_back(extents);
    return code;
  }

 private:
  std::string call(const std::string& fn, const std::vector<Expr>& args) {
    std::string s = fn + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + value(args[i], 0);
    return s + ")";
  }

  // e as an operand of arithmetic: 16-bit floats widened to float.
  std::string value(const Expr& e, int min_prec) {
    if (is_half(e.type())) return min_prec > 11 ? "((float)" + expr(e, 11) + ")" : "(float)" + expr(e, 11);
    return expr(e, min_prec);
  }

  std::string math_name(const std::string& name, Type t) {
    if (name == "round_tf32" || name == "trunc_tf32") return "loom_" + name;
    bool f32 = t.kind == ScalarKind::Float32 || is_half(t);  // 16-bit floats compute in float
    if (!t.is_float()) {
      if (name == "abs" || name == "fabs") return t.bits() == 64 ? "llabs" : "abs";
      return name;  // min, max: CUDA's integer overloads
    }
    std::string n = name;
    if (n == "abs") n = "fabs";
    if (n == "min") n = "fmin";
    if (n == "max") n = "fmax";
    return f32 ? n + "f" : n;
  }

  std::string expr(const Expr& e, int min_prec) {
    std::string s = expr_raw(e);
    return c_precedence(e) < min_prec ? "(" + s + ")" : s;
  }

  std::string expr_raw(const Expr& e) {
    // a 16-bit float result of arithmetic: computed in float, rounded once
    if (is_half(e.type()) && (e.as<Binary>() || e.as<Unary>() || e.as<Call>()))
      return round_to(e.type(), float_expr_raw(e));
    if (auto c = e.as<Cast>(); c && is_half(e.type()) && !(c->value.type() == e.type()))
      return round_to(e.type(), "(float)" + value(c->value, 11));
    return float_expr_raw(e);
  }

  std::string float_expr_raw(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Int: return int_literal(e.as<IntImm>()->value, e.type());
      case ExprKind::Float: return float_literal(e.as<FloatImm>()->value, e.type());
      case ExprKind::Var: return e.as<Var>()->name;
      case ExprKind::Subscript: {
        auto s = e.as<Subscript>();
        if (int arg = unproven_.argument(*s, current_insn_); arg >= 0) {
          checked_arrays_.insert(arg);
          size_t id = 0;
          while (id < checked_->accesses.size() &&
                 !(checked_->accesses[id].instruction == current_insn_ && checked_->accesses[id].array == s->name))
            ++id;
          if (id == checked_->accesses.size()) checked_->accesses.push_back({current_insn_, s->name});
          std::string at = s->name + ", " + expr(k_.flat_index(*s), 0) + ", loom_extent_" + s->name + ", " + std::to_string(id);
          return value_context_ ? "loom_checked_load(" + at + ", loom_bad, loom_bad_index)"
                                : "(*loom_checked(" + at + ", loom_bounds, loom_bad, loom_bad_index))";
        }
        if (const Temporary* t = k_.find_temporary(s->name); t && t->swizzle_bytes)
          return s->name + "[loom_swizzle128<" + std::to_string(t->dtype.bytes()) + ">(" + expr(k_.flat_index(*s), 0) + ")]";
        return s->name + "[" + expr(k_.flat_index(*s), 0) + "]";
      }
      case ExprKind::Unary: {
        auto u = e.as<Unary>();
        const char* op = u->op == UnOp::Neg ? "-" : u->op == UnOp::Not ? "!" : "~";
        return op + value(u->a, 11);
      }
      case ExprKind::Cast: {
        const Expr& v = e.as<Cast>()->value;
        if (e.type().is_bool()) return "(" + value(v, 7) + " != 0)";
        if (is_half(v.type()) && e.type().kind == ScalarKind::Float32) return value(v, 11);
        if (v.type().is_float() && e.type().is_int() && e.type().lanes == 1) {
          auto [lo, hi] = integer_range(e.type());
          return "loom_cvt_sat<" + c_type(e.type(), "cast") + ">(" + (is_half(v.type()) ? "(float)" + value(v, 11) : expr(v, 0)) +
                 ", " + lo + ", " + hi + ")";
        }
        return "(" + c_type(e.type(), "cast") + ")" + value(v, 11);
      }
      case ExprKind::Select: {
        auto s = e.as<Select>();
        return expr(s->cond, 1) + " ? " + expr(s->t, 1) + " : " + expr(s->f, 1);
      }
      case ExprKind::WarpReduce: {
        {
          auto w = e.as<WarpReduce>();
          // The lanes taking part: a whole warp, or (fewer than a warp's lanes on l.0,
          // the block's x extent) the group of `width` lanes this thread is in,
          // which other axes' guards enable or disable together.
          int64_t threads = g_.threads_per_block();
          const int warp = g_.target.warp_size;
          std::string mask;
          if (w->width >= warp || (g_.block[1] == 1 && g_.block[2] == 1)) {
            int64_t lanes = std::min<int64_t>(threads, warp);  // (a whole warp's mask: every lane of its width)
            mask = lanes >= 32 ? "0xffffffffu" : std::to_string((1ull << lanes) - 1) + "u";
          } else {
            std::string linear = "threadIdx.x + " + std::to_string(g_.block[0]) + " * (threadIdx.y + " + std::to_string(g_.block[1]) +
                                 " * threadIdx.z)";
            mask = "(" + std::to_string((1ull << w->width) - 1) + "u << ((" + linear + ") & " + std::to_string(warp - w->width) + "))";
          }
          return std::string("loom_warp_") + to_string(w->op) + "(" + expr(w->value, 0) + ", " + std::to_string(w->width) +
                 ", " + mask + ")";
        }
      }
      case ExprKind::Call: {
        auto c = e.as<Call>();
        return call(math_name(c->name, e.type()), c->args);
      }
      case ExprKind::Binary: {
        auto b = e.as<Binary>();
        Type t = b->a.type();
        bool fl = t.is_float();
        switch (b->op) {
          case BinOp::FloorDiv:
            if (fl) return math_name("floor", t) + "(" + value(b->a, 10) + " / " + value(b->b, 11) + ")";
            return call("loom_floordiv", {b->a, b->b});
          case BinOp::Mod:
            if (fl) return value(b->a, 9) + " - " + value(b->b, 10) + " * " + math_name("floor", t) + "(" + value(b->a, 10) + " / " + value(b->b, 11) + ")";
            return call("loom_mod", {b->a, b->b});
          case BinOp::Pow: return fl ? call(math_name("pow", t), {b->a, b->b}) : call("loom_ipow", {b->a, b->b});
          default: break;
        }
        int p = c_precedence(e);
        const char* op = "?";
        switch (b->op) {
          case BinOp::Add: op = "+"; break;
          case BinOp::Sub: op = "-"; break;
          case BinOp::Mul: op = "*"; break;
          case BinOp::Div: case BinOp::TruncDiv: op = "/"; break;
          case BinOp::TruncRem: op = "%"; break;
          case BinOp::Lt: op = "<"; break;
          case BinOp::Le: op = "<="; break;
          case BinOp::Gt: op = ">"; break;
          case BinOp::Ge: op = ">="; break;
          case BinOp::Eq: op = "=="; break;
          case BinOp::Ne: op = "!="; break;
          case BinOp::And: op = "&&"; break;
          case BinOp::Or: op = "||"; break;
          case BinOp::BitAnd: op = "&"; break;
          case BinOp::BitOr: op = "|"; break;
          case BinOp::BitXor: op = "^"; break;
          case BinOp::Shl: op = "<<"; break;
          case BinOp::Shr: op = ">>"; break;
          default: break;
        }
        return value(b->a, p) + " " + op + " " + value(b->b, p + 1);
      }
      case ExprKind::Reduce: throw KernelError("internal: unrealized reduction reached the cuda printer");
    }
    return "?";
  }

  // At a barrier: how many groups of copies may stay in flight. Only the
  // one barrier of a pipelined loop (double_buffer with stages = S > 2,
  // every asynchronous copy in the loop a fill of such a tile) lets the
  // A - 1 newest iterations' copies go on (the fill runs A = S - 1, or the
  // asked-for `ahead`, iterations ahead); every other barrier waits for all.
  int copies_left_pending() const {
    if (loops_.empty()) return 0;
    const Stmt& loop = *loops_.back();
    if (barriers_in(loop.children[0]) != 1) return 0;
    int64_t pending = -1;
    for (auto& insn : k_.instructions) {
      if (!insn.async_copy || g_.bulk_fill(insn.id) || !insn.within_inames.count(loop.var)) continue;
      auto [copies, ahead] = pipeline_of(insn.assignee_name(), loop);
      if (!copies) return 0;
      pending = pending < 0 ? ahead - 1 : std::min(pending, ahead - 1);  // (ahead - 1 newer groups may fly)
    }
    return int(std::max<int64_t>(pending, 0));
  }

  static int barriers_in(const StmtPtr& s) {
    int n = s->kind == Stmt::Barrier;
    for (auto& c : s->children) n += barriers_in(c);
    return n;
  }

  // A temporary double-buffered in `loop`: its copies and how many
  // iterations ahead its fill runs ({0, 0} when it is not such a tile).
  std::pair<int64_t, int64_t> pipeline_of(const std::string& name, const Stmt& loop) const {
    const Temporary* t = k_.find_temporary(name);
    auto copies = t && t->double_buffered_in == loop.var && !t->shape.empty() ? t->shape[0].as<IntImm>() : nullptr;
    if (!copies) return {0, 0};
    return {copies->value, t->double_buffer_ahead > 0 ? t->double_buffer_ahead : copies->value - 1};
  }

  // Whether flat index e is `contiguous` (coefficient 1, counted in `once`)
  // plus terms that are multiples of 8 elements (16 bytes of 16-bit values):
  // rows of an ldmatrix start 16-byte aligned. Terms may be non-affine
  // (a double buffer's (k mod 2) * size).
  static bool aligned_run(const Expr& e, const std::string& contiguous, int& once) {
    auto b = e.as<Binary>();
    if (b && (b->op == BinOp::Add || b->op == BinOp::Sub)) {
      if (b->op == BinOp::Sub && mentions_var(b->b, contiguous)) return false;
      return aligned_run(b->a, contiguous, once) && aligned_run(b->b, contiguous, once);
    }
    if (auto v = e.as<Var>(); v && v->name == contiguous) return ++once, true;
    return !mentions_var(e, contiguous) && multiple_of_8(e);
  }
  static bool multiple_of_8(const Expr& e) {
    if (auto i = e.as<IntImm>()) return i->value % 8 == 0;
    auto b = e.as<Binary>();
    if (b && b->op == BinOp::Mul) return multiple_of_8(b->a) || multiple_of_8(b->b);
    if (b && (b->op == BinOp::Add || b->op == BinOp::Sub)) return multiple_of_8(b->a) && multiple_of_8(b->b);
    return false;
  }

  // Whether s holds matrix instructions and guards around them only.
  static bool only_matrices(const StmtPtr& s) {
    if (s->kind == Stmt::Block && s->matrix) return true;
    if (s->kind == Stmt::If) return s->children.size() == 1 && only_matrices(s->children[0]);
    if (s->kind != Stmt::Block) return false;
    for (auto& c : s->children)
      if (!only_matrices(c)) return false;
    return true;
  }
  void preload_fragments(std::ostream& os, const StmtPtr& s, int ind) {
    if (s->kind == Stmt::Block && s->matrix) {
      if (s->matrix->input == types::float64) return (void)f64_fragments(os, *s->matrix, ind, true);
      std::vector<std::string> a, b;
      ldmatrix_fragments(os, *s->matrix, ind, a, b);
      return;
    }
    for (auto& c : s->children) preload_fragments(os, c, ind);
  }

  // An operand's value at a lane's element `at`, `zero` where `valid` fails there.
  std::string guarded(const Expr& value, const Expr& valid, const std::map<std::string, Expr>& at, const std::string& zero) {
    std::string v = expr(simplify(substitute(value, at)), 0);
    if (!valid.defined()) return v;
    return "(" + expr(simplify(substitute(valid, at)), 0) + " ? " + v + " : " + zero + ")";
  }

  // The element of a lane's value r in TF32's layout (m16n8k8; float64's
  // m16n8kK too; m8n8k4's is r = 0), g = lane / 4, t = lane mod 4:
  // A (g + 8 (r mod 2), t + 4 (r / 2)), B (t + 4 r, g).
  std::map<std::string, Expr> k_major_a(const WarpMatrix& w, int r) const {
    Type it = k_.options.index_dtype;
    Expr lane = make_var(w.lane, it);
    auto at = [&](int64_t d, BinOp op, int64_t plus) {
      return simplify(make_binary(BinOp::Add, make_binary(op, lane, make_int(d, it), it), make_int(plus, it), it));
    };
    return {{w.m_var, at(4, BinOp::FloorDiv, 8 * (r % 2))}, {w.k_var, at(4, BinOp::Mod, 4 * (r / 2))}};
  }
  std::map<std::string, Expr> k_major_b(const WarpMatrix& w, int r) const {
    std::map<std::string, Expr> a = k_major_a(w, 2 * r);  // (A's k at 2 r is t + 4 r, its m at an even r is g)
    return {{w.k_var, a.at(w.k_var)}, {w.n_var, a.at(w.m_var)}};
  }

  // A lane's A and B values of a float64 instruction: m8n8k4 one each, m16n8kK
  // K / 2 and K / 4, in TF32's layout. Each is loaded once in a straight run
  // of instructions (a register tile's products share their rows' and
  // columns' values). `preload`: only values read unguarded from a tile in
  // shared memory (loads that stay inside the tile, hoisted above a branch);
  // "" for the others.
  std::pair<std::vector<std::string>, std::vector<std::string>> f64_fragments(std::ostream& os, const WarpMatrix& w, int ind, bool preload) {
    std::string pad(ind * 2, ' ');
    auto kept = [&](const Expr& value, const Expr& valid, const std::map<std::string, Expr>& at) -> std::string {
      auto sub = value.as<Subscript>();
      const Temporary* tile = sub ? k_.find_temporary(sub->name) : nullptr;
      if (preload && (valid.defined() || !tile || tile->space != AddressSpace::Local)) return "";
      std::string v = guarded(value, valid, at, "0.0");
      auto found = fragment_cache_.find("f64 " + v);
      if (found != fragment_cache_.end()) return found->second;
      std::string name = "loom_frag" + std::to_string(fragment_count_++);
      os << pad << "double const " << name << " = " << v << ";\n";
      return fragment_cache_["f64 " + v] = name;
    };
    std::vector<std::string> a, b;
    for (int r = 0; r < (w.m == 8 ? 1 : w.k / 2); ++r) a.push_back(kept(w.a, w.a_valid, k_major_a(w, r)));
    for (int r = 0; r < w.k / 4; ++r) b.push_back(kept(w.b, w.b_valid, k_major_b(w, r)));
    return {a, b};
  }

  // The fragments of w's operands that ldmatrix can load (an operand read
  // from shared memory with its contiguous axis, A: k, B: n, in rows of
  // 16-byte aligned 8-element runs), loaded once in a straight run of
  // instructions (the register tile's products share them): the registers
  // into a and b; an operand it cannot load leaves its list empty.
  void ldmatrix_fragments(std::ostream& os, const WarpMatrix& w, int ind, std::vector<std::string>& a, std::vector<std::string>& b) {
    if (w.warpgroup) return;  // (wgmma reads shared memory itself)
    std::string pad(ind * 2, ' ');
    Type it = k_.options.index_dtype;
    auto num = [&](int64_t v) { return make_int(v, it); };
    auto bin = [&](BinOp op, Expr x, Expr y) { return make_binary(op, std::move(x), std::move(y), it); };
    Expr lane = make_var(w.lane, it);
    auto ldmatrix_row = [&](const Expr& value, const Expr& valid, const std::string& contiguous) -> Expr {
      auto sub = value.as<Subscript>();
      if (w.input.bytes() != 2) return Expr();  // (TF32's and float64's elements: loaded one by one)
      const Temporary* t = sub ? k_.find_temporary(sub->name) : nullptr;
      if (valid.defined() || !t || t->space != AddressSpace::Local) return Expr();
      int once = 0;
      return aligned_run(k_.flat_index(*sub), contiguous, once) && once == 1 ? value : Expr();
    };
    auto cached = [&](const std::string& key, int regs, const std::function<void(const std::string&)>& load) {
      auto it = fragment_cache_.find(key);
      if (it != fragment_cache_.end()) return it->second;
      std::string name = "loom_frag" + std::to_string(fragment_count_++);
      os << pad << "unsigned " << name << "[" << regs << "];\n";
      load(name);
      return fragment_cache_[key] = name;
    };
    if (Expr row = ldmatrix_row(w.a, w.a_valid, w.k_var); row.defined()) {
      Expr at = simplify(substitute(row, {{w.m_var, bin(BinOp::Mod, lane, num(16))}, {w.k_var, bin(BinOp::Mul, bin(BinOp::FloorDiv, lane, num(16)), num(8))}}));
      std::string addr = "&" + expr(at, 13);
      std::string f = cached("x4 " + addr, 4, [&](const std::string& n) {
        os << pad << "loom_ldmatrix_x4(" << addr << ", " << n << "[0], " << n << "[1], " << n << "[2], " << n << "[3]);\n";
      });
      for (int r = 0; r < 4; ++r) a.push_back(f + "[" + std::to_string(r) + "]");
    }
    if (Expr row = ldmatrix_row(w.b, w.b_valid, w.n_var); row.defined()) {
      Expr at = simplify(substitute(row, {{w.k_var, bin(BinOp::Mod, lane, num(16))}, {w.n_var, num(0)}}));
      std::string addr = "&" + expr(at, 13);
      std::string f = cached("x2t " + addr, 2, [&](const std::string& n) {
        os << pad << "loom_ldmatrix_x2_trans(" << addr << ", " << n << "[0], " << n << "[1]);\n";
      });
      for (int r = 0; r < 2; ++r) b.push_back(f + "[" + std::to_string(r) + "]");
    }
  }

  // One mma.sync: each lane packs its fragments of A (8 values) and B (4)
  // from the operands' expressions at its elements (the PTX ISA's layout for
  // m16n8k16: A rows lane/4 (+8), k 2*(lane%4) (+1, +8); B k likewise,
  // column lane/4), zero where an element does not exist; with ldmatrix
  // where it can load them.
  void warp_matrix(std::ostream& os, const WarpMatrix& w, int ind) {
    if (w.warpgroup) return warpgroup_matrix(os, w, ind);
    std::string pad(ind * 2, ' ');
    Type it = k_.options.index_dtype;
    auto num = [&](int64_t v) { return make_int(v, it); };
    auto bin = [&](BinOp op, Expr a, Expr b) { return make_binary(op, std::move(a), std::move(b), it); };
    Expr lane = make_var(w.lane, it);
    if (w.input == types::float64) {  // D (g (+ 8), 2 t + e) += A B
      auto [fa, fb] = f64_fragments(os, w, ind, false);
      os << pad << "loom_mma_m" << w.m << "n8k" << w.k << "_f64(";  // (mma.sync.aligned.mMn8kK.row.col.f64.f64.f64.f64)
      for (int e = 0; e < w.m * 8 / g_.target.warp_size; ++e) os << expr(simplify(substitute(w.accumulator, {{w.element, num(e)}})), 0) << ", ";
      for (auto& f : fa) os << f << ", ";
      for (size_t r = 0; r < fb.size(); ++r) os << fb[r] << (r + 1 < fb.size() ? ", " : ");\n");
      return;
    }
    Expr group = bin(BinOp::FloorDiv, lane, num(4)), pair = bin(BinOp::Mul, bin(BinOp::Mod, lane, num(4)), num(2));
    std::string zero = w.tf32 ? "0.0f" : round_to(w.input, "0.0f");
    auto element = [&](const Expr& value, const Expr& valid, const std::map<std::string, Expr>& at) { return guarded(value, valid, at, zero); };
    std::vector<std::string> a, b;
    ldmatrix_fragments(os, w, ind, a, b);
    if (w.tf32) {  // m16n8k8 (k_major_a, k_major_b); one 32-bit value a register
      for (int r = 0; r < 4; ++r) a.push_back("__float_as_uint(" + element(w.a, w.a_valid, k_major_a(w, r)) + ")");
      for (int r = 0; r < 2; ++r) b.push_back("__float_as_uint(" + element(w.b, w.b_valid, k_major_b(w, r)) + ")");
    }
    std::vector<std::string> av, bv;  // element by element
    for (int r = 0; r < 8 && a.empty(); ++r) {
      Expr m = simplify(bin(BinOp::Add, group, num(8 * ((r / 2) % 2)))), kk = simplify(bin(BinOp::Add, pair, num(r % 2 + 8 * (r / 4))));
      av.push_back(element(w.a, w.a_valid, {{w.m_var, m}, {w.k_var, kk}}));
    }
    for (int r = 0; r < 4 && b.empty(); ++r) {
      Expr kk = simplify(bin(BinOp::Add, pair, num(r % 2 + 8 * (r / 2))));
      bv.push_back(element(w.b, w.b_valid, {{w.k_var, kk}, {w.n_var, group}}));
    }
    for (size_t r = 0; r < av.size(); r += 2) a.push_back("loom_pack2(" + av[r] + ", " + av[r + 1] + ")");
    for (size_t r = 0; r < bv.size(); r += 2) b.push_back("loom_pack2(" + bv[r] + ", " + bv[r + 1] + ")");
    os << pad << "// " << w.instruction << "\n";
    os << pad << (w.tf32 ? "loom_mma_m16n8k8_tf32" : w.input.kind == ScalarKind::BFloat16 ? "loom_mma_m16n8k16_bf16" : "loom_mma_m16n8k16_f16") << "(";
    for (int e = 0; e < 4; ++e) os << expr(simplify(substitute(w.accumulator, {{w.element, num(e)}})), 0) << ", ";
    os << "\n" << pad << "    ";
    for (int r = 0; r < 4; ++r) os << a[size_t(r)] << ",\n" << pad << "    ";
    os << b[0] << ", " << b[1] << ");\n";
  }

  // One wgmma of a warpgroup: D (the lane's N/2 accumulator elements,
  // registers) += A B, A and B read from shared memory through descriptors.
  // A straight run of them is fenced once before and committed and waited
  // for once after (end_wgmma_run), so the tensor cores overlap them.
  void warpgroup_matrix(std::ostream& os, const WarpMatrix& w, int ind) {
    std::string pad(ind * 2, ' ');
    Type it = k_.options.index_dtype;
    if (!wgmma_open_) {
      os << pad << "loom_wgmma_begin();\n";
      wgmma_open_ = true;
    }
    for (auto* d : {&w.a_desc, &w.b_desc}) wgmma_tiles_.insert(d->start.as<Subscript>()->name);
    const int count = w.m * w.n / 128;
    auto desc = [&](const SharedDescriptor& d) {
      // (the tile's address unswizzled: the tensor cores apply the swizzle to the addresses they compute)
      auto s = d.start.as<Subscript>();
      return "loom_wgmma_desc(&" + s->name + "[" + expr(k_.flat_index(*s), 0) + "], " + std::to_string(d.lbo) + "u, " + std::to_string(d.sbo) + "u, " +
             (d.swizzle == 128 ? "1u" : "0u") + ")";
    };
    os << pad << "// " << w.instruction << "\n";
    os << pad << "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << count + 2 << ", 0;\\n" << w.instruction << " {";
    for (int e = 0; e < count; ++e) os << (e ? ", " : "") << "%" << e;
    os << "}, %" << count << ", %" << count + 1 << ", p, 1, 1";
    if (!w.tf32) os << ", " << (w.a_desc.mn_major ? 1 : 0) << ", " << (w.b_desc.mn_major ? 1 : 0);  // (TF32 has no transpose operands)
    os << ";\\n}\\n\"\n" << pad << "    : ";
    for (int e = 0; e < count; ++e)
      os << (e ? ", " : "") << "\"+f\"(" << expr(simplify(substitute(w.accumulator, {{w.element, make_int(e, it)}})), 0) << ")";
    os << "\n" << pad << "    : \"l\"(" << desc(w.a_desc) << "), \"l\"(" << desc(w.b_desc) << "), \"r\"(1));\n";
  }

  // Closes an open run of wgmma (see warpgroup_matrix) before anything else
  // runs: commit the run as a group and wait for it. One exception keeps
  // the group in flight into the next iteration (loom_wgmma_end_but_one:
  // wait for the older groups only), which overlaps the tensor cores' work
  // with the next iteration's copies and issue: the run ends at the loop
  // body's one barrier (the last statement, or the last of a branch of the
  // If that ends the body: ends_every_path), and every tile the run reads is
  // double-buffered in that loop with its fill at most stages - 2 iterations
  // ahead, so the next iteration fills other copies, and the one after it
  // (when this copy is refilled) comes after the next wait and barrier. The
  // loop's end then waits for the last group.
  void end_wgmma_run(std::ostream& os, int ind, const Stmt* closing = nullptr) {
    if (!wgmma_open_) return;
    bool lag = closing && closing->kind == Stmt::Barrier && wgmma_lag_allowed(*closing);
    os << std::string(ind * 2, ' ') << (lag ? "loom_wgmma_end_but_one();\n" : "loom_wgmma_end();\n");
    if (lag) wgmma_after_loop_.insert(loops_.back());
    wgmma_open_ = false;
    wgmma_tiles_.clear();
  }

  // The last statement of s, through blocks.
  static const Stmt* last_of(const Stmt* s) {
    while (s->kind == Stmt::Block && !s->children.empty() && !s->matrix) s = s->children.back().get();
    return s;
  }

  // Whether `barrier` ends its loop's body as the body's one barrier on
  // every path: the body's last statement, or the last of one branch of the
  // If that ends the body (unswitch's versions: a fast path for whole k
  // steps and the last one), each branch then ending at its own barrier,
  // the only one on that path.
  static bool ends_every_path(const StmtPtr& body, const Stmt& barrier) {
    const Stmt* last = last_of(body.get());
    if (last == &barrier) return barriers_in(body) == 1;
    if (last->kind != Stmt::If) return false;
    int on_branches = 0;
    bool found = false;
    for (auto& branch : last->children) {
      if (barriers_in(branch) != 1 || last_of(branch.get())->kind != Stmt::Barrier) return false;
      found |= last_of(branch.get()) == &barrier;
      ++on_branches;
    }
    return found && last->children.size() == 2 && barriers_in(body) == on_branches;
  }

  bool wgmma_lag_allowed(const Stmt& barrier) const {
    if (loops_.empty() || wgmma_tiles_.empty()) return false;
    const Stmt& loop = *loops_.back();
    if (!ends_every_path(loop.children[0], barrier)) return false;
    for (auto& name : wgmma_tiles_) {
      auto [copies, ahead] = pipeline_of(name, loop);
      if (!copies || ahead > copies - 2) return false;
    }
    return true;
  }

  void stmt(std::ostream& os, const StmtPtr& s, int ind) {
    std::string pad(ind * 2, ' ');
    if (s->kind != Stmt::Block) end_wgmma_run(os, ind, s.get());  // (a block is its statements: they close the run themselves)
    if (s->kind == Stmt::Block) {  // (no scope of its own: the fragments loaded so far stay)
      if (s->matrix) warp_matrix(os, *s->matrix, ind);
      else
        for (auto& c : s->children) stmt(os, c, ind);
      return;
    }
    // fragments loaded for a straight run of matrix instructions stay valid
    // until anything else runs (a store, a barrier, a loop or branch scope);
    // a branch that holds only matrix instructions (the warp's guards of a
    // register tile's parts) gets its fragments loaded before it, so the
    // parts share them (the loads stay inside the tiles' shared memory)
    if (s->kind == Stmt::If && s->children.size() == 1 && only_matrices(s->children[0])) {
      preload_fragments(os, s->children[0], ind);
      auto saved = fragment_cache_;
      os << pad << "if (" << condition(*s) << ")\n" << pad << "{\n";
      stmt(os, s->children[0], ind + 1);
      end_wgmma_run(os, ind + 1);
      os << pad << "}\n";
      fragment_cache_ = saved;
      return;
    }
    fragment_cache_.clear();
    switch (s->kind) {
      case Stmt::Block: break;  // (above)
      case Stmt::For: {
        if (in_bulk_fill(s->var)) {  // (one copy replaces the fill's own loops: codegen/bulk_copies.cpp proved them)
          stmt(os, s->children[0], ind);
          break;
        }
        if (!s->vector_accesses.empty()) {
          vector_loop(os, *s, ind);
          break;
        }
        os << pad << "for (" << c_type(k_.options.index_dtype, "") << " " << s->var << " = " << expr(s->init, 0) << "; "
           << expr(s->cond, 0) << "; ";
        if (s->step == 1) os << "++" << s->var;
        else os << s->var << " += " << s->step;
        os << ")\n" << pad << "{\n";
        loops_.push_back(s.get());
        loop_body(os, *s, ind + 1);
        end_wgmma_run(os, ind + 1);
        loops_.pop_back();
        os << pad << "}\n";
        if (wgmma_after_loop_.erase(s.get())) os << pad << "loom_wgmma_wait_all();  // (the last iteration's group)\n";
        break;
      }
      case Stmt::If:
        os << pad << "if (" << condition(*s) << ")\n" << pad << "{\n";
        stmt(os, s->children[0], ind + 1);
        end_wgmma_run(os, ind + 1);
        os << pad << "}\n";
        if (s->children.size() > 1) {
          os << pad << "else\n" << pad << "{\n";
          stmt(os, s->children[1], ind + 1);
          end_wgmma_run(os, ind + 1);
          os << pad << "}\n";
        }
        break;
      case Stmt::Assign:
        current_insn_ = s->insn_id;
        if (const Instruction* insn = atomic_instruction(k_, s->insn_id)) {
          print_atomic_add(os, pad, *insn, *s);
          break;
        }
        if (const BulkFill* f = g_.bulk_fill(s->insn_id)) {
          bulk_copy(os, pad, *f);
          break;
        }
        if (int bytes = async_copy_bytes(*s, s->lhs.type())) {
          auto [src, full] = copy_source(s->rhs);
          if (full.defined())
            os << pad << "loom_cp_async_zfill<" << bytes << ">(&" << expr(s->lhs, 13) << ", &" << expr(src, 13) << ", " << expr(full, 0) << ");\n";
          else
            os << pad << "loom_cp_async<" << bytes << ">(&" << expr(s->lhs, 13) << ", &" << expr(src, 13) << ");\n";
          break;
        }
        os << pad << expr(s->lhs, 0) << " = " << rvalue(s->rhs) << ";\n";
        break;
      case Stmt::Barrier:
        if (int n = has_async_ ? copies_left_pending() : 0; n > 0) os << pad << "loom_cp_async_wait_pending<" << n << ">();\n";
        else if (has_async_) os << pad << "loom_cp_async_wait_all();\n";
        os << pad << "__syncthreads();\n";
        break;
    }
    fragment_cache_.clear();  // (a scope's fragments end with it)
  }

  // A vec loop that codegen/vectorize.cpp proved: its vector accesses are
  // loaded before the lanes (and stored after them) as float4-style values,
  // and each lane is the assignment with those accesses replaced by the
  // vector's component, in lane order, so private values (a reduction's
  // accumulator) see the same sequence as the plain loop.
  bool in_bulk_fill(const std::string& iname) const {
    for (auto& f : g_.bulk_fills)
      if (f.tile_inames.count(iname)) return true;
    return false;
  }

  // A fill of a tma_copy tile: one thread tells the copy's mbarrier the bytes
  // to expect and issues the bulk tensor copy of the box.
  void bulk_copy(std::ostream& os, const std::string& pad, const BulkFill& f) {
    const BulkCopy& c = *g_.bulk_copy(f.temporary);
    os << pad << "loom_tma_load<" << c.box.size() << ">((threadIdx.x | threadIdx.y | threadIdx.z) == 0, &loom_tma_bar["
       << expr(simplify(make_binary(BinOp::Add, make_int(c.first_barrier, f.copy.type()), f.copy, f.copy.type())), 0) << "], " << c.box_bytes()
       << "u, &loom_tmap_" << c.temporary << ", " << c.temporary << " + " << expr(f.destination, 10);
    for (auto& x : f.coordinates) os << ", (int)" << expr(x, 11);
    os << ");\n";
  }

  // A loop's body; in the loop a tma_copy tile is double-buffered in, its
  // readers first wait for the copy of the tile this iteration reads (copy
  // t mod stages, filled for the (t / stages)-th time: the mbarrier's phase
  // of that parity), before the first statement that reads it.
  void loop_body(std::ostream& os, const Stmt& loop, int ind) {
    std::vector<const BulkCopy*> pending;
    for (auto& c : g_.bulk_copies)
      if (c.loop == loop.var) pending.push_back(&c);
    const StmtPtr& body = loop.children[0];
    if (pending.empty()) stmt(os, body, ind);
    else with_waits(os, loop, body, pending, ind);
  }
  // s with the waits for the tiles it reads: before it, or, for a branch
  // whose condition reads no tile (unswitch's two versions of a body), in
  // each branch before its first reader, so the fills a branch issues
  // before its readers go out before the wait, as in the plain body.
  void with_waits(std::ostream& os, const Stmt& loop, const StmtPtr& s, std::vector<const BulkCopy*>& pending, int ind) {
    if (s->kind == Stmt::Block && !s->matrix) {  // (a block is its statements)
      for (auto& c : s->children) with_waits(os, loop, c, pending, ind);
      return;
    }
    bool branch = s->kind == Stmt::If && !s->matrix && !(s->children.size() == 1 && only_matrices(s->children[0]));
    for (auto* c : pending) branch = branch && !reads_array(s->cond, c->temporary);
    if (!branch) {
      wait_for_tiles(os, loop, s, pending, ind);
      stmt(os, s, ind);
      return;
    }
    end_wgmma_run(os, ind, s.get());
    fragment_cache_.clear();
    std::string pad(ind * 2, ' ');
    std::vector<const BulkCopy*> left;  // (still to wait for after the If: on some path it was not)
    for (size_t b = 0; b < s->children.size(); ++b) {
      os << pad << (b ? "else\n" : "if (" + condition(*s) + ")\n") << pad << "{\n";
      std::vector<const BulkCopy*> mine = pending;
      with_waits(os, loop, s->children[b], mine, ind + 1);
      end_wgmma_run(os, ind + 1);
      fragment_cache_.clear();
      os << pad << "}\n";
      for (auto* x : mine)
        if (std::find(left.begin(), left.end(), x) == left.end()) left.push_back(x);
    }
    if (s->children.size() == 1)  // (no else: the path around the If waited for nothing)
      for (auto* x : pending)
        if (std::find(left.begin(), left.end(), x) == left.end()) left.push_back(x);
    pending = left;
  }
  void wait_for_tiles(std::ostream& os, const Stmt& loop, const StmtPtr& s, std::vector<const BulkCopy*>& pending, int ind) {
    for (auto it = pending.begin(); it != pending.end();) {
      if (!reads_tile(s, (*it)->temporary)) {
        ++it;
        continue;
      }
      const BulkCopy& c = **it;
      std::string t = loop.var, n = std::to_string(c.stages);
      os << std::string(ind * 2, ' ') << "loom_tma_wait(&loom_tma_bar[" << c.first_barrier << " + " << t << " % " << n << "], (" << t << " / " << n
         << ") & 1);  // (" << c.temporary << ", copied by the tensor memory accelerator)\n";
      it = pending.erase(it);
    }
  }
  static bool reads_tile(const StmtPtr& s, const std::string& name) {
    auto in = [&](const Expr& e) { return e.defined() && reads_array(e, name); };
    if (s->matrix) {
      const WarpMatrix& w = *s->matrix;
      for (const Expr* e : {&w.a, &w.b, &w.a_desc.start, &w.b_desc.start})
        if (in(*e)) return true;
    }
    if (s->kind == Stmt::Assign) {
      if (in(s->rhs)) return true;
      if (auto l = s->lhs.as<Subscript>())
        for (auto& i : l->indices)
          if (in(i)) return true;
    }
    if (in(s->cond) || in(s->init)) return true;
    for (auto& c : s->children)
      if (reads_tile(c, name)) return true;
    return false;
  }
  static bool reads_array(const Expr& e, const std::string& name) {
    bool found = false;
    for_each_subscript(e, [&](const Subscript& s) { found |= s.name == name; });
    return found;
  }

  // The size of an assignment's copy when it is printed as cp.async: an
  // instruction tagged async that copies one element (or `bytes`, a vector)
  // of a global array into local memory, 4, 8 or 16 bytes; 0 otherwise.
  int async_copy_bytes(const Stmt& s, Type t, int64_t bytes = 0) const {
    if (s.op != Stmt::Op::AsyncCopy) return 0;
    auto dst = s.lhs.as<Subscript>();
    auto src = copy_source(s.rhs).first.as<Subscript>();
    if (!dst || !src || s.rhs.type() != t) return 0;
    const Temporary* tv = k_.find_temporary(dst->name);
    const Argument* arg = k_.find_argument(src->name);
    if (!tv || tv->space != AddressSpace::Local || !arg || arg->kind != Argument::Array) return 0;
    if (!bytes) bytes = t.bytes();
    return bytes == 4 || bytes == 8 || bytes == 16 ? int(bytes) : 0;
  }

  void vector_loop(std::ostream& os, const Stmt& loop, int ind) {
    os << std::string(ind * 2, ' ') << "{  // vec " << loop.var << ": " << loop.vector_lanes << " lanes\n";
    vector_assignments(os, loop, loop.children[0], ind + 1);
    os << std::string(ind * 2, ' ') << "}\n";
  }

  void vector_assignments(std::ostream& os, const Stmt& loop, const StmtPtr& s, int ind) {
    if (s->kind == Stmt::Block) {
      for (auto& c : s->children) vector_assignments(os, loop, c, ind);
      return;
    }
    std::string pad(ind * 2, ' ');
    const Stmt* a = s.get();
    current_insn_ = a->insn_id;
    std::vector<Expr> accesses;  // this assignment's
    for (auto& acc : loop.vector_accesses)
      if (acc.same_as(a->lhs) || !replace_subscripts(a->rhs, {{acc, make_int(0)}}).same_as(a->rhs)) accesses.push_back(acc);
    Type it = k_.options.index_dtype;
    int64_t lo = loop.init.as<IntImm>()->value;
    std::map<std::string, Expr> first{{loop.var, make_int(lo, it)}};
    // an async copy of whole vectors: one cp.async each
    if (accesses.size() == 2) {
      const Expr& st = accesses[0].same_as(a->lhs) ? accesses[0] : accesses[1];
      const Expr& ld = accesses[0].same_as(a->lhs) ? accesses[1] : accesses[0];
      int64_t bytes = loop.vector_lanes * a->lhs.type().bytes();
      auto [src, full] = copy_source(a->rhs);
      if (st.same_as(a->lhs) && src.same_as(ld) && async_copy_bytes(*a, a->lhs.type(), bytes)) {
        os << pad << (full.defined() ? "loom_cp_async_zfill<" : "loom_cp_async<") << bytes << ">(&"
           << expr(simplify(substitute(st, first)), 13) << ", &" << expr(simplify(substitute(ld, first)), 13);
        if (full.defined()) os << ", " << expr(simplify(substitute(full, first)), 0);  // the lanes agree on it (vectorize.cpp)
        os << ");\n";
        return;
      }
    }
    // a copy of 16-bit values (no CUDA vector type): raw 8 or 16 bytes
    if (accesses.size() == 2 && (a->lhs.type().bits() == 16)) {
      const Expr& st = accesses[0].same_as(a->lhs) ? accesses[0] : accesses[1];
      const Expr& ld = accesses[0].same_as(a->lhs) ? accesses[1] : accesses[0];
      auto [src, full] = copy_source(a->rhs);
      std::string raw = loop.vector_lanes * 2 == 16 ? "uint4" : "uint2";
      if (!st.same_as(a->lhs) || !src.same_as(ld)) throw KernelError("kernel '" + k_.name + "': a vector of 16-bit values that is not a copy (internal error)");
      std::string load = "*reinterpret_cast<const " + raw + " *>(&" + expr(simplify(substitute(ld, first)), 13) + ")";
      if (full.defined()) load = "(" + expr(simplify(substitute(full, first)), 0) + ") ? " + load + " : " + raw + "{}";
      os << pad << "*reinterpret_cast<" << raw << " *>(&" << expr(simplify(substitute(st, first)), 13) << ") = " << load << ";\n";
      return;
    }
    // `x = c ? v[...] : value` with v[...] a vector access: the vector is
    // loaded under c (the lanes agree on it: vectorize.cpp), each lane takes
    // its component
    const Select* guarded = guarded_vector_load(loop, a->rhs);
    Expr rhs_of_lanes = guarded ? guarded->t : a->rhs;
    Expr guard = guarded ? simplify(substitute(guarded->cond, first)) : Expr();
    std::vector<std::string> names;
    int store = -1;
    for (size_t i = 0; i < accesses.size(); ++i) {
      const Expr& acc = accesses[i];
      std::string vt = vector_type(acc.type(), loop.vector_lanes);
      names.push_back("loom_v" + std::to_string(vector_count_++));
      std::string at = "&" + expr(simplify(substitute(acc, first)), 13);
      if (acc.same_as(a->lhs)) {  // the store (loaded first when the assignment also reads it)
        store = int(i);
        bool read = !replace_subscripts(a->rhs, {{acc, make_int(0)}}).same_as(a->rhs);
        os << pad << vt << " " << names.back();
        if (read) os << " = *reinterpret_cast<const " << vt << " *>(" << at << ")";
        os << ";\n";
      } else if (guarded && acc.same_as(rhs_of_lanes)) {
        std::string f = expr(make_cast(acc.type(), guarded->f), 0), fills = f;
        for (int64_t l = 1; l < loop.vector_lanes; ++l) fills += ", " + f;
        os << pad << vt << " const " << names.back() << " = (" << expr(guard, 0) << ") ? *reinterpret_cast<const " << vt << " *>(" << at
           << ") : " << vt << "{" << fills << "};\n";
      } else {
        os << pad << vt << " const " << names.back() << " = *reinterpret_cast<const " << vt << " *>(" << at << ");\n";
      }
    }
    static const char* comp[] = {".x", ".y", ".z", ".w"};
    for (int64_t l = 0; l < loop.vector_lanes; ++l) {
      std::vector<std::pair<Expr, Expr>> lane;
      for (size_t i = 0; i < accesses.size(); ++i) lane.emplace_back(accesses[i], make_var(names[i] + comp[l], accesses[i].type()));
      std::map<std::string, Expr> at{{loop.var, make_int(lo + l, it)}};
      Expr rhs = simplify(substitute(replace_subscripts(rhs_of_lanes, lane), at));
      std::string lhs = store >= 0 ? names[store] + comp[l] : expr(simplify(substitute(a->lhs, at)), 0);
      os << pad << lhs << " = " << rvalue(rhs) << ";\n";
    }
    if (store >= 0) {
      std::string vt = vector_type(a->lhs.type(), loop.vector_lanes);
      os << pad << "*reinterpret_cast<" << vt << " *>(&" << expr(simplify(substitute(a->lhs, first)), 13) << ") = " << names[store]
         << ";\n";
    }
  }

  std::string vector_type(Type t, int64_t lanes) {
    std::string base = t.kind == ScalarKind::Float32 ? "float" : t.kind == ScalarKind::Float64 ? "double"
                     : t.kind == ScalarKind::Int32 ? "int" : t.kind == ScalarKind::UInt32 ? "uint"
                     : t.kind == ScalarKind::Int64 ? "longlong" : t.kind == ScalarKind::UInt64 ? "ulonglong"
                     : t.kind == ScalarKind::Float16 && lanes == 2 ? "__half" : t.kind == ScalarKind::BFloat16 && lanes == 2 ? "__nv_bfloat16" : "";
    if (base.empty()) throw KernelError("kernel '" + k_.name + "': no vector type of " + t.name() + " (internal error)");
    return base + std::to_string(lanes);
  }

  // x[I] = x[I] + e as atomicAdd(&x[I], e); 64-bit integers through unsigned
  // long long (two's complement addition is the same).
  void print_atomic_add(std::ostream& os, const std::string& pad, const Instruction& insn, const Stmt& s) {
    Expr inc = atomic_increment(insn);
    if (!inc.defined()) throw KernelError("kernel '" + k_.name + "': atomic instruction '" + insn.id + "' is not x[i] = x[i] + value");
    Type t = s.lhs.type();
    std::string target = "&" + expr(s.lhs, 13), value = expr(inc, 0);
    if (t.kind == ScalarKind::Int64 || t.kind == ScalarKind::UInt64) {
      target = "(unsigned long long*)" + target;
      value = "(unsigned long long)(" + value + ")";
    } else {
      value = "(" + std::string(t.kind == ScalarKind::Float32 ? "float" : t.kind == ScalarKind::Float64 ? "double"
                                : t.kind == ScalarKind::Int32 ? "int" : "unsigned") + ")(" + value + ")";
    }
    os << pad << "atomicAdd(" << target << ", " << value << ");\n";
  }

  // A right-hand side: its checked loads print as values (loom_checked_load),
  // elsewhere (stores, atomics, copies' addresses) as the element itself.
  std::string rvalue(const Expr& e) {
    value_context_ = true;
    std::string r = expr(e, 0);
    value_context_ = false;
    return r;
  }

  // An if's condition: its reads checked as its instruction's (an
  // instruction's predicates), or as any instruction's that reads the array
  // unproven (a guard that names none).
  std::string condition(const Stmt& s) {
    std::string saved = current_insn_;
    current_insn_ = s.insn_id;
    std::string r = rvalue(s.cond);
    current_insn_ = saved;
    return r;
  }

  static constexpr const char* kCheckedParams = "/*loom checked params*/";
  bool value_context_ = false;
  const GeneratedKernel& g_;
  const LoopKernel& k_;
  UnprovenAccesses unproven_;
  CheckedSource* checked_;
  std::set<int> checked_arrays_;  // argument indices with a checked access in this function
  std::string current_insn_;      // the instruction of the assignment being printed
  bool has_async_ = false;
  std::vector<const Stmt*> loops_;  // the loops around the statement being printed
  std::map<std::string, std::string> fragment_cache_;  // ldmatrix address -> the registers holding it
  bool wgmma_open_ = false;                 // a run of wgmma issued and not yet waited for
  std::set<std::string> wgmma_tiles_;       // the shared tiles the open run reads
  std::set<const Stmt*> wgmma_after_loop_;  // loops whose last group is waited for after them
  int fragment_count_ = 0;
  int vector_count_ = 0;
};

}  // namespace

std::string print_source(const GeneratedKernel& g, CheckedSource* checked) {
  CheckedSource local;
  if (!checked) checked = &local;
  *checked = CheckedSource{};
  std::string code;
  if (!g.is_program()) {
    code += Printer(g, checked).function();
  } else {
    // one launch after another: one module with a function each
    code += "// Runs as " + host_steps_text(g.host_steps) + "\n";
    for (size_t i = 0; i < g.launches.size(); ++i)
      code += (i ? "\n// launch " + std::to_string(i + 1) + " of " + std::to_string(g.launches.size()) + ", after a global barrier\n" : "") +
              Printer(g.launches[i], checked).function();
  }
  // headers for 16-bit floats, once the code is known
  std::string headers;
  if (code.find("half") != std::string::npos) headers += "#include <cuda_fp16.h>\n";
  if (code.find("bfloat16") != std::string::npos) headers += "#include <cuda_bf16.h>\n";
  code = helpers_for(code) + code;
  if (code.find("loom_cp_async") != std::string::npos) code = std::string(kAsyncPrelude) + code;
  return "// Generated by Loom from kernel '" + g.kernel.name + "'.\n" + headers + code;
}

}  // namespace loom::cuda
