// Argument binding (parameters from shapes, dtype/shape checks) and host
// arrays: random inputs, poisoned outputs, tolerance-aware comparison.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>

#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include "loom/constraints.h"
#include "loom/half.h"
#include "loom/runtime.h"

namespace loom {

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n)) {
      std::string s;
      for (auto e : shape) s += (s.empty() ? "" : ", ") + std::to_string(e);
      throw ArgumentError("an array of shape (" + s + ") has more than 2^63 - 1 elements");
    }
  return n;
}

int64_t host_bytes(const LoopKernel& k, const std::map<std::string, int64_t>& params, std::string* largest) {
  int64_t total = 0, most = -1;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    int64_t bytes = 0;
    if (__builtin_mul_overflow(storage_elements(a, params), int64_t(a.dtype.bytes()), &bytes) ||
        __builtin_add_overflow(total, bytes, &total))
      throw ArgumentError("array '" + a.name + "' needs more than 2^63 - 1 bytes for these parameters");
    if (largest && bytes > most) {
      most = bytes;
      *largest = a.name;
    }
  }
  return total;
}

std::vector<int64_t> expected_shape(const Argument& a, const std::map<std::string, int64_t>& params) {
  std::vector<int64_t> s;
  for (auto& d : a.shape) {
    s.push_back(eval_int(d, params));
    if (s.back() < 0)
      throw ArgumentError("array '" + a.name + "' would have a negative extent: dimension " + std::to_string(s.size() - 1) + " (" +
                          d.str() + ") is " + std::to_string(s.back()) + " for these parameters");
  }
  return s;
}

namespace {
std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}
// Whether the parameter values satisfy the kernel's assumptions. Code was
// generated under them (bounds checks dropped, slabs, block counts), so a
// call that breaks them must be refused, never run. An isl emptiness test
// costs microseconds, comparable to a launch, so the last accepted values per
// assumption set are remembered: repeated launches compare a few integers.
// The cache holds a reference to each set, so a pointer cannot be reused by
// another set while it is a key.
void check_assumptions(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  if (!k.assumptions.defined()) return;
  isl_set* set = k.assumptions.get();
  struct Entry {
    Domain held;
    std::vector<int64_t> values;
  };
  thread_local std::vector<Entry> cache;
  std::vector<int64_t> values;
  std::vector<std::string> names = k.assumptions.params();
  for (auto& n : names) values.push_back(params.count(n) ? params.at(n) : 0);
  for (auto& e : cache)
    if (e.held.get() == set && e.values == values) return;
  // Launching compiled kernels from several threads is expected to work
  // (compiling is not yet: isl's context is shared), so the isl test is serialized.
  std::lock_guard<std::mutex> lock(isl_launch_mutex());
  isl_set* s = isl_set_copy(set);
  for (size_t i = 0; i < names.size(); ++i)
    if (params.count(names[i]))
      s = isl_set_fix_val(s, isl_dim_param, unsigned(i), isl_val_int_from_si(isl_set_get_ctx(set), long(values[i])));
  isl_bool empty = isl_set_is_empty(s);
  isl_set_free(s);
  if (empty == isl_bool_error) throw ArgumentError("kernel '" + k.name + "': isl failed to check the assumptions");
  if (empty == isl_bool_true) {
    std::string given;
    for (size_t i = 0; i < names.size(); ++i)
      if (params.count(names[i])) given += (given.empty() ? "" : ", ") + names[i] + "=" + std::to_string(values[i]);
    throw ArgumentError("kernel '" + k.name + "': parameters " + given + " break the kernel's assumptions " +
                        k.assumptions.str() + " (its code was generated under them)");
  }
  if (cache.size() >= 16) cache.erase(cache.begin());
  cache.push_back({k.assumptions, std::move(values)});
}

}  // namespace

namespace {

// The first parameter value a 32-bit index dtype cannot hold, "" when none
// (or when the index dtype is 64-bit).
std::string parameter_beyond_32_bits(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  if (k.options.index_dtype.bytes() >= 8) return "";
  for (auto& [p, v] : params)
    if (v > INT32_MAX || v < INT32_MIN) return "parameter '" + p + "' = " + std::to_string(v);
  return "";
}

}  // namespace

