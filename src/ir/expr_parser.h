// Recursive-descent parser for kernel-language expressions (pymbolic-like
// precedence: or < and < not < comparisons < | < ^ < & < shifts < + - <
// * / // % < unary - < **). Calls named sum/product/max/min whose first
// argument is an iname or a tuple of inames become reductions.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "loom/expr.h"
#include "source.h"

namespace loom::frontend {

class ExprParser {
 public:
  ExprParser(const Source& src, std::vector<Token> toks, const std::set<std::string>* inames = nullptr)
      : src_(src), toks_(std::move(toks)), inames_(inames) {}

  Expr parse_expr();

  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool at_end() const { return peek().kind == Tok::End; }
  bool is(const char* punct, size_t k = 0) const { return peek(k).kind == Tok::Punct && peek(k).text == punct; }
  bool is_ident(const char* word) const { return peek().kind == Tok::Ident && peek().text == word; }
  bool accept(const char* punct);
  void expect(const char* punct, const char* context);
  std::string expect_ident(const char* what);
  [[noreturn]] void fail_here(const std::string& what) const;
  const Source& source() const { return src_; }

 private:
  Expr parse_or();
  Expr parse_and();
  Expr parse_not();
  Expr parse_comparison();
  Expr parse_bitor();
  Expr parse_bitxor();
  Expr parse_bitand();
  Expr parse_shift();
  Expr parse_additive();
  Expr parse_multiplicative();
  Expr parse_unary();
  Expr parse_power();
  Expr parse_postfix();
  Expr parse_primary();
  Expr make_call_or_special(const std::string& name, std::vector<Expr> args, size_t offset);

  // Counts the parser's own recursion while it lives (parse_unary, `not` in parse_not).
  class NestingGuard {
   public:
    explicit NestingGuard(ExprParser& p);
    ~NestingGuard() { --p_.nesting_; }

   private:
    ExprParser& p_;
  };

  const Source& src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int nesting_ = 0;
  const std::set<std::string>* inames_;
};

}  // namespace loom::frontend
