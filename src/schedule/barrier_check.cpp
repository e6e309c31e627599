// Barriers for local memory, and for global memory within a block, in one
// place: memory that one thread writes and another reads needs a barrier
// between the two (read-after-write, or write-after-read). Which instances
// conflict is exact (isl, block_conflict): in the same iteration of the loops
// around both, the pair needs a barrier between them in the linearized order;
// the later one's instance in an earlier iteration (loop-carried) needs one
// inside that loop outside the pair; the earlier one's instance in an earlier
// iteration, any barrier in the loop. So two copies of a tile told apart by
// the loop's parity (double_buffer) need one barrier per iteration, not two.
// Threads read their own writes without one (the same index in the same local
// inames, or isl shows no other thread touches the element), except through
// an async copy, which its own thread must wait for at a barrier too. nosync=
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

#include <map>
#include <set>

#include "loom/preprocess.h"
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

bool is_global(const LoopKernel& k, const std::string& n) {
  const Argument* a = k.find_argument(n);
  return a && a->kind == Argument::Array;
}

// The accesses of an instruction that a barrier may have to order: local
// memory, and global arrays the kernel writes (a block's threads see each
// other's global writes after a barrier too).
void accesses(const Instruction& insn, const LoopKernel& k, const std::set<std::string>& written_globals,
              std::vector<const Subscript*>& writes, std::vector<const Subscript*>& reads) {
  auto tracked = [&](const std::string& n) { return is_local(k, n) || written_globals.count(n) != 0; };
  if (auto s = insn.lhs.as<Subscript>(); s && tracked(s->name)) writes.push_back(s);
  auto look = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) {
        if (tracked(s.name)) reads.push_back(&s);
      });
  };
  look(insn.rhs);
  for (auto& p : insn.predicates) look(p);
}

std::set<std::string> written_global_arrays(const LoopKernel& k) {
  std::set<std::string> r;
  for (auto& insn : k.instructions)
    if (auto s = insn.lhs.as<Subscript>(); insn.kind == Instruction::Assign && s && is_global(k, s->name)) r.insert(s->name);
  return r;
}

bool same_thread_access(const Subscript& w, const Subscript& r, const Instruction& wi, const Instruction& ri, const LoopKernel& k) {
  if (w.indices.size() != r.indices.size()) return false;
  for (size_t i = 0; i < w.indices.size(); ++i)
    if (!w.indices[i].same_as(r.indices[i])) return false;
  for (auto& n : k.all_inames())
    if (k.tag_of(n).kind == InameTag::Local && wi.within_inames.count(n) != ri.within_inames.count(n)) return false;
  return true;
}

// Which instances of the earlier event's and the later event's accesses
// conflict within a block (exact, with isl; memoized across placement rounds).
using ConflictCache = std::map<std::string, BlockConflict>;

const char* const kCannotPlace =
    "; Loom could not place a barrier there itself (is the access under a condition that not every thread of the block meets?)";