std::string beyond_32_bit_indices(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  if (k.options.index_dtype.bytes() >= 8) return "";
  if (std::string p = parameter_beyond_32_bits(k, params); !p.empty()) return p;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    int64_t n = storage_elements(a, params);
    if (n > INT32_MAX) return "array '" + a.name + "' has " + std::to_string(n) + " elements";
  }
  return "";
}

namespace {

// With 32-bit index arithmetic (the default index dtype), a parameter beyond
// 2^31 - 1 cannot even be passed: refused, with the way out. Whether the
// offsets of this call fit is proven on the generated code when a kernel
// is launched or interpreted (check_index_width).
void check_index_range(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  std::string what = parameter_beyond_32_bits(k, params);
  if (!what.empty())
    throw ArgumentError("kernel '" + k.name + "': " + what +
                        "; index arithmetic is 32-bit: set_index_dtype int64 (loopy's index_dtype=np.int64) to go beyond 2^31 - 1");
}

}  // namespace

std::map<std::string, int64_t> bind_parameters(const LoopKernel& k, const ArgMap& args) {
  auto fail = [&](const std::string& why) { throw ArgumentError("kernel '" + k.name + "': " + why); };
  for (auto& [name, v] : args)
    if (!k.find_argument(name)) fail("unknown argument '" + name + "'");
  std::map<std::string, int64_t> params;
  for (auto& p : k.parameters()) {
    auto it = args.find(p);
    if (it == args.end()) continue;
    if (it->second.kind == ArgValue::Array) fail("parameter '" + p + "' must be an integer, got an array");
    if (it->second.kind == ArgValue::Float && it->second.f != std::floor(it->second.f))
      fail("parameter '" + p + "' must be an integer, got " + std::to_string(it->second.f));
    params[p] = it->second.kind == ArgValue::Int ? it->second.i : int64_t(it->second.f);
  }
  // parameters from shapes: a dimension that is a bare parameter, then
  // (loopy solves these too) one affine in a single parameter not yet known
  // (ptr: int32[n + 1] gives n), repeated while that finds more
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    auto it = args.find(a.name);
    if (it == args.end()) fail("missing array argument '" + a.name + "'");
    if (it->second.kind != ArgValue::Array) fail("argument '" + a.name + "' must be an array");
    const ArrayRef& arr = it->second.array;
    if (arr.shape.size() != a.shape.size())
      fail("array '" + a.name + "' must have " + std::to_string(a.shape.size()) + " dimension(s), got " +
           std::to_string(arr.shape.size()));
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (auto v = a.shape[d].as<Var>(); v && !params.count(v->name)) params[v->name] = arr.shape[d];
  }
  const std::vector<std::string> all_params = k.parameters();
  for (bool found = true; found;) {
    found = false;
    for (auto& a : k.arguments) {
      if (a.kind != Argument::Array) continue;
      for (size_t d = 0; d < a.shape.size(); ++d) {
        auto form = affine_form(a.shape[d]);
        if (!form) continue;
        std::string unknown;
        int64_t rest = form->constant, coef = 0;
        int unknowns = 0;
        for (auto& [v, c] : form->coef) {
          if (auto pv = params.find(v); pv != params.end()) {
            rest += c * pv->second;
          } else {
            unknown = v;
            coef = c;
            ++unknowns;
          }
        }
        int64_t extent = args.at(a.name).array.shape[d];
        if (unknowns != 1 || (extent - rest) % coef != 0 ||
            std::find(all_params.begin(), all_params.end(), unknown) == all_params.end())
          continue;  // (a mismatch is reported below, with the shape)
        params[unknown] = (extent - rest) / coef;
        found = true;
      }
    }
  }
  for (auto& p : k.parameters())
    if (!params.count(p)) fail("no value for parameter '" + p + "' (pass it, or an array whose shape gives it)");
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    const ArrayRef& arr = args.at(a.name).array;
    if (arr.dtype != a.dtype)
      fail("array '" + a.name + "' must be " + a.dtype.name() + ", got " + arr.dtype.name());
    auto want = expected_shape(a, params);
    if (want != arr.shape)
      fail("array '" + a.name + "' must have shape " + shape_str(want) + " for these parameters, got " + shape_str(arr.shape));
    if (arr.dense && (!a.strides.empty() || a.offset.defined())) {
      // a contiguous array of the shape against the declared layout, axes of extent 1 aside
      std::vector<int64_t> declared;
      for (auto& s : a.element_strides()) declared.push_back(eval_int(s, params));
      int64_t offset = a.offset.defined() ? eval_int(a.offset, params) : 0;
      auto same = [&](bool fortran) {
        int64_t step = 1;
        for (size_t i = 0; i < arr.shape.size(); ++i) {
          size_t d = fortran ? i : arr.shape.size() - 1 - i;
          if (arr.shape[d] > 1 && declared[d] != step) return false;
          step *= arr.shape[d];
        }
        return true;
      };
      if (offset != 0 || !(same(false) || same(true)))
        fail("array '" + a.name + "' is declared with strides " + shape_str(declared) + (offset ? " and offset " + std::to_string(offset) : "") +
             " (in elements, for these sizes), which a contiguous array of shape " + shape_str(arr.shape) +
             " does not have: the kernel would address memory outside it (a layout from tag_array_axes, split_array_axis or "
             "strides=/offset= needs its storage laid out so: the command line's --in and --out do that)");
    }
    if (!arr.data && element_count(arr.shape) > 0) fail("array '" + a.name + "' has no data");
  }
  check_assumptions(k, params);
  check_index_range(k, params);
  return params;
}

