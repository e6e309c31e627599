// The reference interpreter: compiles a GeneratedKernel's AST into nested
// closures and runs it on host arrays, thread after thread (hardware inames
// become loops over the grid and block). Values keep the kernel's types:
// float32 arithmetic is rounded to float after every operation, integers
// wrap at their width, // and % follow Python. Every array access is checked
// against the array's bounds, so a miscompiled index fails loudly. Barriers
// have GPU semantics: each thread runs up to the barrier before any goes on.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "loom/functions.h"
#include "loom/half.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"

namespace loom {

namespace {

union Slot {
  int64_t i;
  double f;
};

// One thread's state: its variables and private arrays; local (shared)
// arrays belong to the block and are reached through `shared`.
struct Frame {
  std::vector<Slot> vars;
  std::vector<std::vector<Slot>> locals;  // private temporary arrays
  std::vector<std::vector<Slot>>* shared = nullptr;
  // false while the thread is outside an if around collectives whose
  // condition differs between groups of lanes (block(): the thread skips
  // what the if holds; its group's lanes agree, codegen checked it)
  bool active = true;
};

using IntFn = std::function<int64_t(Frame&)>;
using FltFn = std::function<double(Frame&)>;
using StmtFn = std::function<void(Frame&)>;
using BlockFn = std::function<void(std::vector<Frame>&)>;  // runs a statement for all threads of a block

int64_t wrap(int64_t v, Type t) {
  switch (t.kind) {
    case ScalarKind::Bool: return v != 0;
    case ScalarKind::Int8: return int8_t(v);
    case ScalarKind::Int16: return int16_t(v);
    case ScalarKind::Int32: return int32_t(v);
    case ScalarKind::UInt8: return uint8_t(v);
    case ScalarKind::UInt16: return uint16_t(v);
    case ScalarKind::UInt32: return uint32_t(v);
    default: return v;
  }
}

// A float converted to an integer type: toward zero, clamped to the type's
// range, NaN to 0 (CUDA's cvt.rzi; the CPU target's fptosi/fptoui.sat).
// Unsigned 64-bit values are kept as their bits.
int64_t float_to_int(double x, Type t) {
  if (std::isnan(x)) return 0;
  x = std::trunc(x);
  auto clamp = [&](double lo, double hi) { return x <= lo ? lo : x >= hi ? hi : x; };
  switch (t.kind) {
    case ScalarKind::Int8: return int64_t(clamp(-128, 127));
    case ScalarKind::Int16: return int64_t(clamp(-32768, 32767));
    case ScalarKind::Int32: return int64_t(clamp(-2147483648.0, 2147483647.0));
    case ScalarKind::UInt8: return int64_t(clamp(0, 255));
    case ScalarKind::UInt16: return int64_t(clamp(0, 65535));
    case ScalarKind::UInt32: return int64_t(clamp(0, 4294967295.0));
    case ScalarKind::UInt64:
      if (x <= 0) return 0;
      if (x >= 18446744073709551616.0) return int64_t(UINT64_MAX);
      return int64_t(uint64_t(x));
    default:  // int64 (and the index types)
      if (x <= -9223372036854775808.0) return INT64_MIN;
      if (x >= 9223372036854775808.0) return INT64_MAX;
      return int64_t(x);
  }
}

// Every float operation rounds to its type, as hardware does (float16 and
// bfloat16 through float, as the targets compute them).
double round_to(double v, Type t) {
  switch (t.kind) {
    case ScalarKind::Float32: return double(float(v));
    case ScalarKind::Float16: return double(half_bits_to_float(float_to_half_bits(float(v))));
    case ScalarKind::BFloat16: return double(bfloat16_bits_to_float(float_to_bfloat16_bits(float(v))));
    default: return v;
  }
}

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) throw Error("integer division by zero");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct ArrayInfo {
  unsigned char* data = nullptr;
  Type dtype;
  int64_t size = 0;  // elements of storage
  int local = -1;   // index into Frame::locals (private temporary arrays)
  int shared = -1;  // index into *Frame::shared (local temporaries: one per block)
  int64_t* loads = nullptr;   // InterpretCounts, when asked for
  int64_t* stores = nullptr;
};

class Interpreter {
 public:
  Interpreter(const GeneratedKernel& g, const ArgMap& args, InterpretCounts* counts) : g_(g), k_(g.kernel) {
    params_ = bind_parameters(k_, args);
    check_index_width(g, params_);  // (index arithmetic wraps at the index dtype's width here too)
    auto slot = [&](const std::string& n) {
      if (!slots_.count(n)) slots_[n] = int(slots_.size());
    };
    for (auto& a : k_.arguments) slot(a.name);
    for (auto& p : k_.parameters()) slot(p);
    for (auto& n : k_.all_inames()) slot(n);
    for (auto& [n, t] : k_.temporaries)
      if (t.shape.empty()) slot(n);
    for (auto& a : k_.arguments) {
      if (a.kind != Argument::Array) continue;
      ArrayInfo ai;
      ai.data = static_cast<unsigned char*>(args.at(a.name).array.data);
      ai.dtype = a.dtype;
      ai.size = storage_elements(a, params_);
      arrays_[a.name] = ai;
    }
    for (auto& [n, t] : k_.temporaries) {
      if (t.shape.empty()) continue;
      std::vector<int64_t> shape;
      for (auto& d : t.shape) shape.push_back(eval_int(d, params_));
      ArrayInfo ai;
      ai.dtype = t.dtype;
      ai.size = element_count(shape);
      if (t.space == AddressSpace::Local) {
        ai.shared = int(shared_sizes_.size());
        shared_sizes_.push_back(ai.size);
      } else {
        ai.local = int(local_sizes_.size());
        local_sizes_.push_back(ai.size);
      }
      arrays_[n] = ai;
    }
    frame_.vars.resize(slots_.size());
    for (auto& a : k_.arguments) {
      if (a.kind != Argument::Value) continue;
      Slot& s = frame_.vars[slots_[a.name]];
      auto pv = params_.find(a.name);
      const ArgValue* v = args.count(a.name) ? &args.at(a.name) : nullptr;
      if (pv == params_.end() && !v) throw ArgumentError("kernel '" + k_.name + "': missing value for argument '" + a.name + "'");
      double fv = pv != params_.end() ? double(pv->second) : v->kind == ArgValue::Float ? v->f : double(v->i);
      if (a.dtype.is_float()) s.f = round_to(fv, a.dtype);
      else s.i = wrap(pv != params_.end() ? pv->second : v->kind == ArgValue::Float ? int64_t(v->f) : v->i, a.dtype);
    }
    for (auto& [p, v] : params_) frame_.vars[slots_[p]].i = v;
    if (counts)
      for (auto& [n, ai] : arrays_) {
        ai.loads = &counts->loads[n];
        ai.stores = &counts->stores[n];
      }
  }

