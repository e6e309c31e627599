// The pybind11 module loom._loom: the public C++ API (include/loom) as the
// loom Python package needs it. Kernels are immutable values; every
// transformation is reached through the registry by name (the package builds
// one Python function per registered transformation from the schemas
// `transforms()` returns), so a transformation added in C++ needs no binding
// here. Calls bind NumPy arrays (host) or device pointers (PyTorch/CuPy,
// through __cuda_array_interface__) by name; the per-call path stays in C++.
#include "loom/json.h"
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "loom/statistics.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "loom/variants.h"
#include "../src/cli/cli.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

namespace py = pybind11;
using namespace loom;

namespace {

// Read through NumPy's Python attributes: Debian 12's pybind11 (2.10) reads the
// dtype struct at offsets NumPy 2 changed, so d.itemsize()/d.kind() are wrong there.
Type dtype_of(const py::dtype& d) {
  const int itemsize = py::cast<int>(d.attr("itemsize"));
  const char kind = py::cast<std::string>(d.attr("kind"))[0];
  auto sized = [&](ScalarKind k1, ScalarKind k2, ScalarKind k4, ScalarKind k8) {
    switch (itemsize) {
      case 1: return Type{k1};
      case 2: return Type{k2};
      case 4: return Type{k4};
      default: return Type{k8};
    }
  };
  switch (kind) {
    case 'f':
      if (itemsize == 2) return Type{ScalarKind::Float16};
      return itemsize == 4 ? types::float32 : types::float64;
    case 'i': return sized(ScalarKind::Int8, ScalarKind::Int16, ScalarKind::Int32, ScalarKind::Int64);
    case 'u': return sized(ScalarKind::UInt8, ScalarKind::UInt16, ScalarKind::UInt32, ScalarKind::UInt64);
    case 'b': return types::boolean;
    default: break;
  }
  throw ArgumentError("unsupported NumPy dtype '" + py::cast<std::string>(py::str(static_cast<const py::handle&>(d))) + "'");
}

// The NumPy dtype of a Loom type (bfloat16 has none: refused).
py::dtype numpy_dtype(Type t) {
  static const std::map<ScalarKind, const char*> names{
      {ScalarKind::Bool, "bool"},       {ScalarKind::Int8, "int8"},       {ScalarKind::Int16, "int16"},
      {ScalarKind::Int32, "int32"},     {ScalarKind::Int64, "int64"},     {ScalarKind::UInt8, "uint8"},
      {ScalarKind::UInt16, "uint16"},   {ScalarKind::UInt32, "uint32"},   {ScalarKind::UInt64, "uint64"},
      {ScalarKind::Float16, "float16"}, {ScalarKind::Float32, "float32"}, {ScalarKind::Float64, "float64"}};
  auto it = names.find(t.kind);
  if (it == names.end()) throw ArgumentError(t.name() + " arrays have no NumPy dtype");
  return py::dtype(it->second);
}

// Binds a call's keyword arguments: arrays (NumPy, checked C-contiguous) and scalars;
// missing outputs are allocated once the parameters are known. Returns the arrays by name.
struct HostCall {
  ArgMap args;
  std::map<std::string, py::array> arrays;
};

// Whether an argument is declared in Fortran order (order=F): column-major strides.
bool is_fortran(const Argument& a) {
  if (a.shape.size() < 2 || a.strides.size() != a.shape.size()) return false;
  auto f = column_major_strides(a.shape);
  for (size_t d = 0; d < f.size(); ++d)
    if (f[d].str() != a.strides[d].str()) return false;
  return true;
}

HostCall bind_host(const LoopKernel& k, const py::dict& kwargs) {
  HostCall c;
  for (auto& [key, value] : kwargs) {
    std::string name = py::cast<std::string>(key);
    const Argument* a = k.find_argument(name);
    bool is_param = false;
    for (auto& p : k.parameters()) is_param |= p == name;
    if (!a && !is_param) throw ArgumentError("kernel '" + k.name + "' has no argument '" + name + "'");
    if (a && a->kind == Argument::Array) {
      if (!py::isinstance<py::array>(value))
        throw ArgumentError("argument '" + name + "' must be an array (NumPy, or a CUDA tensor for the cuda target)");
      py::array arr = py::reinterpret_borrow<py::array>(value);
      // the layout the kernel declares: Fortran order (order=F) takes F-contiguous arrays, the rest C-contiguous
      bool fortran = is_fortran(*a);
      if (fortran ? !(arr.flags() & py::array::f_style) : !(arr.flags() & py::array::c_style))
        throw ArgumentError("array '" + name + "' must be " + (fortran ? "Fortran-contiguous (use numpy.asfortranarray)" : "C-contiguous (use numpy.ascontiguousarray)"));
      if (k.is_written(name) && !arr.writeable()) throw ArgumentError("array '" + name + "' is written by the kernel but read-only");
      ArrayRef ref{arr.mutable_data(), dtype_of(arr.dtype()), {}, true};
      for (py::ssize_t d = 0; d < arr.ndim(); ++d) ref.shape.push_back(arr.shape(d));
      c.args[name] = ArgValue::of(ref);
      c.arrays[name] = arr;
    } else if (py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value) || (!PyFloat_Check(value.ptr()) && PyIndex_Check(value.ptr()))) {
      c.args[name] = ArgValue::of_int(py::cast<int64_t>(py::int_(py::reinterpret_borrow<py::object>(value))));  // ints, NumPy integers
    } else if (PyFloat_Check(value.ptr()) || PyNumber_Check(value.ptr())) {
      c.args[name] = ArgValue::of_float(py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(value))));  // floats, NumPy floats
    } else {
      throw ArgumentError("argument '" + name + "' must be a number, got " + py::cast<std::string>(py::str(value.get_type())));
    }
  }
  // outputs not given: allocated from the parameters the given arguments determine
  std::vector<const Argument*> missing;
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array && !c.args.count(a.name)) missing.push_back(&a);
  if (!missing.empty()) {
    // parameters from the given arrays and values only
    LoopKernel given = k;
    given.arguments.edit().clear();
    for (auto& a : k.arguments)
      if (!(a.kind == Argument::Array && !c.args.count(a.name))) given.arguments.edit().push_back(a);
    std::map<std::string, int64_t> params = bind_parameters(given, c.args);
    for (auto* a : missing) {
      if (!k.is_written(a->name)) throw ArgumentError("missing input array '" + a->name + "'");
      std::vector<py::ssize_t> shape;
      for (auto s : expected_shape(*a, params)) shape.push_back(s);
      // numpy.empty, not py::array(dtype, shape): see dtype_of
      py::array arr = py::module_::import("numpy").attr("empty")(py::cast(shape), numpy_dtype(a->dtype), is_fortran(*a) ? "F" : "C");
      ArrayRef ref{arr.mutable_data(), a->dtype, {}, true};
      for (auto s : shape) ref.shape.push_back(s);
      c.args[a->name] = ArgValue::of(ref);
      c.arrays[a->name] = arr;
    }
  }
  return c;
}

// A kernel compiled for one target, kept by the Python kernel object between calls.
struct Compiled {
  std::string target;
#ifdef LOOM_HAS_CPU_TARGET
  std::unique_ptr<cpu::CpuKernel> cpu;
#endif
  std::unique_ptr<cuda::CudaKernel> gpu;
  std::unique_ptr<GeneratedKernel> interpreted;
};