bool assumptions_hold(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  try {
    check_assumptions(k, params);
    return true;
  } catch (const ArgumentError&) {
    return false;
  }
}

HostArray::HostArray(Type t, std::vector<int64_t> s, int64_t storage) : dtype(t), shape(std::move(s)) {
  elements = std::max<int64_t>(storage >= 0 ? storage : element_count(shape), 0);
  int64_t size = 0;
  if (__builtin_mul_overflow(elements, int64_t(t.bytes()), &size) || uint64_t(size) > bytes.max_size())
    throw ArgumentError("a host array of " + std::to_string(elements) + " elements of " + t.name() + " is beyond this machine's address space");
  bytes.assign(size_t(size), 0);
}

HostScratch bind_host_global_temporaries(const GeneratedKernel& g, const std::map<std::string, int64_t>& params, ArgMap& args) {
  HostScratch scratch;
  scratch.reserve(g.global_temporaries.size());  // (the arrays' pointers must not move)
  for (auto& t : g.global_temporaries) {
    int64_t bytes = std::max<int64_t>(1, storage_elements(t, params)) * t.dtype.bytes();
    scratch.emplace_back(size_t((bytes + 7) / 8));  // 8-byte words: aligned for any element type
    args[t.name] = ArgValue::of(ArrayRef{scratch.back().data(), t.dtype, expected_shape(t, params)});
  }
  return scratch;
}

int64_t storage_elements(const Argument& a, const std::map<std::string, int64_t>& params) {
  auto shape = expected_shape(a, params);
  int64_t count = 0;
  try {
    count = element_count(shape);
  } catch (const ArgumentError& e) {
    throw ArgumentError("array '" + a.name + "': " + e.what());
  }
  if (count <= 0) return 0;
  int64_t last = a.offset.defined() ? eval_int(a.offset, params) : 0;
  if (last < 0) throw ArgumentError("array '" + a.name + "': negative offset " + std::to_string(last));
  auto strides = a.element_strides();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t st = eval_int(strides[d], params), reach = 0;
    if (st < 0) throw ArgumentError("array '" + a.name + "': negative strides are not supported");
    if (__builtin_mul_overflow(shape[d] - 1, st, &reach) || __builtin_add_overflow(last, reach, &last) || last == INT64_MAX)
      throw ArgumentError("array '" + a.name + "' reaches beyond element 2^63 - 1 for these parameters (shape " + shape_str(shape) + ")");
  }
  return last + 1;
}

namespace {
// Calls f(dense index, storage index) for every element of a's shape.
template <class F>
void for_each_position(const Argument& a, const std::map<std::string, int64_t>& params, F f) {
  auto shape = expected_shape(a, params);
  int64_t count = element_count(shape);
  if (count <= 0) return;
  std::vector<int64_t> strides;
  for (auto& st : a.element_strides()) strides.push_back(eval_int(st, params));
  int64_t base = a.offset.defined() ? eval_int(a.offset, params) : 0;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = base;
    for (size_t d = 0; d < shape.size(); ++d) at += idx[d] * strides[d];
    f(n, at);
    for (size_t d = shape.size(); d-- > 0;)  // next index, last fastest
      if (++idx[d] < shape[d]) break;
      else idx[d] = 0;
  }
}
}  // namespace

