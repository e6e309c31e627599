// Instruction transformations: add_dependency, add_barrier, add_nosync,
// set_instruction_priority, tag_instructions, remove_instructions,
// reorder_instructions, run_on_first_thread. Each selects instructions with a match expression
// (loom/match.h) or by id and refuses a match that selects nothing, so a
// typo never passes silently.
#include <algorithm>

#include "loom/isl_util.h"
#include "loom/match.h"
#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {


std::vector<Instruction*> select(LoopKernel& k, const std::string& what, const std::string& match) {
  InstructionMatch m = transforms::parse_match(k, what, match);
  std::vector<Instruction*> out;
  for (auto& insn : k.instructions.edit())
    if (m(insn)) out.push_back(&insn);
  if (out.empty()) refuse(k, what, "no instruction matches '" + match + "'");
  return out;
}

std::string unique_id(const LoopKernel& k, const std::string& base) {
  std::string id = base;
  for (int i = 0;; ++i) {
    bool taken = std::any_of(k.instructions.begin(), k.instructions.end(), [&](auto& x) { return x.id == id; });
    if (!taken) return id;
    id = base + "_" + std::to_string(i);
  }
}

}  // namespace

LoopKernel add_dependency(const LoopKernel& k, const std::string& match, const std::string& depends_on) {
  const std::string what = "add_dependency('" + match + "', '" + depends_on + "')";
  LoopKernel r = k;
  auto sources = select(r, what, depends_on);
  std::set<std::string> ids;
  for (auto* s : sources) ids.insert(s->id);
  for (auto* insn : select(r, what, match))
    for (auto& id : ids)
      if (id != insn->id) insn->depends_on.insert(id);
  return r;
}

LoopKernel add_barrier(const LoopKernel& k, const std::string& before, const std::string& after, const std::string& id) {
  const std::string what = "add_barrier('" + before + "', '" + after + "')";
  LoopKernel r = k;
  Instruction bar;
  bar.kind = Instruction::Barrier;
  bar.id = id.empty() ? unique_id(r, "barrier") : id;
  if (!id.empty() && std::any_of(r.instructions.begin(), r.instructions.end(), [&](auto& x) { return x.id == id; }))
    refuse(k, what, "an instruction with id '" + id + "' exists");
  size_t last_before = 0;
  for (auto* insn : select(r, what, before)) {
    bar.depends_on.insert(insn->id);
    last_before = std::max(last_before, size_t(insn - r.instructions->data()));
  }
  for (auto* insn : select(r, what, after)) insn->depends_on.insert(bar.id);
  r.instructions.edit().insert(r.instructions.edit().begin() + long(last_before) + 1, bar);
  return r;
}

LoopKernel add_nosync(const LoopKernel& k, const std::string& source, const std::string& sink) {
  const std::string what = "add_nosync('" + source + "', '" + sink + "')";
  LoopKernel r = k;
  std::set<std::string> ids;
  for (auto* s : select(r, what, source)) ids.insert(s->id);
  for (auto* insn : select(r, what, sink)) insn->no_sync_with.insert(ids.begin(), ids.end());
  return r;
}

LoopKernel set_instruction_priority(const LoopKernel& k, const std::string& match, int priority) {
  LoopKernel r = k;
  for (auto* insn : select(r, "set_instruction_priority('" + match + "')", match)) insn->priority = priority;
  return r;
}

LoopKernel tag_instructions(const LoopKernel& k, const std::string& tag, const std::string& match) {
  LoopKernel r = k;
  for (auto* insn : select(r, "tag_instructions('" + tag + "', '" + match + "')", match)) insn->tags.insert(tag);
  return r;
}