BlockConflict conflict_of(const LoopKernel& k, const Instruction& A, const Subscript& sa, const Instruction& B, const Subscript& sb,
                          const std::vector<std::string>& common, bool same_thread_too, ConflictCache& cache) {
  std::string key = A.id + "|" + B.id + "|" + sa.name + (same_thread_too ? "|async" : "");
  for (auto& i : sa.indices) key += "|" + i.str();
  key += "|";
  for (auto& i : sb.indices) key += "|" + i.str();
  for (auto& c : common) key += "|" + c;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  // Indices that do not mention the common loops touch the same elements in
  // every iteration: a conflict is one in the same iteration and across
  // iterations alike, and what the cheap test says (local memory: the
  // indices differ) is exact enough; only accesses that move with the loops
  // (double_buffer's copies by parity) are worth isl's time.
  bool moves = false;
  for (auto* s : {&sa, &sb})
    for (auto& i : s->indices)
      for (auto& c : common) moves |= mentions_var(i, c);
  if (!moves) {
    bool c = same_thread_too || !is_global(k, sa.name) || global_conflict(k, A, sa, B, sb).across_threads;
    return cache[key] = BlockConflict{c, c, c};
  }
  return cache[key] = block_conflict(k, A, sa, B, sb, common, same_thread_too);
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

std::optional<Missing> find_missing(const LoopKernel& k, const std::vector<Event>& ev, ConflictCache& cache) {
  auto barrier_between = [&](size_t a, size_t b) {  // strictly between positions a < b
    for (size_t i = a + 1; i < b; ++i)
      if (ev[i].insn->kind == Instruction::Barrier) return true;
    return false;
  };
  std::vector<std::vector<const Subscript*>> writes(ev.size()), reads(ev.size());
  std::set<std::string> globals = written_global_arrays(k);
  for (size_t i = 0; i < ev.size(); ++i) accesses(*ev[i].insn, k, globals, writes[i], reads[i]);
  // the reads of each name, in event order (a write meets only reads of its own name: an index keeps this linear)
  std::map<std::string, std::vector<std::pair<size_t, const Subscript*>>> reads_of;
  for (size_t ri = 0; ri < ev.size(); ++ri)
    for (auto* r : reads[ri]) reads_of[r->name].push_back({ri, r});
  for (size_t wi = 0; wi < ev.size(); ++wi)
    for (auto* w : writes[wi]) {
      auto same_name = reads_of.find(w->name);
      if (same_name == reads_of.end()) continue;
      for (auto [ri, r] : same_name->second) {
        if (ri == wi) continue;
          const Instruction& W = *ev[wi].insn;
          const Instruction& R = *ev[ri].insn;
          if (W.no_sync_with.count(R.id) || R.no_sync_with.count(W.id)) continue;
          // an async copy (cp.async) is waited for at a barrier: its own thread needs one too
          bool async = W.async_copy;
          if (!async && same_thread_access(*w, *r, W, R, k)) continue;
          const char* memory = is_local(k, w->name) ? "local memory" : "global memory";
          size_t lo = std::min(wi, ri), hi = std::max(wi, ri);
          size_t common = common_loops(ev[wi], ev[ri]);
          // the barriers there are: between the two, and in their innermost common loop outside them
          bool between = barrier_between(lo, hi);
          bool wrapped = false;
          for (size_t e = 0; common > 0 && e < ev.size() && !wrapped; ++e) {
            if ((e >= lo && e <= hi) || ev[e].insn->kind != Instruction::Barrier) continue;
            wrapped = ev[e].loops.size() >= common &&
                      std::equal(ev[e].path.begin(), ev[e].path.begin() + long(common), ev[wi].path.begin());
          }
          if (between && (common == 0 || wrapped)) continue;  // ordered whichever instances conflict: no isl work
          std::vector<std::string> loops(ev[wi].loops.begin(), ev[wi].loops.begin() + long(common));
          BlockConflict c = wi < ri ? conflict_of(k, W, *w, R, *r, loops, async, cache) : conflict_of(k, R, *r, W, *w, loops, async, cache);
          const std::string pre = "kernel '" + k.name + "': ";
          // in the same iteration: a barrier between the earlier and the later one
          if (c.same_iteration && !between) {
            std::string msg = wi < ri ? pre + "instruction '" + R.id + "' reads " + memory + " '" + w->name +
                                            "' that other threads write in '" + W.id + "' with no barrier in between"
                                      : pre + "instruction '" + W.id + "' overwrites " + memory + " '" + w->name +
                                            "' that other threads read in '" + R.id + "' before it, with no barrier in between";
            return Missing{lo, hi, 0, msg};
          }
          // across iterations of a common loop: the later event's instance in an
          // earlier iteration needs a barrier in that loop outside [lo, hi]; the
          // earlier event's in an earlier iteration, any barrier in the loop
          if (common == 0 || !(c.b_earlier || (c.a_earlier && !between))) continue;
          if (!wrapped) {
            const std::string& loop = ev[wi].loops[common - 1];
            bool write_first = c.b_earlier ? wi > ri : wi < ri;  // the write's instance in the earlier iteration
            std::string msg = !write_first ? pre + "instruction '" + W.id + "' overwrites " + memory + " '" + w->name +
                                                 "' in the next iteration of loop '" + loop + "' while other threads may still read it in '" +
                                                 R.id + "'"
                                           : pre + "instruction '" + R.id + "' reads " + memory + " '" + w->name + "' that other threads wrote in '" +
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
  ConflictCache cache;
  if (auto m = find_missing(k, events_of(k, L), cache))
    throw KernelError(m->message + kCannotPlace);
}

LoopKernel place_local_barriers(const LoopKernel& k, Linearization& L) {
  bool any_local = false;
  for (auto& [n, t] : k.temporaries) any_local |= t.space == AddressSpace::Local;
  bool any_thread = false;
  for (auto& [n, t] : k.iname_tags) any_thread |= t.kind == InameTag::Local && k.has_iname(n);
  if (!any_local && (!any_thread || written_global_arrays(k).empty())) return k;
  LoopKernel r = k;
  ConflictCache cache;
  // each round places one barrier; a barrier never needs placing twice, so
  // the rounds are bounded by the number of positions in the schedule
  for (int round = 0;; ++round) {
    std::vector<Event> ev = events_of(r, L);
    auto m = find_missing(r, ev, cache);
    if (!m) return r;
    if (round > int(ev.size()) + 8)
      throw KernelError(m->message + kCannotPlace);
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
    r.instructions.edit().push_back(bar);
  }
}

}  // namespace loom
