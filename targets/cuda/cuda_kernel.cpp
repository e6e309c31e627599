// CudaKernel: generate + print + compile once, load lazily, launch with
// arguments bound by name, time with device events, or run on host arrays.
#include <deque>
#include <algorithm>
#include <cstring>

#include "driver.h"

namespace loom::cuda {

TargetInfo target_info(const std::string& arch) {
  bool gpu = gpu_available();
  TargetInfo t = TargetInfo::cuda(!arch.empty() ? arch : gpu ? device().arch() : TargetInfo::generic_cuda().arch);
  if (gpu && t.compute_capability == device().cc_major * 10 + device().cc_minor && device().max_shared_optin > 0)
    t.max_shared_bytes = device().max_shared_optin;
  return t;
}

CudaKernel::CudaKernel(const LoopKernel& k, std::string arch) {
  if (arch.empty()) arch = gpu_available() ? device().arch() : TargetInfo::generic_cuda().arch;
  gen_ = generate(k, target_info(arch));
  source_ = print_source(gen_, &checked_);
  bin_ = compile(source_, arch);
}

CudaKernel::CudaKernel(GeneratedKernel g, const std::string& arch) : gen_(std::move(g)) {
  source_ = print_source(gen_, &checked_);
  bin_ = compile(source_, arch);
}

CudaKernel::~CudaKernel() {
  if (module_) {
    try {
      driver_api().cuModuleUnload(static_cast<CUmodule>(module_));
    } catch (...) {
    }
  }
}

void CudaKernel::load() {
  if (function_) return;
  const DriverApi& d = driver_api();
  if (bin_.arch != device().arch())
    throw CudaError("kernel '" + gen_.kernel.name + "' was compiled for " + bin_.arch + " but the GPU is " + device().arch());
  CUmodule m = nullptr;
  check(d.cuModuleLoadData(&m, bin_.cubin.data()), "cuModuleLoadData");
  module_ = m;
  if (!checked_.accesses.empty()) {  // the bounds record: failed, access, index, (pad), 4 words of scratch
    bounds_ = DeviceBuffer(8 * sizeof(int64_t));
    const int64_t zero[8] = {};
    bounds_.upload(zero, sizeof zero);
  }
  // the function of a GeneratedKernel and the dynamic shared memory it needs
  auto function_of = [&](const GeneratedKernel& g, int64_t& shared) {
    CUfunction f = nullptr;
    check(d.cuModuleGetFunction(&f, m, g.kernel.name.c_str()), "cuModuleGetFunction");
    shared = g.local_bytes() > g.target.static_shared_bytes ? g.local_bytes() : 0;
    if (shared > 0) {
      // dynamic shared memory above 48 KiB needs the device's opt-in
      int optin = device().max_shared_optin;
      if (shared > optin)
        throw CudaError("kernel '" + g.kernel.name + "' needs " + std::to_string(shared) + " bytes of shared memory per block; " +
                        device().name + " allows at most " + std::to_string(optin));
      check(d.cuFuncSetAttribute(f, 8, int(shared)), "cuFuncSetAttribute");  // ..._MAX_DYNAMIC_SHARED_SIZE_BYTES
    }
    return f;
  };
  if (gen_.is_program()) {
    for (auto& l : gen_.launches) {
      int64_t shared = 0;
      launch_functions_.push_back(function_of(l, shared));
      launch_shared_bytes_.push_back(shared);
    }
    function_ = launch_functions_[0];  // attributes() reports the first
    return;
  }
  function_ = function_of(gen_, shared_bytes_);
}

CudaKernel::Attributes CudaKernel::attributes() {
  load();
  const DriverApi& d = driver_api();
  Attributes a;
  auto f = static_cast<CUfunction>(function_);
  check(d.cuFuncGetAttribute(&a.registers, 4, f), "cuFuncGetAttribute");  // CU_FUNC_ATTRIBUTE_NUM_REGS
  check(d.cuFuncGetAttribute(&a.local_bytes, 3, f), "cuFuncGetAttribute");  // ..._LOCAL_SIZE_BYTES
  check(d.cuFuncGetAttribute(&a.max_threads_per_block, 0, f), "cuFuncGetAttribute");
  return a;
}

void check_grid(const std::string& kernel, const LaunchDims& dims) {
  if (dims.grid[1] > 65535 || dims.grid[2] > 65535 || dims.grid[0] > 2147483647)
    throw CudaError("kernel '" + kernel + "': grid " + std::to_string(dims.grid[0]) + "x" + std::to_string(dims.grid[1]) + "x" +
                    std::to_string(dims.grid[2]) + " exceeds CUDA's limits (2^31-1 x 65535 x 65535); map the largest axis to g.0");
}

namespace {

// Storage for the kernel's parameters in signature order: one 8-byte slot
// each, a tensor map 16 (ptrs: where each parameter starts).
struct KernelParams {
  std::vector<uint64_t> slots;
  std::vector<void*> ptrs;
};

// The copy engine's element type for t (cuda.h's CUtensorMapDataType; a
// copy moves bytes, so signed and boolean types go as unsigned ones).
int tensor_map_dtype(const std::string& kernel, Type t) {
  switch (t.kind) {
    case ScalarKind::Float16: return 6;
    case ScalarKind::BFloat16: return 9;
    case ScalarKind::Float32: return 7;
    case ScalarKind::Float64: return 8;
    case ScalarKind::Int32: return 3;
    case ScalarKind::Int64: return 5;
    default: break;
  }
  switch (t.bytes()) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 4;
    default: throw ArgumentError("kernel '" + kernel + "': the copy engine has no " + t.name() + " elements");
  }
}

// The tensor map of a tma_copy tile for this call: the array's address and
// shape (last axis first), its row strides in bytes, the box and the swizzle.
void encode_tensor_map(const LoopKernel& k, const BulkCopy& c, const ArgMap& args, const std::map<std::string, int64_t>& params, uint64_t* map) {
  const Argument& a = *k.find_argument(c.array);
  void* ptr = args.at(a.name).array.data;
  std::string where = "kernel '" + k.name + "': the tensor memory accelerator's copies of '" + a.name + "' into '" + c.temporary + "'";
  if (reinterpret_cast<uintptr_t>(ptr) % 16) throw ArgumentError(where + " need the array to start at a multiple of 16 bytes");
  // the array's extents and row strides (bytes), then one tensor dimension per axis of the box
  size_t rank = a.shape.size();
  std::vector<int64_t> extent(rank);
  std::vector<uint64_t> row(rank);
  uint64_t stride = uint64_t(c.dtype.bytes());
  for (size_t d = rank; d-- > 0;) {
    extent[d] = std::max<int64_t>(eval_int(a.shape[d], params), 1);
    row[d] = stride;
    stride *= uint64_t(extent[d]);
  }
  std::vector<uint64_t> dims, strides;
  for (size_t j = 0; j < c.box.size(); ++j) {
    if (c.array_axes[j] < 0) {  // an axis of the tile of one element: a dimension of 1 (its stride is never stepped)
      dims.push_back(1);
      strides.push_back((row[0] * uint64_t(extent[0]) + 15) / 16 * 16);
      continue;
    }
    size_t ax = size_t(c.array_axes[j]);
    int64_t m = c.multipliers[j];
    if (m == 0) dims.push_back(uint64_t(extent[ax]));                 // the array's axis whole
    else if (m == 1) dims.push_back(uint64_t(c.box[j]));              // the fine part of a split axis
    else dims.push_back(uint64_t(extent[ax] / m));                     // its coarse part (blocks of m; proven to divide)
    if (j > 0) strides.push_back(uint64_t(m > 1 ? m : 1) * row[ax]);
  }
  for (uint64_t s : strides)
    if (s % 16)
      throw ArgumentError(where + " need each row of the array to be a multiple of 16 bytes; one is " + std::to_string(s) +
                          " (pad the array, or assume a size that makes it so)");
  std::vector<unsigned> box(c.box.begin(), c.box.end()), ones(c.box.size(), 1u);
  const DriverApi& d = driver_api();
  if (!d.cuTensorMapEncodeTiled) throw CudaError(where + " need cuTensorMapEncodeTiled, which this CUDA driver lacks (CUDA 12 or newer has it)");
  int rc = d.cuTensorMapEncodeTiled(map, tensor_map_dtype(k.name, c.dtype), unsigned(box.size()), ptr, dims.data(), strides.data(), box.data(),
                                    ones.data(), 0, c.swizzle == 128 ? 3 : 0, 3 /* L2 promotion: 256 bytes */, 0 /* zeros outside */);
  check(rc, ("cuTensorMapEncodeTiled (" + where + ")").c_str());
}

// extents: the arguments whose storage sizes follow the bounds record
// pointer (a function with run-time checked accesses, CheckedSource).
KernelParams pack(const GeneratedKernel& g, const ArgMap& args, const std::map<std::string, int64_t>& params,
                  const std::vector<int>& extents = {}, void* bounds = nullptr) {
  const LoopKernel& k = g.kernel;
  KernelParams p;
  p.slots.resize(k.arguments.size());
  for (size_t i = 0; i < k.arguments.size(); ++i) {
    const Argument& a = k.arguments[i];
    uint64_t& slot = p.slots[i];
    if (a.kind == Argument::Array) {
      void* ptr = args.at(a.name).array.data;
      if (auto al = g.argument_alignment.find(a.name); al != g.argument_alignment.end() && reinterpret_cast<uintptr_t>(ptr) % al->second)
        throw ArgumentError("kernel '" + k.name + "': array '" + a.name + "' must start at a multiple of " + std::to_string(al->second) +
                            " bytes: the kernel moves it in vectors of that size (a 'vec' iname); pass an aligned array, or tag the "
                            "iname 'unr' instead of 'vec'");
      std::memcpy(&slot, &ptr, sizeof ptr);
      continue;
    }
    auto it = args.find(a.name);
    double fv = 0;
    int64_t iv = 0;
    if (auto pv = params.find(a.name); pv != params.end()) {
      iv = pv->second;
      fv = double(iv);
    } else if (it != args.end()) {
      iv = it->second.kind == ArgValue::Float ? int64_t(it->second.f) : it->second.i;
      fv = it->second.kind == ArgValue::Float ? it->second.f : double(it->second.i);
    } else {
      throw ArgumentError("kernel '" + k.name + "': missing value for argument '" + a.name + "'");
    }
    if (a.dtype.kind == ScalarKind::Float32) {
      float f = float(fv);
      std::memcpy(&slot, &f, sizeof f);
    } else if (a.dtype.kind == ScalarKind::Float64) {
      std::memcpy(&slot, &fv, sizeof fv);
    } else {
      std::memcpy(&slot, &iv, size_t(a.dtype.bytes()));  // little-endian: low bytes first
    }
  }
  if (!extents.empty()) {
    uint64_t b = reinterpret_cast<uintptr_t>(bounds);
    p.slots.push_back(b);
    for (int a : extents) p.slots.push_back(uint64_t(storage_elements(k.arguments[size_t(a)], params)));
  }
  size_t plain = p.slots.size();
  p.slots.resize(plain + 16 * g.bulk_copies.size());  // (then no slot moves: the pointers below stay valid)
  for (size_t i = 0; i < g.bulk_copies.size(); ++i) encode_tensor_map(k, g.bulk_copies[i], args, params, &p.slots[plain + 16 * i]);
  for (size_t i = 0; i < plain; ++i) p.ptrs.push_back(&p.slots[i]);
  for (size_t i = 0; i < g.bulk_copies.size(); ++i) p.ptrs.push_back(&p.slots[plain + 16 * i]);
  return p;
}

// One launch of a loaded function: the grid checked against CUDA's limits, then cuLaunchKernel.
void launch_function(const GeneratedKernel& g, void* function, LaunchDims dims, int64_t shared_bytes, void* stream,
                     void** slot_pointers) {
  const std::string& kernel = g.kernel.name;
  check_grid(kernel, dims);
  if (g.kernel.options.block_group > 1) {  // (group_blocks: one axis, which the kernel maps back to g.0 and g.1)
    dims.grid = {dims.grid[0] * dims.grid[1] * dims.grid[2], 1, 1};
    check_grid(kernel, dims);
  }
  check(driver_api().cuLaunchKernel(static_cast<CUfunction>(function), unsigned(dims.grid[0]), unsigned(dims.grid[1]),
                                    unsigned(dims.grid[2]), unsigned(dims.block[0]), unsigned(dims.block[1]), unsigned(dims.block[2]),
                                    unsigned(shared_bytes), static_cast<CUstream>(stream), slot_pointers, nullptr),
        "cuLaunchKernel");
}

}  // namespace

