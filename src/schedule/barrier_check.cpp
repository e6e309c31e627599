// check_local_barriers: local (shared) memory that one thread writes and
// another reads needs a barrier between the two in the linearized order
// (read-after-write), and a read followed, in a later iteration of an
// enclosing loop, by a write needs one between them too (write-after-read).
// Threads read their own writes without one: when the write and the read
// use the same index in the same local inames, no barrier is asked for.
// nosync= (add_nosync) waives a pair.
#include <algorithm>

#include "loom/schedule.h"

namespace loom {

namespace {

struct Event {
  const Instruction* insn;
  std::vector<std::string> loops;  // enclosing loops, outer first
};

void flatten(const LoopKernel& k, const std::vector<ScheduleItem>& items, std::vector<std::string>& loops, std::vector<Event>& out) {
  for (auto& it : items) {
    if (it.kind == ScheduleItem::Insn) {
      out.push_back({&k.instruction(it.name), loops});
      continue;
    }
    loops.push_back(it.name);
    flatten(k, it.body, loops, out);
    loops.pop_back();
  }
}

// The local-memory accesses of an instruction: (array, index) for writes and reads.
void accesses(const Instruction& insn, const LoopKernel& k, std::vector<const Subscript*>& writes,
              std::vector<const Subscript*>& reads) {
  auto local = [&](const std::string& n) {
    auto t = k.find_temporary(n);
    return t && t->space == AddressSpace::Local;
  };
  if (auto s = insn.lhs.as<Subscript>(); s && local(s->name)) writes.push_back(s);
  auto look = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) {
        if (local(s.name)) reads.push_back(&s);
      });
  };
  look(insn.rhs);
  for (auto& p : insn.predicates) look(p);
}

bool same_thread_access(const Subscript& w, const Subscript& r, const Instruction& wi, const Instruction& ri, const LoopKernel& k) {
  if (w.indices.size() != r.indices.size()) return false;
  for (size_t i = 0; i < w.indices.size(); ++i)
    if (!w.indices[i].same_as(r.indices[i])) return false;
  for (auto& n : k.all_inames())
    if (k.tag_of(n).kind == InameTag::Local && wi.within_inames.count(n) != ri.within_inames.count(n)) return false;
  return true;
}

}  // namespace

void check_local_barriers(const LoopKernel& k, const Linearization& L) {
  std::vector<Event> ev;
  std::vector<std::string> loops;
  flatten(k, L.items, loops, ev);
  auto barrier_between = [&](size_t a, size_t b) {  // strictly between positions a < b
    for (size_t i = a + 1; i < b; ++i)
      if (ev[i].insn->kind == Instruction::Barrier) return true;
    return false;
  };
  for (size_t wi = 0; wi < ev.size(); ++wi) {
    std::vector<const Subscript*> ww, wr;
    accesses(*ev[wi].insn, k, ww, wr);
    for (auto* w : ww)
      for (size_t ri = 0; ri < ev.size(); ++ri) {
        if (ri == wi) continue;
        std::vector<const Subscript*> rw, rr;
        accesses(*ev[ri].insn, k, rw, rr);
        for (auto* r : rr) {
          if (r->name != w->name) continue;
          const Instruction& W = *ev[wi].insn;
          const Instruction& R = *ev[ri].insn;
          if (W.no_sync_with.count(R.id) || R.no_sync_with.count(W.id)) continue;
          if (same_thread_access(*w, *r, W, R, k)) continue;
          // in the same iteration: a barrier between the earlier and the later one
          size_t lo = std::min(wi, ri), hi = std::max(wi, ri);
          if (!barrier_between(lo, hi)) {
            if (wi < ri)
              throw KernelError("kernel '" + k.name + "': instruction '" + R.id + "' reads local memory '" + w->name +
                                "' that other threads write in '" + W.id +
                                "' with no barrier in between; add one (add_barrier, or '... lbarrier' with dep=)");
            throw KernelError("kernel '" + k.name + "': instruction '" + W.id + "' overwrites local memory '" + w->name +
                              "' that other threads read in '" + R.id + "' before it, with no barrier in between");
          }
          // across iterations of a common loop: a barrier after the later one or before the earlier one
          size_t common = 0;
          while (common < ev[wi].loops.size() && common < ev[ri].loops.size() && ev[wi].loops[common] == ev[ri].loops[common])
            ++common;
          if (common == 0) continue;
          bool wrapped = false;
          for (size_t e = 0; e < ev.size() && !wrapped; ++e) {
            if ((e > lo && e < hi) || e == lo || e == hi || ev[e].insn->kind != Instruction::Barrier) continue;
            bool inside = ev[e].loops.size() >= common &&
                          std::equal(ev[e].loops.begin(), ev[e].loops.begin() + long(common), ev[wi].loops.begin());
            wrapped = inside;
          }
          if (!wrapped) {
            const std::string& loop = ev[wi].loops[common - 1];
            if (wi < ri)
              throw KernelError("kernel '" + k.name + "': instruction '" + W.id + "' overwrites local memory '" + w->name +
                                "' in the next iteration of loop '" + loop + "' while other threads may still read it in '" +
                                R.id + "'; add a barrier after '" + R.id + "'");
            throw KernelError("kernel '" + k.name + "': instruction '" + R.id + "' reads local memory '" + w->name +
                              "' that other threads wrote in '" + W.id + "' in the previous iteration of loop '" + loop +
                              "' with no barrier in between");
          }
        }
      }
  }
}

}  // namespace loom
