// eval_int: integer evaluation of index expressions (shapes, grid sizes).
#include "loom/error.h"
#include "loom/expr.h"

namespace loom {

namespace {
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
}  // namespace

std::optional<int64_t> constant_int(const Expr& e) {
  std::vector<std::string> vars;
  collect_vars(e, vars);
  bool other = false;  // array accesses and calls eval_int cannot fold
  for_each_subscript(e, [&](const Subscript&) { other = true; });
  if (!vars.empty() || other) return std::nullopt;
  try {
    return eval_int(e, {});
  } catch (const Error&) {  // division by zero, or a call eval_int does not know: rare
    return std::nullopt;
  }
}

int64_t eval_int(const Expr& e, const std::map<std::string, int64_t>& v) {
  switch (e.kind()) {
    case ExprKind::Int: return e.as<IntImm>()->value;
    case ExprKind::Var: {
      auto it = v.find(e.as<Var>()->name);
      if (it == v.end()) throw Error("no value for '" + e.as<Var>()->name + "' in '" + e.str() + "'");
      return it->second;
    }
    case ExprKind::Cast: return eval_int(e.as<Cast>()->value, v);
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      int64_t a = eval_int(u->a, v);
      return u->op == UnOp::Neg ? -a : u->op == UnOp::Not ? !a : ~a;
    }
    case ExprKind::Select: {
      auto s = e.as<Select>();
      return eval_int(s->cond, v) ? eval_int(s->t, v) : eval_int(s->f, v);
    }
    case ExprKind::Call: {
      auto c = e.as<Call>();
      if ((c->name == "min" || c->name == "max") && c->args.size() == 2) {
        int64_t a = eval_int(c->args[0], v), b = eval_int(c->args[1], v);
        return c->name == "min" ? std::min(a, b) : std::max(a, b);
      }
      break;
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      int64_t x = eval_int(b->a, v), y = eval_int(b->b, v);
      auto nonzero = [&] {
        if (y == 0) throw Error("division by zero in '" + e.str() + "'");
      };
      switch (b->op) {
        case BinOp::Add: return x + y;
        case BinOp::Sub: return x - y;
        case BinOp::Mul: return x * y;
        case BinOp::FloorDiv: nonzero(); return floor_div(x, y);
        case BinOp::Mod: nonzero(); return x - y * floor_div(x, y);
        case BinOp::TruncDiv: nonzero(); return x / y;
        case BinOp::TruncRem: nonzero(); return x % y;
        case BinOp::Lt: return x < y;
        case BinOp::Le: return x <= y;
        case BinOp::Gt: return x > y;
        case BinOp::Ge: return x >= y;
        case BinOp::Eq: return x == y;
        case BinOp::Ne: return x != y;
        case BinOp::And: return x && y;
        case BinOp::Or: return x || y;
        default: break;
      }
      break;
    }
    default: break;
  }
  throw Error("'" + e.str() + "' is not an integer expression of parameters");
}

namespace {
class Simplifier : public ExprMutator {
 protected:
  Expr mutate_binary(const Binary& b, const Expr& self) override {
    Expr e = ExprMutator::mutate_binary(b, self);
    auto n = e.as<Binary>();
    if (!n || !e.type().is_int()) return e;
    auto x = n->a.as<IntImm>(), y = n->b.as<IntImm>();
    if (x && y) {
      try {
        return make_int(eval_int(e, {}), e.type());
      } catch (const Error&) {
        return e;  // division by zero stays for the target to report
      }
    }
    auto is = [](const IntImm* i, int64_t v) { return i && i->value == v; };
    switch (n->op) {
      case BinOp::Add:
        if (is(x, 0)) return n->b;
        if (is(y, 0)) return n->a;
        break;
      case BinOp::Sub:
        if (is(y, 0)) return n->a;
        break;
      case BinOp::Mul:
        if (is(x, 1)) return n->b;
        if (is(y, 1)) return n->a;
        break;
      case BinOp::FloorDiv: case BinOp::TruncDiv:
        if (is(y, 1)) return n->a;
        break;
      default: break;
    }
    return e;
  }
};
}  // namespace

Expr simplify(const Expr& e) {
  if (!e.defined()) return e;
  Simplifier s;
  return s.mutate(e);
}

}  // namespace loom