std::shared_ptr<Compiled> compile_for(const LoopKernel& k, const std::string& target) {
  auto c = std::make_shared<Compiled>();
  c->target = target;
  if (target == "cuda") {
    c->gpu = std::make_unique<cuda::CudaKernel>(k);
  } else if (target == "cpu") {
#ifdef LOOM_HAS_CPU_TARGET
    c->cpu = std::make_unique<cpu::CpuKernel>(k);
#else
    throw Error("the cpu target is not built (LOOM_WITH_LLVM=OFF); use target='interpreter' or 'cuda'");
#endif
  } else if (target == "interpreter") {
    c->interpreted = std::make_unique<GeneratedKernel>(generate(k));
  } else {
    throw Error("unknown target '" + target + "' (cuda, cpu or interpreter)");
  }
  return c;
}

py::tuple run_host(Compiled& c, const LoopKernel& k, const py::dict& kwargs) {
  HostCall call = bind_host(k, kwargs);
  {
    py::gil_scoped_release release;
    if (c.gpu) c.gpu->call_host(call.args);
#ifdef LOOM_HAS_CPU_TARGET
    else if (c.cpu) c.cpu->call(call.args);
#endif
    else interpret(*c.interpreted, call.args);
  }
  py::list out;
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array && k.is_written(a.name)) out.append(call.arrays.at(a.name));
  return py::tuple(out);
}

// Device arrays: name -> (pointer, typestr, shape) from __cuda_array_interface__.
void run_device(Compiled& c, const LoopKernel& k, const py::dict& arrays, const py::dict& scalars, uintptr_t stream) {
  if (!c.gpu) throw Error("device arrays need the cuda target");
  ArgMap args;
  for (auto& [key, v] : arrays) {
    auto t = py::cast<py::tuple>(v);
    // ("bfloat16": a device tensor of a dtype NumPy lacks, named by loom/kernel.py)
    std::string typestr = py::cast<std::string>(t[1]);
    ArrayRef ref{reinterpret_cast<void*>(py::cast<uintptr_t>(t[0])),
                 typestr == "bfloat16" ? Type{ScalarKind::BFloat16} : dtype_of(py::dtype(typestr)),
                 py::cast<std::vector<int64_t>>(t[2]), true};
    args[py::cast<std::string>(key)] = ArgValue::of(ref);
  }
  for (auto& [key, v] : scalars) {
    std::string name = py::cast<std::string>(key);
    args[name] = py::isinstance<py::float_>(v) ? ArgValue::of_float(py::cast<double>(v)) : ArgValue::of_int(py::cast<int64_t>(v));
  }
  py::gil_scoped_release release;
  c.gpu->launch(args, reinterpret_cast<void*>(stream));
}