void synchronize() { check(driver_api().cuCtxSynchronize(), "kernel execution"); }

LaunchDims CudaKernel::launch(const ArgMap& args, void* stream) {
  auto params = bind_parameters(gen_.kernel, args);
  check_index_width(gen_, params);
  if (gen_.is_program()) {
    return launch_program(args, params, stream);
  }
  LaunchDims dims = launch_dims(gen_, params);
  launch_bound(args, params, dims, stream);
  return dims;
}

LaunchDims CudaKernel::launch_program(const ArgMap& args, const std::map<std::string, int64_t>& params, void* stream) {
  load();
  const DriverApi& d = driver_api();
  auto s = static_cast<CUstream>(stream);
  ArgMap all = args;
  std::vector<CUdeviceptr> scratch;
  auto release = [&] {
    for (CUdeviceptr p : scratch) d.cuMemFreeAsync(p, s);  // after the launches, in stream order
  };
  try {
    for (auto& t : gen_.global_temporaries) {
      size_t bytes = size_t(std::max<int64_t>(1, storage_elements(t, params))) * size_t(t.dtype.bytes());
      CUdeviceptr p = 0;
      check(d.cuMemAllocAsync(&p, bytes, s), "cuMemAllocAsync (a global temporary)");
      scratch.push_back(p);
      all[t.name] = ArgValue::of(ArrayRef{reinterpret_cast<void*>(p), t.dtype, expected_shape(t, params)});
    }
    LaunchDims first;  // (what launch() reports: the first launch's)
    bool seen = false;
    std::deque<KernelParams> kps;  // (kept for the check after the last launch; a deque keeps them in place)
    std::vector<std::pair<size_t, void**>> launched;
    for_each_program_launch(gen_, params, all, [&](size_t i, const std::map<std::string, int64_t>& values) {
      const GeneratedKernel& l = gen_.launches[i];
      LaunchDims dims = launch_dims(l, values);
      if (!seen) first = dims;
      seen = true;
      if (dims.empty()) return;
      kps.push_back(pack(l, all, values, checked_.extents_of.at(i), bounds_.ptr()));
      launch_function(l, launch_functions_[i], dims, launch_shared_bytes_[i], stream, kps.back().ptrs.data());
      launched.push_back({i, kps.back().ptrs.data()});
    });
    check_accesses(stream, launched);
    release();
    return first;
  } catch (...) {
    release();
    throw;
  }
}

