// Barriers for local memory, in one place: local (shared) memory that one
// thread writes and another reads needs a barrier between the two in the
// linearized order (read-after-write, or write-after-read), and an access
// followed, in a later iteration of an enclosing loop, by a conflicting one
// needs a barrier inside that loop outside the pair (loop-carried).
// Threads read their own writes without one: when the write and the read use
// the same index in the same local inames, no barrier is asked for. nosync=
// (add_nosync) waives a pair.
//
// find_missing_barrier names the first pair that lacks one; place_local_barriers
// inserts barriers until none is missing (before the outermost item that holds
// the later access but not the earlier one, or at the end of the body of the
// loop that carries the conflict), and check_local_barriers refuses a
// linearization where one is still missing. Transformations never write
// barriers of their own (prefetches, buffers): this pass places them.
#include <algorithm>
#include <optional>

#include "loom/schedule.h"

namespace loom {

namespace {

struct Event {
  const Instruction* insn;
  std::vector<std::string> loops;  // enclosing loops, outer first
  std::vector<size_t> path;        // index in each enclosing body, then in the innermost one
};

void flatten(const LoopKernel& k, const std::vector<ScheduleItem>& items, std::vector<std::string>& loops, std::vector<size_t>& path,
             std::vector<Event>& out) {
  for (size_t i = 0; i < items.size(); ++i) {
    const ScheduleItem& it = items[i];
    path.push_back(i);
    if (it.kind == ScheduleItem::Insn) {
      out.push_back({&k.instruction(it.name), loops, path});
    } else {
      loops.push_back(it.name);
      flatten(k, it.body, loops, path, out);
      loops.pop_back();
    }
    path.pop_back();
  }
}

bool is_local(const LoopKernel& k, const std::string& n) {
  auto t = k.find_temporary(n);
  return t && t->space == AddressSpace::Local;
}

// The local-memory accesses of an instruction: (array, index) for writes and reads.
void accesses(const Instruction& insn, const LoopKernel& k, std::vector<const Subscript*>& writes,
              std::vector<const Subscript*>& reads) {
  if (auto s = insn.lhs.as<Subscript>(); s && is_local(k, s->name)) writes.push_back(s);
  auto look = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) {
        if (is_local(k, s.name)) reads.push_back(&s);
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

// Loops shared by two events: the same loop items, not only the same inames.
size_t common_loops(const Event& a, const Event& b) {
  size_t c = 0;
  while (c < a.loops.size() && c < b.loops.size() && a.path[c] == b.path[c]) ++c;
  return c;
}

struct Missing {
  size_t lo, hi;           // event positions, lo < hi
  size_t loop_level = 0;   // loop-carried: the carrying loop is loops[loop_level - 1]; 0: same iteration
  std::string message;
};

std::optional<Missing> find_missing(const LoopKernel& k, const std::vector<Event>& ev) {
  auto barrier_between = [&](size_t a, size_t b) {  // strictly between positions a < b
    for (size_t i = a + 1; i < b; ++i)
      if (ev[i].insn->kind == Instruction::Barrier) return true;
    return false;
  };
  std::vector<std::vector<const Subscript*>> writes(ev.size()), reads(ev.size());
  for (size_t i = 0; i < ev.size(); ++i) accesses(*ev[i].insn, k, writes[i], reads[i]);
  for (size_t wi = 0; wi < ev.size(); ++wi)
    for (auto* w : writes[wi])
      for (size_t ri = 0; ri < ev.size(); ++ri) {
        if (ri == wi) continue;
        for (auto* r : reads[ri]) {
          if (r->name != w->name) continue;
          const Instruction& W = *ev[wi].insn;
          const Instruction& R = *ev[ri].insn;
          if (W.no_sync_with.count(R.id) || R.no_sync_with.count(W.id)) continue;
          if (same_thread_access(*w, *r, W, R, k)) continue;
          size_t lo = std::min(wi, ri), hi = std::max(wi, ri);
          const std::string pre = "kernel '" + k.name + "': ";
          // in the same iteration: a barrier between the earlier and the later one
          if (!barrier_between(lo, hi)) {
            std::string msg = wi < ri ? pre + "instruction '" + R.id + "' reads local memory '" + w->name +
                                            "' that other threads write in '" + W.id + "' with no barrier in between"
                                      : pre + "instruction '" + W.id + "' overwrites local memory '" + w->name +
                                            "' that other threads read in '" + R.id + "' before it, with no barrier in between";
            return Missing{lo, hi, 0, msg};
          }
          // across iterations of a common loop: a barrier in that loop, outside [lo, hi]
          size_t common = common_loops(ev[wi], ev[ri]);
          if (common == 0) continue;
          bool wrapped = false;
          for (size_t e = 0; e < ev.size() && !wrapped; ++e) {
            if ((e >= lo && e <= hi) || ev[e].insn->kind != Instruction::Barrier) continue;
            wrapped = ev[e].loops.size() >= common &&
                      std::equal(ev[e].path.begin(), ev[e].path.begin() + long(common), ev[wi].path.begin());
          }
          if (!wrapped) {
            const std::string& loop = ev[wi].loops[common - 1];
            std::string msg = wi < ri ? pre + "instruction '" + W.id + "' overwrites local memory '" + w->name +
                                            "' in the next iteration of loop '" + loop + "' while other threads may still read it in '" +
                                            R.id + "'"
                                      : pre + "instruction '" + R.id + "' reads local memory '" + w->name + "' that other threads wrote in '" +
                                            W.id + "' in the previous iteration of loop '" + loop + "' with no barrier in between";
            return Missing{lo, hi, common, msg};
          }
        }
      }
  return std::nullopt;
}

std::vector<Event> events_of(const LoopKernel& k, const Linearization& L) {
  std::vector<Event> ev;
  std::vector<std::string> loops;
  std::vector<size_t> path;
  flatten(k, L.items, loops, path, ev);
  return ev;
}

// The body that holds the item at `path`'s first `depth` indices.
std::vector<ScheduleItem>& body_at(Linearization& L, const std::vector<size_t>& path, size_t depth) {
  std::vector<ScheduleItem>* body = &L.items;
  for (size_t d = 0; d < depth; ++d) body = &(*body)[path[d]].body;
  return *body;
}

}  // namespace

void check_local_barriers(const LoopKernel& k, const Linearization& L) {
  if (auto m = find_missing(k, events_of(k, L)))
    throw KernelError(m->message + "; Loom could not place a barrier there itself (is the access under a condition that "
                                   "not every thread of the block meets?)");
}

LoopKernel place_local_barriers(const LoopKernel& k, Linearization& L) {
  bool any_local = false;
  for (auto& [n, t] : k.temporaries) any_local |= t.space == AddressSpace::Local;
  if (!any_local) return k;
  LoopKernel r = k;
  // each round places one barrier; a barrier never needs placing twice, so
  // the rounds are bounded by the number of positions in the schedule
  for (int round = 0;; ++round) {
    std::vector<Event> ev = events_of(r, L);
    auto m = find_missing(r, ev);
    if (!m) return r;
    if (round > int(ev.size()) + 8) throw KernelError(m->message + " (internal error: barrier placement did not converge)");
    const Event& a = ev[m->lo];
    const Event& b = ev[m->hi];
    Instruction bar;
    bar.kind = Instruction::Barrier;
    bar.id = "lbarrier_auto_" + std::to_string(round);
    while (std::any_of(r.instructions.begin(), r.instructions.end(), [&](auto& i) { return i.id == bar.id; })) bar.id += "_";
    bar.inames_given = true;
    bar.loc = b.insn->loc;
    size_t depth;   // the body the barrier goes into, as a number of enclosing loops
    size_t index;   // its position in that body
    if (m->loop_level == 0) {
      // before the outermost item that holds the later access but not the earlier one
      depth = common_loops(a, b);
      index = b.path[depth];
    } else {
      // at the end of the body of the loop that carries the conflict
      depth = m->loop_level;
      index = body_at(L, b.path, depth).size();
    }
    // within its loops only: every thread of every block reaches it
    for (size_t d = 0; d < depth; ++d) bar.within_inames.insert(b.loops[d]);
    bar.depends_on.insert(a.insn->id);
    ScheduleItem item;
    item.kind = ScheduleItem::Insn;
    item.name = bar.id;
    auto& body = body_at(L, b.path, depth);
    body.insert(body.begin() + long(index), item);
    L.loop_inames[bar.id] = std::vector<std::string>(b.loops.begin(), b.loops.begin() + long(depth));
    r.instructions.push_back(bar);
  }
}

}  // namespace loom
