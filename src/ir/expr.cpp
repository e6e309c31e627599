// Expr construction (with structural hashing), equality, printing, and the
// default behaviour of ExprVisitor / ExprMutator.
#include "loom/expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>

namespace loom {

const char* to_string(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::FloorDiv: return "//";
    case BinOp::Mod: return "%";
    case BinOp::TruncDiv: return "/^";  // internal: C division of non-negative ints
    case BinOp::TruncRem: return "%^";
    case BinOp::Pow: return "**";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::And: return "and";
    case BinOp::Or: return "or";
    case BinOp::BitAnd: return "&";
    case BinOp::BitOr: return "|";
    case BinOp::BitXor: return "^";
    case BinOp::Shl: return "<<";
    case BinOp::Shr: return ">>";
  }
  return "?";
}
const char* to_string(UnOp op) {
  switch (op) {
    case UnOp::Neg: return "-";
    case UnOp::Not: return "not ";
    case UnOp::BitNot: return "~";
  }
  return "?";
}
const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Product: return "product";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::ArgMaxValue: return "argmax_value";
    case ReduceOp::ArgMinValue: return "argmin_value";
  }
  return "?";
}
bool is_arg_reduction(ReduceOp op) {
  return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin || is_arg_value_reduction(op);
}
bool is_arg_value_reduction(ReduceOp op) { return op == ReduceOp::ArgMaxValue || op == ReduceOp::ArgMinValue; }
bool is_comparison(BinOp op) { return op >= BinOp::Lt && op <= BinOp::Ne; }
bool is_logical(BinOp op) { return op == BinOp::And || op == BinOp::Or; }

ExprKind Expr::kind() const { return node_->kind; }
Type Expr::type() const { return node_ ? node_->type : types::unknown; }
size_t Expr::hash() const { return node_ ? node_->hash : 0; }
uint32_t Expr::depth() const { return node_ ? node_->depth : 0; }

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
size_t hash_str(const std::string& s) { return std::hash<std::string>()(s); }
size_t hash_type(Type t) { return (size_t(t.kind) << 8) ^ size_t(t.lanes); }

template <class T, class... A>
Expr finish(size_t h, uint32_t depth, A&&... args) {
  auto n = std::make_shared<T>(std::forward<A>(args)...);
  n->hash = mix(mix(h, size_t(T::kind_v)), hash_type(n->type));
  n->depth = depth;
  return Expr(std::move(n));
}

uint32_t depth_over(std::initializer_list<const Expr*> es) {
  uint32_t d = 0;
  for (auto* e : es) d = std::max(d, e->depth());
  return d + 1;
}
uint32_t depth_over(const std::vector<Expr>& es) {
  uint32_t d = 0;
  for (auto& e : es) d = std::max(d, e.depth());
  return d + 1;
}

}  // namespace

Expr make_int(int64_t v, Type t) { return finish<IntImm>(std::hash<int64_t>()(v), 1, v, t); }
Expr make_float(double v, Type t) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return finish<FloatImm>(std::hash<uint64_t>()(bits), 1, v, t);
}
Expr make_var(std::string name, Type t) {
  size_t h = hash_str(name);
  return finish<Var>(h, 1, std::move(name), t);
}
Expr make_subscript(std::string name, std::vector<Expr> idx, Type t) {
  size_t h = hash_str(name);
  for (auto& e : idx) h = mix(h, e.hash());
  uint32_t d = depth_over(idx);
  return finish<Subscript>(h, d, std::move(name), std::move(idx), t);
}
Expr make_unary(UnOp op, Expr a, Type t) {
  uint32_t d = depth_over({&a});
  return finish<Unary>(mix(size_t(op), a.hash()), d, op, std::move(a), t);
}
Expr make_binary(BinOp op, Expr a, Expr b, Type t) {
  uint32_t d = depth_over({&a, &b});
  return finish<Binary>(mix(mix(size_t(op), a.hash()), b.hash()), d, op, std::move(a), std::move(b), t);
}
Expr make_call(std::string name, std::vector<Expr> args, Type t) {
  size_t h = hash_str(name);
  for (auto& e : args) h = mix(h, e.hash());
  uint32_t d = depth_over(args);
  return finish<Call>(h, d, std::move(name), std::move(args), t);
}
Expr make_select(Expr c, Expr t, Expr f, Type ty) {
  uint32_t d = depth_over({&c, &t, &f});
  return finish<Select>(mix(mix(c.hash(), t.hash()), f.hash()), d, std::move(c), std::move(t), std::move(f), ty);
}
Expr make_reduce(ReduceOp op, std::vector<std::string> inames, Expr body, Type t) {
  size_t h = mix(size_t(op), body.hash());
  for (auto& n : inames) h = mix(h, hash_str(n));
  uint32_t d = depth_over({&body});
  return finish<Reduce>(h, d, op, std::move(inames), std::move(body), t);
}
Expr make_warp_reduce(ReduceOp op, Expr value, int64_t width) {
  uint32_t d = depth_over({&value});
  Type t = value.type();
  return finish<WarpReduce>(mix(mix(size_t(op) + 0x5157, size_t(width)), value.hash()), d, op, width, std::move(value), t);
}
Expr make_cast(Type t, Expr v) {
  uint32_t d = depth_over({&v});
  return finish<Cast>(v.hash(), d, t, std::move(v));
}