std::vector<uint64_t> CudaKernel::pack_arguments(const ArgMap& args, const std::map<std::string, int64_t>& params) const {
  if (gen_.is_program()) throw Error("kernel '" + gen_.kernel.name + "' runs as several launches (global barriers); launch() it");
  if (!gen_.bulk_copies.empty())  // (a tensor map holds the arrays' addresses: made for each call)
    throw Error("kernel '" + gen_.kernel.name + "' fills tiles with the tensor memory accelerator; launch() it");
  check_index_width(gen_, params);
  if (!checked_.accesses.empty()) const_cast<CudaKernel*>(this)->load();  // (the bounds record is allocated with the module)
  return pack(gen_, args, params, checked_.extents_of.at(0), bounds_.ptr()).slots;
}

void CudaKernel::launch_slots(void** slot_pointers, const LaunchDims& dims, void* stream) {
  if (gen_.is_program()) throw Error("kernel '" + gen_.kernel.name + "' runs as several launches (global barriers); launch() it");
  if (dims.empty()) return;
  check_grid(gen_.kernel.name, dims);
  load();
  launch_function(gen_, function_, dims, shared_bytes_, stream, slot_pointers);
  check_accesses(stream, {{0, slot_pointers}});
}

void CudaKernel::check_accesses(void* stream, const std::vector<std::pair<size_t, void**>>& launched) {
  bool any = false;
  for (auto& [function, slots] : launched) any |= !checked_.extents_of.at(function).empty();
  if (!any) return;
  // (one synchronization per call: most of the checks' price, bench/gpu.py's 'checked' rows)
  const DriverApi& d = driver_api();
  check(d.cuStreamSynchronize(static_cast<CUstream>(stream)), "kernel execution");
  int64_t record[3] = {0, 0, 0};
  check(d.cuMemcpyDtoH(record, reinterpret_cast<CUdeviceptr>(bounds_.ptr()), sizeof record), "cuMemcpyDtoH");
  if (!record[0]) return;
  const int64_t zero[4] = {0, 0, 0, 0};
  bounds_.upload(zero, sizeof zero);
  const CheckedAccess& a = checked_.accesses.at(size_t(record[1]));
  int64_t extent = 0;
  for (auto& [function, slots] : launched) {
    const LoopKernel& k = gen_.is_program() ? gen_.launches[function].kernel : gen_.kernel;
    const std::vector<int>& extents = checked_.extents_of.at(function);
    for (size_t e = 0; e < extents.size(); ++e)
      if (k.arguments[size_t(extents[e])].name == a.array)  // (the slot after the arguments is the record; the extents follow)
        extent = *static_cast<int64_t*>(slots[k.arguments.size() + 1 + e]);
  }
  throw ArgumentError(checked_access_failure(gen_.kernel, a, record[2], extent));
}

