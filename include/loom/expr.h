// Expr: Loom's immutable expression tree. Nodes are shared and never change
// after construction; each carries its structural hash and (after type
// inference) its Type. ExprVisitor and ExprMutator are the two traversal bases
// (as Halide's IRVisitor/IRMutator): a pass overrides only the nodes it cares
// about, and the mutator rebuilds a node only when a child changed.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loom/type.h"

namespace loom {

enum class ExprKind : uint8_t { Int, Float, Var, Subscript, Unary, Binary, Call, Select, Reduce, Cast, WarpReduce };

enum class UnOp : uint8_t { Neg, Not, BitNot };

// FloorDiv/Mod follow Python (floor) semantics, as in loopy. TruncDiv/TruncRem
// are C's / and % on integers; codegen emits them where operands are known
// non-negative (isl's pdiv_q/pdiv_r).
enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, FloorDiv, Mod, TruncDiv, TruncRem, Pow,
  Lt, Le, Gt, Ge, Eq, Ne, And, Or, BitAnd, BitOr, BitXor, Shl, Shr
};

// ArgMax/ArgMin give the index where the body's value is largest
// (smallest); ties go to the smallest index. Their body is
// __argpair(value, index). ArgMaxValue/ArgMinValue give the value there: the
// first output of loopy's `v, i = argmax(i, value, index)`.
enum class ReduceOp : uint8_t { Sum, Product, Max, Min, ArgMax, ArgMin, ArgMaxValue, ArgMinValue };
// argmax, argmin and their value forms: a body of (value, index) pairs.
bool is_arg_reduction(ReduceOp op);
// argmax_value, argmin_value: the arg reductions that give the value, not the index.
bool is_arg_value_reduction(ReduceOp op);

const char* to_string(BinOp op);    // "+", "//", "and", ...
const char* to_string(UnOp op);
const char* to_string(ReduceOp op);  // "sum", ...
bool is_comparison(BinOp op);
bool is_logical(BinOp op);

struct ExprNode;

// The deepest expression tree Loom accepts: every pass recurses over trees, and a
// deeper one (10,000 nested parentheses, a sum of 100,000 terms) would overflow the stack.
constexpr uint32_t kMaxExprDepth = 1000;

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}

  bool defined() const { return node_ != nullptr; }
  explicit operator bool() const { return defined(); }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ExprKind kind() const;
  Type type() const;
  size_t hash() const;
  // Levels of nodes from here to the deepest leaf (1 for a leaf). Passes recurse
  // over trees, so front ends refuse trees deeper than kMaxExprDepth.
  uint32_t depth() const;
  template <class T>
  const T* as() const;

  // Structural equality (same tree, same types).
  bool same_as(const Expr& o) const;

  std::string str() const;  // loopy-like text: a[i, j] + 2*x
  // Text that the kernel language reads back to this same tree (given the
  // kernel's inames): float32 literals keep their f, a one-iname max/min
  // reduction is written over a 1-tuple. JSON kernels store expressions so.
  std::string exact_str() const;

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprKind kind;
  Type type;
  size_t hash = 0;
  uint32_t depth = 1;
  ExprNode(ExprKind k, Type t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};

