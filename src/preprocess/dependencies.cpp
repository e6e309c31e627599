// add_dependencies: orders instructions that touch the same variable as the
// text orders them (read-after-write, write-after-read, write-after-write),
// in addition to the declared dep= edges. An instruction never depends on
// itself (acc = acc + x is one instruction).
#include "loom/preprocess.h"

namespace loom {

namespace {
struct Access {
  std::set<std::string> reads, writes;
};

Access accesses_of(const Instruction& insn) {
  Access a;
  if (insn.kind != Instruction::Assign) return a;
  a.writes.insert(insn.assignee_name());
  auto add_reads = [&](const Expr& e) {
    for_each_subscript(e, [&](const Subscript& s) { a.reads.insert(s.name); });
    std::vector<std::string> vs;
    collect_vars(e, vs);
    a.reads.insert(vs.begin(), vs.end());
  };
  add_reads(insn.rhs);
  for (auto& p : insn.predicates) add_reads(p);
  if (auto s = insn.lhs.as<Subscript>())
    for (auto& i : s->indices) add_reads(i);
  return a;
}

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (auto& x : a)
    if (b.count(x)) return true;
  return false;
}
}  // namespace

LoopKernel add_dependencies(const LoopKernel& k) {
  LoopKernel r = k;
  std::vector<Access> acc;
  for (auto& insn : k.instructions) acc.push_back(accesses_of(insn));
  for (size_t b = 0; b < r.instructions.size(); ++b) {
    for (size_t a = 0; a < b; ++a) {
      bool raw = intersects(acc[a].writes, acc[b].reads);
      bool war = intersects(acc[a].reads, acc[b].writes);
      bool waw = intersects(acc[a].writes, acc[b].writes);
      if (raw || war || waw) r.instructions[b].depends_on.insert(r.instructions[a].id);
    }
  }
  return r;
}

}  // namespace loom