Expr operator+(Expr a, Expr b) { return make_binary(BinOp::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(BinOp::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(BinOp::Mul, std::move(a), std::move(b)); }

namespace {
bool same_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].same_as(b[i])) return false;
  return true;
}
}  // namespace

bool Expr::same_as(const Expr& o) const {
  if (node_ == o.node_) return true;
  if (!node_ || !o.node_) return false;
  if (node_->hash != o.node_->hash || node_->kind != o.node_->kind || node_->type != o.node_->type) return false;
  switch (node_->kind) {
    case ExprKind::Int: return as<IntImm>()->value == o.as<IntImm>()->value;
    case ExprKind::Float: {
      double a = as<FloatImm>()->value, b = o.as<FloatImm>()->value;
      return std::memcmp(&a, &b, sizeof a) == 0;
    }
    case ExprKind::Var: return as<Var>()->name == o.as<Var>()->name;
    case ExprKind::Subscript:
      return as<Subscript>()->name == o.as<Subscript>()->name &&
             same_list(as<Subscript>()->indices, o.as<Subscript>()->indices);
    case ExprKind::Unary: return as<Unary>()->op == o.as<Unary>()->op && as<Unary>()->a.same_as(o.as<Unary>()->a);
    case ExprKind::Binary: {
      auto x = as<Binary>(), y = o.as<Binary>();
      return x->op == y->op && x->a.same_as(y->a) && x->b.same_as(y->b);
    }
    case ExprKind::Call:
      return as<Call>()->name == o.as<Call>()->name && same_list(as<Call>()->args, o.as<Call>()->args);
    case ExprKind::WarpReduce: {
      auto x = as<WarpReduce>(), y = o.as<WarpReduce>();
      return x->op == y->op && x->width == y->width && x->value.same_as(y->value);
    }
    case ExprKind::Select: {
      auto x = as<Select>(), y = o.as<Select>();
      return x->cond.same_as(y->cond) && x->t.same_as(y->t) && x->f.same_as(y->f);
    }
    case ExprKind::Reduce: {
      auto x = as<Reduce>(), y = o.as<Reduce>();
      return x->op == y->op && x->inames == y->inames && x->body.same_as(y->body);
    }
    case ExprKind::Cast: return as<Cast>()->value.same_as(o.as<Cast>()->value);
  }
  return false;
}

// ---- printing (the kernel language's syntax, so str() parses back) ----

