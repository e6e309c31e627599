// Expressions from text, in the kernel language's syntax (src/ir/expr_parser.cpp):
// what the kernel parser reads instruction by instruction, and what
// transformations that take an expression argument (extract_subst's
// template, buffer_array's init_expression) parse. Errors are ParseErrors
// naming the source, line and column.
#pragma once
#include <set>
#include <string>

#include "loom/expr.h"

namespace loom {

// A single expression (no reduction detection; inames unknown).
Expr parse_expr(const std::string& text);
// An expression of a kernel with these inames (sum/max/min over them are
// reductions); errors name source_name, line and column.
Expr parse_expr(const std::string& text, const std::set<std::string>& inames, const std::string& source_name);

}  // namespace loom