bool has_layout(const Argument& a) { return !a.strides.empty() || a.offset.defined(); }

void into_layout(const HostArray& dense, const Argument& a, const std::map<std::string, int64_t>& params, HostArray& stored) {
  size_t es = size_t(dense.dtype.bytes());
  for_each_position(a, params, [&](int64_t n, int64_t at) {
    std::memcpy(stored.bytes.data() + size_t(at) * es, dense.bytes.data() + size_t(n) * es, es);
  });
}

HostArray out_of_layout(const HostArray& stored, const Argument& a, const std::map<std::string, int64_t>& params) {
  HostArray dense(stored.dtype, stored.shape);
  size_t es = size_t(dense.dtype.bytes());
  for_each_position(a, params, [&](int64_t n, int64_t at) {
    std::memcpy(dense.bytes.data() + size_t(n) * es, stored.bytes.data() + size_t(at) * es, es);
  });
  return dense;
}

double HostArray::get(int64_t i) const {
  const unsigned char* p = bytes.data() + size_t(i) * size_t(dtype.bytes());
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return double(v);
  };
  switch (dtype.kind) {
    case ScalarKind::Bool: return p[0] ? 1 : 0;
    case ScalarKind::Int8: return load(int8_t());
    case ScalarKind::Int16: return load(int16_t());
    case ScalarKind::Int32: return load(int32_t());
    case ScalarKind::Int64: return load(int64_t());
    case ScalarKind::UInt8: return load(uint8_t());
    case ScalarKind::UInt16: return load(uint16_t());
    case ScalarKind::UInt32: return load(uint32_t());
    case ScalarKind::UInt64: return load(uint64_t());
    case ScalarKind::Float32: return load(float());
    case ScalarKind::Float64: return load(double());
    case ScalarKind::Float16: return half_bits_to_float(uint16_t(load(uint16_t())));
    case ScalarKind::BFloat16: return bfloat16_bits_to_float(uint16_t(load(uint16_t())));
    default: throw Error("host arrays of " + dtype.name() + " are not supported");
  }
}

void HostArray::set(int64_t i, double v) {
  unsigned char* p = bytes.data() + size_t(i) * size_t(dtype.bytes());
  auto store = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (dtype.kind) {
    case ScalarKind::Bool: p[0] = v != 0; break;
    case ScalarKind::Int8: store(int8_t(v)); break;
    case ScalarKind::Int16: store(int16_t(v)); break;
    case ScalarKind::Int32: store(int32_t(v)); break;
    case ScalarKind::Int64: store(int64_t(v)); break;
    case ScalarKind::UInt8: store(uint8_t(v)); break;
    case ScalarKind::UInt16: store(uint16_t(v)); break;
    case ScalarKind::UInt32: store(uint32_t(v)); break;
    case ScalarKind::UInt64: store(uint64_t(v)); break;
    case ScalarKind::Float32: store(float(v)); break;
    case ScalarKind::Float64: store(v); break;
    case ScalarKind::Float16: store(float_to_half_bits(float(v))); break;
    case ScalarKind::BFloat16: store(float_to_bfloat16_bits(float(v))); break;
    default: throw Error("host arrays of " + dtype.name() + " are not supported");
  }
}

void HostArray::fill_random(uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  auto next = [&] {  // xorshift64*
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  };
  for (int64_t i = 0; i < size(); ++i) {
    uint64_t r = next();
    if (dtype.is_float()) set(i, double(r >> 11) / double(1ULL << 53) * 2.0 - 1.0);
    else if (dtype.is_bool()) set(i, double(r & 1));
    else if (dtype.is_signed_int()) set(i, double(int64_t(r % 100) - 50));
    else set(i, double(r % 100));
  }
}

