// accumulated_operand (analysis.h): whether an assignment accumulates into
// its left-hand side (x = x + f, f + x, x - f, x * f, f * x), and which
// operand reads it. One definition for accumulation_to_reduction, which
// reads the other operand as a sum's terms, and for the reorder check,
// which folds a sum's terms as written into one instance.
#include "loom/analysis.h"

namespace loom {

const Expr* accumulated_operand(const Instruction& insn) {
  auto b = insn.rhs.defined() ? insn.rhs.as<Binary>() : nullptr;
  if (!b || (b->op != BinOp::Add && b->op != BinOp::Sub && b->op != BinOp::Mul)) return nullptr;
  if (b->a.same_as(insn.lhs)) return &b->a;
  if (b->op != BinOp::Sub && b->b.same_as(insn.lhs)) return &b->b;
  return nullptr;
}

}  // namespace loom
