// Iteration sets of groups of inames, and extrema of affine expressions over
// them: what shape inference, grid sizes and statement domains ask of isl.
#include <isl/constraint.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <unordered_map>

#include "loom/isl_util.h"
#include "loom/kernel.h"

namespace loom::islu {

namespace {

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The set dimensions of bs that are coupled to `keep` (directly or through
// other dimensions) by some constraint: union-find over the constraints.
std::set<int> coupled_dims(isl_basic_set* bs, const std::set<std::string>& keep) {
  int ndim = int(isl_basic_set_dim(bs, isl_dim_set));
  std::vector<int> parent(ndim);
  for (int i = 0; i < ndim; ++i) parent[i] = i;
  struct Data {
    std::vector<int>* parent;
    int ndim;
  } data{&parent, ndim};
  isl_basic_set_foreach_constraint(
      bs,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto* d = static_cast<Data*>(user);
        int first = -1;
        for (int i = 0; i < d->ndim; ++i) {
          if (!isl_constraint_involves_dims(c, isl_dim_set, unsigned(i), 1)) continue;
          if (first < 0) first = i;
          else (*d->parent)[find_root(*d->parent, i)] = find_root(*d->parent, first);
        }
        isl_constraint_free(c);
        return isl_stat_ok;
      },
      &data);
  std::set<int> kept_roots;
  for (int i = 0; i < ndim; ++i) {
    const char* n = isl_basic_set_get_dim_name(bs, isl_dim_set, unsigned(i));
    if (n && keep.count(n)) kept_roots.insert(find_root(parent, i));
  }
  std::set<int> r;
  for (int i = 0; i < ndim; ++i)
    if (kept_roots.count(find_root(parent, i))) r.insert(i);
  return r;
}

// The single basic set of s when s is one without existentials (what the
// component analysis handles), else null.
isl_basic_set* plain_basic_set(isl_set* s) {
  if (isl_set_n_basic_set(s) != 1) return nullptr;
  isl_basic_set* bs = isl_set_simple_hull(isl_set_copy(s));
  if (isl_basic_set_dim(bs, isl_dim_div) != 0 || isl_basic_set_dim(bs, isl_dim_set) == 0) {
    isl_basic_set_free(bs);
    return nullptr;
  }
  return bs;
}

// The part of s that constrains `keep`: constraints of dimensions coupled to
// none of `keep` are dropped, so an empty range of an unrelated iname does not
// empty the result. Applies to sets of one basic set without existentials;
// others are returned as they are.
isl::set coupled_part(isl::set s, const std::set<std::string>& keep) {
  isl_set* cs = isl_set_coalesce(s.release());
  isl_basic_set* bs = plain_basic_set(cs);
  if (!bs) return isl::manage(cs);
  isl_set_free(cs);
  std::set<int> coupled = coupled_dims(bs, keep);
  for (int i = int(isl_basic_set_dim(bs, isl_dim_set)) - 1; i >= 0; --i) {
    if (coupled.count(i)) continue;
    bs = isl_basic_set_drop_constraints_involving_dims(bs, isl_dim_set, unsigned(i), 1);
  }
  return isl::manage(check(isl_set_from_basic_set(bs), "coupled_part"));
}

// a and b intersected. Two sets of one basic set each (what domains are)
// intersect as basic sets: isl_set_intersect would also test the result for
// emptiness (a rational sample), which is most of the cost and not needed here.
isl::set intersect_sets(const isl::set& a, const isl::set& b) {
  if (isl_set_n_basic_set(a.get()) != 1 || isl_set_n_basic_set(b.get()) != 1) return a.intersect(b);
  auto only = [](const isl::set& s) {
    isl_basic_set_list* l = isl_set_get_basic_set_list(s.get());
    isl_basic_set* bs = isl_basic_set_list_get_at(l, 0);
    isl_basic_set_list_free(l);
    return bs;
  };
  isl_basic_set* x = only(a);
  isl_basic_set* y = only(b);
  x = isl_basic_set_align_params(x, isl_basic_set_get_space(y));
  y = isl_basic_set_align_params(y, isl_basic_set_get_space(x));
  return isl::manage(check(isl_set_from_basic_set(isl_basic_set_intersect(x, y)), "intersect_sets"));
}

}  // namespace

isl::set iteration_domain(const LoopKernel& k, const std::vector<std::string>& inames) {
  std::vector<int> needed;
  std::set<std::string> keep(inames.begin(), inames.end());
  std::vector<std::string> todo(inames.begin(), inames.end());
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    int d = k.domain_of(n);
    if (d < 0) throw KernelError("kernel '" + k.name + "': no domain defines iname '" + n + "'");
    if (std::find(needed.begin(), needed.end(), d) != needed.end()) continue;
    needed.push_back(d);
    for (auto& p : k.domains[d].params())
      if (k.has_iname(p)) {
        todo.push_back(p);
        keep.insert(p);
      }
  }
  std::sort(needed.begin(), needed.end());
  // Memoized: the answer depends on the needed domains' sets, `keep` and the
  // order asked for. Domains are immutable isl sets shared by every copy of a
  // kernel, so transformations and passes that ask again about unchanged
  // domains find their sets by address; the entry holds a reference to each,
  // so an address cannot be reused by another set while it is cached.
  std::string key;
  for (int d : needed) key += std::to_string(reinterpret_cast<uintptr_t>(k.domains[d].get())) + ",";
  key += "|";
  for (auto& n : keep) key += n + ",";
  key += "|";
  for (auto& n : inames) key += n + ",";
  struct Entry {
    std::vector<Domain> held;
    isl::set result;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Entry> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second.result;
  }
  std::vector<std::string> all;
  for (int d : needed)
    for (auto& n : k.domains[d].inames()) all.push_back(n);
  isl::set r;
  for (int d : needed) {
    isl::set s = arrange_dims(coupled_part(to_isl(k.domains[d]), keep), all);
    r = r.is_null() ? s : intersect_sets(r, s);
  }
  if (r.is_null()) {  // no inames: the universe of the parameters
    isl_space* sp = isl_space_set_alloc(isl_context(), 0, 0);
    r = isl::manage(isl_set_universe(sp));
  }
  r = arrange_dims(r, inames);
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= 4096) memo.clear();  // bounded: an auto-scheduler's thousands of variants come and go
  Entry e;
  for (int d : needed) e.held.push_back(k.domains[d]);
  e.result = r;
  memo.emplace(std::move(key), std::move(e));
  return r;
}

