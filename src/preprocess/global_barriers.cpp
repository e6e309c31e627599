// split_global_barriers: a kernel with global barriers (`... gbarrier`,
// loopy's) or global temporaries runs as several launches in order. The
// instructions between two global barriers (in the order of the kernel's
// instruction list, where transformations insert what they add beside the
// instructions it serves) form one launch; each launch is an ordinary kernel,
// generated, checked and scheduled on its own, so every block of one launch
// has finished before the next starts: that is what lets one array's
// reduction use the whole GPU (blocks reduce into a global temporary, the next
// launch reduces those). Global temporaries become array arguments of every
// launch; the runtimes allocate them for each call.
#include <algorithm>
#include <set>

#include "loom/preprocess.h"

namespace loom {

namespace {

bool needs_launches(const LoopKernel& k) {
  for (auto& insn : k.instructions)
    if (insn.kind == Instruction::GlobalBarrier) return true;
  for (auto& [n, t] : k.temporaries)
    if (t.space == AddressSpace::Global) return true;
  return false;
}

// The inames an instruction runs in or reduces over.
class InamesUsed : public ExprVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit_reduce(const Reduce& n) override {
    names.insert(n.inames.begin(), n.inames.end());
    ExprVisitor::visit_reduce(n);
  }
  void visit_var(const Var& v) override { names.insert(v.name); }
};

// Section of each instruction (by index): the global barriers before it.
std::vector<int> sections_of(const LoopKernel& k) {
  std::vector<int> s;
  int section = 0;
  for (auto& insn : k.instructions) {
    if (insn.kind == Instruction::GlobalBarrier) {
      if (!insn.within_inames.empty()) {
        std::string loops;
        for (auto& i : insn.within_inames) loops += (loops.empty() ? "'" : ", '") + i + "'";
        throw KernelError("kernel '" + k.name + "': global barrier '" + insn.id + "' stands inside the loops of " + loops +
                          "; a global barrier ends a launch, so it stands outside every loop");
      }
      if (!insn.predicates.empty())
        throw KernelError("kernel '" + k.name + "': global barrier '" + insn.id + "' has a condition; it ends a launch for every block");
      ++section;
    }
    s.push_back(section);
  }
  return s;
}

// The instructions' tag on a global barrier that rfactor added: the kernel as
// written had none there, so the launches on both sides answer to one
// launch of it.
const char* const kRfactorBarrier = "rfactor";

// sections: the section (global barriers before it) of each launch made.
std::vector<LoopKernel> split(const LoopKernel& given, std::vector<Argument>& globals, std::vector<int>* sections = nullptr) {
  // rules expanded first: what an instruction reads, and in which inames, shows only then
  LoopKernel k = expand_substitutions(given);
  std::vector<int> section = sections_of(k);
  int count = section.empty() ? 1 : section.back() + 1;
  std::map<std::string, int> section_of_id;
  for (size_t i = 0; i < k.instructions.size(); ++i) section_of_id[k.instructions[i].id] = section[i];
  // a dependency on a later launch cannot hold
  for (size_t i = 0; i < k.instructions.size(); ++i)
    for (auto& dep : k.instructions[i].depends_on) {
      auto it = section_of_id.find(dep);
      if (it != section_of_id.end() && it->second > section[i])
        throw KernelError("kernel '" + k.name + "': instruction '" + k.instructions[i].id + "' depends on '" + dep +
                          "', which comes after a global barrier that '" + k.instructions[i].id + "' precedes");
    }
  // private and local values do not outlive a launch
  for (auto& [name, t] : k.temporaries) {
    if (t.space == AddressSpace::Global) continue;
    int writer = -1;
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      const Instruction& insn = k.instructions[i];
      if (insn.kind != Instruction::Assign) continue;
      if (insn.assignee_name() == name) writer = std::max(writer, section[i]);
      if (writer >= 0 && writer < section[i] && insn.read_names().count(name))
        throw KernelError("kernel '" + k.name + "': temporary '" + name + "' (" + to_string(t.space == AddressSpace::Auto ? AddressSpace::Private : t.space) +
                          ") is written before a global barrier and read after it by '" + insn.id +
                          "'; a value that crosses launches lives in global memory (declare it 'global')");
    }
  }
  globals.clear();
  for (auto& [name, t] : k.temporaries) {
    if (t.space != AddressSpace::Global) continue;
    if (!t.dtype.known()) throw KernelError("kernel '" + k.name + "': global temporary '" + name + "' needs a dtype");
    Argument a;
    a.name = name;
    a.dtype = t.dtype;
    a.shape = t.shape;
    globals.push_back(a);
  }
  std::vector<LoopKernel> out;
  for (int s = 0; s < count; ++s) {
    LoopKernel sk = k;
    sk.name = out.empty() ? k.name : k.name + "_" + std::to_string(out.size());
    sk.original = nullptr;
    sk.instructions.edit().clear();
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      if (section[i] != s || k.instructions[i].kind == Instruction::GlobalBarrier) continue;
      Instruction insn = k.instructions[i];
      for (auto it = insn.depends_on.begin(); it != insn.depends_on.end();) {
        auto sec = section_of_id.find(*it);
        bool here = sec != section_of_id.end() && sec->second == s &&
                    k.instruction(*it).kind != Instruction::GlobalBarrier;
        it = here || sec == section_of_id.end() ? std::next(it) : insn.depends_on.erase(it);  // earlier launches have finished
      }
      sk.instructions.edit().push_back(std::move(insn));
    }
    // a global barrier first, last or after another: no launch of its own (one
    // that does nothing would still cost a launch)
    if (sk.instructions.empty() && (s + 1 < count || !out.empty())) continue;
    if (sections) sections->push_back(s);
    // another launch's inames keep no tag here (a block axis no instruction of this launch uses would widen its grid)
    InamesUsed used;
    for (auto& insn : sk.instructions) {
      used.names.insert(insn.within_inames.begin(), insn.within_inames.end());
      if (insn.rhs.defined()) used.visit(insn.rhs);
      if (insn.lhs.defined()) used.visit(insn.lhs);
      for (auto& p : insn.predicates) used.visit(p);
    }
    auto& tags = sk.iname_tags.edit();
    for (auto it = tags.begin(); it != tags.end();) it = used.names.count(it->first) ? std::next(it) : tags.erase(it);
    // nor domains: another launch's loops may be bounded by values only it
    // computes (a data-dependent bound is checked against its writers); a
    // domain stays when it defines an iname this launch uses, or one that
    // such a domain is bounded by
    std::set<std::string> needed;
    for (auto& n : used.names)
      if (k.has_iname(n)) needed.insert(n);
    auto defines_needed = [&](const Domain& d) {
      auto names = d.inames();
      return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return needed.count(n) > 0; });
    };
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& d : k.domains)
        if (defines_needed(d))
          for (auto& q : d.params())
            if (k.has_iname(q)) grew |= needed.insert(q).second;
    }
    auto& domains = sk.domains.edit();
    domains.erase(std::remove_if(domains.begin(), domains.end(), [&](const Domain& d) { return !d.inames().empty() && !defines_needed(d); }),
                  domains.end());
    auto& priorities = sk.loop_priority.edit();
    for (auto& order : priorities)
      order.erase(std::remove_if(order.begin(), order.end(), [&](const std::string& n) { return !needed.count(n); }), order.end());
    priorities.erase(std::remove_if(priorities.begin(), priorities.end(), [](const auto& order) { return order.size() < 2; }), priorities.end());
    auto& slabs = sk.slabs.edit();
    for (auto it = slabs.begin(); it != slabs.end();) it = needed.count(it->first) ? std::next(it) : slabs.erase(it);
    auto& temporaries = sk.temporaries.edit();
    for (auto it = temporaries.begin(); it != temporaries.end();)
      it = it->second.space == AddressSpace::Global ? temporaries.erase(it) : std::next(it);
    for (auto& g : globals) sk.arguments.edit().push_back(g);
    out.push_back(std::move(sk));
  }
  return out;
}

}  // namespace