struct IntImm : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Int;
  int64_t value;
  IntImm(int64_t v, Type t) : ExprNode(kind_v, t), value(v) {}
};
struct FloatImm : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Float;
  double value;
  FloatImm(double v, Type t) : ExprNode(kind_v, t), value(v) {}
};
// An iname, parameter, scalar argument or temporary.
struct Var : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Var;
  std::string name;
  Var(std::string n, Type t) : ExprNode(kind_v, t), name(std::move(n)) {}
};
// a[i, j]: a multi-dimensional access to an array argument or temporary.
struct Subscript : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Subscript;
  std::string name;
  std::vector<Expr> indices;
  Subscript(std::string n, std::vector<Expr> idx, Type t)
      : ExprNode(kind_v, t), name(std::move(n)), indices(std::move(idx)) {}
};
struct Unary : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Unary;
  UnOp op;
  Expr a;
  Unary(UnOp o, Expr x, Type t) : ExprNode(kind_v, t), op(o), a(std::move(x)) {}
};
struct Binary : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Binary;
  BinOp op;
  Expr a, b;
  Binary(BinOp o, Expr x, Expr y, Type t) : ExprNode(kind_v, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
// Math functions (sqrt, exp, fma, min, max, ...) and, before preprocessing,
// substitution-rule calls.
struct Call : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Call;
  std::string name;
  std::vector<Expr> args;
  Call(std::string n, std::vector<Expr> a, Type t) : ExprNode(kind_v, t), name(std::move(n)), args(std::move(a)) {}
};
// if_then_else(cond, t, f)
struct Select : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Select;
  Expr cond, t, f;
  Select(Expr c, Expr x, Expr y, Type ty)
      : ExprNode(kind_v, ty), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};
// sum/product/max/min over inames.
struct Reduce : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Reduce;
  ReduceOp op;
  std::vector<std::string> inames;
  Expr body;
  Reduce(ReduceOp o, std::vector<std::string> in, Expr b, Type t)
      : ExprNode(kind_v, t), op(o), inames(std::move(in)), body(std::move(b)) {}
};
struct Cast : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::Cast;
  Expr value;
  Cast(Type t, Expr v) : ExprNode(kind_v, t), value(std::move(v)) {}
};

// A collective reduction across `width` consecutive threads of axis l.0
// (a warp or part of one): every thread gets op over the group's `value`s.
// Made by realize_reductions; CUDA prints warp shuffles, the CPU target and
// the interpreter run it as a collective (each in one place: its case of the
// printer, the lowering and the interpreter).
struct WarpReduce : ExprNode {
  static constexpr ExprKind kind_v = ExprKind::WarpReduce;
  ReduceOp op;
  int64_t width;
  Expr value;
  WarpReduce(ReduceOp o, int64_t w, Expr v, Type t) : ExprNode(kind_v, t), op(o), width(w), value(std::move(v)) {}
};

template <class T>
const T* Expr::as() const {
  return node_ && node_->kind == T::kind_v ? static_cast<const T*>(node_.get()) : nullptr;
}

// Constructors. Types default to unknown (filled by type inference); literals
// without a type are "weak" (they adopt the other operand's type).
Expr make_int(int64_t v, Type t = types::unknown);
Expr make_float(double v, Type t = types::unknown);
Expr make_var(std::string name, Type t = types::unknown);
Expr make_subscript(std::string name, std::vector<Expr> idx, Type t = types::unknown);
Expr make_unary(UnOp op, Expr a, Type t = types::unknown);
Expr make_binary(BinOp op, Expr a, Expr b, Type t = types::unknown);
Expr make_call(std::string name, std::vector<Expr> args, Type t = types::unknown);
Expr make_select(Expr c, Expr t, Expr f, Type ty = types::unknown);
Expr make_reduce(ReduceOp op, std::vector<std::string> inames, Expr body, Type t = types::unknown);
Expr make_cast(Type t, Expr v);

// Convenience arithmetic (types unknown; used by transforms before inference).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);

struct ExprHash {
  size_t operator()(const Expr& e) const { return e.hash(); }
};
struct ExprEqual {
  bool operator()(const Expr& a, const Expr& b) const { return a.same_as(b); }
};

// Read-only traversal. visit() dispatches on the node kind; the default
// handler of each node visits its children.
class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  void visit(const Expr& e);

 protected:
  virtual void visit_int(const IntImm&) {}
  virtual void visit_float(const FloatImm&) {}
  virtual void visit_var(const Var&) {}
  virtual void visit_subscript(const Subscript& n);
  virtual void visit_unary(const Unary& n);
  virtual void visit_binary(const Binary& n);
  virtual void visit_call(const Call& n);
  virtual void visit_select(const Select& n);
  virtual void visit_reduce(const Reduce& n);
  virtual void visit_cast(const Cast& n);
  virtual void visit_warp_reduce(const WarpReduce& n);
};

