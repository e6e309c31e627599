// Construction and pseudo-code printing of the codegen AST.
#include "loom/ast.h"

#include <cmath>
#include <sstream>

namespace loom {

StmtPtr make_block(std::vector<StmtPtr> stmts) {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::Block;
  s->children = std::move(stmts);
  return s;
}
StmtPtr make_for(std::string var, Expr init, Expr cond, int64_t step, StmtPtr body) {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::For;
  s->var = std::move(var);
  s->init = std::move(init);
  s->cond = std::move(cond);
  s->step = step;
  s->children = {std::move(body)};
  return s;
}
namespace {
std::shared_ptr<Stmt> new_if(Expr cond, StmtPtr then_branch, StmtPtr else_branch) {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::If;
  s->cond = std::move(cond);
  s->children = {std::move(then_branch)};
  if (else_branch) s->children.push_back(std::move(else_branch));
  return s;
}
}  // namespace
StmtPtr make_if(Expr cond, StmtPtr then_branch, StmtPtr else_branch) {
  return new_if(std::move(cond), std::move(then_branch), std::move(else_branch));
}
StmtPtr make_predicated(Expr cond, StmtPtr then_branch, std::string insn_id) {
  auto s = new_if(std::move(cond), std::move(then_branch), nullptr);
  s->insn_id = std::move(insn_id);
  return s;
}
StmtPtr make_assign(std::string insn_id, Expr lhs, Expr rhs, Stmt::Op op) {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::Assign;
  s->op = op;
  s->insn_id = std::move(insn_id);
  s->lhs = std::move(lhs);
  s->rhs = std::move(rhs);
  return s;
}
StmtPtr make_barrier() {
  auto s = std::make_shared<Stmt>();
  s->kind = Stmt::Barrier;
  return s;
}

Stmt::Op assignment_op(const Instruction& insn) {
  if (as_warp_reduce(insn.rhs)) return Stmt::Op::WarpReduce;
  return insn.async_copy ? Stmt::Op::AsyncCopy : Stmt::Op::Compute;
}

bool is_collective(const Stmt& s) { return s.kind == Stmt::Assign && s.op == Stmt::Op::WarpReduce; }

const Select* guarded_vector_load(const Stmt& vector_loop, const Expr& rhs) {
  const Select* sel = guarded_copy(rhs);
  if (!sel) return nullptr;
  for (auto& acc : vector_loop.vector_accesses)
    if (acc.same_as(sel->t)) return sel;
  return nullptr;
}

bool has_sync(const StmtPtr& s) {
  if (s->kind == Stmt::Barrier || is_collective(*s)) return true;
  for (auto& c : s->children)
    if (has_sync(c)) return true;
  return false;
}

bool has_barrier(const StmtPtr& s) {
  if (s->kind == Stmt::Barrier) return true;
  for (auto& c : s->children)
    if (has_barrier(c)) return true;
  return false;
}

StmtPtr map_children(const StmtPtr& s, const std::function<StmtPtr(const StmtPtr&)>& f) {
  std::vector<StmtPtr> children;
  bool changed = false;
  for (auto& c : s->children) {
    children.push_back(f(c));
    changed |= children.back() != c;
  }
  if (!changed) return s;
  auto n = std::make_shared<Stmt>(*s);
  n->children = std::move(children);
  return n;
}

StmtPtr substitute_stmt(const StmtPtr& s, const std::map<std::string, Expr>& values) {
  auto n = std::make_shared<Stmt>(*s);
  if (n->init.defined()) n->init = simplify(substitute(n->init, values));
  if (n->cond.defined()) n->cond = simplify(substitute(n->cond, values));
  if (n->lhs.defined()) n->lhs = simplify(substitute(n->lhs, values));
  if (n->rhs.defined()) n->rhs = simplify(substitute(n->rhs, values));
  for (auto& a : n->vector_accesses) a = simplify(substitute(a, values));
  for (auto& c : n->children) c = substitute_stmt(c, values);
  return n;
}

namespace {
void print(std::ostream& os, const StmtPtr& s, int ind) {
  std::string pad(ind * 2, ' ');
  switch (s->kind) {
    case Stmt::Block:
      for (auto& c : s->children) print(os, c, ind);
      break;
    case Stmt::For:
      os << pad << "for " << s->var << " = " << s->init.str() << "; " << s->cond.str() << "; += " << s->step;
      if (s->vector_lanes) {
        os << "  # vec " << s->vector_lanes;
        for (auto& a : s->vector_accesses) os << " " << a.str();
      }
      os << "\n";
      print(os, s->children[0], ind + 1);
      break;
    case Stmt::If:
      os << pad << "if " << s->cond.str() << "\n";
      print(os, s->children[0], ind + 1);
      if (s->children.size() > 1) {
        os << pad << "else\n";
        print(os, s->children[1], ind + 1);
      }
      break;
    case Stmt::Assign: os << pad << s->lhs.str() << " = " << s->rhs.str() << "  # " << s->insn_id << "\n"; break;
    case Stmt::Barrier: os << pad << "barrier\n"; break;
  }
}
}  // namespace

std::string to_string(const StmtPtr& s, int indent) {
  std::ostringstream os;
  print(os, s, indent);
  return os.str();
}

}  // namespace loom