// The per-call path for PyTorch CUDA tensors, one per kernel (all its
// specialized variants). `knl(...)` enters it from C (kernel_call below, a
// METH_FASTCALL method installed as the kernel class's __call__), so no
// Python frame runs: each call reads the tensors' pointers, dtypes and shapes
// and the scalars (attribute names interned once), looks the dtypes, shapes
// and scalar values up among the bindings made before (a variant's compiled
// kernel, its parameters and launch geometry, its packed argument slots) and
// launches with the new pointers on PyTorch's current stream. Anything else
// (a new signature, NumPy arrays, a view that is not contiguous, a pointer
// without the alignment a vector variant needs) is not taken: the general
// path (Python) runs and may bind() the signature.
class DeviceDispatcher {
 public:
  explicit DeviceDispatcher(const LoopKernel& k) {
    auto interned = [](const std::string& n) { return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(n.c_str())); };
    for (auto& a : k.arguments) {
      if (a.kind == Argument::Array && k.is_written(a.name)) written_.push_back(array_names_.size());
      (a.kind == Argument::Array ? array_names_ : scalar_names_).push_back(a.name);
      (a.kind == Argument::Array ? array_keys_ : scalar_keys_).push_back(interned(a.name));
    }
    for (const char* n : {"data_ptr", "is_cuda", "is_contiguous", "dtype", "shape", "get_device"}) attr_.push_back(interned(n));
  }

  // The call with keyword arguments as vectorcall passes them (values[j] is
  // named kwnames[j]): the written arrays as a new tuple, or nullptr with no
  // Python error set when this path does not take the call.
  PyObject* try_call(PyObject* const* values, PyObject* kwnames) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    auto lookup = [&](const py::object& key) -> PyObject* {
      for (Py_ssize_t j = 0; j < nkw; ++j)  // call sites intern their keywords: identity first
        if (PyTuple_GET_ITEM(kwnames, j) == key.ptr()) return values[j];
      for (Py_ssize_t j = 0; j < nkw; ++j)
        if (PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, j), key.ptr()) == 0) return values[j];
      return nullptr;
    };
    if (!read(size_t(nkw), lookup)) return nullptr;
    const Binding* b = find_binding();
    if (!b) return nullptr;
    // this call's slots (a copy: another thread may call while this one launches without the GIL),
    // on the stack for up to 32 arguments
    constexpr size_t kInline = 32;
    uint64_t inline_slots[kInline];
    void* inline_pointers[kInline];
    std::vector<uint64_t> heap_slots;
    std::vector<void*> heap_pointers;
    size_t n = b->slots.size();
    uint64_t* slots = inline_slots;
    void** pointers = inline_pointers;
    if (n > kInline) {
      heap_slots.resize(n);
      heap_pointers.resize(n);
      slots = heap_slots.data();
      pointers = heap_pointers.data();
    }
    for (size_t s = 0; s < n; ++s) pointers[s] = &slots[s];
    if (!fill_slots(*b, slots)) return nullptr;  // a pointer without the alignment: the general path falls back
    void* stream = current_stream();
    if (!stream && PyErr_Occurred()) {
      PyErr_Clear();
      return nullptr;
    }
    // the result before the GIL is released: another thread's call reuses obj_
    PyObject* out = PyTuple_New(Py_ssize_t(written_.size()));
    for (size_t i = 0; i < written_.size(); ++i) {
      Py_INCREF(obj_[written_[i]]);
      PyTuple_SET_ITEM(out, Py_ssize_t(i), obj_[written_[i]]);
    }
    py::object result = py::reinterpret_steal<py::object>(out);
    std::shared_ptr<Compiled> compiled = b->compiled;  // (a bind() while the GIL is released may drop the binding)
    LaunchDims dims = b->dims;
    {
      py::gil_scoped_release release;
      compiled->gpu->launch_slots(pointers, dims, stream);
    }
    return result.release().ptr();
  }

  // Remembers the signature of these arguments for `compiled` (the variant
  // the general path chose for them); false when they are not for this path.
  bool bind(std::shared_ptr<Compiled> compiled, const LoopKernel& k, const py::dict& kwargs) {
    if (!compiled->gpu || compiled->gpu->generated().is_program() || !compiled->gpu->generated().bulk_copies.empty() || !read_dict(kwargs))
      return false;  // (several launches, or tensor maps made for each call's arrays: the general path)
    if (bindings_.size() > 4096) bindings_.clear();
    last_ = nullptr;
    ArgMap args;
    for (size_t i = 0; i < array_names_.size(); ++i) {
      ArgValue v;
      v.kind = ArgValue::Array;
      v.array.data = reinterpret_cast<void*>(ptr_[i]);
      v.array.dtype = dtype_[i];
      v.array.shape = shape_[i];
      v.array.dense = true;
      args[array_names_[i]] = v;
    }
    for (size_t i = 0; i < scalar_names_.size(); ++i)
      if (has_scalar_[i]) args[scalar_names_[i]] = scalar_[i];
    Binding b;
    b.compiled = compiled;
    auto params = bind_parameters(k, args);  // the checks: dtypes, shapes, assumptions
    b.dims = launch_dims(compiled->gpu->generated(), params);
    b.slots = compiled->gpu->pack_arguments(args, params);
    const auto& alignment = compiled->gpu->generated().argument_alignment;
    for (auto& name : array_names_) {
      int slot = -1;
      for (size_t a = 0; a < k.arguments.size(); ++a)
        if (k.arguments[a].name == name) slot = int(a);
      b.array_slot.push_back(slot);
      auto al = alignment.find(name);
      b.alignment.push_back(al == alignment.end() ? 1 : int64_t(al->second));
    }
    bindings_[key_] = std::move(b);
    return true;
  }

  // The floor under any per-call path: `reps` launches of the binding of
  // these arguments from a C++ loop, then a synchronization; microseconds per
  // launch (bench/launch_overhead.py prints it beside the Python paths).
  double launch_floor(const py::dict& kwargs, int reps) {
    if (!read_dict(kwargs)) throw ArgumentError("launch_floor: the arguments are not CUDA tensors of a bound signature");
    const Binding* b = find_binding();
    if (!b) throw ArgumentError("launch_floor: call the kernel with these arguments first");
    std::vector<uint64_t> slots(b->slots.size());
    if (!fill_slots(*b, slots.data())) throw ArgumentError("launch_floor: an array is not aligned as the kernel's vector accesses need");
    std::vector<void*> pointers;
    for (auto& s : slots) pointers.push_back(&s);
    void* stream = current_stream();
    py::gil_scoped_release release;
    cuda::synchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) b->compiled->gpu->launch_slots(pointers.data(), b->dims, stream);
    cuda::synchronize();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / std::max(1, reps);
  }

 private:
  enum Attribute { DataPtr, IsCuda, IsContiguous, Dtype, Shape, GetDevice };  // positions in attr_

  struct Binding {
    std::shared_ptr<Compiled> compiled;
    LaunchDims dims;
    std::vector<uint64_t> slots;     // the arguments packed at bind time (array pointers replaced per call)
    std::vector<int> array_slot;     // per array: its slot, or -1
    std::vector<int64_t> alignment;  // per array: the bytes its pointer must be a multiple of
  };

  // The binding's packed arguments with this call's array pointers (ptr_)
  // in `slots` (as many as the binding has); false when a pointer lacks the
  // alignment the binding's vector accesses need.
  bool fill_slots(const Binding& b, uint64_t* slots) const {
    std::memcpy(slots, b.slots.data(), b.slots.size() * sizeof(uint64_t));
    for (size_t i = 0; i < b.array_slot.size(); ++i) {
      int slot = b.array_slot[i];
      if (slot < 0) continue;
      uintptr_t p = ptr_[i];
      if (b.alignment[i] > 1 && p % uintptr_t(b.alignment[i])) return false;
      std::memcpy(&slots[size_t(slot)], &p, sizeof p);
    }
    return true;
  }

  // The binding of key_: the last one found first (a loop calls with one signature).
  const Binding* find_binding() {
    if (last_ && key_ == last_key_) return last_;
    auto it = bindings_.find(key_);
    if (it == bindings_.end()) return nullptr;
    last_ = &it->second;
    last_key_ = key_;
    return last_;
  }

  bool read_dict(const py::dict& kwargs) {
    return read(size_t(PyDict_Size(kwargs.ptr())), [&](const py::object& key) { return PyDict_GetItem(kwargs.ptr(), key.ptr()); });
  }

  // Reads the arguments (`given` keywords, found by `lookup`) into
  // ptr_/dtype_/shape_/scalar_ and key_; false when they are not PyTorch CUDA
  // tensors (and numbers) this path takes. Leaves no Python error set.
  template <class Lookup>
  bool read(size_t given, Lookup&& lookup) {
    if (given > array_names_.size() + scalar_names_.size()) return false;
    size_t n = array_names_.size();
    obj_.resize(n);
    ptr_.resize(n);
    dtype_.resize(n);
    shape_.resize(n);
    key_.clear();
    for (size_t i = 0; i < n; ++i) {
      PyObject* o = lookup(array_keys_[i]);
      if (!o) return false;
      obj_[i] = o;
      py::object cuda = attr(o, IsCuda);
      if (!cuda || cuda.ptr() != Py_True) return false;
      py::object contiguous = call0(o, IsContiguous);
      if (!contiguous || contiguous.ptr() != Py_True) return false;
      py::object p = call0(o, DataPtr);
      if (!p) return false;
      ptr_[i] = uintptr_t(PyLong_AsUnsignedLongLong(p.ptr()));
      py::object dt = attr(o, Dtype);
      if (!dt) return false;
      auto known = torch_dtypes_.find(dt.ptr());
      if (known != torch_dtypes_.end()) {
        dtype_[i] = known->second;
      } else {
        try {
          dtype_[i] = dtype_of_torch(dt);
        } catch (const ArgumentError&) {
          return false;  // the general path says what is wrong
        }
      }
      py::object shape = attr(o, Shape);
      if (!shape || !PyTuple_Check(shape.ptr())) return false;
      Py_ssize_t rank = PyTuple_GET_SIZE(shape.ptr());
      shape_[i].resize(size_t(rank));
      for (Py_ssize_t d = 0; d < rank; ++d) shape_[i][size_t(d)] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), d));
      key_.push_back(int64_t(dtype_[i].kind));
      key_.push_back(int64_t(rank));
      key_.insert(key_.end(), shape_[i].begin(), shape_[i].end());
      if (device_index_ < 0) {
        py::object dev = call0(o, GetDevice);
        if (!dev) return false;
        device_index_ = int(PyLong_AsLong(dev.ptr()));
        device_index_obj_ = std::move(dev);
      }
    }
    size_t seen = n;
    has_scalar_.assign(scalar_names_.size(), false);
    scalar_.resize(scalar_names_.size());
    for (size_t i = 0; i < scalar_names_.size(); ++i) {
      PyObject* o = lookup(scalar_keys_[i]);
      if (!o) {
        key_.push_back(INT64_MIN);  // a parameter the shapes give
        continue;
      }
      ++seen;
      has_scalar_[i] = true;
      if (PyFloat_Check(o)) {
        scalar_[i] = ArgValue::of_float(PyFloat_AsDouble(o));
        int64_t bits;
        std::memcpy(&bits, &scalar_[i].f, sizeof bits);
        key_.push_back(bits);
      } else if (PyLong_Check(o) && !PyBool_Check(o)) {
        scalar_[i] = ArgValue::of_int(PyLong_AsLongLong(o));
        key_.push_back(scalar_[i].i);
      } else {
        return false;  // NumPy scalars and the like: the general path
      }
    }
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return seen == given;  // an unknown keyword: the general path says what is wrong
  }

  py::object attr(PyObject* o, Attribute which) {
    PyObject* r = PyObject_GetAttr(o, attr_[which].ptr());
    if (!r) PyErr_Clear();
    return py::reinterpret_steal<py::object>(r);
  }
  py::object call0(PyObject* o, Attribute which) {
    PyObject* r = PyObject_CallMethodNoArgs(o, attr_[which].ptr());
    if (!r) PyErr_Clear();
    return py::reinterpret_steal<py::object>(r);
  }

  // PyTorch's current stream on the tensors' device: the caller's order of
  // work (nullptr with a Python error set when PyTorch cannot say).
  void* current_stream() {
    if (!current_stream_) current_stream_ = py::module_::import("torch._C").attr("_cuda_getCurrentRawStream");
    PyObject* s = PyObject_CallOneArg(current_stream_.ptr(), device_index_obj_.ptr());
    if (!s) return nullptr;
    void* stream = PyLong_AsVoidPtr(s);
    Py_DECREF(s);
    return stream;
  }

  Type dtype_of_torch(const py::handle& dtype) {
    static const std::map<std::string, Type> names{
        {"torch.float32", types::float32}, {"torch.float64", types::float64}, {"torch.float16", Type{ScalarKind::Float16}},
        {"torch.bfloat16", Type{ScalarKind::BFloat16}}, {"torch.int32", types::int32}, {"torch.int64", types::int64},
        {"torch.int8", Type{ScalarKind::Int8}}, {"torch.int16", Type{ScalarKind::Int16}}, {"torch.uint8", Type{ScalarKind::UInt8}},
        {"torch.bool", types::boolean}};
    std::string n = py::cast<std::string>(py::str(dtype));
    auto nt = names.find(n);
    if (nt == names.end()) throw ArgumentError("unsupported tensor dtype '" + n + "'");
    torch_dtypes_[dtype.ptr()] = nt->second;  // dtype objects are singletons that live as long as torch
    return nt->second;
  }

  std::vector<std::string> array_names_, scalar_names_;
  std::vector<py::object> array_keys_, scalar_keys_, attr_;
  std::vector<size_t> written_;  // indices into the arrays
  std::map<std::vector<int64_t>, Binding> bindings_;
  const Binding* last_ = nullptr;  // into bindings_ (map nodes stay put until a clear)
  std::vector<int64_t> last_key_;
  // the arguments of the call being read
  std::vector<PyObject*> obj_;  // borrowed from the call's arguments
  std::vector<uintptr_t> ptr_;
  std::vector<Type> dtype_;
  std::vector<std::vector<int64_t>> shape_;
  std::vector<ArgValue> scalar_;
  std::vector<bool> has_scalar_;
  std::vector<int64_t> key_;
  std::map<PyObject*, Type> torch_dtypes_;
  py::object current_stream_;
  int device_index_ = -1;
  py::object device_index_obj_;
};

