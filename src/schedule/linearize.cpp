// linearize: builds the loop tree of a preprocessed kernel greedily, as
// loopy's linearizer does: take a ready instruction (one that needs no new
// loop first); if it needs a loop that is not open, open its outermost
// missing loop and put inside it every remaining instruction that needs that
// loop next, whose dependencies are met inside it or before it, and whose
// dependents in that loop can go in too.
#include "loom/schedule.h"

#include <algorithm>
#include <exception>
#include <sstream>

#include "loom/preprocess.h"

namespace loom {

namespace {

class Linearizer {
 public:
  // soft_priorities: the instructions' implied nesting goes before the
  // explicit loop priorities, and a priority it contradicts is dropped.
  Linearizer(const LoopKernel& k, bool soft_priorities) : k_(k), soft_(soft_priorities) {
    rank_inames();
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      const Instruction& insn = k.instructions[i];
      index_[insn.id] = int(i);
      std::vector<std::string> loops;
      for (auto& n : insn.within_inames)
        if (!k.tag_of(n).is_hardware()) loops.push_back(n);
      std::sort(loops.begin(), loops.end(), [&](auto& a, auto& b) { return rank_[a] < rank_[b]; });
      loops_.push_back(loops);
    }
  }

  Linearization run() {
    Linearization L;
    std::vector<int> all(k_.instructions.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    std::vector<bool> done(all.size(), false);
    L.items = schedule(all, {}, done);
    for (size_t i = 0; i < k_.instructions.size(); ++i) L.loop_inames[k_.instructions[i].id] = loops_[i];
    for (auto& n : order_)
      if (k_.tag_of(n).is_hardware()) L.hardware_inames.push_back(n);
    return L;
  }

 private:
  // Iname order (outer to inner): explicit loop priorities first; then the
  // nesting the instructions imply (when X depends on Y or Y on X and X's
  // inames are a subset of Y's, X's inames go outside Y's others: an
  // accumulator's init is outside the loop that updates it); then domain
  // order. Implied edges that would contradict earlier ones are dropped.
  void rank_inames() {
    std::vector<std::string> names = k_.all_inames();
    std::map<std::string, std::set<std::string>> before;  // iname -> inames that must come first
    auto reaches = [&](const std::string& from, const std::string& to) {  // is `to` required before `from`?
      std::vector<std::string> todo{from};
      std::set<std::string> seen;
      while (!todo.empty()) {
        std::string x = todo.back();
        todo.pop_back();
        if (x == to) return true;
        if (!seen.insert(x).second) continue;
        for (auto& b : before[x]) todo.push_back(b);
      }
      return false;
    };
    auto add = [&](const std::string& outer, const std::string& inner, bool explicit_edge) {
      if (outer == inner || before[inner].count(outer)) return;
      if (reaches(outer, inner)) {  // inner already required before outer
        if (explicit_edge) throw KernelError("kernel '" + k_.name + "': loop priorities contradict each other");
        return;
      }
      before[inner].insert(outer);
    };
    auto add_priorities = [&] {
      for (auto& prio : k_.loop_priority)
        for (size_t i = 0; i + 1 < prio.size(); ++i) add(prio[i], prio[i + 1], !soft_);
    };
    if (!soft_) add_priorities();
    std::map<std::string, const Instruction*> by_id;
    for (auto& insn : k_.instructions) by_id[insn.id] = &insn;
    auto seq = [&](const Instruction& x) {
      std::set<std::string> r;
      for (auto& n : x.within_inames)
        if (!k_.tag_of(n).is_hardware()) r.insert(n);
      return r;
    };
    for (auto& y : k_.instructions)
      for (auto& d : y.depends_on) {
        auto it = by_id.find(d);
        if (it == by_id.end()) continue;
        std::set<std::string> a = seq(*it->second), b = seq(y);
        const std::set<std::string>& small = a.size() <= b.size() ? a : b;
        const std::set<std::string>& big = a.size() <= b.size() ? b : a;
        if (!std::includes(big.begin(), big.end(), small.begin(), small.end()) || small.size() == big.size()) continue;
        for (auto& o : small) {
          // an ILP or vec loop may open again around the dependent: its
          // private values have one copy per iteration (privatize_ilp)
          if (k_.tag_of(o).is_ilp() || k_.tag_of(o).kind == InameTag::Vec) continue;
          for (auto& in : big)
            if (!small.count(in)) add(o, in, false);
        }
      }
    if (soft_) add_priorities();
    // Among the inames free to go next, ILP and vec ones go last (as in
    // loopy): a register tile's loops inside the k loop leave room for the
    // tile fetches, which run within k but not within the tile's inames.
    // A warp matrix instruction's inames go inside those: its (m, n, k)
    // loops must close around the update alone to become one instruction.
    auto pass_of = [&](const std::string& n) {
      InameTag t = k_.tag_of(n);
      return t.is_matrix() ? 2 : t.is_ilp() || t.kind == InameTag::Vec ? 1 : 0;
    };
    std::set<std::string> placed;
    while (order_.size() < names.size()) {
      bool found = false;
      for (int pass = 0; pass < 3 && !found; ++pass) {
        for (auto& n : names) {
          if (placed.count(n) || pass_of(n) > pass) continue;
          bool ok = true;
          for (auto& b : before[n]) ok &= placed.count(b) > 0 || std::find(names.begin(), names.end(), b) == names.end();
          if (!ok) continue;
          order_.push_back(n);
          placed.insert(n);
          found = true;
          break;
        }
      }
      if (!found) throw KernelError("kernel '" + k_.name + "': loop priorities contradict each other");
    }
    for (size_t i = 0; i < order_.size(); ++i) rank_[order_[i]] = int(i);
  }

  bool deps_met(int i, const std::vector<bool>& done, const std::set<int>& allowed) const {
    for (auto& d : k_.instructions[i].depends_on) {
      int j = index_.at(d);
      if (!done[j] && !allowed.count(j)) return false;
    }
    return true;
  }

  // Next loop instruction i needs, given the open loops.
  std::string next_loop(int i, const std::vector<std::string>& active) const {
    for (auto& n : loops_[i])
      if (std::find(active.begin(), active.end(), n) == active.end()) return n;
    return "";
  }

  // The loop's contents: instructions needing this loop next, whose
  // dependencies are met before the loop or inside it.
  std::set<int> loop_group(const std::string& loop, const std::vector<std::string>& active, const std::vector<int>& todo,
                           const std::vector<bool>& done) const {
    std::set<int> group;
    for (int i : todo)
      if (next_loop(i, active) == loop) group.insert(i);
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = group.begin(); it != group.end();) {
        if (!deps_met(*it, done, group)) {
          it = group.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
      // A value made inside the loop must be used in the same loop: an
      // instruction that also runs in this loop but has to wait keeps
      // what it depends on out of this loop instance too. Not for ILP loops:
      // privatize_ilp gave every private value made in them one copy per
      // iteration, so a later instance of the loop finds it (a register
      // tile's init, its updates inside a k loop, its store). The same for
      // vec loops (privatized alike where every use is inside them; where
      // not, the check that a read finds its value refuses a split).
      if (k_.tag_of(loop).is_ilp() || k_.tag_of(loop).kind == InameTag::Vec) continue;
      for (int y : todo) {
        if (group.count(y) || std::find(loops_[y].begin(), loops_[y].end(), loop) == loops_[y].end()) continue;
        for (auto& d : k_.instructions[y].depends_on)
          if (group.erase(index_.at(d))) changed = true;
      }
    }
    return group;
  }

  std::vector<ScheduleItem> schedule(std::vector<int> todo, const std::vector<std::string>& active,
                                     std::vector<bool>& done) {
    std::vector<ScheduleItem> items;
    // Prefer what needs no new loop (so loops open once, with everything
    // ready to go in), then highest priority, then text order: the keys do
    // not change at this level, so todo is sorted once and each step takes
    // the first instructions in it whose dependencies are done.
    auto key = [&](int x) { return std::make_pair(next_loop(x, active).empty(), k_.instructions[x].priority); };
    std::stable_sort(todo.begin(), todo.end(), [&](int a, int b) { return key(a) > key(b); });
    while (!todo.empty()) {
      // ready: dependencies done. A ready instruction whose loop cannot take
      // it yet (what depends on it there waits for something outside) gives
      // way to the next one (a tile fetch waits for the accumulator's init).
      std::vector<int> ready;
      for (int i : todo)
        if (deps_met(i, done, {})) {
          ready.push_back(i);
          if (next_loop(i, active).empty()) break;  // taken at once: no need to look further
        }
      if (ready.empty()) {
        std::string ids;
        for (int i : todo) ids += (ids.empty() ? "" : ", ") + k_.instructions[i].id;
        throw KernelError("kernel '" + k_.name + "': cannot order instructions " + ids +
                          ": their dependencies form a cycle or need an instruction of another loop nest");
      }
      int pick = ready[0];
      std::string loop = next_loop(pick, active);
      if (loop.empty()) {
        done[pick] = true;
        items.push_back({ScheduleItem::Insn, k_.instructions[pick].id, false, {}});
        todo.erase(std::find(todo.begin(), todo.end(), pick));
        continue;
      }
      std::set<int> group;
      for (int candidate : ready) {
        loop = next_loop(candidate, active);
        group = loop_group(loop, active, todo, done);
        if (!group.empty()) break;
      }
      if (group.empty())
        throw KernelError("kernel '" + k_.name + "': cannot place instruction '" + k_.instructions[pick].id + "' in loop '" +
                          next_loop(pick, active) + "': what depends on it in that loop waits for an instruction outside it");
      std::vector<int> inner(group.begin(), group.end());
      std::vector<std::string> act = active;
      act.push_back(loop);
      ScheduleItem item{ScheduleItem::Loop, loop, k_.tag_of(loop).is_unrolled(), {}};
      item.body = schedule(inner, act, done);
      items.push_back(std::move(item));
      todo.erase(std::remove_if(todo.begin(), todo.end(), [&](int i) { return group.count(i) > 0; }), todo.end());
    }
    return items;
  }

  const LoopKernel& k_;
  bool soft_;
  std::vector<std::string> order_;
  std::map<std::string, int> rank_;
  std::map<std::string, int> index_;
  std::vector<std::vector<std::string>> loops_;
};

void print_items(std::ostream& os, const std::vector<ScheduleItem>& items, int indent) {
  for (auto& it : items) {
    os << std::string(indent * 2, ' ');
    if (it.kind == ScheduleItem::Insn) {
      os << it.name << "\n";
    } else {
      os << (it.unroll ? "unroll " : "for ") << it.name << "\n";
      print_items(os, it.body, indent + 1);
      os << std::string(indent * 2, ' ') << "end " << it.name << "\n";
    }
  }
}

}  // namespace

std::string Linearization::str() const {
  std::ostringstream os;
  print_items(os, items, 0);
  return os.str();
}

Linearization linearize(const LoopKernel& k) {
  // Loop priorities are preferences, as in loopy: when no schedule keeps
  // them (a priority puts a reduction's loop outside the loop of its
  // accumulator's init), the nesting the instructions need wins and the
  // contradicted priority is dropped. Priorities that contradict each
  // other are still an error (the first ranking throws it).
  Linearizer strict(k, false);
  Linearization L;
  try {
    L = strict.run();
  } catch (const KernelError&) {
    if (k.loop_priority.empty()) throw;
    std::exception_ptr first = std::current_exception();
    try {
      L = Linearizer(k, true).run();
    } catch (const KernelError&) {
      std::rethrow_exception(first);  // the error that names the priorities' schedule
    }
  }
  check_loop_instances(k, L);
  check_split_ilp_loops(k, L);
  return L;
}

namespace {
// Each instruction's enclosing loop items: (iname, position of the item) from the outside in.
void loop_instances(const std::vector<ScheduleItem>& items, std::vector<std::pair<std::string, const ScheduleItem*>>& stack,
                    std::map<std::string, std::vector<std::pair<std::string, const ScheduleItem*>>>& out) {
  for (auto& it : items) {
    if (it.kind == ScheduleItem::Insn) {
      out[it.name] = stack;
      continue;
    }
    stack.push_back({it.name, &it});
    loop_instances(it.body, stack, out);
    stack.pop_back();
  }
}

// overwritten_across_iterations for loop x of the writer's nest (`nest`,
// outermost first): the loops around x are the same in both iterations.
std::string overwritten_across(const LoopKernel& k, const Instruction& w, const std::string& x,
                               const std::vector<std::pair<std::string, const ScheduleItem*>>& nest) {
  std::set<std::string> outer;
  for (auto& [n, item] : nest) {
    if (n == x) break;
    outer.insert(n);
  }
  return overwritten_across_iterations(k, w, x, outer);
}

}  // namespace

void check_loop_instances(const LoopKernel& k, const Linearization& L) {
  std::map<std::string, std::vector<std::pair<std::string, const ScheduleItem*>>> where;
  std::vector<std::pair<std::string, const ScheduleItem*>> stack;
  loop_instances(L.items, stack, where);
  std::map<std::pair<std::string, std::string>, std::string> overwrites;  // (writer, loop) -> overwritten_across
  // a loop bound the kernel computes is read by the instructions of the loops it bounds
  const auto bounded = k.data_parameter_inames();
  for (auto& r : k.instructions) {
    for (auto& d : r.depends_on) {
      const Instruction* w = nullptr;
      for (auto& x : k.instructions)
        if (x.id == d) w = &x;
      if (!w || w->kind != Instruction::Assign || r.kind != Instruction::Assign) continue;
      const std::string v = w->assignee_name();
      const Temporary* t = k.find_temporary(v);
      if (!t || t->space == AddressSpace::Global) continue;  // arrays keep every element
      bool reads = false;
      auto look = [&](const Expr& e) {
        if (!e.defined()) return;
        std::vector<std::string> vars;
        collect_vars(e, vars);
        reads |= std::find(vars.begin(), vars.end(), v) != vars.end();
        for_each_subscript(e, [&](const Subscript& s) { reads |= s.name == v; });
      };
      look(r.rhs);
      for (auto& p : r.predicates) look(p);
      if (auto b = bounded.find(v); b != bounded.end()) {
        for (auto& n : r.iteration_inames()) reads |= b->second.count(n) > 0;
      }
      if (!reads) continue;
      const auto& wl = where[w->id];
      const auto& rl = where[r.id];
      for (auto& entry : wl) {  // (no structured binding: lambdas below capture the iname)
        const std::string& x = entry.first;
        const ScheduleItem* witem = entry.second;
        auto it = std::find_if(rl.begin(), rl.end(), [&](auto& e) { return e.first == x; });
        if (it == rl.end() || it->second == witem) continue;  // not both in loop x, or in the same instance
        if (k.tag_of(x).is_ilp()) continue;                    // privatized: one value per iteration
        auto key = std::make_pair(w->id, x);  // (a writer has many readers: ask isl once)
        auto known = overwrites.find(key);
        if (known == overwrites.end()) known = overwrites.emplace(key, overwritten_across(k, *w, x, wl)).first;
        const std::string& overwrite = known->second;
        if (overwrite.empty()) continue;  // each iteration of x writes elements of its own
        if (overwrite != "scalar")
          throw KernelError("kernel '" + k.name + "': instruction '" + r.id + "' reads temporary '" + v + "' that '" + w->id +
                            "' writes in each iteration of loop '" + x + "', but the two are in different instances of that loop " +
                            "(the loop order put them apart), and a later iteration overwrites what an earlier one wrote (" +
                            overwrite + "), so a read would get a later iteration's value; change the loop priorities");
        throw KernelError("kernel '" + k.name + "': instruction '" + r.id + "' reads temporary '" + v + "' that '" + w->id +
                          "' writes in each iteration of loop '" + x + "', but the two are in different instances of that loop " +
                          "(the loop order put them apart), so only the last iteration's value would be read; change the loop " +
                          "priorities, or index '" + v + "' by '" + x + "'");
      }
    }
  }
}

}  // namespace loom
