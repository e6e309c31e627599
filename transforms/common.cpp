// Helpers shared by the transformation files (common.h).
#include "common.h"

#include <algorithm>

#include "loom/isl_util.h"

#include "loom/error.h"

namespace loom::transforms {

void refuse(const LoopKernel& k, const std::string& what, const std::string& why) {
  throw TransformError(what + " on kernel '" + k.name + "': " + why);
}

std::string unique_name(const LoopKernel& k, const std::string& base) {
  std::string n = base;
  for (int i = 0; k.has_iname(n) || k.find_argument(n) || k.find_temporary(n) || k.substitutions.count(n); ++i) {
    // bounded: a name that always looks taken (a character isl cuts it at) must not loop forever
    if (i == 10000) refuse(k, "a fresh name", "no free name of the form '" + base + "_N'");
    n = base + "_" + std::to_string(i);
  }
  return n;
}

std::string unique_instruction_id(const LoopKernel& k, const std::string& base) {
  auto taken = [&](const std::string& id) {
    for (auto& insn : k.instructions)
      if (insn.id == id) return true;
    return false;
  };
  std::string n = base;
  for (int i = 0; taken(n); ++i) n = base + "_" + std::to_string(i);
  return n;
}

std::vector<std::string> name_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : spec + ",") {
    if (c == ',' || c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

void drop_proven_predicates(const LoopKernel& r, Instruction& insn) {
  if (insn.predicates.empty()) return;
  isl::set domain;
  try {
    std::vector<std::string> inames(insn.within_inames.begin(), insn.within_inames.end());
    domain = islu::iteration_domain(r, inames);
    if (r.assumptions.defined()) domain = domain.intersect_params(islu::to_isl(r.assumptions));
  } catch (const Error&) {
    return;
  }
  auto proven = [&](const Expr& p) {
    auto b = p.as<Binary>();
    if (!b || (b->op != BinOp::Lt && b->op != BinOp::Le && b->op != BinOp::Gt && b->op != BinOp::Ge)) return false;
    try {
      isl::pw_aff x = islu::pw_aff_from_expr(b->a, domain.space()), y = islu::pw_aff_from_expr(b->b, domain.space());
      if (x.is_null() || y.is_null()) return false;
      isl::set holds = b->op == BinOp::Lt ? x.lt_set(y) : b->op == BinOp::Le ? x.le_set(y) : b->op == BinOp::Gt ? x.gt_set(y) : x.ge_set(y);
      return domain.is_subset(holds);
    } catch (const Error&) {
      return false;
    }
  };
  insn.predicates.erase(std::remove_if(insn.predicates.begin(), insn.predicates.end(), proven), insn.predicates.end());
}

}  // namespace loom::transforms