namespace {

int precedence(const Expr& e) {
  if (auto b = e.as<Binary>()) {
    switch (b->op) {
      case BinOp::Or: return 1;
      case BinOp::And: return 2;
      case BinOp::Lt: case BinOp::Le: case BinOp::Gt: case BinOp::Ge: case BinOp::Eq: case BinOp::Ne: return 4;
      case BinOp::BitOr: return 5;
      case BinOp::BitXor: return 6;
      case BinOp::BitAnd: return 7;
      case BinOp::Shl: case BinOp::Shr: return 8;
      case BinOp::Add: case BinOp::Sub: return 9;
      case BinOp::Pow: return 12;
      default: return 10;  // * / // % (and internal trunc ops)
    }
  }
  if (auto u = e.as<Unary>()) return u->op == UnOp::Not ? 3 : 11;
  if (auto i = e.as<IntImm>()) return i->value < 0 ? 11 : 13;
  if (auto f = e.as<FloatImm>()) return f->value < 0 ? 11 : 13;
  return 13;
}

void print(std::ostream& os, const Expr& e, bool exact);

void print_operand(std::ostream& os, const Expr& e, int min_prec, bool exact) {
  if (precedence(e) < min_prec) {
    os << '(';
    print(os, e, exact);
    os << ')';
  } else {
    print(os, e, exact);
  }
}

std::string format_float(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // shortest representation that round-trips
  for (int p = 1; p <= 17; ++p) {
    char t[40];
    std::snprintf(t, sizeof t, "%.*g", p, v);
    if (std::strtod(t, nullptr) == v) {
      std::snprintf(buf, sizeof buf, "%s", t);
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

void print_list(std::ostream& os, const std::vector<Expr>& xs, bool exact) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) os << ", ";
    print(os, xs[i], exact);
  }
}

void print(std::ostream& os, const Expr& e, bool exact) {
  if (!e.defined()) {
    os << "<undefined>";
    return;
  }
  switch (e.kind()) {
    case ExprKind::Int: os << e.as<IntImm>()->value; break;
    case ExprKind::Float:
      os << format_float(e.as<FloatImm>()->value);
      // the kernel language reads 1.5f as float32 and 1.5 as a literal of open type
      if (exact && e.type() == types::float32 && std::isfinite(e.as<FloatImm>()->value)) os << 'f';
      break;
    case ExprKind::Var: os << e.as<Var>()->name; break;
    case ExprKind::Subscript:
      if (e.as<Subscript>()->indices.empty()) {  // a 0-d array reads as its name
        os << e.as<Subscript>()->name;
        break;
      }
      os << e.as<Subscript>()->name << '[';
      print_list(os, e.as<Subscript>()->indices, exact);
      os << ']';
      break;
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      os << to_string(u->op);
      print_operand(os, u->a, precedence(e), exact);
      break;
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      int p = precedence(e);
      bool right_assoc = b->op == BinOp::Pow;
      print_operand(os, b->a, right_assoc ? p + 1 : p, exact);
      os << ' ' << to_string(b->op) << ' ';
      print_operand(os, b->b, right_assoc ? p : p + 1, exact);
      break;
    }
    case ExprKind::Call:
      os << e.as<Call>()->name << '(';
      print_list(os, e.as<Call>()->args, exact);
      os << ')';
      break;
    case ExprKind::WarpReduce: {  // (as the preprocessed kernel shows it; no reader takes it back)
      auto w = e.as<WarpReduce>();
      os << "__warp_" << to_string(w->op) << '(';
      print_list(os, {w->value, make_int(w->width, types::int32)}, exact);
      os << ')';
      break;
    }
    case ExprKind::Select: {
      auto s = e.as<Select>();
      os << "if_then_else(";
      print_list(os, {s->cond, s->t, s->f}, exact);
      os << ')';
      break;
    }
    case ExprKind::Reduce: {
      auto r = e.as<Reduce>();
      os << to_string(r->op) << '(';
      if (r->inames.size() == 1) {
        // max(i, x) also reads as the function max of i and x: a 1-tuple is a reduction for sure
        bool tuple = exact && (r->op == ReduceOp::Max || r->op == ReduceOp::Min);
        os << (tuple ? "(" : "") << r->inames[0] << (tuple ? ",)" : "");
      } else {
        os << '(';
        for (size_t i = 0; i < r->inames.size(); ++i) os << (i ? ", " : "") << r->inames[i];
        os << ')';
      }
      os << ", ";
      print(os, r->body, exact);
      os << ')';
      break;
    }
    case ExprKind::Cast:
      os << e.type().name() << '(';
      print(os, e.as<Cast>()->value, exact);
      os << ')';
      break;
  }
}

}  // namespace

std::string Expr::str() const {
  std::ostringstream os;
  print(os, *this, false);
  return os.str();
}

std::string Expr::exact_str() const {
  std::ostringstream os;
  print(os, *this, true);
  return os.str();
}

// ---- visitor ----

void ExprVisitor::visit(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Int: visit_int(*e.as<IntImm>()); break;
    case ExprKind::Float: visit_float(*e.as<FloatImm>()); break;
    case ExprKind::Var: visit_var(*e.as<Var>()); break;
    case ExprKind::Subscript: visit_subscript(*e.as<Subscript>()); break;
    case ExprKind::Unary: visit_unary(*e.as<Unary>()); break;
    case ExprKind::Binary: visit_binary(*e.as<Binary>()); break;
    case ExprKind::Call: visit_call(*e.as<Call>()); break;
    case ExprKind::Select: visit_select(*e.as<Select>()); break;
    case ExprKind::Reduce: visit_reduce(*e.as<Reduce>()); break;
    case ExprKind::Cast: visit_cast(*e.as<Cast>()); break;
    case ExprKind::WarpReduce: visit_warp_reduce(*e.as<WarpReduce>()); break;
  }
}
void ExprVisitor::visit_warp_reduce(const WarpReduce& n) { visit(n.value); }
void ExprVisitor::visit_subscript(const Subscript& n) {
  for (auto& i : n.indices) visit(i);
}
void ExprVisitor::visit_unary(const Unary& n) { visit(n.a); }
void ExprVisitor::visit_binary(const Binary& n) {
  visit(n.a);
  visit(n.b);
}
void ExprVisitor::visit_call(const Call& n) {
  for (auto& a : n.args) visit(a);
}
void ExprVisitor::visit_select(const Select& n) {
  visit(n.cond);
  visit(n.t);
  visit(n.f);
}
void ExprVisitor::visit_reduce(const Reduce& n) { visit(n.body); }

