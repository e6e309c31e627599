// add_dependencies: orders instructions that touch the same variable as the
// text orders them (read-after-write, write-after-read, write-after-write),
// in addition to the declared dep= edges, and only where the two can touch
// the same element: for arrays, isl decides whether the elements one
// instruction accesses (over its iteration domain) meet those the other
// accesses; accesses that are not affine count as meeting. An instruction
// never depends on itself (acc = acc + x is one instruction).
#include <isl/map.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

struct Accesses {
  std::map<std::string, std::vector<const Subscript*>> reads, writes;  // array -> accesses ("" index list: scalar)
  std::set<std::string> scalar_reads, scalar_writes;
};

Accesses accesses_of(const Instruction& insn) {
  Accesses a;
  if (insn.kind != Instruction::Assign) return a;
  if (auto s = insn.lhs.as<Subscript>()) a.writes[s->name].push_back(s);
  else a.scalar_writes.insert(insn.assignee_name());
  auto add_reads = [&](const Expr& e) {
    if (!e.defined()) return;
    for_each_subscript(e, [&](const Subscript& s) { a.reads[s.name].push_back(&s); });
    std::vector<std::string> vs;
    collect_vars(e, vs);
    a.scalar_reads.insert(vs.begin(), vs.end());
  };
  add_reads(insn.rhs);
  for (auto& p : insn.predicates) add_reads(p);
  if (auto s = insn.lhs.as<Subscript>())
    for (auto& i : s->indices) add_reads(i);
  return a;
}

class Overlap {
 public:
  explicit Overlap(const LoopKernel& k) : k_(k) {}

  // Whether some access in xs (by instruction a) and some in ys (by b) can name one element.
  bool meet(const Instruction& a, const std::vector<const Subscript*>& xs, const Instruction& b,
            const std::vector<const Subscript*>& ys) {
    for (auto* x : xs)
      for (auto* y : ys)
        if (meet_one(a, *x, b, *y)) return true;
    return false;
  }

 private:
  bool meet_one(const Instruction& a, const Subscript& x, const Instruction& b, const Subscript& y) {
    if (x.indices.size() != y.indices.size()) return true;
    bool same = a.within_inames == b.within_inames;
    for (size_t i = 0; same && i < x.indices.size(); ++i) same = x.indices[i].same_as(y.indices[i]);
    if (same) return true;  // the same elements: no need to ask isl
    isl::set ex = elements(a, x), ey = elements(b, y);
    if (ex.is_null() || ey.is_null()) return true;  // not affine: assume they meet
    isl_set* both = isl_set_intersect(isl_set_align_params(ex.copy(), isl_set_get_space(ey.get())), ey.copy());
    bool empty = isl_set_is_empty(both) == isl_bool_true;
    isl_set_free(both);
    return !empty;
  }

  // The elements an access reaches over its instruction's iteration domain;
  // null if not affine. Each access is asked about against several others:
  // computed once (an image through isl is the cost here).
  isl::set elements(const Instruction& insn, const Subscript& s) {
    auto key = std::make_pair(insn.id, &s);
    auto it = elements_.find(key);
    if (it == elements_.end()) {
      isl::set e = compute_elements(insn, s);
      it = elements_.emplace(key, e.is_null() ? std::nullopt : std::optional<isl::set>(e)).first;
    }
    return it->second ? *it->second : isl::set();  // (a null isl object cannot be copied)
  }

  isl::set compute_elements(const Instruction& insn, const Subscript& s) {
    std::vector<std::string> inames;
    for (auto& n : k_.all_inames())
      if (insn.within_inames.count(n)) inames.push_back(n);
    isl::set dom = islu::iteration_domain(k_, inames);
    // parameters the subscript names that the iteration set does not
    // (`corr[m - 1, m - 1]` outside every loop): added, so the access stays
    // affine and is not taken to meet every other
    std::vector<std::string> names;
    for (auto& e : s.indices) collect_vars(e, names);
    auto params = k_.parameters();
    for (auto& n : names) {
      if (std::find(params.begin(), params.end(), n) == params.end()) continue;
      if (isl_set_find_dim_by_name(dom.get(), isl_dim_param, n.c_str()) >= 0) continue;
      isl_set* d = dom.release();
      isl_size np = isl_set_dim(d, isl_dim_param);
      d = isl_set_add_dims(d, isl_dim_param, 1);
      d = isl_set_set_dim_id(d, isl_dim_param, unsigned(np), isl_id_alloc(isl_context(), n.c_str(), nullptr));
      dom = isl::manage(d);
    }
    isl::space sp = dom.space();
    isl_pw_aff_list* list = isl_pw_aff_list_alloc(isl_context(), int(s.indices.size()));
    for (auto& e : s.indices) {
      isl::pw_aff p = islu::pw_aff_from_expr(e, sp);
      if (p.is_null()) {
        isl_pw_aff_list_free(list);
        return isl::set();
      }
      list = isl_pw_aff_list_add(list, p.release());
    }
    isl_space* range = isl_space_add_dims(isl_space_set_from_params(isl_space_params(sp.copy())), isl_dim_set,
                                          unsigned(s.indices.size()));
    isl_multi_pw_aff* m = isl_multi_pw_aff_from_pw_aff_list(isl_space_map_from_domain_and_range(sp.copy(), range), list);
    isl_map* acc = isl_map_intersect_domain(isl_map_from_multi_pw_aff(m), dom.copy());
    return isl::manage(isl_map_range(acc));
  }

  const LoopKernel& k_;
  std::map<std::pair<std::string, const Subscript*>, std::optional<isl::set>> elements_;
};

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (auto& x : a)
    if (b.count(x)) return true;
  return false;
}