  void run() {
    BlockFn body = block(g_.body);
    LaunchDims dims = launch_dims(g_, params_);
    if (dims.empty()) return;
    std::vector<std::pair<int, const HardwareIname*>> hw;
    for (auto& h : g_.hardware_inames) hw.push_back({slots_.at(h.name), &h});
    std::vector<IntFn> lowers;
    for (auto& h : g_.hardware_inames) lowers.push_back(int_expr(h.lower));
    int64_t threads = dims.block[0] * dims.block[1] * dims.block[2];
    std::vector<std::vector<Slot>> shared;
    frame_.locals.assign(local_sizes_.size(), {});
    for (size_t l = 0; l < local_sizes_.size(); ++l) frame_.locals[l].assign(size_t(local_sizes_[l]), Slot{0});
    frame_.shared = &shared;
    std::vector<Frame> frames(size_t(threads), frame_);
    int64_t g[3];
    for (g[2] = 0; g[2] < dims.grid[2]; ++g[2])
      for (g[1] = 0; g[1] < dims.grid[1]; ++g[1])
        for (g[0] = 0; g[0] < dims.grid[0]; ++g[0]) {
          shared.assign(shared_sizes_.size(), {});
          for (size_t l = 0; l < shared_sizes_.size(); ++l) shared[l].assign(size_t(shared_sizes_[l]), Slot{0});
          for (int64_t t = 0; t < threads; ++t) {
            int64_t l[3] = {t % dims.block[0], (t / dims.block[0]) % dims.block[1], t / (dims.block[0] * dims.block[1])};
            Frame& f = frames[size_t(t)];
            for (size_t h = 0; h < hw.size(); ++h) {
              const HardwareIname& hi = *hw[h].second;
              f.vars[hw[h].first].i = lowers[h](f) + (hi.tag.kind == InameTag::Local ? l[hi.tag.axis] : g[hi.tag.axis]);
            }
          }
          body(frames);
        }
  }

 private:
  [[noreturn]] void unsupported(const std::string& what) {
    throw KernelError("kernel '" + k_.name + "': the reference interpreter does not support " + what);
  }