void GuardedExprVisitor::visit_select(const Select& n) {
  visit(n.cond);
  guards.push_back(n.cond);
  visit(n.t);
  guards.back() = make_unary(UnOp::Not, n.cond, types::boolean);
  visit(n.f);
  guards.pop_back();
}
void GuardedExprVisitor::visit_binary(const Binary& n) {
  if (!is_logical(n.op)) return ExprVisitor::visit_binary(n);
  visit(n.a);
  guards.push_back(n.op == BinOp::And ? n.a : make_unary(UnOp::Not, n.a, types::boolean));
  visit(n.b);
  guards.pop_back();
}
void ExprVisitor::visit_cast(const Cast& n) { visit(n.value); }

// ---- mutator ----

Expr ExprMutator::mutate(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Int: return mutate_int(*e.as<IntImm>(), e);
    case ExprKind::Float: return mutate_float(*e.as<FloatImm>(), e);
    case ExprKind::Var: return mutate_var(*e.as<Var>(), e);
    case ExprKind::Subscript: return mutate_subscript(*e.as<Subscript>(), e);
    case ExprKind::Unary: return mutate_unary(*e.as<Unary>(), e);
    case ExprKind::Binary: return mutate_binary(*e.as<Binary>(), e);
    case ExprKind::Call: return mutate_call(*e.as<Call>(), e);
    case ExprKind::Select: return mutate_select(*e.as<Select>(), e);
    case ExprKind::Reduce: return mutate_reduce(*e.as<Reduce>(), e);
    case ExprKind::Cast: return mutate_cast(*e.as<Cast>(), e);
    case ExprKind::WarpReduce: return mutate_warp_reduce(*e.as<WarpReduce>(), e);
  }
  return e;
}
Expr ExprMutator::mutate_warp_reduce(const WarpReduce& n, const Expr& self) {
  Expr v = mutate(n.value);
  return v.get() == n.value.get() ? self : make_warp_reduce(n.op, v, n.width);
}

namespace {
// Mutates each element; returns true when any changed.
bool mutate_list(ExprMutator& m, const std::vector<Expr>& in, std::vector<Expr>& out,
                 const std::function<Expr(const Expr&)>& f) {
  bool changed = false;
  out.reserve(in.size());
  for (auto& x : in) {
    out.push_back(f(x));
    changed |= out.back().get() != x.get();
  }
  (void)m;
  return changed;
}
}  // namespace

Expr ExprMutator::mutate_subscript(const Subscript& n, const Expr& self) {
  std::vector<Expr> idx;
  if (!mutate_list(*this, n.indices, idx, [&](const Expr& x) { return mutate(x); })) return self;
  return make_subscript(n.name, std::move(idx), n.type);
}
Expr ExprMutator::mutate_unary(const Unary& n, const Expr& self) {
  Expr a = mutate(n.a);
  return a.get() == n.a.get() ? self : make_unary(n.op, a, n.type);
}
Expr ExprMutator::mutate_binary(const Binary& n, const Expr& self) {
  Expr a = mutate(n.a), b = mutate(n.b);
  return a.get() == n.a.get() && b.get() == n.b.get() ? self : make_binary(n.op, a, b, n.type);
}
Expr ExprMutator::mutate_call(const Call& n, const Expr& self) {
  std::vector<Expr> args;
  if (!mutate_list(*this, n.args, args, [&](const Expr& x) { return mutate(x); })) return self;
  return make_call(n.name, std::move(args), n.type);
}
Expr ExprMutator::mutate_select(const Select& n, const Expr& self) {
  Expr c = mutate(n.cond), t = mutate(n.t), f = mutate(n.f);
  if (c.get() == n.cond.get() && t.get() == n.t.get() && f.get() == n.f.get()) return self;
  return make_select(c, t, f, n.type);
}
Expr ExprMutator::mutate_reduce(const Reduce& n, const Expr& self) {
  Expr b = mutate(n.body);
  return b.get() == n.body.get() ? self : make_reduce(n.op, n.inames, b, n.type);
}
Expr ExprMutator::mutate_cast(const Cast& n, const Expr& self) {
  Expr v = mutate(n.value);
  return v.get() == n.value.get() ? self : make_cast(n.type, v);
}

