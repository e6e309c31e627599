// infer_types: types every Expr node, infers the dtypes of temporaries
// declared with <>, and makes every conversion explicit as a Cast, so targets
// never rely on a language's implicit promotion rules.
//
// Literals are "weak" (as in JAX/Triton): 2 and 0.5 take the type of the
// other operand (a float32 array times 0.5 stays float32). A weak float meeting
// an integer gives float64 (numpy's rule for a Python float and an int
// array); what stays weak up to an assignment takes the assignee's type, and
// otherwise int32 (int64 if it does not fit) or float64.
#include <climits>
#include <set>

#include "loom/functions.h"
#include "loom/analysis.h"

namespace loom {

namespace {

bool is_weak(const Expr& e) { return !e.type().known(); }

// Whether a weak expression holds any float literal.
bool weak_is_float(const Expr& e) {
  struct V : ExprVisitor {
    bool f = false;
    void visit_float(const FloatImm&) override { f = true; }
  } v;
  v.visit(e);
  return v.f;
}

bool weak_needs_int64(const Expr& e) {
  struct V : ExprVisitor {
    bool big = false;
    void visit_int(const IntImm& i) override { big |= i.value > INT32_MAX || i.value < INT32_MIN; }
  } v;
  v.visit(e);
  return v.big;
}

Type default_type(const Expr& e) {
  if (weak_is_float(e)) return types::float64;
  return weak_needs_int64(e) ? types::int64 : types::int32;
}

// Gives a weak expression type t (or casts a typed one to t).
Expr coerce(const Expr& e, Type t) {
  if (!is_weak(e)) return e.type() == t ? e : make_cast(t, e);
  switch (e.kind()) {
    case ExprKind::Int: {
      int64_t v = e.as<IntImm>()->value;
      if (t.is_float()) return make_float(double(v), t);
      if (t.is_bool()) return make_int(v != 0, t);
      return make_int(v, t);
    }
    case ExprKind::Float: {
      double v = e.as<FloatImm>()->value;
      if (t.is_float()) return make_float(v, t);
      return make_cast(t, make_float(v, types::float64));
    }
    case ExprKind::Var: return make_var(e.as<Var>()->name, t);  // an untyped temporary (phase 1)
    case ExprKind::Subscript: return make_subscript(e.as<Subscript>()->name, e.as<Subscript>()->indices, t);
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      if (u->op == UnOp::Not) break;
      return make_unary(u->op, coerce(u->a, t), t);
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      if (is_comparison(b->op) || is_logical(b->op)) break;
      if (b->op == BinOp::Div && !t.is_float()) return make_cast(t, coerce(e, types::float64));
      return make_binary(b->op, coerce(b->a, t), coerce(b->b, t), t);
    }
    case ExprKind::Call: {
      auto c = e.as<Call>();
      auto f = find_math_function(c->name);
      if ((f->kind == MathFunction::FloatUnary || f->kind == MathFunction::FloatBinary || f->kind == MathFunction::Fma) &&
          !t.is_float())
        return make_cast(t, coerce(e, types::float64));
      std::vector<Expr> args;
      for (auto& a : c->args) args.push_back(coerce(a, t));
      return make_call(c->name, args, t);
    }
    case ExprKind::Select: {
      auto s = e.as<Select>();
      return make_select(s->cond, coerce(s->t, t), coerce(s->f, t), t);
    }
    case ExprKind::Reduce: {
      auto r = e.as<Reduce>();
      if (is_arg_reduction(r->op)) break;  // typed already (an index, or the value's type)
      return make_reduce(r->op, r->inames, coerce(r->body, t), t);
    }
    default: break;
  }
  return make_cast(t, coerce(e, default_type(e)));
}

Expr finalize(const Expr& e) { return is_weak(e) ? coerce(e, default_type(e)) : e; }

class TypeInferrer : public ExprMutator {
 public:
  TypeInferrer(const LoopKernel& k, const std::map<std::string, Type>& temps, const Instruction& insn)
      : k_(k), temps_(temps), insn_(insn) {}
  [[noreturn]] void fail(const std::string& why) const {
    throw KernelError("kernel '" + k_.name + "', instruction '" + insn_.id + "': " + why);
  }

  Type var_type(const std::string& n) {
    if (k_.has_iname(n)) return k_.options.index_dtype;
    if (auto a = k_.find_argument(n)) {
      if (a->kind == Argument::Array) fail("array '" + n + "' is used without a subscript");
      return a->dtype;
    }
    auto t = temps_.find(n);
    if (t != temps_.end()) {
      if (k_.find_temporary(n) && !k_.find_temporary(n)->shape.empty())
        fail("temporary array '" + n + "' is used without a subscript");
      return t->second;  // unknown while phase 1 runs: reads as weak
    }
    for (auto& p : k_.parameters())
      if (p == n) return k_.options.index_dtype;
    fail("unknown name '" + n + "'");
  }