void HostArray::poison() {
  if (dtype.is_float()) {
    for (int64_t i = 0; i < size(); ++i) set(i, std::numeric_limits<double>::quiet_NaN());
  } else if (!bytes.empty()) {  // (an empty vector's data() may be null, which memset must not get)
    std::memset(bytes.data(), 0xA5, bytes.size());
  }
}

std::string Comparison::str() const {
  std::ostringstream os;
  if (ok) os << "match (max abs error " << max_abs_error << ")";
  else os << mismatches << " mismatching element(s), first at flat index " << first_bad << " (max abs error " << max_abs_error << ")";
  return os.str();
}

Comparison compare(const HostArray& expected, const HostArray& actual, double rtol, double atol) {
  Comparison c;
  if (expected.shape != actual.shape || expected.dtype != actual.dtype) {
    c.ok = false;
    c.mismatches = -1;
    return c;
  }
  // by dtype: a few units in the last place of results of long sums
  switch (expected.dtype.kind) {
    case ScalarKind::Float64: rtol = rtol < 0 ? 1e-9 : rtol, atol = atol < 0 ? 1e-12 : atol; break;
    // (atol 1e-4: a parallel tree sums in another order than a sequential loop)
    case ScalarKind::Float32: rtol = rtol < 0 ? 1e-4 : rtol, atol = atol < 0 ? 1e-4 : atol; break;
    case ScalarKind::Float16: rtol = rtol < 0 ? 4e-3 : rtol, atol = atol < 0 ? 1e-3 : atol; break;
    case ScalarKind::BFloat16: rtol = rtol < 0 ? 3e-2 : rtol, atol = atol < 0 ? 1e-2 : atol; break;
    default: rtol = 0, atol = 0; break;
  }
  for (int64_t i = 0; i < expected.size(); ++i) {
    double e = expected.get(i), a = actual.get(i);
    bool same;
    if (expected.dtype.is_float()) {
      if (std::isnan(e) || std::isnan(a)) same = std::isnan(e) && std::isnan(a);
      else if (std::isinf(e) || std::isinf(a)) same = e == a;
      else {
        double err = std::fabs(e - a);
        c.max_abs_error = std::max(c.max_abs_error, err);
        same = err <= atol + rtol * std::fabs(e);
      }
    } else {
      // compare the stored bytes: exact, and sentinel-safe for 64-bit values
      size_t w = size_t(expected.dtype.bytes());
      same = std::memcmp(expected.bytes.data() + size_t(i) * w, actual.bytes.data() + size_t(i) * w, w) == 0;
      if (!same) c.max_abs_error = std::max(c.max_abs_error, std::fabs(e - a));
    }
    if (!same) {
      if (c.first_bad < 0) c.first_bad = i;
      ++c.mismatches;
      c.ok = false;
    }
  }
  return c;
}