std::vector<LoopKernel> split_global_barriers(const LoopKernel& k, std::vector<Argument>* global_temporaries) {
  std::vector<Argument> globals;
  if (!needs_launches(k)) {
    if (global_temporaries) global_temporaries->clear();
    return {k};
  }
  std::vector<int> sections;
  std::vector<LoopKernel> launches = split(k, globals, &sections);
  if (k.original) {
    // each launch answers to the same launch of the kernel as written: the
    // one of its section, not counting the barriers rfactor added (both
    // halves of a factored reduction answer to the launch it was in)
    std::vector<Argument> unused;
    std::vector<int> written_sections;
    std::vector<LoopKernel> written = needs_launches(*k.original) ? split(*k.original, unused, &written_sections) : std::vector<LoopKernel>{*k.original};
    if (written_sections.empty()) written_sections.push_back(0);
    std::vector<int> added_before;  // per section of k: rfactor's barriers before it
    int added = 0;
    added_before.push_back(0);
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::GlobalBarrier) {
        added += insn.tags.count(kRfactorBarrier) ? 1 : 0;
        added_before.push_back(added);
      }
    std::set<int> answered;
    bool paired = true;
    for (size_t s = 0; s < launches.size() && paired; ++s) {
      int ws = sections[s] - added_before[size_t(sections[s])];
      auto it = std::find(written_sections.begin(), written_sections.end(), ws);
      paired = it != written_sections.end();
      if (!paired) break;
      answered.insert(ws);
      launches[s].original = std::make_shared<const LoopKernel>(written[size_t(it - written_sections.begin())]);
    }
    if (!paired || answered.size() != written.size())
      throw KernelError("kernel '" + k.name + "' runs as " + std::to_string(launches.size()) + " launches, but as written it ran as " +
                        std::to_string(written.size()) + "; transformations may not add or remove global barriers (rfactor's own excepted)");
  }
  if (global_temporaries) *global_temporaries = globals;
  return launches;
}

}  // namespace loom