// Loom's exceptions as the Python exceptions of the same names (set as the
// current Python error); false for anything else.
bool set_python_error(std::exception_ptr p);

// LoopKernel.__call__ (installed by install_fast_call): PyTorch CUDA tensors
// of a signature bound before go straight to the dispatcher in C++; every
// other call runs the Python method `_call_general` with the same arguments.
PyObject* kernel_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static PyObject* dispatch_name = PyUnicode_InternFromString("_dispatch");
  static PyObject* general_name = PyUnicode_InternFromString("_call_general");
  if (nargs == 0 && kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
    PyObject* d = PyObject_GetAttr(self, dispatch_name);
    if (!d) {
      PyErr_Clear();
    } else if (d != Py_None) {
      PyObject* r = nullptr;
      try {
        r = py::cast<DeviceDispatcher*>(py::handle(d))->try_call(args + nargs, kwnames);
      } catch (py::error_already_set& e) {
        Py_DECREF(d);
        e.restore();
        return nullptr;
      } catch (...) {
        Py_DECREF(d);
        if (!set_python_error(std::current_exception())) PyErr_SetString(PyExc_RuntimeError, "unexpected C++ exception in a kernel call");
        return nullptr;
      }
      if (r) {
        Py_DECREF(d);
        return r;
      }
    }
    Py_XDECREF(d);
  }
  PyObject* general = PyObject_GetAttr(self, general_name);
  if (!general) return nullptr;
  PyObject* r = PyObject_Vectorcall(general, args, size_t(nargs), kwnames);
  Py_DECREF(general);
  return r;
}

PyMethodDef kernel_call_def = {
    "__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(kernel_call)), METH_FASTCALL | METH_KEYWORDS,
    "Runs the kernel. NumPy arrays run on the CPU target or are copied to the GPU and back; CUDA tensors\n"
    "(PyTorch, CuPy: __cuda_array_interface__) run in place on the GPU. Returns the written arrays in\n"
    "argument order; with a queue as first argument (loopy's form) returns (None, outputs)."};

// What a compiled variant went through, as Triton's compiled.asm: the kernel
// as transformed, after preprocessing, its schedule, and the target's code
// (CUDA C, PTX, CUBIN and NVRTC's resource report; or LLVM IR).
py::dict stages(const Compiled& c, const LoopKernel& k) {
  py::dict d;
  d["kernel"] = k.str();
  d["json"] = kernel_to_json(k);
  const GeneratedKernel* g = c.gpu ? &c.gpu->generated() : c.interpreted ? c.interpreted.get() : nullptr;
#ifdef LOOM_HAS_CPU_TARGET
  if (c.cpu) g = &c.cpu->generated();
#endif
  if (g) {
    d["preprocessed"] = g->kernel.str();
    d["schedule"] = g->linearization.str();
  }
  if (c.gpu) {
    d["cuda"] = c.gpu->source();
    d["cubin"] = py::bytes(c.gpu->binary().cubin);
    d["nvrtc_log"] = c.gpu->binary().log;
    d["registers"] = c.gpu->binary().registers;
    d["spill_bytes"] = c.gpu->binary().spill_bytes;
    d["shared_bytes"] = c.gpu->generated().local_bytes();
    d["disk_cache"] = c.gpu->binary().disk_cache;
    d["ptx"] = cuda::compile_ptx(c.gpu->source(), c.gpu->binary().arch);
  }
#ifdef LOOM_HAS_CPU_TARGET
  if (c.cpu) d["llvm"] = c.cpu->ir();
#endif
  return d;
}

std::string kind_name(TransformParam::Kind k) {
  switch (k) {
    case TransformParam::String: return "string";
    case TransformParam::Int: return "int";
    case TransformParam::Tag: return "tag";
    case TransformParam::TagMap: return "tag_map";
    case TransformParam::Text: return "text";
    case TransformParam::KeywordMap: return "keyword_map";
  }
  return "string";
}

// The Python exception objects, in the order of the C++ types set_python_error tries.
std::vector<PyObject*> python_errors;

bool set_python_error(std::exception_ptr p) {
  if (python_errors.size() != 7) return false;
  enum { Loom, Parse, Json, Transform, Kernel, Cuda, Argument };
  auto raise = [](int which, const std::exception& e) {
    PyErr_SetString(python_errors[size_t(which)], e.what());
    return true;
  };
  try {
    if (p) std::rethrow_exception(p);
  } catch (const JsonError& e) {
    return raise(Json, e);
  } catch (const ParseError& e) {
    return raise(Parse, e);
  } catch (const TransformError& e) {
    return raise(Transform, e);
  } catch (const KernelError& e) {
    return raise(Kernel, e);
  } catch (const CudaError& e) {
    return raise(Cuda, e);
  } catch (const ArgumentError& e) {
    return raise(Argument, e);
  } catch (const Error& e) {
    return raise(Loom, e);
  } catch (const DomainSyntaxError& e) {
    return raise(Parse, e);
  } catch (...) {
  }
  return false;
}

}  // namespace