// ---- helpers ----

namespace {
class Substituter : public ExprMutator {
 public:
  explicit Substituter(const std::map<std::string, Expr>& r) : repl_(r) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& self) override {
    auto it = repl_.find(v.name);
    return it == repl_.end() ? self : it->second;
  }

 private:
  const std::map<std::string, Expr>& repl_;
};

class VarCollector : public ExprVisitor {
 public:
  explicit VarCollector(std::vector<std::string>& out) : out_(out) {}

 protected:
  void visit_var(const Var& v) override { out_.push_back(v.name); }

 private:
  std::vector<std::string>& out_;
};

class SubscriptWalker : public ExprVisitor {
 public:
  explicit SubscriptWalker(const std::function<void(const Subscript&)>& fn) : fn_(fn) {}

 protected:
  void visit_subscript(const Subscript& s) override {
    fn_(s);
    ExprVisitor::visit_subscript(s);
  }

 private:
  const std::function<void(const Subscript&)>& fn_;
};

class FreeVarCollector : public ExprVisitor {
 public:
  explicit FreeVarCollector(std::set<std::string>& out) : out_(out) {}

 protected:
  void visit_var(const Var& v) override {
    for (auto& b : bound_)
      if (b == v.name) return;
    out_.insert(v.name);
  }
  void visit_reduce(const Reduce& r) override {
    size_t n = bound_.size();
    bound_.insert(bound_.end(), r.inames.begin(), r.inames.end());
    visit(r.body);
    bound_.resize(n);
  }

 private:
  std::set<std::string>& out_;
  std::vector<std::string> bound_;
};

}  // namespace

void collect_reduction_inames(const Expr& e, std::set<std::string>& out) {
  if (!e.defined()) return;
  struct Collect : ExprVisitor {
    std::set<std::string>& out;
    explicit Collect(std::set<std::string>& o) : out(o) {}
    void visit_reduce(const Reduce& r) override {
      out.insert(r.inames.begin(), r.inames.end());
      ExprVisitor::visit_reduce(r);
    }
  } c(out);
  c.visit(e);
}

void collect_free_vars(const Expr& e, std::set<std::string>& out) {
  if (!e.defined()) return;
  FreeVarCollector c(out);
  c.visit(e);
}

void collect_free_names(const Expr& e, std::set<std::string>& out) {
  collect_free_vars(e, out);
  if (e.defined()) for_each_subscript(e, [&](const Subscript& s) { out.insert(s.name); });
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements) {
  if (replacements.empty() || !e.defined()) return e;
  Substituter s(replacements);
  return s.mutate(e);
}

namespace {
class SubscriptReplacer : public ExprMutator {
 public:
  explicit SubscriptReplacer(const std::vector<std::pair<Expr, Expr>>& r) : r_(r) {}

 protected:
  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    for (auto& [from, to] : r_)
      if (self.same_as(from)) return to;
    return ExprMutator::mutate_subscript(s, self);
  }

 private:
  const std::vector<std::pair<Expr, Expr>>& r_;
};
}  // namespace

Expr replace_subscripts(const Expr& e, const std::vector<std::pair<Expr, Expr>>& from_to) {
  if (from_to.empty() || !e.defined()) return e;
  return SubscriptReplacer(from_to).mutate(e);
}

void collect_vars(const Expr& e, std::vector<std::string>& out) {
  if (!e.defined()) return;
  VarCollector c(out);
  c.visit(e);
}

void for_each_subscript(const Expr& e, const std::function<void(const Subscript&)>& fn) {
  if (!e.defined()) return;
  SubscriptWalker w(fn);
  w.visit(e);
}

const Select* guarded_copy(const Expr& rhs) {
  auto sel = rhs.as<Select>();
  return sel && sel->t.as<Subscript>() && (sel->f.as<IntImm>() || sel->f.as<FloatImm>()) ? sel : nullptr;
}

std::pair<Expr, Expr> copy_source(const Expr& rhs) {
  if (rhs.as<Subscript>()) return {rhs, Expr()};
  const Select* sel = guarded_copy(rhs);
  auto i = sel ? sel->f.as<IntImm>() : nullptr;
  auto f = sel ? sel->f.as<FloatImm>() : nullptr;
  if ((i && i->value == 0) || (f && f->value == 0 && !std::signbit(f->value))) return {sel->t, sel->cond};
  return {Expr(), Expr()};
}

bool mentions_var(const Expr& e, const std::string& name) {
  std::vector<std::string> vs;
  collect_vars(e, vs);
  for (auto& v : vs)
    if (v == name) return true;
  return false;
}

}  // namespace loom
