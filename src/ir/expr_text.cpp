// parse_expr: an expression from text (loom/expr_text.h), through the
// kernel language's tokenizer and expression parser.
#include "expr_parser.h"
#include "loom/expr_text.h"

namespace loom {

using frontend::ExprParser;
using frontend::Source;

Expr parse_expr(const std::string& text) {
  Source src(text, "<expr>");
  ExprParser p(src, frontend::tokenize(src, 0, text.size()));
  Expr e = p.parse_expr();
  if (!p.at_end()) p.fail_here("end of expression");
  return e;
}

Expr parse_expr(const std::string& text, const std::set<std::string>& inames, const std::string& source_name) {
  Source src(text, source_name);
  ExprParser p(src, frontend::tokenize(src, 0, text.size()), &inames);
  Expr e = p.parse_expr();
  if (!p.at_end()) p.fail_here("end of expression");
  return e;
}

}  // namespace loom
