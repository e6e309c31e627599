// Calling kernels: arguments by name (arrays with dtype and shape, scalar
// values), parameters inferred from array shapes and checked, and host
// arrays with the random filling, poisoning and comparison that `loom run`
// and the tests use. Shared by every target and the reference interpreter.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/kernel.h"

namespace loom {

struct ArrayRef {
  void* data = nullptr;  // host or device address, as the target expects
  Type dtype;
  std::vector<int64_t> shape;
  // The caller's array is exactly its shape, contiguous (C order, or Fortran
  // order for an argument declared so): NumPy arrays and device tensors from
  // Python. Binding refuses it for an argument laid out otherwise (explicit
  // strides or an offset that, for the call's sizes, differ): the kernel
  // would address memory outside it. Host arrays made for the layout
  // (HostArray, the command line) leave it false.
  bool dense = false;
};

struct ArgValue {
  enum Kind { Array, Int, Float };
  Kind kind = Int;
  ArrayRef array;
  int64_t i = 0;
  double f = 0;
  static ArgValue of(ArrayRef a) { ArgValue v; v.kind = Array; v.array = std::move(a); return v; }
  static ArgValue of_int(int64_t x) { ArgValue v; v.kind = Int; v.i = x; return v; }
  static ArgValue of_float(double x) { ArgValue v; v.kind = Float; v.f = x; return v; }
};

using ArgMap = std::map<std::string, ArgValue>;

// Parameter values for a call: given value arguments, and parameters read
// off array shapes where a shape entry is a bare parameter (a: float32[n, m]
// with a 100x50 array gives n=100, m=50). Then every array's dtype, rank and
// shape are checked, and the values against the kernel's assumptions (code
// is generated under them). Throws ArgumentError naming the argument.
std::map<std::string, int64_t> bind_parameters(const LoopKernel& k, const ArgMap& args);

// Whether parameter values meet the kernel's assumptions (calls that break
// them are refused: code is generated under them).
bool assumptions_hold(const LoopKernel& k, const std::map<std::string, int64_t>& params);

// The shape an array argument must have for these parameter values.
std::vector<int64_t> expected_shape(const Argument& a, const std::map<std::string, int64_t>& params);

// The product of the extents; ArgumentError beyond 2^63 - 1.
int64_t element_count(const std::vector<int64_t>& shape);

// Bytes of host memory the kernel's array arguments take for these
// parameters (their storage through strides and offsets), and in `largest`
// the array that takes most: what a runner allocating inputs checks against
// its limit before it allocates anything.
int64_t host_bytes(const LoopKernel& k, const std::map<std::string, int64_t>& params, std::string* largest = nullptr);

// Elements an array argument's memory must hold for these parameters: its
// footprint through strides and offset (element_count of the shape for a
// contiguous C-order array). Negative strides are refused.
int64_t storage_elements(const Argument& a, const std::map<std::string, int64_t>& params);

// What 32-bit index arithmetic cannot address for these parameters ("array
// 'a' has 3000000000 elements", a parameter beyond the int32 range); "" when
// the kernel's indices are 64-bit or everything fits.
std::string beyond_32_bit_indices(const LoopKernel& k, const std::map<std::string, int64_t>& params);

// The global temporaries of a kernel that runs as several launches (global
// barriers), allocated in host memory for one call and added to `args` as
// arrays; the storage lives as long as the returned value (the CPU target
// and the interpreter use it; the CUDA target allocates on the device).
using HostScratch = std::vector<std::vector<uint64_t>>;
HostScratch bind_host_global_temporaries(const GeneratedKernel& g, const std::map<std::string, int64_t>& params, ArgMap& args);

// Runs a program's launches in order (for_each_launch over g.host_steps):
// launch(index, values) is called with `args` holding, as integer
// arguments, the host loops' inames around that launch and none of the ones
// bound for an earlier launch outside those loops (a launch has only its own
// host loops' arguments); values: params with those inames added.
void for_each_program_launch(const GeneratedKernel& g, const std::map<std::string, int64_t>& params, ArgMap& args,
                             const std::function<void(size_t, const std::map<std::string, int64_t>&)>& launch);

// An owned host array.
struct HostArray {
  Type dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  int64_t elements = 0;  // storage (>= element_count(shape) for strided layouts)

  HostArray() = default;
  // storage: elements of memory; -1: element_count(shape)
  HostArray(Type t, std::vector<int64_t> s, int64_t storage = -1);
  int64_t size() const { return elements; }
  ArrayRef ref() { return ArrayRef{bytes.data(), dtype, shape}; }
  double get(int64_t i) const;        // element i as a double
  void set(int64_t i, double v);      // stored converted to dtype
  void fill_random(uint64_t seed);    // floats in [-1, 1), ints in [-50, 50), bools
  void poison();                      // NaN for floats, a sentinel pattern for ints
};

// Moving values between the dense C-order form of an array (what .npy files
// and NumPy hold) and the storage of an argument's layout (strides, offset:
// tag_array_axes, order=F): `into_layout` writes the elements of `dense` into
// the positions of `stored` (other positions keep their values);
// `out_of_layout` reads them back into a dense C-order array.
void into_layout(const HostArray& dense, const Argument& a, const std::map<std::string, int64_t>& params, HostArray& stored);
HostArray out_of_layout(const HostArray& stored, const Argument& a, const std::map<std::string, int64_t>& params);
// Whether an argument's storage is other than its dense C-order form.
bool has_layout(const Argument& a);

struct Comparison {
  bool ok = true;
  int64_t mismatches = 0;
  int64_t first_bad = -1;
  double max_abs_error = 0;
  std::string str() const;
};

// Element-wise comparison with a tolerance chosen by dtype (relative and
// absolute: float64 1e-9/1e-12, float32 1e-4/1e-4 (reductions summed in
// another order), float16 4e-3/1e-3, bfloat16 3e-2/1e-2;
// integers exact). NaN matches NaN (so unwritten poisoned outputs match
// only if the reference left them unwritten too).
Comparison compare(const HostArray& expected, const HostArray& actual, double rtol = -1, double atol = -1);

// Host arrays for every array argument of k for these parameters: inputs
// random (seeded), pure outputs (written, never read) poisoned.
std::map<std::string, HostArray> make_host_arrays(const LoopKernel& k, const std::map<std::string, int64_t>& params,
                                                  uint64_t seed);
// The arguments of a call of k on these arrays: each array by name, integer
// value arguments from params, float value arguments from scalars, else 1.5
// (a scale such as alpha: any fixed value serves a comparison of two runs).
ArgMap host_arguments(const LoopKernel& k, std::map<std::string, HostArray>& arrays, const std::map<std::string, int64_t>& params,
                      const std::map<std::string, double>& scalars = {});

// NumPy's .npy files (format versions 1-3, little-endian; bool, int8-64,
// uint8-64, float16, float32, float64). A Fortran-order file is read into C
// order. Errors (ArgumentError) name the file and what is wrong with it.
HostArray read_npy(const std::string& path);
// Writes the array's elements in C order (an array whose storage is larger
// than its shape, from a strided layout, is refused).
void write_npy(const std::string& path, const HostArray& a);


}  // namespace loom