// The listed instructions take the places in the list they hold, in the
// order given; the others stay where they are. The list's order is the
// kernel's program order (add_dependencies orders by it), so this changes
// which instruction runs first where they share a loop; check_reorderings
// refuses an order that changes a value read.
LoopKernel reorder_instructions(const LoopKernel& k, const std::vector<std::string>& ids) {
  std::string list;
  for (auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  const std::string what = "reorder_instructions('" + list + "')";
  std::vector<size_t> places;
  for (auto& id : ids) {
    size_t at = 0;
    while (at < k.instructions.size() && k.instructions[at].id != id) ++at;
    if (at == k.instructions.size()) refuse(k, what, "no instruction '" + id + "'");
    if (std::count(places.begin(), places.end(), at)) refuse(k, what, "instruction '" + id + "' is listed twice");
    places.push_back(at);
  }
  std::vector<size_t> sorted = places;
  std::sort(sorted.begin(), sorted.end());
  // a copy's fill or copy back (read_initial_values, expand_array) keeps its
  // place: before, or after, everything it copies for
  for (size_t i = 0; i < places.size(); ++i)
    if (places[i] != sorted[i] && (k.instructions[places[i]].tags.count(Instruction::kStandInCopyTag) ||
                                   k.instructions[places[i]].tags.count(Instruction::kAddedBarrierTag)))
      refuse(k, what, "instruction '" + k.instructions[places[i]].id + "' fills or copies back a copy of an array, which keeps its place");
  LoopKernel r = k;
  for (size_t i = 0; i < places.size(); ++i) r.instructions.edit()[sorted[i]] = k.instructions[places[i]];
  return r;
}

// An instruction outside every loop on a thread axis runs on every thread
// along it, and a write there races (the checks refuse it). Where the block
// holds a sequential loop whose sums run across its threads (trisolv's rows:
// x[i] = b[i], then the sum over j < i on l.0, then the division), the other
// statements of the loop belong on one thread: each matching instruction
// gets an iname of the axis' range, tagged with it, and runs where it is at
// its first value (as a sum's result is stored by its first lane).
LoopKernel run_on_first_thread(const LoopKernel& k, const std::string& match, const std::string& axis) {
  const std::string what = "run_on_first_thread('" + match + "', '" + axis + "')";
  auto tag = InameTag::parse(axis);
  if (!tag || tag->kind != InameTag::Local) refuse(k, what, "'" + axis + "' is not a thread axis (l.0, l.1, l.2)");
  int64_t extent = 0;
  for (auto& n : k.all_inames()) {
    if (k.tag_of(n) != *tag) continue;
    auto range = islu::constant_range(k, n);
    if (!range) refuse(k, what, "iname '" + n + "' on " + axis + " has no constant range");
    extent = std::max(extent, range->second + 1);
  }
  if (extent == 0) refuse(k, what, "no iname runs on " + axis);
  LoopKernel r = k;
  std::string lane = transforms::unique_name(r, "first_" + std::string(1, axis[0]) + std::to_string(tag->axis));
  r.domains.edit().push_back(Domain::parse("{[" + lane + "]: 0 <= " + lane + " < " + std::to_string(extent) + "}"));
  r.iname_tags.edit()[lane] = *tag;
  for (auto* insn : select(r, what, match)) {
    for (auto& n : insn->within_inames)
      if (r.tag_of(n) == *tag) refuse(k, what, "instruction '" + insn->id + "' already runs within '" + n + "' on " + axis);
    insn->within_inames.insert(lane);
    insn->predicates.push_back(make_binary(BinOp::Eq, make_var(lane, r.options.index_dtype), make_int(0, r.options.index_dtype), types::boolean));
  }
  return r;
}

LoopKernel remove_instructions(const LoopKernel& k, const std::string& match) {
  const std::string what = "remove_instructions('" + match + "')";
  LoopKernel r = k;
  std::map<std::string, std::set<std::string>> removed;  // id -> its dependencies
  for (auto* insn : select(r, what, match)) removed[insn->id] = insn->depends_on;
  std::vector<Instruction> kept;
  for (auto& insn : r.instructions.edit()) {
    if (removed.count(insn.id)) continue;
    // what depended on a removed instruction now depends on what it depended on
    std::set<std::string> deps;
    std::vector<std::string> todo(insn.depends_on.begin(), insn.depends_on.end());
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string d = todo.back();
      todo.pop_back();
      if (!seen.insert(d).second) continue;
      if (removed.count(d)) todo.insert(todo.end(), removed[d].begin(), removed[d].end());
      else deps.insert(d);
    }
    insn.depends_on = deps;
    for (auto& [id, unused] : removed) insn.no_sync_with.erase(id);
    kept.push_back(insn);
  }
  r.instructions = kept;
  return r;
}