void CudaKernel::launch_bound(const ArgMap& args, const std::map<std::string, int64_t>& params, const LaunchDims& dims, void* stream) {
  if (gen_.is_program()) {
    launch_program(args, params, stream);
    return;
  }
  if (dims.empty()) return;
  check_grid(gen_.kernel.name, dims);
  load();
  KernelParams kp = pack(gen_, args, params, checked_.extents_of.at(0), bounds_.ptr());
  launch_slots(kp.ptrs.data(), dims, stream);  // (its grid check and load pass at once now)
}

double CudaKernel::time(const ArgMap& args, int reps) { return time_each({args}, reps).median; }

CudaKernel::Timing CudaKernel::time_each(const std::vector<ArgMap>& sets, int reps) {
  const DriverApi& d = driver_api();
  if (sets.empty()) throw Error("time_each: no argument sets");
  for (int i = 0; i < 3; ++i) launch(sets[size_t(i) % sets.size()]);
  synchronize();
  CUevent start, stop;
  check(d.cuEventCreate(&start, 0), "cuEventCreate");
  check(d.cuEventCreate(&stop, 0), "cuEventCreate");
  std::vector<float> ms;
  for (int i = 0; i < std::max(1, reps); ++i) {
    d.cuEventRecord(start, nullptr);
    launch(sets[size_t(i) % sets.size()]);
    d.cuEventRecord(stop, nullptr);
    check(d.cuEventSynchronize(stop), "kernel execution");
    float t = 0;
    d.cuEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return Timing{ms[ms.size() / 2], ms.front(), ms.back(), int(ms.size())};
}

void CudaKernel::call_host(const ArgMap& host_args) {
  auto params = bind_parameters(gen_.kernel, host_args);
  check_index_width(gen_, params);
  std::map<std::string, DeviceBuffer> buffers;
  ArgMap dev = host_args;
  for (auto& a : gen_.kernel.arguments) {
    if (a.kind != Argument::Array) continue;
    const ArrayRef& h = host_args.at(a.name).array;
    size_t bytes = size_t(storage_elements(a, params)) * size_t(h.dtype.bytes());
    DeviceBuffer b(bytes);
    b.upload(h.data, bytes);  // outputs too: elements the kernel does not write keep their values
    dev[a.name].array.data = b.ptr();
    buffers.emplace(a.name, std::move(b));
  }
  launch(dev);
  synchronize();
  for (auto& a : gen_.kernel.arguments) {
    if (a.kind != Argument::Array || !gen_.kernel.is_written(a.name)) continue;
    const ArrayRef& h = host_args.at(a.name).array;
    buffers.at(a.name).download(h.data, size_t(storage_elements(a, params)) * size_t(h.dtype.bytes()));
  }
}

}  // namespace loom::cuda
