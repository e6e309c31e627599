// Expr: construction, structural equality and hashing, printing, and the
// visitor/mutator bases.
#include <gtest/gtest.h>

#include "loom/expr.h"
#include "loom/parser.h"

using namespace loom;

TEST(Expr, StructuralEqualityAndHash) {
  Expr a = make_binary(BinOp::Add, make_var("i"), make_int(1));
  Expr b = make_binary(BinOp::Add, make_var("i"), make_int(1));
  Expr c = make_binary(BinOp::Add, make_var("i"), make_int(2));
  EXPECT_TRUE(a.same_as(b));
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a.same_as(c));
  EXPECT_FALSE(make_var("i", types::int32).same_as(make_var("i", types::int64)));
  EXPECT_FALSE(make_float(0.0).same_as(make_float(-0.0)));
}

TEST(Expr, PrintsInKernelLanguageAndParsesBack) {
  for (const char* text : {"a[i, j] + 2 * x", "(a + b) * c", "a - (b - c)", "-x ** 2", "a // 4 % 3",
                           "if_then_else(i < n and not j == 0, a[i], 0.5)", "sqrt(x) / 3.0", "a ** b ** c"}) {
    Expr e = parse_expr(text);
    Expr again = parse_expr(e.str());
    EXPECT_TRUE(e.same_as(again)) << text << " printed as " << e.str();
  }
  EXPECT_EQ(parse_expr("a - (b - c)").str(), "a - (b - c)");
  EXPECT_EQ(parse_expr("(a + b) * c").str(), "(a + b) * c");
}

TEST(Expr, VisitorSeesEveryVariable) {
  Expr e = parse_expr("a[i + j, k] * x + sum(k, b[k])");
  std::vector<std::string> vars;
  collect_vars(e, vars);
  EXPECT_EQ(vars, (std::vector<std::string>{"i", "j", "k", "x", "k"}));
  std::set<std::string> free;
  collect_free_vars(e, free);  // k is free in a[.., k] but bound in the sum; the sum's k is not counted
  EXPECT_EQ(free, (std::set<std::string>{"i", "j", "k", "x"}));
}

TEST(Expr, MutatorRebuildsOnlyWhatChanged) {
  Expr e = parse_expr("a[i] + b[j]");
  Expr r = substitute(e, {{"i", parse_expr("16 * io + ii")}});
  EXPECT_EQ(r.str(), "a[16 * io + ii] + b[j]");
  auto rb = r.as<Binary>();
  auto eb = e.as<Binary>();
  EXPECT_EQ(rb->b.get(), eb->b.get());  // the untouched operand is shared
  EXPECT_EQ(substitute(e, {{"q", make_int(1)}}).get(), e.get());
}

TEST(Expr, EvalIntFollowsPythonFloorSemantics) {
  std::map<std::string, int64_t> v{{"n", -7}};
  EXPECT_EQ(eval_int(parse_expr("n // 2"), v), -4);
  EXPECT_EQ(eval_int(parse_expr("n % 3"), v), 2);
  EXPECT_EQ(eval_int(parse_expr("(n + 15) // 16"), {{"n", 17}}), 2);
  EXPECT_THROW(eval_int(parse_expr("m + 1"), v), Error);
}