std::string missing_bound(isl_set* s, unsigned pos) {
  bool lower = isl_set_dim_has_any_lower_bound(s, isl_dim_set, pos) == isl_bool_true;
  bool upper = isl_set_dim_has_any_upper_bound(s, isl_dim_set, pos) == isl_bool_true;
  return lower && upper ? "" : lower ? "upper" : upper ? "lower" : "lower or upper";
}

std::optional<std::pair<int64_t, int64_t>> constant_range(const LoopKernel& k, const std::string& iname) {
  isl::set d = iteration_domain(k, {iname});
  isl_val* lo = isl_set_dim_min_val(d.copy(), 0);
  isl_val* hi = isl_set_dim_max_val(d.copy(), 0);
  bool ok = lo && hi && isl_val_is_int(lo) && isl_val_is_int(hi);
  std::pair<int64_t, int64_t> r{ok ? isl_val_get_num_si(lo) : 0, ok ? isl_val_get_num_si(hi) : 0};
  isl_val_free(lo);
  isl_val_free(hi);
  if (!ok) return std::nullopt;
  return r;
}

namespace {
isl::pw_aff extremum(const isl::set& domain, const Expr& index, bool max) {
  isl::pw_aff f = pw_aff_from_expr(index, domain.space());
  if (f.is_null()) return isl::pw_aff();  // (copying a null isl object throws)
  isl_map* m = isl_map_from_pw_aff(f.release());
  m = isl_map_intersect_domain(m, domain.copy());
  isl_set* range = isl_map_range(m);
  isl_pw_aff* r = max ? isl_set_dim_max(range, 0) : isl_set_dim_min(range, 0);
  return isl::manage(check(r, "extremum"));
}
}  // namespace

isl::pw_aff max_over(const isl::set& domain, const Expr& index) { return extremum(domain, index, true); }
isl::pw_aff min_over(const isl::set& domain, const Expr& index) { return extremum(domain, index, false); }

std::optional<std::pair<Domain, Domain>> separate_coupled(const Domain& d, const std::vector<std::string>& inames) {
  isl_set* cs = isl_set_coalesce(d.copy());
  isl_basic_set* bs = plain_basic_set(cs);
  isl_set_free(cs);
  if (!bs) return std::nullopt;
  std::set<int> coupled = coupled_dims(bs, std::set<std::string>(inames.begin(), inames.end()));
  isl_basic_set_free(bs);
  std::vector<std::string> all = d.inames(), mine, rest;
  for (size_t i = 0; i < all.size(); ++i) (coupled.count(int(i)) ? mine : rest).push_back(all[i]);
  if (rest.empty()) return std::nullopt;
  // dropping (not projecting out) the other part's constraints: a projection
  // would keep "its range is not empty" as a condition on the parameters
  auto part = [&](const std::vector<std::string>& dims) {
    return from_isl(arrange_dims(coupled_part(to_isl(d), std::set<std::string>(dims.begin(), dims.end())), dims));
  };
  return std::make_pair(part(mine), part(rest));
}

}  // namespace loom::islu
