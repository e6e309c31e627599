// Expression parsing for the kernel language.
#include "expr_parser.h"

#include <cstdlib>

namespace loom::frontend {

namespace {
const char* kTuple = "__tuple__";  // (a, b) inside call arguments, resolved by the call
}

bool ExprParser::accept(const char* punct) {
  if (!is(punct)) return false;
  ++pos_;
  return true;
}

void ExprParser::fail_here(const std::string& what) const {
  const Token& t = peek();
  std::string found = t.kind == Tok::End ? "end of input" : "'" + t.text + "'";
  src_.fail(t.offset, "expected " + what + ", found " + found);
}

void ExprParser::expect(const char* punct, const char* context) {
  if (!accept(punct)) fail_here(std::string("'") + punct + "' " + context);
}

std::string ExprParser::expect_ident(const char* what) {
  if (peek().kind != Tok::Ident) fail_here(what);
  return next().text;
}

// Nesting (parentheses, unary operators, `not`) recurses in the parser itself;
// chains of binary operators do not, but build trees that later passes recurse
// over. Both are bounded so no input can overflow the stack. Every level of
// parentheses passes parse_unary once, so counting there counts nesting.
constexpr int kMaxNesting = 256;

ExprParser::NestingGuard::NestingGuard(ExprParser& p) : p_(p) {
  if (++p_.nesting_ > kMaxNesting)
    p_.src_.fail(p_.peek().offset, "expression nested more than " + std::to_string(kMaxNesting) +
                                       " levels deep (parentheses or unary operators)");
}

Expr ExprParser::parse_expr() {
  Expr e = parse_or();
  if (is_ident("if")) {  // Python's (and pymbolic's, so loopy's) `a if c else b`, right-associative
    NestingGuard guard(*this);
    next();
    Expr cond = parse_or();
    if (!is_ident("else")) src_.fail(peek().offset, "expected 'else' after the condition of 'x if c else y'");
    next();
    e = make_select(cond, e, parse_expr());
  }
  if (e.depth() > kMaxExprDepth)
    src_.fail(peek().offset, "expression too deep: " + std::to_string(e.depth()) + " levels of operators (at most " +
                                 std::to_string(kMaxExprDepth) + "); split it over temporaries");
  return e;
}

Expr ExprParser::parse_or() {
  Expr e = parse_and();
  while (is_ident("or")) {
    next();
    e = make_binary(BinOp::Or, e, parse_and());
  }
  return e;
}
Expr ExprParser::parse_and() {
  Expr e = parse_not();
  while (is_ident("and")) {
    next();
    e = make_binary(BinOp::And, e, parse_not());
  }
  return e;
}
Expr ExprParser::parse_not() {
  if (is_ident("not")) {
    NestingGuard guard(*this);
    next();
    return make_unary(UnOp::Not, parse_not());
  }
  return parse_comparison();
}
Expr ExprParser::parse_comparison() {
  Expr e = parse_bitor();
  static const std::pair<const char*, BinOp> ops[] = {{"<", BinOp::Lt},  {"<=", BinOp::Le}, {">", BinOp::Gt},
                                                      {">=", BinOp::Ge}, {"==", BinOp::Eq}, {"!=", BinOp::Ne}};
  for (auto& [p, op] : ops)
    if (accept(p)) {
      e = make_binary(op, e, parse_bitor());
      for (auto& [p2, op2] : ops)
        if (is(p2)) src_.fail(peek().offset, "chained comparisons are not supported; use 'and'");
      return e;
    }
  return e;
}
Expr ExprParser::parse_bitor() {
  Expr e = parse_bitxor();
  while (accept("|")) e = make_binary(BinOp::BitOr, e, parse_bitxor());
  return e;
}
Expr ExprParser::parse_bitxor() {
  Expr e = parse_bitand();
  while (accept("^")) e = make_binary(BinOp::BitXor, e, parse_bitand());
  return e;
}
Expr ExprParser::parse_bitand() {
  Expr e = parse_shift();
  while (accept("&")) e = make_binary(BinOp::BitAnd, e, parse_shift());
  return e;
}
Expr ExprParser::parse_shift() {
  Expr e = parse_additive();
  for (;;) {
    if (accept("<<")) e = make_binary(BinOp::Shl, e, parse_additive());
    else if (accept(">>")) e = make_binary(BinOp::Shr, e, parse_additive());
    else return e;
  }
}
Expr ExprParser::parse_additive() {
  Expr e = parse_multiplicative();
  for (;;) {
    if (accept("+")) e = make_binary(BinOp::Add, e, parse_multiplicative());
    else if (accept("-")) e = make_binary(BinOp::Sub, e, parse_multiplicative());
    else return e;
  }
}
Expr ExprParser::parse_multiplicative() {
  Expr e = parse_unary();
  for (;;) {
    if (accept("*")) e = make_binary(BinOp::Mul, e, parse_unary());
    else if (accept("//")) e = make_binary(BinOp::FloorDiv, e, parse_unary());
    else if (accept("/")) e = make_binary(BinOp::Div, e, parse_unary());
    else if (accept("%")) e = make_binary(BinOp::Mod, e, parse_unary());
    else return e;
  }
}
Expr ExprParser::parse_unary() {
  NestingGuard guard(*this);
  if (accept("-")) {
    Expr a = parse_unary();
    // fold literal negation so "-1" is a constant
    if (auto i = a.as<IntImm>()) return make_int(-i->value, i->type);
    if (auto f = a.as<FloatImm>()) return make_float(-f->value, f->type);
    return make_unary(UnOp::Neg, a);
  }
  if (accept("+")) return parse_unary();
  if (accept("~")) return make_unary(UnOp::BitNot, parse_unary());
  return parse_power();
}
Expr ExprParser::parse_power() {
  Expr e = parse_postfix();
  if (accept("**")) return make_binary(BinOp::Pow, e, parse_unary());
  return e;
}

Expr ExprParser::parse_postfix() {
  if (peek().kind == Tok::Ident && !is_ident("and") && !is_ident("or") && !is_ident("not")) {
    Token name = next();
    if (accept("(")) {
      std::vector<Expr> args;
      if (!accept(")")) {
        do {
          args.push_back(parse_expr());
        } while (accept(","));
        expect(")", "to close the argument list");
      }
      return make_call_or_special(name.text, std::move(args), name.offset);
    }
    if (accept("[")) {
      std::vector<Expr> idx;
      do {
        idx.push_back(parse_expr());
      } while (accept(","));
      expect("]", "to close the subscript");
      if (is("[")) src_.fail(peek().offset, "write a[i, j] rather than a[i][j]");
      return make_subscript(name.text, std::move(idx));
    }
    return make_var(name.text);
  }
  return parse_primary();
}

Expr ExprParser::parse_primary() {
  const Token& t = peek();
  if (t.kind == Tok::Int) {
    Token tok = next();
    errno = 0;
    long long v = std::strtoll(tok.text.c_str(), nullptr, 10);
    if (errno == ERANGE) src_.fail(tok.offset, "integer literal out of range");
    return make_int(v);
  }
  if (t.kind == Tok::Float) {
    Token tok = next();
    bool f32 = tok.text.back() == 'f' || tok.text.back() == 'F';
    double v = std::strtod(tok.text.c_str(), nullptr);
    return make_float(v, f32 ? types::float32 : types::unknown);
  }
  if (accept("(")) {
    Expr e = parse_expr();
    if (accept(",")) {  // a tuple: only meaningful as a reduction's iname list
      std::vector<Expr> items{e};
      while (!is(")")) {  // (i,) is a 1-tuple, as in Python
        items.push_back(parse_expr());
        if (!accept(",")) break;
      }
      expect(")", "to close the tuple");
      return make_call(kTuple, std::move(items));
    }
    expect(")", "to close the parenthesis");
    return e;
  }
  fail_here("an expression");
}

Expr ExprParser::make_call_or_special(const std::string& name, std::vector<Expr> args, size_t offset) {
  auto arity = [&](size_t n) {
    if (args.size() != n)
      src_.fail(offset, name + "() takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " +
                            std::to_string(args.size()));
  };
  for (auto& a : args)
    if (auto c = a.as<Call>(); c && c->name == kTuple && !(&a == &args[0]))
      src_.fail(offset, "a parenthesized list is only allowed as the inames of a reduction");

  static const std::pair<const char*, ReduceOp> reductions[] = {
      {"sum", ReduceOp::Sum}, {"product", ReduceOp::Product}, {"max", ReduceOp::Max},
      {"min", ReduceOp::Min}, {"argmax", ReduceOp::ArgMax}, {"argmin", ReduceOp::ArgMin},
      {"argmax_value", ReduceOp::ArgMaxValue}, {"argmin_value", ReduceOp::ArgMinValue}};
  for (auto& [rname, op] : reductions) {
    if (name != rname || args.empty()) continue;
    std::vector<std::string> inames;
    bool names_only = true;
    auto take = [&](const Expr& e) {
      if (auto v = e.as<Var>()) inames.push_back(v->name);
      else names_only = false;
    };
    const Expr& first = args[0];
    bool tuple = false;
    if (auto c = first.as<Call>(); c && c->name == kTuple) {
      tuple = true;
      for (auto& x : c->args) take(x);
    } else {
      take(first);
    }
    bool always = op != ReduceOp::Max && op != ReduceOp::Min;  // sum, product, argmax, argmin
    bool first_is_iname = names_only && !inames.empty() &&
                          (tuple || (inames_ && inames_->count(inames[0])) || always);
    if (always || tuple || first_is_iname) {
      // loopy's argmax(i, value, index): the index expression is given
      if (is_arg_reduction(op) && args.size() == 3) {
        args[1] = make_call("__argpair", {args[1], args[2]});
        args.pop_back();
      }
      if (args.size() != 2)
        src_.fail(offset, std::string(rname) + (is_arg_reduction(op) ? "(inames, expr[, index]) takes 2 or 3 arguments"
                                                                    : "(inames, expr) takes 2 arguments"));
      if (!names_only) src_.fail(offset, std::string(rname) + "(): the first argument must be an iname or a tuple of inames");
      if (inames_)
        for (auto& n : inames)
          if (!inames_->count(n)) src_.fail(offset, "reduction over '" + n + "', which is not an iname of any domain");
      if (is_arg_reduction(op)) {
        // the body is a (value, index) pair, so a split of the iname rewrites the index too
        // a body that is already a (value, index) pair is kept: a split iname's index is an expression
        if (auto c = args[1].as<Call>(); c && c->name == "__argpair" && c->args.size() == 2)
          return make_reduce(op, inames, args[1]);
        if (inames.size() != 1) src_.fail(offset, std::string(rname) + "() reduces over one iname");
        return make_reduce(op, inames, make_call("__argpair", {args[1], make_var(inames[0])}));
      }
      return make_reduce(op, std::move(inames), args[1]);
    }
  }
  if (!args.empty())
    if (auto c = args[0].as<Call>(); c && c->name == kTuple)
      src_.fail(offset, "a parenthesized list is only allowed as the inames of a reduction");
  if (name == "if_then_else" || name == "if") {  // loopy spells it both ways
    arity(3);
    return make_select(args[0], args[1], args[2]);
  }
  if (auto t = Type::parse(name)) {
    arity(1);
    return make_cast(*t, args[0]);
  }
  return make_call(name, std::move(args));
}

}  // namespace loom::frontend