  Type unify(Expr& a, Expr& b) {
    Type t;
    if (!is_weak(a) && !is_weak(b)) t = promote(a.type(), b.type());
    else if (is_weak(a) && is_weak(b)) return types::unknown;
    else {
      Type known = is_weak(a) ? b.type() : a.type();
      const Expr& weak = is_weak(a) ? a : b;
      t = (!known.is_float() && weak_is_float(weak)) ? types::float64 : known;
    }
    a = coerce(a, t);
    b = coerce(b, t);
    return t;
  }

 protected:
  Expr mutate_var(const Var& v, const Expr&) override { return make_var(v.name, var_type(v.name)); }

  Expr mutate_subscript(const Subscript& s, const Expr&) override {
    Type elem;
    if (auto a = k_.find_argument(s.name)) elem = a->dtype;
    else if (k_.find_temporary(s.name)) elem = temps_.at(s.name);
    else fail("unknown array '" + s.name + "'");
    std::vector<Expr> idx;
    for (auto& i : s.indices) {
      Expr x = mutate(i);
      if (is_weak(x)) x = coerce(x, weak_is_float(x) ? types::float64 : k_.options.index_dtype);
      if (!x.type().is_int()) fail("index '" + i.str() + "' of '" + s.name + "' is " + x.type().name() + ", not an integer");
      idx.push_back(x);
    }
    return make_subscript(s.name, idx, elem);
  }

  Expr mutate_unary(const Unary& u, const Expr&) override {
    Expr a = mutate(u.a);
    switch (u.op) {
      case UnOp::Not: return make_unary(UnOp::Not, coerce(finalize(a), types::boolean), types::boolean);
      case UnOp::BitNot:
        if (!is_weak(a) && !a.type().is_int()) fail("'~' needs an integer operand");
        return make_unary(u.op, a, a.type());
      case UnOp::Neg: return make_unary(u.op, a, a.type());
    }
    return Expr();
  }

  Expr mutate_binary(const Binary& b, const Expr&) override {
    Expr x = mutate(b.a), y = mutate(b.b);
    if (is_logical(b.op)) {
      x = coerce(finalize(x), types::boolean);
      y = coerce(finalize(y), types::boolean);
      return make_binary(b.op, x, y, types::boolean);
    }
    if (is_comparison(b.op)) {
      if (unify(x, y) == types::unknown) {
        Type t = promote(default_type(x), default_type(y));
        x = coerce(x, t);
        y = coerce(y, t);
      }
      return make_binary(b.op, x, y, types::boolean);
    }
    Type t = unify(x, y);
    bool int_like = t.known() ? !t.is_float() : !weak_is_float(x) && !weak_is_float(y);
    switch (b.op) {
      case BinOp::Div:
        if (int_like) fail("'/' between integers in '" + b.a.str() + " / " + b.b.str() + "': use '//' for floor division or make an operand float");
        break;
      case BinOp::BitAnd: case BinOp::BitOr: case BinOp::BitXor: case BinOp::Shl: case BinOp::Shr:
        if (!int_like) fail(std::string("'") + to_string(b.op) + "' needs integer operands");
        break;
      case BinOp::TruncDiv: case BinOp::TruncRem:
        if (!int_like) fail("internal: truncating division on floats");
        break;
      default: break;
    }
    return make_binary(b.op, x, y, t);
  }

  Expr mutate_call(const Call& c, const Expr&) override {
    const MathFunction* f = find_math_function(c.name);
    if (!f) fail("unknown function '" + c.name + "' (not a math function or substitution rule)");
    if (int(c.args.size()) != f->arity)
      fail(c.name + "() takes " + std::to_string(f->arity) + " argument(s), got " + std::to_string(c.args.size()));
    std::vector<Expr> args;
    for (auto& a : c.args) args.push_back(mutate(a));
    Type t;
    switch (f->kind) {
      case MathFunction::FloatUnary:
      case MathFunction::SameUnary:
        t = args[0].type();
        if (f->kind == MathFunction::FloatUnary && t.known() && !t.is_float()) {
          t = types::float64;
          args[0] = coerce(args[0], t);
        }
        break;
      case MathFunction::SameBinary:
      case MathFunction::FloatBinary:
        t = unify(args[0], args[1]);
        break;
      case MathFunction::Fma:
        t = unify(args[0], args[1]);
        if (t.known()) t = unify(args[0], args[2]), args[1] = coerce(args[1], t);
        else if (!is_weak(args[2])) t = args[2].type(), args[0] = coerce(args[0], t), args[1] = coerce(args[1], t);
        break;
    }
    bool float_only = f->kind != MathFunction::SameUnary && f->kind != MathFunction::SameBinary;
    if (float_only && t.known() && !t.is_float()) {
      t = types::float64;
      for (auto& a : args) a = coerce(a, t);
    }
    return make_call(c.name, args, t);
  }