PYBIND11_MODULE(_loom, m) {
  m.doc() = "Loom's C++ core (see the loom package for the Python API)";

  // C++ exceptions as Python exceptions of the same names, LoomError at the root
  static py::exception<Error> loom_error(m, "LoomError");
  static py::exception<ParseError> parse_error(m, "ParseError", loom_error.ptr());
  static py::exception<JsonError> json_error(m, "JsonError", parse_error.ptr());
  static py::exception<TransformError> transform_error(m, "TransformError", loom_error.ptr());
  static py::exception<KernelError> kernel_error(m, "KernelError", loom_error.ptr());
  static py::exception<CudaError> cuda_error(m, "CudaError", loom_error.ptr());
  static py::exception<ArgumentError> argument_error(m, "ArgumentError", loom_error.ptr());
  python_errors = {loom_error.ptr(), parse_error.ptr(), json_error.ptr(), transform_error.ptr(),
                   kernel_error.ptr(), cuda_error.ptr(), argument_error.ptr()};
  py::register_exception_translator([](std::exception_ptr p) {
    if (!set_python_error(p)) std::rethrow_exception(p);
  });

  py::class_<LoopKernel>(m, "Kernel")
      .def_readonly("name", &LoopKernel::name)
      .def("__str__", &LoopKernel::str)
      .def("structural_hash", &structural_hash)
      .def("structurally_equal", &structurally_equal)
      .def("inames", &LoopKernel::all_inames)
      .def("parameters", &LoopKernel::parameters)
      .def("argument_names", [](const LoopKernel& k) {
        std::vector<std::string> r;
        for (auto& a : k.arguments) r.push_back(a.name);
        return r;
      })
      .def("written_arrays", [](const LoopKernel& k) {
        std::vector<std::string> r;
        for (auto& a : k.arguments)
          if (a.kind == Argument::Array && k.is_written(a.name)) r.push_back(a.name);
        return r;
      })
      .def("scalar_arguments", [](const LoopKernel& k) {  // value arguments that are not parameters (alpha, beta)
        std::vector<std::string> r;
        auto params = k.parameters();
        for (auto& a : k.arguments)
          if (a.kind == Argument::Value && std::find(params.begin(), params.end(), a.name) == params.end()) r.push_back(a.name);
        return r;
      })
      .def("assumptions_hold", [](const LoopKernel& k, const std::map<std::string, int64_t>& p) { return assumptions_hold(k, p); })
      .def("iname_tag", [](const LoopKernel& k, const std::string& n) { return k.tag_of(n).str(); })
      .def("index_dtype", [](const LoopKernel& k) { return k.options.index_dtype.name(); })
      .def("do_not_specialize", [](const LoopKernel& k) {
        return std::vector<std::string>(k.options.do_not_specialize.begin(), k.options.do_not_specialize.end());
      })
      .def("argument_dtype", [](const LoopKernel& k, const std::string& n) {
        const Argument* a = k.find_argument(n);
        if (!a) throw ArgumentError("kernel '" + k.name + "' has no argument '" + n + "'");
        return a->dtype.name();
      })
      .def("open_dtype_arrays", [](const LoopKernel& k) {  // arrays whose dtype a call may choose
        std::vector<std::string> r;
        for (auto& a : k.arguments)
          if (a.kind == Argument::Array && a.dtype_inferred) r.push_back(a.name);
        return r;
      })
      .def("shape_parameters", [](const LoopKernel& k) {  // parameter -> [(array, axis)] where a shape is the bare parameter
        std::map<std::string, std::vector<std::pair<std::string, size_t>>> r;
        for (auto& a : k.arguments)
          for (size_t d = 0; d < a.shape.size(); ++d)
            if (auto v = a.shape[d].as<Var>()) r[v->name].push_back({a.name, d});
        return r;
      })
      .def("temporary_names", [](const LoopKernel& k) {
        std::vector<std::string> r;
        for (auto& [n, t] : k.temporaries) r.push_back(n);
        return r;
      });

  // Kernel statistics (loom/statistics.h): counts as objects with eval_with_dict, keys as dicts
  py::class_<Count>(m, "Count")
      .def("eval_with_dict", [](const Count& c, const std::map<std::string, int64_t>& params) { return c.eval(params); })
      .def("__str__", &Count::str)
      .def("__repr__", [](const Count& c) { return "Count(" + c.str() + ")"; })
      .def("__add__", [](const Count& a, const Count& b) { return a + b; })
      .def("__add__", [](const Count& a, int64_t b) { return a + Count::constant(b); })
      .def("__radd__", [](const Count& a, int64_t b) { return a + Count::constant(b); })
      .def("__mul__", [](const Count& a, int64_t f) { return a * f; })
      .def("__rmul__", [](const Count& a, int64_t f) { return a * f; })
      .def_property_readonly("closed_form", &Count::closed_form)
      .def_property_readonly("parameters", &Count::parameters);
  m.def("statistics", [](const LoopKernel& k, const std::string& kind, bool redundant, bool within_subscripts,
                         int subgroup_size, const std::string& granularity, const std::string& within, bool as_generated) {
    StatisticsOptions o;
    o.count_redundant_work = redundant;
    o.count_within_subscripts = within_subscripts;
    o.subgroup_size = subgroup_size;
    o.within = within;
    o.as_generated = as_generated;
    if (granularity == "workitem") o.granularity = CountGranularity::WorkItem;
    if (granularity == "subgroup") o.granularity = CountGranularity::SubGroup;
    if (granularity == "workgroup") o.granularity = CountGranularity::WorkGroup;
    auto strides = [](const std::map<int, Expr>& s) {
      py::dict d;
      for (auto& [axis, e] : s) {
        auto v = e ? constant_int(e) : std::nullopt;
        if (v) d[py::int_(axis)] = py::int_(*v);
        else if (e) d[py::int_(axis)] = py::str(e.str());
        else d[py::int_(axis)] = py::none();
      }
      return d;
    };
    py::list out;
    if (kind == "op") {
      for (auto& [key, c] : op_map(k, o))
        out.append(py::make_tuple(py::dict(py::arg("dtype") = key.dtype.name(), py::arg("name") = key.name,
                                           py::arg("count_granularity") = to_string(key.granularity), py::arg("kernel_name") = key.kernel),
                                  c));
    } else if (kind == "mem") {
      for (auto& [key, c] : mem_access_map(k, o))
        out.append(py::make_tuple(py::dict(py::arg("mtype") = key.mtype, py::arg("dtype") = key.dtype.name(),
                                           py::arg("lid_strides") = strides(key.lid_strides), py::arg("gid_strides") = strides(key.gid_strides),
                                           py::arg("direction") = key.direction, py::arg("variable") = key.variable,
                                           py::arg("count_granularity") = to_string(key.granularity), py::arg("kernel_name") = key.kernel),
                                  c));
    } else if (kind == "sync") {
      for (auto& [key, c] : synchronization_map(k, o))
        out.append(py::make_tuple(py::dict(py::arg("kind") = key.kind, py::arg("kernel_name") = key.kernel), c));
    } else {
      throw Error("statistics: kind is op, mem or sync");
    }
    return out;
  });

  m.def("parse_kernel", [](const std::string& text, const std::string& filename) {
    KernelFile f = parse_kernel_text(text, filename);
    return apply_transforms(f.kernel, f.transforms);
  });

  m.def("kernel_from_json", [](const std::string& text, const std::string& filename) {
    KernelFile f = kernel_file_from_json(text, filename);
    return apply_transforms(f.kernel, f.transforms);
  });
  m.def("kernel_to_json", [](const LoopKernel& k) { return kernel_to_json(k); });

  m.def("transforms", [] {
    py::list out;
    for (auto& t : transform_registry().all()) {
      py::list params;
      for (auto& p : t.params)
        params.append(py::make_tuple(p.name, kind_name(p.kind), p.required, p.help, p.type_name(), p.default_value, p.choices));
      out.append(py::make_tuple(t.name, t.doc, params));
    }
    return out;
  });

  m.def("apply_transform", [](const LoopKernel& k, const std::string& name, const std::vector<std::string>& positional,
                              const std::map<std::string, std::string>& keyword) {
    TransformStep step;
    step.name = name;
    step.positional = positional;
    step.keyword = keyword;
    return apply_transform(k, step);
  });

  m.def("apply_transform_script", [](const LoopKernel& k, const std::string& script) {
    return apply_transforms(k, parse_transform_script(script, "<script>"));
  });
  m.def("search_domain", [](const LoopKernel& k, const std::string& transform, const std::string& param,
                            const std::map<std::string, std::string>& bound) { return search_domain(transform, param, k, bound); });
  m.def("transform_schema_json", &transform_schema_json);
  {  // the tuner (loom/tuner.h): spaces as text or script lists, trials as dicts
    auto trial_dict = [](const tune::Trial& t) {
      py::dict d;
      d["key"] = t.key;
      d["sketch"] = t.sketch;
      d["script"] = t.script;
      d["status"] = tune::to_string(t.status);
      d["error"] = t.error;
      d["kernel_hash"] = t.kernel_hash;
      d["kernel"] = t.kernel_name;
      d["variant_hash"] = t.variant_hash;
      d["target"] = t.target;
      d["device"] = t.device;
      d["generate_seconds"] = t.generate_seconds;
      d["compile_seconds"] = t.compile_seconds;
      d["registers"] = t.registers;
      d["shared_bytes"] = t.shared_bytes;
      d["occupancy"] = t.occupancy;
      d["features"] = t.features;
      d["median_seconds"] = t.median_seconds;
      d["min_seconds"] = t.min_seconds;
      d["max_seconds"] = t.max_seconds;
      d["reps"] = t.reps;
      d["check"] = t.check;
      d["check_error"] = t.check_error;
      d["check_sizes"] = t.check_sizes;
      d["check_against"] = t.check_against;
      d["timestamp"] = t.timestamp;
      d["version"] = t.version;
      d["dtypes"] = t.dtypes;
      d["seed"] = t.seed;
      d["parameters"] = t.parameters;
      return d;
    };
    auto make_space = [](const LoopKernel& k, const std::string& kind, const std::vector<std::string>& texts, const std::string& target,
                         const std::map<std::string, int64_t>& sizes = {}) {
      if (kind == "auto") return tune::auto_space(k, target, sizes);
      if (kind == "scripts") return tune::Space::from_scripts(texts);
      if (kind == "json") return tune::Space::from_json(texts.at(0));
      return tune::Space::parse(texts.at(0));
    };
    m.def("space_text", [make_space](const LoopKernel& k, const std::string& kind, const std::vector<std::string>& texts, const std::string& target) {
      return make_space(k, kind, texts, target).str();
    });
    auto read_options = [](const py::dict& opts) {
      tune::Options o;
      o.target = opts["target"].cast<std::string>();
      o.strategy = opts["strategy"].cast<std::string>();
      o.trials = opts["trials"].cast<int>();
      o.seed = opts["seed"].cast<uint64_t>();
      o.log = opts["log"].cast<std::string>();
      o.resume = opts["resume"].cast<bool>();
      o.arch = opts["arch"].cast<std::string>();
      o.parameters = opts["parameters"].cast<std::map<std::string, int64_t>>();
      o.check_parameters = opts["check_parameters"].cast<std::map<std::string, int64_t>>();
      o.min_time_seconds = opts["min_time"].cast<double>();
      o.trial_timeout_seconds = opts["trial_timeout"].cast<double>();
      o.compile_timeout_seconds = opts["compile_timeout"].cast<double>();
      o.compile_workers = opts["workers"].cast<int>();
      o.gpus = opts["gpus"].cast<int>();
      if (opts.contains("feature_model")) o.feature_model = opts["feature_model"].cast<bool>();
      if (opts.contains("seed_logs")) o.seed_logs = opts["seed_logs"].cast<std::vector<std::string>>();
      if (opts.contains("time_limit")) o.time_limit_seconds = opts["time_limit"].cast<double>();
      if (opts.contains("references")) o.references = opts["references"].cast<bool>();
      if (opts.contains("settle")) o.settle = opts["settle"].cast<bool>();
      if (opts.contains("rtol")) o.rtol = opts["rtol"].cast<std::map<std::string, double>>();
      if (opts.contains("atol")) o.atol = opts["atol"].cast<std::map<std::string, double>>();
      if (opts.contains("check_inputs")) o.check_inputs = opts["check_inputs"].cast<std::map<std::string, std::string>>();
      if (opts.contains("restrictions") && py::len(opts["restrictions"]) > 0) {
        // (the tuner calls them with the GIL released, from copies of the options: the
        // functions are held where dropping them takes the GIL)
        std::shared_ptr<py::list> fns(new py::list(opts["restrictions"]), [](py::list* p) {
          py::gil_scoped_acquire gil;
          delete p;
        });
        o.restrict = [fns](const std::map<std::string, std::string>& values) {
          py::gil_scoped_acquire gil;
          py::dict d;
          for (auto& [k, v] : values) d[py::str(k)] = py::str(v);
          try {
            for (auto& f : *fns)
              if (!py::cast<bool>(py::bool_(f(d)))) return false;
          } catch (py::error_already_set& e) {
            throw Error(std::string("tune: a restriction raised: ") + e.what());
          }
          return true;
        };
      }
      o.worker_command = opts["worker_command"].cast<std::vector<std::string>>();
      return o;
    };
    // read_options' inverse, for a backend's measuring actors (`loom tune --ray`:
    // the command line's options; restrictions stay with the driver)
    auto options_dict = [](const tune::Options& o) {
      py::dict d;
      d["target"] = o.target;
      d["strategy"] = o.strategy;
      d["trials"] = o.trials;
      d["seed"] = o.seed;
      d["log"] = o.log;
      d["resume"] = o.resume;
      d["arch"] = o.arch;
      d["parameters"] = o.parameters;
      d["check_parameters"] = o.check_parameters;
      d["min_time"] = o.min_time_seconds;
      d["trial_timeout"] = o.trial_timeout_seconds;
      d["compile_timeout"] = o.compile_timeout_seconds;
      d["workers"] = o.compile_workers;
      d["gpus"] = o.gpus;
      d["feature_model"] = o.feature_model;
      d["seed_logs"] = o.seed_logs;
      d["time_limit"] = o.time_limit_seconds;
      d["references"] = o.references;
      d["settle"] = o.settle;
      d["rtol"] = o.rtol;
      d["atol"] = o.atol;
      d["check_inputs"] = o.check_inputs;
      d["worker_command"] = o.worker_command;
      return d;
    };
    auto trial_from = [](tune::Trial& t, const py::dict& d) {  // a backend's result for a trial (trial_dict's form)
      tune::Trial m;
      m.status = tune::trial_status_named(d["status"].cast<std::string>());
      m.error = d["error"].cast<std::string>();
      m.variant_hash = d["variant_hash"].cast<uint64_t>();
      m.device = d["device"].cast<std::string>();
      m.generate_seconds = d["generate_seconds"].cast<double>();
      m.compile_seconds = d["compile_seconds"].cast<double>();
      m.registers = d["registers"].cast<int>();
      m.shared_bytes = d["shared_bytes"].cast<int64_t>();
      m.median_seconds = d["median_seconds"].cast<double>();
      m.min_seconds = d["min_seconds"].cast<double>();
      m.max_seconds = d.contains("max_seconds") ? d["max_seconds"].cast<double>() : m.min_seconds;
      m.reps = d["reps"].cast<int>();
      if (d.contains("check")) {
        m.check = d["check"].cast<std::string>();
        m.check_error = d["check_error"].cast<double>();
        m.check_sizes = d["check_sizes"].cast<std::string>();
        if (d.contains("check_against")) m.check_against = d["check_against"].cast<std::string>();
      }
      t.adopt(m);
    };
    // Screening and measuring through a backend object (loom/ray_backend.py's
    // RayBackend: target, arch, device, max_shared_bytes, screen, measure).
    auto install_backend = [trial_from](tune::Options& o, py::object given) {
      // (the hooks' copies may be dropped with the GIL released: the object is held where dropping it takes the GIL)
      std::shared_ptr<py::object> held(new py::object(given), [](py::object* p) {
        py::gil_scoped_acquire gil;
        delete p;
      });
      const py::object& backend = *held;
      o.target = backend.attr("target").cast<std::string>();
      o.arch = backend.attr("arch").cast<std::string>();
      o.device = backend.attr("device").cast<std::string>();
      o.max_shared_bytes = backend.attr("max_shared_bytes").cast<int>();
      o.screen = [held](const std::vector<std::string>& scripts) {
        py::gil_scoped_acquire hold;
        std::vector<tune::ScreenResult> out;
        for (auto item : held->attr("screen")(scripts)) {
          py::dict d = item.cast<py::dict>();
          out.push_back({d["ok"].cast<bool>(), d.contains("stopped") && d["stopped"].cast<bool>(), d["error"].cast<std::string>(),
                         d["hash"].cast<uint64_t>(), d["generate_seconds"].cast<double>(), d["compile_seconds"].cast<double>(),
                         d.contains("registers") ? d["registers"].cast<int>() : -1, d.contains("threads") ? d["threads"].cast<int64_t>() : 0,
                         d.contains("shared_bytes") ? d["shared_bytes"].cast<int64_t>() : 0,
                         d.contains("features") ? d["features"].cast<std::map<std::string, double>>() : std::map<std::string, double>{}});
        }
        return out;
      };
      o.measure = [held, trial_from](std::vector<tune::Trial>& trials, const std::function<void(size_t)>& finished) {
        py::gil_scoped_acquire hold;
        py::list scripts;
        for (auto& t : trials) scripts.append(t.script);
        held->attr("measure")(scripts, py::cpp_function([&](size_t i, const py::dict& d) {
                                  trial_from(trials.at(i), d);
                                  finished(i);
                                }));
      };
    };
    py::class_<tune::Measurer>(m, "Measurer")
        .def(py::init([read_options](const LoopKernel& k, const py::dict& opts) { return new tune::Measurer(k, read_options(opts)); }))
        .def("info", [](tune::Measurer& w) {
          py::gil_scoped_release release;
          std::string t = w.target(), d = w.device(), a = w.arch();
          int s = w.max_shared_bytes();
          py::gil_scoped_acquire hold;
          py::dict r;
          r["target"] = t, r["device"] = d, r["arch"] = a, r["max_shared_bytes"] = s;
          return r;
        })
        .def("measure", [trial_dict](tune::Measurer& w, const std::string& script) {
          tune::Trial t;
          {
            py::gil_scoped_release release;
            t = w.measure(script);
          }
          return trial_dict(t);
        });
    m.def("tune", [trial_dict, make_space, read_options, install_backend](const LoopKernel& k, const std::string& kind, const std::vector<std::string>& texts,
                                                                   const py::dict& opts, py::object progress) {
      tune::Options o = read_options(opts);
      py::object backend = opts.contains("backend") ? py::object(opts["backend"]) : py::none();
      if (!backend.is_none()) install_backend(o, backend);  // screening and measuring elsewhere (loom/ray_backend.py)
      tune::Space space = make_space(k, kind, texts, o.target, o.parameters);
      // after each trial: Ctrl-C stops the run (every finished trial is in the log), then the progress report
      o.progress = [&](const tune::Trial& t, const std::optional<tune::Trial>& best, int done, int total) {
        py::gil_scoped_acquire hold;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!progress.is_none()) progress(trial_dict(t), best ? py::object(trial_dict(*best)) : py::none(), done, total);
      };
      tune::Result r;
      {
        py::gil_scoped_release release;
        r = tune::tune(k, space, o);
      }
      py::dict d;
      py::list trials;
      for (auto& t : r.trials) trials.append(trial_dict(t));
      d["trials"] = trials;
      py::list resumed;
      for (auto& t : r.resumed) resumed.append(trial_dict(t));
      d["resumed"] = resumed;
      d["best"] = r.best ? py::object(trial_dict(*r.best)) : py::none();
      d["as_written"] = r.as_written ? py::object(trial_dict(*r.as_written)) : py::none();
      d["skipped"] = r.skipped;
      d["restricted"] = r.restricted;
      d["refused"] = r.refused;
      d["settled"] = r.settled;
      d["seeded"] = r.seeded;
      d["other_workloads"] = r.other_workloads;
      d["seconds"] = r.seconds;
      d["space"] = space.str();
      return d;
    });
    // The command line (src/cli): `loom tune --ray ADDRESS` continues here,
    // where Ray is; the tuner screens and measures on the cluster.
    m.def("cli_main", [options_dict, install_backend](const std::vector<std::string>& args) {
      std::vector<std::string> held = args;
      std::vector<char*> argv;
      for (auto& a : held) argv.push_back(a.data());
      argv.push_back(nullptr);
      auto ray = [&](tune::Options& o, const LoopKernel& k, const std::string& address) {
        py::gil_scoped_acquire hold;
        o.worker_command = {py::module_::import("sys").attr("executable").cast<std::string>(), "-c",
                            "import sys; from loom import _loom; sys.exit(_loom.tune_worker())"};
        py::dict opts = options_dict(o);
        opts["ray_address"] = address;  // (`auto`: Ray's own word for the cluster this machine belongs to)
        install_backend(o, py::module_::import("loom.ray_backend").attr("backend_of_json")(kernel_to_json(k), opts));
      };
      py::gil_scoped_release release;
      return cli::cli_main(int(held.size()), argv.data(), ray);
    });
    m.def("tune_worker", [] {  // the measuring worker's program (lp.tune runs python3 -c ... as one)
      py::gil_scoped_release release;
      return tune::worker_main(3, 4);
    });
    m.def("read_log", [trial_dict](const std::string& path) {
      py::list out;
      for (auto& t : tune::read_log(path)) out.append(trial_dict(t));
      return out;
    });
  }
  {
    auto to_dicts = [](const std::vector<VariantResult>& rs) {
      py::list out;
      for (auto& r : rs) {
        py::dict d;
        d["ok"] = r.ok;
        d["stopped"] = r.stopped;
        d["error"] = r.error;
        d["hash"] = r.hash;
        d["cuda"] = r.cuda;
        d["cubin"] = py::bytes(r.cubin);
        d["registers"] = r.registers;
        d["spill_bytes"] = r.spill_bytes;
        d["shared_bytes"] = r.shared_bytes;
        d["threads"] = r.threads;
        d["generate_seconds"] = r.generate_seconds;
        d["compile_seconds"] = r.compile_seconds;
        d["features"] = r.features;
        out.append(d);
      }
      return out;
    };
    m.def("compile_variants_of_kernels", [to_dicts](const std::vector<LoopKernel>& ks, int workers, bool compile, const std::string& arch) {
      VariantOptions o{workers, compile, arch};
      std::vector<VariantResult> r;
      {
        py::gil_scoped_release release;
        r = compile_variants(ks, o);
      }
      return to_dicts(r);
    });
    m.def(
        "compile_variants_of_scripts",
        [to_dicts](const LoopKernel& k, const std::vector<std::string>& scripts, int workers, bool compile, const std::string& arch,
                   const std::map<std::string, int64_t>& feature_parameters) {
          std::vector<std::vector<TransformStep>> steps;
          for (size_t i = 0; i < scripts.size(); ++i) steps.push_back(parse_transform_script(scripts[i], "<script " + std::to_string(i) + ">"));
          VariantOptions o{workers, compile, arch};
          o.feature_parameters = feature_parameters;  // (each variant's kernel features at these sizes: the tuner's feature model)
          std::vector<VariantResult> r;
          {
            py::gil_scoped_release release;
            r = compile_variants(k, steps, o);
          }
          return to_dicts(r);
        },
        py::arg("kernel"), py::arg("scripts"), py::arg("workers"), py::arg("compile"), py::arg("arch"),
        py::arg("feature_parameters") = std::map<std::string, int64_t>{});
  }
  m.def("fuse_kernels", [](const std::vector<LoopKernel>& ks, const std::vector<std::string>& suffixes,
                           const std::vector<std::tuple<std::string, int, int>>& flow) {
    std::vector<DataFlow> f;
    for (auto& [var, from, to] : flow) f.push_back(DataFlow{var, from, to});
    return fuse_kernels(ks, suffixes, f);
  });
  m.def("cuda_source", [](const LoopKernel& k) { return cuda::print_source(generate(k)); });
  m.def("schedule_text", [](const LoopKernel& k) { return generate(k).linearization.str(); });
  m.def("target_info", [](const std::string& arch) {  // the target model (loom/target_info.h) as a dict
    TargetInfo t = cuda::target_info(arch);
    py::dict d;
    d["kind"] = "cuda";
    d["arch"] = t.arch;
    d["compute_capability"] = t.compute_capability;
    d["max_threads_per_block"] = t.max_threads_per_block;
    d["warp_size"] = t.warp_size;
    d["static_shared_bytes"] = t.static_shared_bytes;
    d["max_shared_bytes"] = t.max_shared_bytes;
    d["max_private_bytes"] = t.max_private_bytes;
    d["max_registers_per_thread"] = t.max_registers_per_thread;
    d["registers_per_sm"] = t.registers_per_sm;
    d["max_threads_per_sm"] = t.max_threads_per_sm;
    d["async_copy"] = t.async_copy;
    d["warp_shuffle"] = t.warp_shuffle;
    d["tensor_memory_accelerator"] = t.tensor_memory_accelerator;
    d["vector_bytes"] = t.vector_bytes;
    std::vector<std::string> mma;
    for (auto& mi : t.matrix_instructions) mma.push_back(mi.name);
    d["matrix_instructions"] = mma;
    return d;
  }, py::arg("arch") = "");
  m.def("gpu_available", [] { return cuda::gpu_available(); });
  m.def("device_name", [] { return cuda::gpu_available() ? cuda::device().name + " (" + cuda::device().arch() + ")" : std::string(); });
  m.def("has_cpu_target", [] {
#ifdef LOOM_HAS_CPU_TARGET
    return true;
#else
    return false;
#endif
  });

  py::class_<Compiled, std::shared_ptr<Compiled>>(m, "Compiled")
      .def_readonly("target", &Compiled::target)
      .def("source", [](const Compiled& c) -> std::string {
        if (c.gpu) return c.gpu->source();
#ifdef LOOM_HAS_CPU_TARGET
        if (c.cpu) return c.cpu->ir();
#endif
        return "";
      });
  py::class_<DeviceDispatcher>(m, "DeviceDispatcher")
      .def(py::init<const LoopKernel&>())
      .def("bind", &DeviceDispatcher::bind)
      .def("launch_floor", &DeviceDispatcher::launch_floor);
  m.def("install_fast_call", [](const py::type& cls) {
    PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &kernel_call_def);
    if (!descr || PyObject_SetAttrString(cls.ptr(), "__call__", descr) != 0) {
      Py_XDECREF(descr);
      throw py::error_already_set();
    }
    Py_DECREF(descr);
  });
  m.def("compile", &compile_for);
  m.def("stages", &stages);
  m.def("run_host", &run_host);
  // The random arrays `loom run` and the tests use for a call at these
  // sizes (inputs seeded, index arrays inside what they index, CSR offsets
  // sorted, pure outputs poisoned), in NumPy's dense form of each layout:
  // what a differential test hands to another implementation unchanged.
  m.def("random_arrays", [](const LoopKernel& k, const std::map<std::string, int64_t>& params, uint64_t seed) {
    std::map<std::string, HostArray> made = make_host_arrays(k, params, seed);
    py::dict out;
    for (auto& [name, stored] : made) {
      const Argument* a = k.find_argument(name);
      HostArray dense = has_layout(*a) ? out_of_layout(stored, *a, params) : stored;
      py::array arr = py::module_::import("numpy").attr("empty")(py::cast(dense.shape), numpy_dtype(dense.dtype));
      // (dense.bytes, not arr.nbytes(): Debian's pybind11 reads NumPy 2's dtypes' item size wrong)
      std::memcpy(arr.mutable_data(), dense.bytes.data(), dense.bytes.size());
      out[py::str(name)] = is_fortran(*a) ? py::module_::import("numpy").attr("asfortranarray")(arr) : py::object(arr);
    }
    return out;
  }, py::arg("kernel"), py::arg("params"), py::arg("seed") = 0);
  m.def("run_device", &run_device, py::arg("compiled"), py::arg("kernel"), py::arg("arrays"), py::arg("scalars"),
        py::arg("stream") = 0);
}