namespace {

// Integer input arrays read as a whole subscript of another array
// (out[idx[i]]) get values inside the extent they index, so random inputs
// exercise the kernel rather than its bounds check.
void fill_index_arrays(const LoopKernel& k, const std::map<std::string, int64_t>& params,
                       std::map<std::string, HostArray>& arrays, uint64_t seed) {
  std::map<std::string, int64_t> range;  // index array -> the smallest extent it indexes
  auto visit = [&](const Subscript& s) {
    const Argument* target = k.find_argument(s.name);
    if (!target) return;
    std::vector<int64_t> shape = expected_shape(*target, params);
    for (size_t d = 0; d < s.indices.size() && d < shape.size(); ++d) {
      auto idx = s.indices[d].as<Subscript>();
      if (!idx || !arrays.count(idx->name) || k.is_written(idx->name) || !arrays.at(idx->name).dtype.is_int()) continue;
      auto it = range.find(idx->name);
      range[idx->name] = it == range.end() ? shape[d] : std::min(it->second, shape[d]);
    }
  };
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    for_each_subscript(insn.lhs, visit);
    for_each_subscript(insn.rhs, visit);
  }
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return bound > 0 ? (state >> 33) % bound : 0;
  };
  for (auto& [name, extent] : range) {
    HostArray& h = arrays.at(name);
    for (int64_t i = 0; i < h.size(); ++i) h.set(i, double(next(uint64_t(extent))));
  }
  // Offsets behind a loop bound the kernel computes (CSR's ptr, read by the
  // writer of row_len = ptr[i + 1] - ptr[i]): sorted values in [0, E], E the
  // smallest extent of the arrays read or written through the loops the
  // bound bounds (vals[ptr[i] + jj] gives nnz), or 16 where none is: then
  // every segment lies inside those arrays and the loops are short.
  for (auto& [p, bounded] : k.data_parameter_inames()) {
    int64_t extent = -1;
    auto through_bounded = [&](const Subscript& s) {
      const Argument* a = k.find_argument(s.name);
      if (!a || a->kind != Argument::Array) return;
      std::set<std::string> vars;
      for (auto& i : s.indices) collect_free_vars(i, vars);
      bool inside = false;
      for (auto& v : vars) inside |= bounded.count(v) > 0;
      if (!inside) return;
      int64_t elements = element_count(expected_shape(*a, params));
      extent = extent < 0 ? elements : std::min(extent, elements);
    };
    std::set<std::string> offsets;
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      for_each_subscript(insn.lhs, through_bounded);
      for_each_subscript(insn.rhs, through_bounded);
    }
    // the integer inputs the bound is computed from, through the private
    // values in between (head_len = if(full > 0, 256 * first - start, ...),
    // first from start, start = ptr[i])
    std::set<std::string> values{p};
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& insn : k.instructions) {
        if (insn.kind != Instruction::Assign || !values.count(insn.assignee_name())) continue;
        for (auto& n : insn.read_names())
          if (const Temporary* t = k.find_temporary(n); t && t->shape.empty()) grew |= values.insert(n).second;
        for_each_subscript(insn.rhs, [&](const Subscript& s) {
          if (arrays.count(s.name) && !k.is_written(s.name) && arrays.at(s.name).dtype.is_int()) offsets.insert(s.name);
        });
      }
    }
    for (auto& name : offsets) {
      HostArray& h = arrays.at(name);
      std::vector<uint64_t> v;
      for (int64_t i = 0; i < h.size(); ++i) v.push_back(next(uint64_t(extent < 0 ? 16 : extent) + 1));
      std::sort(v.begin(), v.end());
      for (int64_t i = 0; i < h.size(); ++i) h.set(i, double(v[size_t(i)]));
    }
  }
}

}  // namespace

std::map<std::string, HostArray> make_host_arrays(const LoopKernel& k, const std::map<std::string, int64_t>& params,
                                                  uint64_t seed) {
  std::map<std::string, HostArray> out;
  uint64_t n = 0;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array) continue;
    HostArray h(a.dtype, expected_shape(a, params), storage_elements(a, params));
    // pure outputs are poisoned so an element left unwritten shows; arrays
    // that are read too (y = a*x + y) need real values
    if (k.is_written(a.name) && !k.is_read(a.name)) h.poison();
    else h.fill_random(seed + 1000 * ++n);
    out.emplace(a.name, std::move(h));
  }
  fill_index_arrays(k, params, out, seed);
  return out;
}

ArgMap host_arguments(const LoopKernel& k, std::map<std::string, HostArray>& arrays, const std::map<std::string, int64_t>& params,
                      const std::map<std::string, double>& scalars) {
  ArgMap args;
  for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Value || args.count(a.name)) continue;
    auto given = scalars.find(a.name);
    args[a.name] = params.count(a.name)        ? ArgValue::of_int(params.at(a.name))
                   : given != scalars.end()    ? ArgValue::of_float(given->second)
                                               : ArgValue::of_float(1.5);
  }
  return args;
}

}  // namespace loom

namespace loom {

void for_each_program_launch(const GeneratedKernel& g, const std::map<std::string, int64_t>& params, ArgMap& args,
                             const std::function<void(size_t, const std::map<std::string, int64_t>&)>& launch) {
  std::set<std::string> bound;  // the host loops' inames bound for the last launch
  for_each_launch(g.host_steps, params, [&](size_t index, const std::map<std::string, int64_t>& values) {
    for (auto it = bound.begin(); it != bound.end();) {
      if (values.count(*it)) {
        ++it;
        continue;
      }
      args.erase(*it);
      it = bound.erase(it);
    }
    for (auto& [name, v] : values)
      if (!params.count(name)) {
        args[name] = ArgValue::of_int(v);
        bound.insert(name);
      }
    launch(index, values);
  });
}

}  // namespace loom