  // A loop variable that is not an iname (isl's own, in some slabs) gets a slot when first met.
  int loop_slot(const std::string& n) {
    if (!slots_.count(n)) {
      slots_[n] = int(slots_.size());
      frame_.vars.resize(slots_.size());
    }
    return slots_.at(n);
  }

  int slot(const std::string& n) {
    auto it = slots_.find(n);
    if (it == slots_.end()) unsupported("variable '" + n + "' without a value");
    return it->second;
  }

  // flat element index (offset and strides included) with a bounds check
  IntFn flat_index(const Subscript& s) {
    ArrayInfo* ai = &arrays_.at(s.name);
    IntFn flat = int_expr(k_.flat_index(s));
    std::string kname = k_.name, name = s.name;
    return [ai, flat, name, kname](Frame& f) {
      int64_t i = flat(f);
      if (i < 0 || i >= ai->size)
        throw Error("kernel '" + kname + "': out-of-bounds access to '" + name + "' at element " + std::to_string(i) +
                    ", outside its " + std::to_string(ai->size) + " elements");
      return i;
    };
  }

  static std::vector<Slot>* slots_of(const ArrayInfo& ai, Frame& f) {
    if (ai.shared >= 0) return &(*f.shared)[size_t(ai.shared)];
    if (ai.local >= 0) return &f.locals[size_t(ai.local)];
    return nullptr;
  }
  static double load(const ArrayInfo& ai, Frame& f, int64_t i) {
    if (ai.loads) ++*ai.loads;
    if (auto* v = slots_of(ai, f)) return (*v)[size_t(i)].f;
    const unsigned char* p = ai.data + size_t(i) * size_t(ai.dtype.bytes());
    if (ai.dtype.kind == ScalarKind::Float32) {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    if (ai.dtype.kind == ScalarKind::Float64) {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return ai.dtype.kind == ScalarKind::Float16 ? half_bits_to_float(h) : bfloat16_bits_to_float(h);
  }
  static int64_t load_int(const ArrayInfo& ai, Frame& f, int64_t i) {
    if (ai.loads) ++*ai.loads;
    if (auto* v = slots_of(ai, f)) return (*v)[size_t(i)].i;
    const unsigned char* p = ai.data + size_t(i) * size_t(ai.dtype.bytes());
    int64_t v = 0;
    std::memcpy(&v, p, size_t(ai.dtype.bytes()));  // little-endian: the low bytes
    if (ai.dtype.bits() == 64) return v;
    return ai.dtype.is_signed_int() ? sign_extend(v, ai.dtype.bits()) : wrap(v, ai.dtype);
  }
  static int64_t sign_extend(int64_t v, int bits) {
    int64_t m = int64_t(1) << (bits - 1);
    v &= (int64_t(1) << bits) - 1;
    return (v ^ m) - m;
  }
  static void store(const ArrayInfo& ai, Frame& f, int64_t i, Slot v) {
    if (ai.stores) ++*ai.stores;
    if (auto* s = slots_of(ai, f)) {
      (*s)[size_t(i)] = v;
      return;
    }
    unsigned char* p = ai.data + size_t(i) * size_t(ai.dtype.bytes());
    if (ai.dtype.kind == ScalarKind::Float32) {
      float x = float(v.f);
      std::memcpy(p, &x, 4);
    } else if (ai.dtype.kind == ScalarKind::Float64) {
      std::memcpy(p, &v.f, 8);
    } else if (ai.dtype.is_float()) {
      uint16_t h = ai.dtype.kind == ScalarKind::Float16 ? float_to_half_bits(float(v.f)) : float_to_bfloat16_bits(float(v.f));
      std::memcpy(p, &h, 2);
    } else {
      std::memcpy(p, &v.i, size_t(ai.dtype.bytes()));  // little-endian: low bytes
    }
  }

  FltFn flt_expr(const Expr& e) {
    Type t = e.type();
    if (!t.is_float()) {
      IntFn i = int_expr(e);
      return [i](Frame& f) { return double(i(f)); };
    }
    switch (e.kind()) {
      case ExprKind::Float: {
        double v = round_to(e.as<FloatImm>()->value, t);
        return [v](Frame&) { return v; };
      }
      case ExprKind::Int: {
        double v = round_to(double(e.as<IntImm>()->value), t);
        return [v](Frame&) { return v; };
      }
      case ExprKind::Var: {
        int s = slot(e.as<Var>()->name);
        return [s](Frame& f) { return f.vars[s].f; };
      }
      case ExprKind::Subscript: {
        auto sub = e.as<Subscript>();
        IntFn idx = flat_index(*sub);
        const ArrayInfo* ai = &arrays_.at(sub->name);
        return [idx, ai](Frame& f) { return load(*ai, f, idx(f)); };
      }
      case ExprKind::Unary: {
        FltFn a = flt_expr(e.as<Unary>()->a);
        return [a](Frame& f) { return -a(f); };
      }
      case ExprKind::Cast: {
        const Expr& v = e.as<Cast>()->value;
        if (v.type().is_float()) {
          FltFn a = flt_expr(v);
          return [a, t](Frame& f) { return round_to(a(f), t); };
        }
        IntFn a = int_expr(v);
        bool is_unsigned = v.type().is_int() && !v.type().is_signed_int();
        return [a, t, is_unsigned](Frame& f) {
          int64_t x = a(f);
          return round_to(is_unsigned ? double(uint64_t(x)) : double(x), t);
        };
      }
      case ExprKind::Select: {
        auto s = e.as<Select>();
        IntFn c = int_expr(s->cond);
        FltFn x = flt_expr(s->t), y = flt_expr(s->f);
        return [c, x, y](Frame& f) { return c(f) ? x(f) : y(f); };
      }
      case ExprKind::Call: {
        auto c = e.as<Call>();
        std::vector<FltFn> a;
        for (auto& x : c->args) a.push_back(flt_expr(x));
        const std::string& n = c->name;
        auto un = [&](double (*fn)(double)) -> FltFn { return [a, fn, t](Frame& f) { return round_to(fn(a[0](f)), t); }; };
        if (n == "sqrt") return un([](double x) { return std::sqrt(x); });
        if (n == "rsqrt") return un([](double x) { return 1.0 / std::sqrt(x); });
        if (n == "exp") return un([](double x) { return std::exp(x); });
        if (n == "exp2") return un([](double x) { return std::exp2(x); });
        if (n == "expm1") return un([](double x) { return std::expm1(x); });
        if (n == "log") return un([](double x) { return std::log(x); });
        if (n == "log2") return un([](double x) { return std::log2(x); });
        if (n == "log10") return un([](double x) { return std::log10(x); });
        if (n == "log1p") return un([](double x) { return std::log1p(x); });
        if (n == "sin") return un([](double x) { return std::sin(x); });
        if (n == "cos") return un([](double x) { return std::cos(x); });
        if (n == "tan") return un([](double x) { return std::tan(x); });
        if (n == "asin") return un([](double x) { return std::asin(x); });
        if (n == "acos") return un([](double x) { return std::acos(x); });
        if (n == "atan") return un([](double x) { return std::atan(x); });
        if (n == "sinh") return un([](double x) { return std::sinh(x); });
        if (n == "cosh") return un([](double x) { return std::cosh(x); });
        if (n == "tanh") return un([](double x) { return std::tanh(x); });
        if (n == "erf") return un([](double x) { return std::erf(x); });
        if (n == "floor") return un([](double x) { return std::floor(x); });
        if (n == "ceil") return un([](double x) { return std::ceil(x); });
        if (n == "round") return un([](double x) { return std::round(x); });
        if (n == "trunc") return un([](double x) { return std::trunc(x); });
        if (n == "abs" || n == "fabs") return un([](double x) { return std::fabs(x); });
        if (n == "round_tf32") return un([](double x) { return double(round_tf32(float(x))); });
        if (n == "trunc_tf32") return un([](double x) { return double(trunc_tf32(float(x))); });
        auto bin = [&](double (*fn)(double, double)) -> FltFn {
          return [a, fn, t](Frame& f) { return round_to(fn(a[0](f), a[1](f)), t); };
        };
        if (n == "pow") return bin([](double x, double y) { return std::pow(x, y); });
        if (n == "atan2") return bin([](double x, double y) { return std::atan2(x, y); });
        if (n == "fmod") return bin([](double x, double y) { return std::fmod(x, y); });
        if (n == "min" || n == "fmin") return bin([](double x, double y) { return std::fmin(x, y); });
        if (n == "max" || n == "fmax") return bin([](double x, double y) { return std::fmax(x, y); });
        if (n == "fma") return [a, t](Frame& f) { return round_to(std::fma(a[0](f), a[1](f), a[2](f)), t); };
        unsupported("function '" + n + "'");
      }
      case ExprKind::Binary: {
        auto b = e.as<Binary>();
        FltFn x = flt_expr(b->a), y = flt_expr(b->b);
        switch (b->op) {
          case BinOp::Add: return [x, y, t](Frame& f) { return round_to(x(f) + y(f), t); };
          case BinOp::Sub: return [x, y, t](Frame& f) { return round_to(x(f) - y(f), t); };
          case BinOp::Mul: return [x, y, t](Frame& f) { return round_to(x(f) * y(f), t); };
          case BinOp::Div: return [x, y, t](Frame& f) { return round_to(x(f) / y(f), t); };
          case BinOp::FloorDiv: return [x, y, t](Frame& f) { return round_to(std::floor(round_to(x(f) / y(f), t)), t); };
          case BinOp::Mod:
            return [x, y, t](Frame& f) {
              double a = x(f), b = y(f);
              return round_to(a - b * std::floor(round_to(a / b, t)), t);
            };
          case BinOp::Pow: return [x, y, t](Frame& f) { return round_to(std::pow(x(f), y(f)), t); };
          default: unsupported(std::string("float operator ") + to_string(b->op));
        }
      }
      default: break;
    }
    unsupported("expression '" + e.str() + "'");
  }

  IntFn int_expr(const Expr& e) {
    Type t = e.type();
    if (t.is_float()) unsupported("float value where an integer is needed: " + e.str());
    switch (e.kind()) {
      case ExprKind::Int: {
        int64_t v = wrap(e.as<IntImm>()->value, t);
        return [v](Frame&) { return v; };
      }
      case ExprKind::Var: {
        int s = slot(e.as<Var>()->name);
        return [s](Frame& f) { return f.vars[s].i; };
      }
      case ExprKind::Subscript: {
        auto sub = e.as<Subscript>();
        IntFn idx = flat_index(*sub);
        const ArrayInfo* ai = &arrays_.at(sub->name);
        return [idx, ai](Frame& f) { return load_int(*ai, f, idx(f)); };
      }
      case ExprKind::Unary: {
        auto u = e.as<Unary>();
        IntFn a = int_expr(u->a);
        if (u->op == UnOp::Not) return [a](Frame& f) { return int64_t(!a(f)); };
        if (u->op == UnOp::BitNot) return [a, t](Frame& f) { return wrap(~a(f), t); };
        return [a, t](Frame& f) { return wrap(-a(f), t); };
      }
      case ExprKind::Cast: {
        const Expr& v = e.as<Cast>()->value;
        if (v.type().is_float()) {
          FltFn a = flt_expr(v);
          if (t.is_bool()) return [a](Frame& f) { return int64_t(a(f) != 0); };
          return [a, t](Frame& f) { return float_to_int(a(f), t); };
        }
        IntFn a = int_expr(v);
        return [a, t](Frame& f) { return wrap(a(f), t); };
      }
      case ExprKind::Select: {
        auto s = e.as<Select>();
        IntFn c = int_expr(s->cond), x = int_expr(s->t), y = int_expr(s->f);
        return [c, x, y](Frame& f) { return c(f) ? x(f) : y(f); };
      }
      case ExprKind::Call: {
        auto c = e.as<Call>();
        std::vector<IntFn> a;
        for (auto& x : c->args) a.push_back(int_expr(x));
        if (c->name == "min") return [a](Frame& f) { return std::min(a[0](f), a[1](f)); };
        if (c->name == "max") return [a](Frame& f) { return std::max(a[0](f), a[1](f)); };
        if (c->name == "abs") return [a, t](Frame& f) { return wrap(std::llabs(a[0](f)), t); };
        unsupported("integer function '" + c->name + "'");
      }
      case ExprKind::Binary: {
        auto b = e.as<Binary>();
        if (is_comparison(b->op) && b->a.type().is_float()) {
          FltFn x = flt_expr(b->a), y = flt_expr(b->b);
          switch (b->op) {
            case BinOp::Lt: return [x, y](Frame& f) { return int64_t(x(f) < y(f)); };
            case BinOp::Le: return [x, y](Frame& f) { return int64_t(x(f) <= y(f)); };
            case BinOp::Gt: return [x, y](Frame& f) { return int64_t(x(f) > y(f)); };
            case BinOp::Ge: return [x, y](Frame& f) { return int64_t(x(f) >= y(f)); };
            case BinOp::Eq: return [x, y](Frame& f) { return int64_t(x(f) == y(f)); };
            default: return [x, y](Frame& f) { return int64_t(x(f) != y(f)); };
          }
        }
        IntFn x = int_expr(b->a), y = int_expr(b->b);
        bool is_unsigned = b->a.type().is_int() && !b->a.type().is_signed_int();
        switch (b->op) {
          case BinOp::Add: return [x, y, t](Frame& f) { return wrap(x(f) + y(f), t); };
          case BinOp::Sub: return [x, y, t](Frame& f) { return wrap(x(f) - y(f), t); };
          case BinOp::Mul: return [x, y, t](Frame& f) { return wrap(int64_t(uint64_t(x(f)) * uint64_t(y(f))), t); };
          case BinOp::FloorDiv: return [x, y, t](Frame& f) { return wrap(floordiv(x(f), y(f)), t); };
          case BinOp::Mod:
            return [x, y, t](Frame& f) {
              int64_t a = x(f), c = y(f);
              return wrap(a - c * floordiv(a, c), t);
            };
          case BinOp::TruncDiv:
            return [x, y, t](Frame& f) {
              int64_t c = y(f);
              if (c == 0) throw Error("integer division by zero");
              return wrap(x(f) / c, t);
            };
          case BinOp::TruncRem:
            return [x, y, t](Frame& f) {
              int64_t c = y(f);
              if (c == 0) throw Error("integer division by zero");
              return wrap(x(f) % c, t);
            };
          case BinOp::Pow:
            return [x, y, t](Frame& f) {
              int64_t a = x(f), n = y(f), r = 1;
              for (; n > 0; n >>= 1, a *= a)
                if (n & 1) r *= a;
              return wrap(r, t);
            };
          case BinOp::Lt: return is_unsigned ? IntFn([x, y](Frame& f) { return int64_t(uint64_t(x(f)) < uint64_t(y(f))); })
                                             : IntFn([x, y](Frame& f) { return int64_t(x(f) < y(f)); });
          case BinOp::Le: return is_unsigned ? IntFn([x, y](Frame& f) { return int64_t(uint64_t(x(f)) <= uint64_t(y(f))); })
                                             : IntFn([x, y](Frame& f) { return int64_t(x(f) <= y(f)); });
          case BinOp::Gt: return is_unsigned ? IntFn([x, y](Frame& f) { return int64_t(uint64_t(x(f)) > uint64_t(y(f))); })
                                             : IntFn([x, y](Frame& f) { return int64_t(x(f) > y(f)); });
          case BinOp::Ge: return is_unsigned ? IntFn([x, y](Frame& f) { return int64_t(uint64_t(x(f)) >= uint64_t(y(f))); })
                                             : IntFn([x, y](Frame& f) { return int64_t(x(f) >= y(f)); });
          case BinOp::Eq: return [x, y](Frame& f) { return int64_t(x(f) == y(f)); };
          case BinOp::Ne: return [x, y](Frame& f) { return int64_t(x(f) != y(f)); };
          case BinOp::And: return [x, y](Frame& f) { return int64_t(x(f) && y(f)); };
          case BinOp::Or: return [x, y](Frame& f) { return int64_t(x(f) || y(f)); };
          case BinOp::BitAnd: return [x, y, t](Frame& f) { return wrap(x(f) & y(f), t); };
          case BinOp::BitOr: return [x, y, t](Frame& f) { return wrap(x(f) | y(f), t); };
          case BinOp::BitXor: return [x, y, t](Frame& f) { return wrap(x(f) ^ y(f), t); };
          case BinOp::Shl: return [x, y, t](Frame& f) { return wrap(int64_t(uint64_t(x(f)) << (y(f) & 63)), t); };
          case BinOp::Shr: return [x, y, t](Frame& f) { return wrap(x(f) >> (y(f) & 63), t); };
          default: unsupported(std::string("integer operator ") + to_string(b->op));
        }
      }
      default: break;
    }
    unsupported("expression '" + e.str() + "'");
  }

  StmtFn stmt(const StmtPtr& s) {
    switch (s->kind) {
      case Stmt::Block: {
        std::vector<StmtFn> fs;
        for (auto& c : s->children) fs.push_back(stmt(c));
        return [fs](Frame& f) {
          for (auto& x : fs) x(f);
        };
      }
      case Stmt::For: {
        int v = loop_slot(s->var);
        IntFn init = int_expr(s->init), cond = int_expr(s->cond);
        StmtFn body = stmt(s->children[0]);
        int64_t step = s->step;
        return [v, init, cond, body, step](Frame& f) {
          for (f.vars[v].i = init(f); cond(f); f.vars[v].i += step) body(f);
        };
      }
      case Stmt::If: {
        IntFn c = int_expr(s->cond);
        StmtFn t = stmt(s->children[0]);
        StmtFn e = s->children.size() > 1 ? stmt(s->children[1]) : StmtFn([](Frame&) {});
        return [c, t, e](Frame& f) { c(f) ? t(f) : e(f); };
      }
      case Stmt::Assign: {
        if (is_collective(*s)) unsupported("a warp reduction inside one thread's code (internal error)");
        Type t = s->lhs.type();
        bool fl = t.is_float();
        FltFn fv = fl ? flt_expr(s->rhs) : FltFn();
        IntFn iv = fl ? IntFn() : int_expr(s->rhs);
        if (auto v = s->lhs.as<Var>()) {
          int sl = slot(v->name);
          if (fl) return [sl, fv](Frame& f) { f.vars[sl].f = fv(f); };
          return [sl, iv](Frame& f) { f.vars[sl].i = iv(f); };
        }
        auto sub = s->lhs.as<Subscript>();
        IntFn idx = flat_index(*sub);
        const ArrayInfo* ai = &arrays_.at(sub->name);
        if (fl) return [idx, ai, fv](Frame& f) {
            Slot x;
            x.f = fv(f);
            store(*ai, f, idx(f), x);
          };
        return [idx, ai, iv](Frame& f) {
          Slot x;
          x.i = iv(f);
          store(*ai, f, idx(f), x);
        };
      }
      case Stmt::Barrier: unsupported("a barrier inside a thread's own code (internal error)");
    }
    return [](Frame&) {};
  }

  // GPU semantics: code between barriers runs for every thread before any
  // thread goes past the barrier; loops and ifs around barriers are the same
  // for all threads (the targets require it: threads that disagree stop the
  // run), except loops and ifs around collectives only, which each thread
  // runs and tests for itself.
  BlockFn block(const StmtPtr& s) {
    if (!has_sync(s)) {
      StmtFn f = stmt(s);
      return [f](std::vector<Frame>& fr) {
        for (auto& x : fr)
          if (x.active) f(x);
      };
    }
    if (is_collective(*s)) {  // a warp reduction: all values first, then each thread's group
      const WarpReduce& w = *as_warp_reduce(s->rhs);
      Type t = w.value.type();
      // the result goes to a variable, or to an element of an (ILP-privatized) array
      auto lv = s->lhs.as<Var>();
      int sl = lv ? slot(lv->name) : -1;
      IntFn idx = lv ? IntFn() : flat_index(*s->lhs.as<Subscript>());
      const ArrayInfo* dest = lv ? nullptr : &arrays_.at(s->lhs.as<Subscript>()->name);
      bool fl = t.is_float();
      FltFn fv = fl ? flt_expr(w.value) : FltFn();
      IntFn iv = fl ? IntFn() : int_expr(w.value);
      return [=, this](std::vector<Frame>& fr) {
        std::vector<Slot> vals(fr.size());
        for (size_t i = 0; i < fr.size(); ++i) {
          if (!fr[i].active) continue;
          if (fl) vals[i].f = fv(fr[i]);
          else vals[i].i = iv(fr[i]);
        }
        for (size_t i = 0; i < fr.size(); ++i) {
          if (!fr[i].active) continue;
          for (size_t q = i - i % size_t(w.width); q < i - i % size_t(w.width) + size_t(w.width) && q < fr.size(); ++q)
            if (!fr[q].active) unsupported("a warp reduction that some lanes of a group skip (internal error)");
          size_t base = i - i % size_t(w.width);
          Slot acc = vals[base];
          for (size_t q = base + 1; q < base + size_t(w.width) && q < vals.size(); ++q) {
            if (fl) {
              double a = acc.f, x = vals[q].f;
              acc.f = round_to(w.op == ReduceOp::Sum ? a + x : w.op == ReduceOp::Product ? a * x : w.op == ReduceOp::Max ? (x > a ? x : a) : (x < a ? x : a), t);
            } else {
              int64_t a = acc.i, x = vals[q].i;
              acc.i = wrap(w.op == ReduceOp::Sum ? a + x : w.op == ReduceOp::Product ? a * x : w.op == ReduceOp::Max ? std::max(a, x) : std::min(a, x), t);
            }
          }
          if (sl >= 0) fr[i].vars[size_t(sl)] = acc;
          else store(*dest, fr[i], idx(fr[i]), acc);
        }
      };
    }
    switch (s->kind) {
      case Stmt::Barrier: return [](std::vector<Frame>&) {};
      case Stmt::Block: {
        std::vector<BlockFn> parts;
        for (auto& c : s->children) parts.push_back(block(c));
        return [parts](std::vector<Frame>& fr) {
          for (auto& p : parts) p(fr);
        };
      }
      case Stmt::For: {
        int v = loop_slot(s->var);
        IntFn init = int_expr(s->init), cond = int_expr(s->cond);
        BlockFn body = block(s->children[0]);
        int64_t step = s->step;
        if (!has_barrier(s))  // collectives only: each thread runs its own loop, its group agreeing
          return [v, init, cond, body, step](std::vector<Frame>& fr) {
            std::vector<bool> was(fr.size());
            for (size_t i = 0; i < fr.size(); ++i) {
              was[i] = fr[i].active;
              if (!was[i]) continue;
              fr[i].vars[v].i = init(fr[i]);
              fr[i].active = cond(fr[i]) != 0;
            }
            while (std::any_of(fr.begin(), fr.end(), [](const Frame& f) { return f.active; })) {
              body(fr);
              for (auto& f : fr)
                if (f.active) {
                  f.vars[v].i += step;
                  f.active = cond(f) != 0;
                }
            }
            for (size_t i = 0; i < fr.size(); ++i) fr[i].active = was[i];
          };
        return [this, v, init, cond, body, step](std::vector<Frame>& fr) {
          auto set = [&](int64_t x) {
            for (auto& f : fr) f.vars[v].i = x;
          };
          for (set(uniform(fr, init, "a loop's start")); uniform(fr, cond, "a loop's bound"); set(fr[0].vars[v].i + step)) body(fr);
        };
      }
      case Stmt::If: {
        IntFn c = int_expr(s->cond);
        BlockFn t = block(s->children[0]);
        BlockFn e = s->children.size() > 1 ? block(s->children[1]) : BlockFn([](std::vector<Frame>&) {});
        if (!has_barrier(s))  // collectives only: each thread tests it, its group agreeing
          return [c, t, e](std::vector<Frame>& fr) {
            std::vector<bool> was(fr.size());
            for (size_t i = 0; i < fr.size(); ++i) was[i] = fr[i].active;
            for (int branch = 0; branch < 2; ++branch) {
              for (size_t i = 0; i < fr.size(); ++i) fr[i].active = was[i] && (c(fr[i]) != 0) == (branch == 0);
              branch == 0 ? t(fr) : e(fr);
            }
            for (size_t i = 0; i < fr.size(); ++i) fr[i].active = was[i];
          };
        return [this, c, t, e](std::vector<Frame>& fr) { uniform(fr, c, "an if's condition") ? t(fr) : e(fr); };
      }
      case Stmt::Assign: break;
    }
    return [](std::vector<Frame>&) {};
  }

  // The value every active thread gives f, the same for all (around a
  // barrier or a collective); threads that disagree stop the run.
  int64_t uniform(std::vector<Frame>& fr, const IntFn& f, const char* what) {
    bool seen = false;
    int64_t v = 0;
    for (auto& x : fr) {
      if (!x.active) continue;
      int64_t y = f(x);
      if (seen && y != v) unsupported(std::string(what) + " around a barrier or warp reduction differs between the threads of a block");
      v = y, seen = true;
    }
    return v;
  }


  const GeneratedKernel& g_;
  const LoopKernel& k_;
  std::map<std::string, int64_t> params_;
  std::map<std::string, int> slots_;
  std::map<std::string, ArrayInfo> arrays_;
  std::vector<int64_t> local_sizes_;   // private temporary arrays, per thread
  std::vector<int64_t> shared_sizes_;  // local temporaries, per block
  Frame frame_;
};

}  // namespace

void interpret(const GeneratedKernel& g, const ArgMap& host_args, InterpretCounts* counts) {
  if (!g.is_program()) return Interpreter(g, host_args, counts).run();
  // a kernel with global barriers: its global temporaries, then the launches in order
  ArgMap all = host_args;
  auto params = bind_parameters(g.kernel, host_args);
  HostScratch scratch = bind_host_global_temporaries(g, params, all);
  for_each_program_launch(g, params, all, [&](size_t launch, const std::map<std::string, int64_t>&) {
    Interpreter(g.launches[launch], all, counts).run();
  });
}

}  // namespace loom
