// lane_varying_names: the names whose value may differ between the lanes of
// one row of a block's x axis. A warp reduction's group of lanes is such a
// row (realize_reductions takes the shuffle path only when the reduction
// iname is the whole x axis), so a condition around the shuffles may test
// anything that is the same on all of the row's lanes — a y-axis thread, the
// block, a value read at such an index — and only the names found here are
// refused. Barriers stay under the block-wide rule (sync_check.cpp).
//
// Found as a fixpoint: the x-axis thread inames; the loop inames whose
// bounds are coupled to a varying name (the same domain's constraints, a
// nested domain's parameter, a data-dependent bound: a block's or another
// axis' thread iname is coupled too, but its value is the block's or the
// row's, the same on every lane); and the private temporaries
// written within a varying iname or from a varying value (their index, the
// right-hand side, a condition). A shared or global array's element at an
// index that does not vary is one value for every lane, so arrays other
// than private ones (or not yet placed) never vary themselves.
#include "loom/analysis.h"
#include "loom/isl_util.h"

namespace loom {

namespace {

bool on_lanes(const LoopKernel& k, const std::string& iname) {
  InameTag t = k.tag_of(iname);
  return t.kind == InameTag::Local && t.axis == 0;
}

std::set<std::string> names_read(const Instruction& insn) {
  std::set<std::string> names;
  collect_free_names(insn.rhs, names);
  if (auto s = insn.lhs.as<Subscript>())
    for (auto& i : s->indices) collect_free_names(i, names);
  for (auto& p : insn.predicates) collect_free_names(p, names);
  return names;
}

// The inames of d whose bounds involve one of `varying`.
std::vector<std::string> coupled_inames(const Domain& d, const std::set<std::string>& varying) {
  std::vector<std::string> inames = d.inames(), seeds;
  for (auto& p : d.params())
    if (varying.count(p)) return inames;  // a varying parameter: every iname, conservatively
  for (auto& n : inames)
    if (varying.count(n)) seeds.push_back(n);
  if (seeds.empty()) return {};
  auto parts = islu::separate_coupled(d, seeds);
  return parts ? parts->first.inames() : inames;
}

}  // namespace

std::set<std::string> lane_varying_names(const LoopKernel& k) {
  std::set<std::string> varying;
  for (auto& n : k.all_inames())
    if (on_lanes(k, n)) varying.insert(n);
  auto data_params = k.data_parameter_inames();
  for (bool grew = true; grew;) {
    grew = false;
    auto add = [&](const std::string& n) {
      if (k.has_iname(n) && k.tag_of(n).is_hardware() && !on_lanes(k, n)) return;  // (set by the hardware, not by its bounds)
      grew |= varying.insert(n).second;
    };
    for (auto& d : k.domains)
      for (auto& n : coupled_inames(d, varying)) add(n);
    for (auto& [param, inames] : data_params)
      if (varying.count(param))
        for (auto& n : inames) add(n);
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      const Temporary* t = k.find_temporary(insn.assignee_name());
      if (!t || t->space == AddressSpace::Local || t->space == AddressSpace::Global || varying.count(insn.assignee_name())) continue;
      bool varies = false;
      for (auto& n : insn.within_inames) varies |= varying.count(n) > 0;
      for (auto& n : names_read(insn)) varies |= varying.count(n) > 0;
      if (varies) add(insn.assignee_name());
    }
  }
  return varying;
}

}  // namespace loom