// Two instructions that write elements of one global array in common, with
// no dependency between them and neither reading the array (which would
// order them by its dataflow): which write lands last is the text's accident.
// loopy refuses such kernels ("writes to a not ordered by a dependency"), so
// Loom does too and says how to order them.
void check_writes_ordered(const LoopKernel& k, const Instruction& A, const Accesses& a, const Instruction& B, const Accesses& b,
                          Overlap& overlap) {
  if (A.no_sync_with.count(B.id) || B.no_sync_with.count(A.id)) return;
  // conditions (if/else branches) may keep the writes apart: the overlap below does not see them
  if (!A.predicates.empty() || !B.predicates.empty()) return;
  for (auto& [name, xs] : a.writes) {
    auto it = b.writes.find(name);
    if (it == b.writes.end()) continue;
    const Argument* arg = k.find_argument(name);
    if (!arg || arg->kind != Argument::Array) continue;
    if (a.reads.count(name) || b.reads.count(name)) continue;
    if (!overlap.meet(A, xs, B, it->second)) continue;
    throw KernelError("kernel '" + k.name + "': instructions '" + A.id + "' and '" + B.id + "' both write elements of '" + name +
                      "' and no dependency orders them (loopy: writes to " + name + " not ordered by a dependency): add dep=" +
                      A.id + " to '" + B.id + "' if it writes last, or dep=" + B.id + " to '" + A.id + "'");
  }
}

}  // namespace

LoopKernel add_dependencies(const LoopKernel& k) {
  LoopKernel r = k;
  std::vector<Accesses> acc;
  for (auto& insn : k.instructions) acc.push_back(accesses_of(insn));
  Overlap overlap(k);
  // what each instruction already waits for, directly or not: no need to ask again
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < k.instructions.size(); ++i) index[k.instructions[i].id] = i;
  std::vector<std::set<size_t>> before(k.instructions.size());
  std::vector<int> state(k.instructions.size(), 0);
  std::function<void(size_t)> visit = [&](size_t i) {
    if (state[i]) return;
    state[i] = 1;  // (a cycle stops here; the linearizer reports it)
    for (auto& d : k.instructions[i].depends_on) {
      auto it = index.find(d);
      if (it == index.end()) continue;
      visit(it->second);
      before[i].insert(it->second);
      before[i].insert(before[it->second].begin(), before[it->second].end());
    }
    state[i] = 2;
  };
  for (size_t i = 0; i < k.instructions.size(); ++i) visit(i);
  // Only instructions that share a name one of them writes can depend on
  // each other: the pairs come from an index by name, so independent
  // instructions cost nothing per pair (code generation stays linear).
  std::map<std::string, std::vector<size_t>> writers, users;
  for (size_t i = 0; i < acc.size(); ++i) {
    for (auto& [name, xs] : acc[i].writes) writers[name].push_back(i);
    for (auto& name : acc[i].scalar_writes) writers[name].push_back(i);
    for (auto& [name, xs] : acc[i].reads) users[name].push_back(i);
    for (auto& name : acc[i].scalar_reads) users[name].push_back(i);
  }
  std::vector<std::pair<size_t, size_t>> pairs;  // (b, a) with a < b
  for (auto& [name, ws] : writers) {
    for (size_t w : ws) {
      for (size_t x : ws)
        if (x != w) pairs.push_back({std::max(w, x), std::min(w, x)});
      auto u = users.find(name);
      if (u != users.end())
        for (size_t x : u->second)
          if (x != w) pairs.push_back({std::max(w, x), std::min(w, x)});
    }
  }
  // Each instruction's pairs nearest first (b ascending, a descending), and
  // each dependence added here counted in what b waits for: writes ordered by
  // a chain of inferred dependences (w1 -> r -> w2: r reads what w1 wrote, w2
  // reads what r wrote) are ordered, as loopy counts the dependences it adds
  // itself (PolyBench's deriche, adi, durbin).
  std::sort(pairs.begin(), pairs.end(), [](auto& x, auto& y) { return x.first != y.first ? x.first < y.first : x.second > y.second; });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  // whether x waits for y through the dependences so far (declared and added)
  auto waits_for = [&](size_t x, size_t y) {
    std::vector<size_t> todo{x};
    std::set<size_t> seen{x};
    while (!todo.empty()) {
      size_t i = todo.back();
      todo.pop_back();
      for (auto& d : r.instructions[i].depends_on) {
        auto it = index.find(d);
        if (it == index.end() || !seen.insert(it->second).second) continue;
        if (it->second == y) return true;
        todo.push_back(it->second);
      }
    }
    return false;
  };
  for (auto& [b, a] : pairs) {
    {
      if (before[b].count(a)) continue;
      const Instruction& A = k.instructions[a];
      const Instruction& B = k.instructions[b];
      if (!before[a].count(b) && !waits_for(b, a) && !waits_for(a, b)) check_writes_ordered(k, A, acc[a], B, acc[b], overlap);
      bool dep = intersects(acc[a].scalar_writes, acc[b].scalar_reads) || intersects(acc[a].scalar_reads, acc[b].scalar_writes) ||
                 intersects(acc[a].scalar_writes, acc[b].scalar_writes);
      auto arrays = [&](const auto& x, const auto& y) {
        for (auto& [name, xs] : x) {
          auto it = y.find(name);
          if (it != y.end() && overlap.meet(A, xs, B, it->second)) return true;
        }
        return false;
      };
      if (!dep) dep = arrays(acc[a].writes, acc[b].reads) || arrays(acc[a].reads, acc[b].writes) || arrays(acc[a].writes, acc[b].writes);
      if (dep) {
        r.instructions.edit()[b].depends_on.insert(r.instructions[a].id);
        before[b].insert(a);
        before[b].insert(before[a].begin(), before[a].end());
      }
    }
  }
  return r;
}

}  // namespace loom