void register_instruction_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"add_dependency", "Make the matching instructions depend on those matching depends_on.",
           {TransformParam{"match", TransformParam::String, true, "instructions that wait"}.of(TransformParam::Type::Match), TransformParam{"depends_on", TransformParam::String, true, "instructions waited for"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return add_dependency(k, a.str("match"), a.str("depends_on")); }});
  reg.add({"add_barrier", "Insert a local barrier after the instructions matching before and ahead of those matching after.",
           {TransformParam{"before", TransformParam::String, true, "instructions the barrier waits for"}.of(TransformParam::Type::Match),
            TransformParam{"after", TransformParam::String, true, "instructions that wait for the barrier"}.of(TransformParam::Type::Match),
            TransformParam{"id", TransformParam::String, false, "the barrier's id"}.of(TransformParam::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return add_barrier(k, a.str("before"), a.str("after"), a.str_or("id", ""));
           }});
  reg.add({"add_nosync", "Declare that the sink instructions need no barrier against the source instructions.",
           {TransformParam{"source", TransformParam::String, true, "match"}.of(TransformParam::Type::Match), TransformParam{"sink", TransformParam::String, true, "match"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return add_nosync(k, a.str("source"), a.str("sink")); }});
  reg.add({"set_instruction_priority", "Set the priority of the matching instructions (higher runs first among ready ones).",
           {TransformParam{"match", TransformParam::String, true, "instructions"}.of(TransformParam::Type::Match), TransformParam{"priority", TransformParam::Int, true, "an integer"}.of(TransformParam::Type::Int)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return set_instruction_priority(k, a.str("match"), int(a.integer("priority")));
           }});
  reg.add({"tag_instructions", "Add a tag to the matching instructions.",
           {TransformParam{"tag", TransformParam::String, true, "the tag"}.of(TransformParam::Type::Name), TransformParam{"match", TransformParam::String, true, "instructions"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return tag_instructions(k, a.str("tag"), a.str("match")); }});
  reg.add({"reorder_instructions",
           "Put the listed instructions in this order, in the places they hold ('s4, s2, s1'); the legality check refuses an order "
           "that changes what an instruction reads.",
           {TransformParam{"ids", TransformParam::String, true, "instruction ids, in their new order"}.of(TransformParam::Type::Names)},
           [](const LoopKernel& k, const TransformArgs& a) { return reorder_instructions(k, transforms::name_list(a.str("ids"))); }});
  reg.add({"run_on_first_thread",
           "The matching instructions run on the first thread along a thread axis only (a statement beside sums across the block's "
           "threads, in a sequential loop they share).",
           {TransformParam{"match", TransformParam::String, true, "instructions"}.of(TransformParam::Type::Match),
            TransformParam{"axis", TransformParam::String, false, "the thread axis (default l.0)"}.of(TransformParam::Type::Tag).otherwise("l.0")},
           [](const LoopKernel& k, const TransformArgs& a) { return run_on_first_thread(k, a.str("match"), a.str_or("axis", "l.0")); }});
  reg.add({"remove_instructions", "Remove the matching instructions; their dependents inherit their dependencies.",
           {TransformParam{"match", TransformParam::String, true, "instructions"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return remove_instructions(k, a.str("match")); }});
}

}  // namespace loom
