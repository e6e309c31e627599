// check_split_ilp_loops: an ILP or vec iname is a loop the linearizer may
// open more than once (a register tile's init before the k loop, its updates
// inside it, its store after): every instance of the first instruction then
// runs before every instance of the second. That is loop distribution, legal
// only when no iteration p of the first touches an element that an earlier
// iteration q < p of the second touches (one of them writing): in the loop
// as one loop, the second's iteration q came first. Private values
// privatize_ilp copied per iteration never meet across iterations; global
// arrays and local temporaries can (a buffer_array window that moves with an
// ILP iname: iteration 0's store wrote back elements iteration 1 had already
// computed and stored, a miscompile the random-schedule test found).
// The kernel as written is checked against the transformed one by
// check_reorderings, but instructions a transformation adds (a buffer's init
// and store, a prefetch's fill) have no origin to compare through, so the
// split is checked here, on the transformed kernel alone, with isl.
#include <isl/aff.h>
#include <isl/set.h>

#include <algorithm>

#include "loom/isl_util.h"
#include "loom/preprocess.h"
#include "loom/schedule.h"

namespace loom {

namespace {

using Stack = std::vector<std::pair<std::string, const ScheduleItem*>>;

// Each instruction's enclosing loop items, outermost first, and its position
// in the schedule's order.
void walk(const std::vector<ScheduleItem>& items, Stack& stack, std::map<std::string, Stack>& where,
          std::map<std::string, int>& position) {
  for (auto& it : items) {
    if (it.kind == ScheduleItem::Insn) {
      where[it.name] = stack;
      position.emplace(it.name, int(position.size()));
      continue;
    }
    stack.push_back({it.name, &it});
    walk(it.body, stack, where, position);
    stack.pop_back();
  }
}

struct Access {
  Expr sub;  // a Subscript (a scalar as one with no index)
  bool write;
};

std::vector<Access> accesses_of(const LoopKernel& k, const Instruction& insn) {
  std::vector<Access> out;
  auto scalar = [&](const std::string& n) -> const Temporary* {
    const Temporary* t = k.find_temporary(n);
    return t && t->shape.empty() ? t : nullptr;
  };
  auto reads = [&](const Expr& e) {
    if (!e.defined()) return;
    for_each_subscript(e, [&](const Subscript& s) { out.push_back({make_subscript(s.name, s.indices, s.type), false}); });
    std::vector<std::string> vars;
    collect_vars(e, vars);
    for (auto& v : vars)
      if (const Temporary* t = scalar(v)) out.push_back({make_subscript(v, {}, t->dtype), false});
  };
  if (auto s = insn.lhs.as<Subscript>()) {
    out.push_back({insn.lhs, true});
    for (auto& i : s->indices) reads(i);
  } else if (auto v = insn.lhs.as<Var>()) {
    if (const Temporary* t = scalar(v->name)) out.push_back({make_subscript(v->name, {}, t->dtype), true});
  }
  reads(insn.rhs);
  for (auto& p : insn.predicates) reads(p);
  return out;
}

// Whether some index of both accesses is the same affine function of x and
// of inames fixed between the two instances: one element, one iteration.
bool same_iteration_by_index(const LoopKernel& k, const Subscript& a, const Subscript& b, const std::string& x,
                             const std::set<std::string>& fixed) {
  if (a.indices.size() != b.indices.size()) return false;
  for (size_t d = 0; d < a.indices.size(); ++d)
    if (index_tells_iterations_apart(k, a.indices[d], b.indices[d], x, fixed)) return true;
  return false;
}

}  // namespace

void check_split_ilp_loops(const LoopKernel& k, const Linearization& L) {
  std::map<std::string, Stack> where;
  std::map<std::string, int> position;
  Stack stack;
  walk(L.items, stack, where, position);
  std::map<std::string, const Instruction*> by_id;
  for (auto& insn : k.instructions) by_id[insn.id] = &insn;
  std::map<std::string, std::vector<Access>> accesses;
  auto accesses_for = [&](const Instruction& insn) -> const std::vector<Access>& {
    auto it = accesses.find(insn.id);
    if (it == accesses.end()) it = accesses.emplace(insn.id, accesses_of(k, insn)).first;
    return it->second;
  };

  // per ILP/vec iname, the instructions inside it and the loop instance each is in
  std::map<std::string, std::vector<std::pair<std::string, const ScheduleItem*>>> in_loop;
  for (auto& [id, st] : where)
    for (auto& [n, item] : st)
      if (k.tag_of(n).is_ilp() || k.tag_of(n).kind == InameTag::Vec) in_loop[n].push_back({id, item});
  std::set<std::pair<std::string, std::string>> pairs_to_check;  // (first, second) in different instances of a loop
  for (auto& [n, members] : in_loop)
    for (auto& [a_id, a_item] : members)
      for (auto& [b_id, b_item] : members)
        if (a_item != b_item && position.at(a_id) < position.at(b_id)) pairs_to_check.insert({a_id, b_id});

  for (auto& [a_id, b_id] : pairs_to_check) {
    const Stack& a_stack = where.at(a_id);
    const Stack& b_stack = where.at(b_id);
    // the loops both are in the same instance of, and the ILP/vec loops
    // both are in but in different instances
    std::set<std::string> common;
    std::vector<std::string> split;
    for (size_t d = 0; d < a_stack.size(); ++d) {
      auto it = std::find_if(b_stack.begin(), b_stack.end(), [&](auto& e) { return e.first == a_stack[d].first; });
      if (it == b_stack.end()) continue;
      if (it->second == a_stack[d].second) {
        common.insert(a_stack[d].first);
        continue;
      }
      InameTag tag = k.tag_of(a_stack[d].first);
      if (tag.is_ilp() || tag.kind == InameTag::Vec) split.push_back(a_stack[d].first);
    }
    if (split.empty()) continue;
    const Instruction& a = *by_id.at(a_id);
    const Instruction& b = *by_id.at(b_id);
    if (a.kind != Instruction::Assign || b.kind != Instruction::Assign) continue;
    for (auto& x : split) {
      std::set<std::string> fixed = common;  // and the block and thread: the same instance
      for (auto& n : a.within_inames)
        if (k.tag_of(n).is_hardware() && b.within_inames.count(n)) fixed.insert(n);
      for (auto& fa : accesses_for(a)) {
        for (auto& fb : accesses_for(b)) {
          auto sa = fa.sub.as<Subscript>(), sb = fb.sub.as<Subscript>();
          if (sa->name != sb->name || !(fa.write || fb.write)) continue;
          if (same_iteration_by_index(k, *sa, *sb, x, fixed)) continue;
          isl::set pairs = element_pairs(k, a, *sa, b, *sb);
          std::string why;
          if (pairs.is_null()) {
            why = "isl cannot analyse their indices";
          } else {
            isl::space sp = pairs.space();
            auto var = [&](const std::string& n) { return islu::pw_aff_from_expr(make_var(n), sp); };
            // a's iteration later than b's: the order the split reversed
            pairs = pairs.intersect(isl::manage(isl_pw_aff_gt_set(var("src:" + x).release(), var("dst:" + x).release())));
            for (auto& n : fixed)
              if (a.within_inames.count(n) && b.within_inames.count(n))
                pairs = pairs.intersect(isl::manage(isl_pw_aff_eq_set(var("src:" + n).release(), var("dst:" + n).release())));
            if (pairs.is_empty()) continue;
            why = "for instance " + pair_witness(pairs);
          }
          throw KernelError("kernel '" + k.name + "': the " + k.tag_of(x).str() + " iname '" + x + "' runs as separate loops around '" +
                            a.id + "' and '" + b.id + "', so every iteration of '" + a.id + "' comes before every iteration of '" +
                            b.id + "', but they touch one element of '" + sa->name + "' from different iterations (" + why +
                            "), which a single loop would order the other way; tag '" + x +
                            "' as a plain loop (for/unr) or keep the two in one loop");
        }
      }
    }
  }
}

}  // namespace loom