  Expr mutate_select(const Select& s, const Expr&) override {
    Expr c = coerce(finalize(mutate(s.cond)), types::boolean);
    Expr x = mutate(s.t), y = mutate(s.f);
    Type t = unify(x, y);
    return make_select(c, x, y, t);
  }

  Expr mutate_reduce(const Reduce& r, const Expr&) override {
    for (auto& n : r.inames)
      if (!k_.has_iname(n)) fail("reduction over '" + n + "', which is not an iname");
    if (is_arg_reduction(r.op)) {  // body: __argpair(value, index)
      auto pair = r.body.as<Call>();
      if (!pair || pair->name != "__argpair" || pair->args.size() != 2) fail("internal: malformed argmax/argmin");
      Expr value = finalize(mutate(pair->args[0]));
      Expr index = coerce(finalize(mutate(pair->args[1])), k_.options.index_dtype);
      return make_reduce(r.op, r.inames, make_call("__argpair", {value, index}, value.type()),
                         is_arg_value_reduction(r.op) ? value.type() : k_.options.index_dtype);
    }
    Expr body = mutate(r.body);
    // NumPy counts: a sum or product of bools is an integer (its default
    // int64), never 1-bit arithmetic in which true + true is false
    if ((r.op == ReduceOp::Sum || r.op == ReduceOp::Product) && body.type().is_bool()) body = coerce(finalize(body), types::int64);
    return make_reduce(r.op, r.inames, body, body.type());
  }

  Expr mutate_cast(const Cast& c, const Expr&) override {
    Expr v = mutate(c.value);
    if (is_weak(v)) return coerce(v, c.type);
    return v.type() == c.type ? v : make_cast(c.type, v);
  }

 private:
  const LoopKernel& k_;
  const std::map<std::string, Type>& temps_;
  const Instruction& insn_;
};

}  // namespace

LoopKernel infer_types(const LoopKernel& k) {
  // Phase 1: dtypes of temporaries declared with <>: the promotion of the
  // types of everything assigned to them, where a temporary not typed yet
  // reads as weak (so "<> acc = 0; acc = acc + a[i]" gives a's dtype).
  std::map<std::string, Type> temps;
  std::set<std::string> open;
  for (auto& [n, t] : k.temporaries) {
    temps[n] = t.dtype;
    if (!t.dtype.known()) open.insert(n);
  }
  for (size_t round = 0; !open.empty() && round <= open.size() + 1; ++round) {
    std::map<std::string, Type> found;
    std::map<std::string, Expr> weak_rhs;
    for (auto& insn : k.instructions) {
      // scalars (acc = ...) and arrays (precompute's f_0[x] = ...) alike
      if (insn.kind != Instruction::Assign) continue;
      std::string name = insn.assignee_name();
      if (!open.count(name)) continue;
      TypeInferrer inf(k, temps, insn);
      Expr rhs = inf.mutate(insn.rhs);
      if (is_weak(rhs)) weak_rhs.emplace(name, rhs);
      else found[name] = promote(found[name], rhs.type());
    }
    bool changed = false;
    for (auto& n : open) {
      Type t = found.count(n) ? found[n] : weak_rhs.count(n) ? default_type(weak_rhs[n]) : types::unknown;
      if (t != temps[n]) {
        temps[n] = t;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (auto& [n, t] : temps)
    if (!t.known())
      throw KernelError("kernel '" + k.name + "': temporary '" + n + "' is never assigned, so its dtype is unknown");

  // Phase 2: type every instruction.
  LoopKernel r = k;
  for (auto& [n, t] : r.temporaries.edit()) t.dtype = temps[n];
  for (size_t i = 0; i < r.instructions.size(); ++i) {
    const Instruction& src = k.instructions[i];
    if (src.kind != Instruction::Assign) continue;
    TypeInferrer inf(r, temps, src);
    Instruction& dst = r.instructions.edit()[i];
    Expr rhs = inf.mutate(src.rhs);
    dst.predicates.clear();
    for (auto& p : src.predicates) dst.predicates.push_back(coerce(finalize(inf.mutate(p)), types::boolean));
    if (auto v = src.lhs.as<Var>()) {
      if (!temps.count(v->name))
        throw KernelError("kernel '" + k.name + "', instruction '" + src.id + "': assigns to '" + v->name +
                          "', which is neither an array nor a declared temporary (declare it with <> or <float32>)");
      dst.lhs = make_var(v->name, temps[v->name]);
    } else {
      dst.lhs = inf.mutate(src.lhs);
    }
    dst.rhs = coerce(rhs, dst.lhs.type());
  }
  return r;
}

}  // namespace loom