// Read-only traversal that knows the conditions the current subexpression
// runs under (`guards`): an if_then_else branch's condition (negated in the
// else branch) and, for the right operand of `and` / `or`, the left one
// (negated for `or`), as every target evaluates them short-circuit. The
// bounds proofs and the kernel statistics read accesses with their guards.
class GuardedExprVisitor : public ExprVisitor {
 public:
  std::vector<Expr> guards;

 protected:
  void visit_select(const Select& n) override;
  void visit_binary(const Binary& n) override;
};

// Rebuilding traversal. Each handler receives the node and the Expr that
// owns it; the default rebuilds the node from mutated children and returns
// the original Expr unchanged when no child changed.
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  Expr mutate(const Expr& e);

 protected:
  virtual Expr mutate_int(const IntImm&, const Expr& self) { return self; }
  virtual Expr mutate_float(const FloatImm&, const Expr& self) { return self; }
  virtual Expr mutate_var(const Var&, const Expr& self) { return self; }
  virtual Expr mutate_subscript(const Subscript& n, const Expr& self);
  virtual Expr mutate_unary(const Unary& n, const Expr& self);
  virtual Expr mutate_binary(const Binary& n, const Expr& self);
  virtual Expr mutate_call(const Call& n, const Expr& self);
  virtual Expr mutate_select(const Select& n, const Expr& self);
  virtual Expr mutate_reduce(const Reduce& n, const Expr& self);
  virtual Expr mutate_cast(const Cast& n, const Expr& self);
  virtual Expr mutate_warp_reduce(const WarpReduce& n, const Expr& self);
};

// Replace variables by expressions (inames after a split, rule arguments).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& replacements);

// e with every array access structurally equal to a `from` replaced by its
// `to` (a vector's lane, in codegen).
Expr replace_subscripts(const Expr& e, const std::vector<std::pair<Expr, Expr>>& from_to);

// Names of all variables referenced (Var nodes; Subscript array names are
// reported separately through for_each_subscript).
void collect_vars(const Expr& e, std::vector<std::string>& out);
void for_each_subscript(const Expr& e, const std::function<void(const Subscript&)>& fn);

// Variables referenced and not bound by an enclosing reduction over them.
void collect_free_vars(const Expr& e, std::set<std::string>& out);
// collect_free_vars, and the names of the arrays e reads (whose value it depends on).
void collect_free_names(const Expr& e, std::set<std::string>& out);
// The inames of every reduction in e (sum(k, ...) adds k), nested ones too.
void collect_reduction_inames(const Expr& e, std::set<std::string>& out);

// Folds integer constants and drops neutral terms (x + 0, 1 * x, x // 1);
// everything else is kept as it is. Types are preserved.
Expr simplify(const Expr& e);

Expr make_warp_reduce(ReduceOp op, Expr value, int64_t width);
inline const WarpReduce* as_warp_reduce(const Expr& e) { return e.as<WarpReduce>(); }

// Evaluates an integer expression (shapes, grid sizes, bounds) over variable
// values; throws Error naming a variable without a value.
int64_t eval_int(const Expr& e, const std::map<std::string, int64_t>& values);
// The value of an integer expression without variables; nullopt when it has
// some (or divides by zero). For hot paths: it does not throw.
std::optional<int64_t> constant_int(const Expr& e);

// True when e references variable `name` anywhere.
bool mentions_var(const Expr& e, const std::string& name);

// `c ? v[...] : constant`, a copy under a condition (a prefetch's
// fill_value): the select, or null.
const Select* guarded_copy(const Expr& rhs);
// What a copy reads: the access itself, or for `c ? a[...] : 0` (a
// zero-filled fetch, +0) the access and c, under which it is read;
// undefined Exprs when the right-hand side is neither. (Code generation
// prints such copies as cp.async or bulk copies; tma_copy checks its fills.)
std::pair<Expr, Expr> copy_source(const Expr& rhs);

}  // namespace loom
