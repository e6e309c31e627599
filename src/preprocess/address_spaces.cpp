// resolve_address_spaces: where a temporary declared without an address space
// (`auto`, loopy's default) lives, by loopy's rule. Each writer votes: if
// the local-parallel inames it runs within all index the element it writes
// (every thread writes its own element, for others to read), local; if its
// group-parallel inames all do, global; otherwise private (one value per
// thread). The writers must agree. A temporary no instruction writes stays
// private. Runs before anything that asks where a temporary lives.
#include <set>

#include "loom/preprocess.h"

namespace loom {

namespace {

// The inames among the free variables of a written element's indices.
std::set<std::string> indexing_inames(const LoopKernel& k, const Expr& lhs) {
  std::set<std::string> vars, out;
  if (auto s = lhs.as<Subscript>())
    for (auto& ix : s->indices) collect_free_vars(ix, vars);
  for (auto& v : vars)
    if (k.has_iname(v)) out.insert(v);
  return out;
}

AddressSpace vote(const LoopKernel& k, const Instruction& w) {
  std::set<std::string> indexing = indexing_inames(k, w.lhs);
  AddressSpace space = AddressSpace::Private;
  for (auto [kind, result] : {std::pair{InameTag::Local, AddressSpace::Local}, std::pair{InameTag::Group, AddressSpace::Global}}) {
    bool any = false, all = true;
    for (auto& n : w.within_inames)
      if (k.tag_of(n).kind == kind) {
        any = true;
        all &= indexing.count(n) > 0;
      }
    if (any && all) space = result;
  }
  return space;
}

}  // namespace

LoopKernel resolve_address_spaces(const LoopKernel& k) {
  bool any_auto = false;
  for (auto& [n, t] : k.temporaries) any_auto |= t.space == AddressSpace::Auto;
  if (!any_auto) return k;
  LoopKernel r = k;
  for (auto& [name, t] : r.temporaries.edit()) {
    if (t.space != AddressSpace::Auto) continue;
    const Instruction* first = nullptr;
    AddressSpace chosen = AddressSpace::Private;
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign || insn.assignee_name() != name) continue;
      AddressSpace s = vote(k, insn);
      if (first && s != chosen)
        throw KernelError("kernel '" + k.name + "': temporary '" + name + "' has no address space, and its writers disagree on one: '" +
                          first->id + "' makes it " + to_string(chosen) + ", '" + insn.id + "' " + to_string(s) +
                          " (declare it private, local or global)");
      if (!first) first = &insn, chosen = s;
    }
    t.space = chosen;
  }
  return r;
}

}  // namespace loom
