// Iteration sets of groups of inames, and extrema of affine expressions over
// them: what shape inference, grid sizes and statement domains ask of isl.
#include <isl/constraint.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "loom/bounded_memo.h"
#include "loom/isl_util.h"
#include "loom/constraints.h"
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

// coupled_dims over constraints read without isl: for each of `dims`,
// whether it is coupled to `keep`.
std::vector<bool> coupled_dims(const std::vector<AffineConstraint>& cs, const std::vector<std::string>& dims,
                               const std::set<std::string>& keep) {
  std::vector<int> parent(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) parent[i] = int(i);
  auto index = [&](const std::string& v) { return size_t(std::find(dims.begin(), dims.end(), v) - dims.begin()); };
  for (auto& c : cs) {
    int first = -1;
    for (auto& [v, a] : c.coef) {
      size_t i = index(v);
      if (i == dims.size()) continue;  // a parameter
      if (first < 0) first = int(i);
      else parent[size_t(find_root(parent, int(i)))] = find_root(parent, first);
    }
  }
  std::set<int> kept_roots;
  for (size_t i = 0; i < dims.size(); ++i)
    if (keep.count(dims[i])) kept_roots.insert(find_root(parent, int(i)));
  std::vector<bool> coupled(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) coupled[i] = kept_roots.count(find_root(parent, int(i))) > 0;
  return coupled;
}

// coupled_part of a domain: the coupling read from its memoized constraints
// (no isl operation) and the uncoupled dimensions' constraints dropped from
// its set; through isl when the constraints cannot be read.
isl::set coupled_part(const Domain& d, const std::set<std::string>& keep) {
  auto cs = read_domain_constraints(d);
  // (a set of its own here too, for the reason below: isl_set_coalesce of one
  // basic set hands the domain's own set back, and the analyses that go on
  // from it simplified the kernel's domain in place, LOOM_RANDOM_SEED=32)
  if (!cs) return coupled_part(isl::manage(check(isl_set_set_tuple_name(d.copy(), nullptr), "coupled_part")), keep);
  const std::vector<std::string>& dims = d.inames();
  std::vector<bool> coupled = coupled_dims(*cs, dims, keep);
  // A set of its own, never the domain's basic sets: isl records what it
  // learns about a basic set (a sample point) in the basic set itself, and a
  // kernel's domain must not carry the history of the analyses asked about
  // it (a later transformation's simplification of it would depend on that,
  // and one script would give different kernels). Resetting the tuple name
  // makes isl copy them (dropping constraints does too).
  isl_set* s = isl_set_set_tuple_name(d.copy(), nullptr);
  for (int i = int(dims.size()) - 1; i >= 0; --i)
    if (!coupled[size_t(i)]) s = isl_set_drop_constraints_involving_dims(s, isl_dim_set, unsigned(i), 1);
  return isl::manage(check(s, "coupled_part"));
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

namespace {

// What an iteration set is made of: the domains defining the inames asked
// for and those they depend on (inames used as parameters), and the inames
// whose coupled constraints are kept (see coupled_part).
struct Question {
  std::vector<int> needed;
  std::set<std::string> keep;
  std::string key;  // the needed domains' sets (by address) and `keep`
};

Question ask(const LoopKernel& k, const std::vector<std::string>& inames) {
  Question q;
  q.keep.insert(inames.begin(), inames.end());
  std::vector<std::string> todo(inames.begin(), inames.end());
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    int d = k.domain_of(n);
    if (d < 0) throw KernelError("kernel '" + k.name + "': no domain defines iname '" + n + "'");
    if (std::find(q.needed.begin(), q.needed.end(), d) != q.needed.end()) continue;
    q.needed.push_back(d);
    for (auto& p : k.domains[d].params())
      if (k.has_iname(p)) {
        todo.push_back(p);
        q.keep.insert(p);
      }
  }
  std::sort(q.needed.begin(), q.needed.end());
  for (int d : q.needed) q.key += std::to_string(reinterpret_cast<uintptr_t>(k.domains[d].get())) + ",";
  q.key += "|";
  for (auto& n : q.keep) q.key += n + ",";
  return q;
}

// Memoized answers. The answer depends on the needed domains' sets, `keep`
// and what is asked. Domains are immutable isl sets shared by every copy of a
// kernel, so transformations and passes that ask again about unchanged
// domains find their sets by address; the entry holds each.
struct Answer {
  std::vector<Domain> held;
  isl::set result;
};
BoundedMemo<std::string, Answer>& memo() {
  static BoundedMemo<std::string, Answer> m;
  return m;
}
std::optional<isl::set> remembered(const std::string& key) {
  if (auto hit = memo().find(key)) return hit->result;
  return std::nullopt;
}
void remember(const LoopKernel& k, const Question& q, std::string key, const isl::set& r) {
  Answer a{{}, r};
  for (int d : q.needed) a.held.push_back(k.domains[d]);
  memo().add(std::move(key), std::move(a));
}

// The needed domains' coupled parts intersected, every iname of them a set
// dimension (in the domains' order); the parameters' universe when there are none.
isl::set joint_set(const LoopKernel& k, const Question& q) {
  std::string key = q.key + "|joint";
  if (auto hit = remembered(key)) return *hit;
  std::vector<std::string> all;
  for (int d : q.needed)
    for (auto& n : k.domains[d].inames()) all.push_back(n);
  isl::set r;
  for (int d : q.needed) {
    isl::set s = arrange_dims(coupled_part(k.domains[d], q.keep), all);
    r = r.is_null() ? s : intersect_sets(r, s);
  }
  if (r.is_null()) r = isl::manage(isl_set_universe(isl_space_set_alloc(isl_context(), 0, 0)));
  remember(k, q, key, r);
  return r;
}

// The constraints of the set joint_set builds (each needed domain's, less
// those of dimensions coupled to none of `keep`), read without isl; nullopt
// when some domain's constraints cannot be read.
std::optional<std::vector<AffineConstraint>> joint_constraints(const LoopKernel& k, const Question& q) {
  std::vector<AffineConstraint> out;
  for (int d : q.needed) {
    auto cs = read_domain_constraints(k.domains[d]);
    if (!cs) return std::nullopt;
    const std::vector<std::string>& dims = k.domains[d].inames();
    std::vector<bool> coupled = coupled_dims(*cs, dims, q.keep);
    for (auto& c : *cs) {  // (as coupled_part: those that involve an uncoupled dimension go)
      bool dropped = false;
      for (auto& [v, a] : c.coef)
        if (size_t i = size_t(std::find(dims.begin(), dims.end(), v) - dims.begin()); i < dims.size() && !coupled[i]) dropped = true;
      if (!dropped) out.push_back(c);
    }
  }
  return out;
}

// The range of v over the points of cs, from interval propagation (see
// propagated_ranges); unbounded when cs does not name v.
std::pair<int64_t, int64_t> propagated_range(const std::vector<AffineConstraint>& cs, const std::string& v) {
  Ranges ranges = propagated_ranges(cs);
  auto it = ranges.find(v);
  return it == ranges.end() ? std::make_pair(INT64_MIN, INT64_MAX) : it->second;
}

}  // namespace

isl::set iteration_domain(const LoopKernel& k, const std::vector<std::string>& inames) {
  Question q = ask(k, inames);
  std::string key = q.key + "|";
  for (auto& n : inames) key += n + ",";
  if (auto hit = remembered(key)) return *hit;
  isl::set r = arrange_dims(joint_set(k, q), inames);
  remember(k, q, key, r);
  return r;
}

std::optional<bool> holds_on_iteration_domain(const LoopKernel& k, const std::vector<std::string>& inames, const AffineConstraint& c,
                                               const isl::set& assumptions) {
  // c holds on the projection onto `inames` iff it holds on the whole joint
  // set: so no projection, and one emptiness question about the set with c
  // negated (-c - 1 >= 0), in place of subset tests between sets. First a
  // point where c fails, looked for without isl (most guards a prefetch
  // writes are needed: a partial tile).
  // a constraint of no variable: its constant says (isl 0.25 called the set
  // { [] : 1541 <= 0 } non-empty, so a true constant came out as false)
  if (c.coef.empty() && c.constant >= 0) return true;
  Question q = ask(k, inames);
  if (auto cs = joint_constraints(k, q)) {
    auto assumed = assumptions.is_null() ? std::optional<std::vector<AffineConstraint>>(std::vector<AffineConstraint>{})
                                         : read_domain_constraints(Domain(assumptions.copy()));
    if (assumed) {
      cs->insert(cs->end(), assumed->begin(), assumed->end());
      cs->push_back(affine_difference(AffineConstraint{}, c, -1));  // -c - 1 >= 0
      if (find_point(*cs, {}, &c)) return false;
    }
  }
  isl::set joint = joint_set(k, q);
  isl_set* s = joint.copy();
  if (!assumptions.is_null()) {
    s = isl_set_align_params(s, isl_set_get_space(assumptions.get()));
    s = isl_set_intersect_params(s, isl_set_align_params(assumptions.copy(), isl_set_get_space(s)));
  }
  isl_space* sp = isl_set_get_space(s);
  for (auto& [v, a] : c.coef)  // a parameter the domains do not name: free (the proof covers its every value)
    if (isl_space_find_dim_by_name(sp, isl_dim_set, v.c_str()) < 0 && isl_space_find_dim_by_name(sp, isl_dim_param, v.c_str()) < 0) {
      if (k.has_iname(v)) {  // an iname outside the set asked about: no answer
        isl_space_free(sp);
        isl_set_free(s);
        return std::nullopt;
      }
      sp = isl_space_add_param_id(sp, isl_id_alloc(isl_context(), v.c_str(), nullptr));
    }
  s = isl_set_align_params(s, isl_space_copy(sp));
  isl_constraint* neg = isl_inequality_alloc(isl_local_space_from_space(sp));
  neg = isl_constraint_set_constant_si(neg, -c.constant - 1);
  for (auto& [v, a] : c.coef) {
    isl_dim_type t = isl_set_find_dim_by_name(s, isl_dim_set, v.c_str()) >= 0 ? isl_dim_set : isl_dim_param;
    neg = isl_constraint_set_coefficient_si(neg, t, isl_set_find_dim_by_name(s, t, v.c_str()), int(-a));
  }
  s = isl_set_add_constraint(s, neg);
  isl_bool empty = isl_set_is_empty(s);
  isl_set_free(s);
  if (empty == isl_bool_error) return std::nullopt;
  return empty == isl_bool_true;
}

std::string missing_bound(isl_set* s, unsigned pos) {
  bool lower = isl_set_dim_has_any_lower_bound(s, isl_dim_set, pos) == isl_bool_true;
  bool upper = isl_set_dim_has_any_upper_bound(s, isl_dim_set, pos) == isl_bool_true;
  return lower && upper ? "" : lower ? "upper" : upper ? "lower" : "lower or upper";
}

namespace {
// The constant range of set dimension `pos` of d over all parameter values.
std::optional<std::pair<int64_t, int64_t>> constant_range_of(const isl::set& d, int pos) {
  isl_val* lo = isl_set_dim_min_val(d.copy(), pos);
  isl_val* hi = isl_set_dim_max_val(d.copy(), pos);
  bool ok = lo && hi && isl_val_is_int(lo) && isl_val_is_int(hi);
  std::pair<int64_t, int64_t> r{ok ? isl_val_get_num_si(lo) : 0, ok ? isl_val_get_num_si(hi) : 0};
  isl_val_free(lo);
  isl_val_free(hi);
  if (!ok) return std::nullopt;
  return r;
}
}  // namespace

isl::set shape_box(const LoopKernel& k, const std::vector<Expr>& shape, const std::vector<std::string>& dims, const std::string& tuple,
                   std::string* text) {
  std::string params, box, names;
  for (auto& p : k.parameters()) params += (params.empty() ? "" : ", ") + p;
  for (size_t d = 0; d < shape.size() && d < dims.size(); ++d) {
    names += (d ? ", " : "") + dims[d];
    box += (d ? " and 0 <= " : "0 <= ") + dims[d] + " < " + shape[d].str();
  }
  std::string t = "[" + params + "] -> { " + tuple + "[" + names + "]" + (box.empty() ? "" : " : " + box) + " }";
  if (text) *text = t;
  isl_set* set = isl_set_read_from_str(isl_context(), t.c_str());
  if (!set) isl_ctx_reset_error(isl_context());
  return isl::manage(set);
}

isl::set assumptions_of(const LoopKernel& k) {
  return k.assumptions.defined() ? to_isl(k.assumptions) : isl::manage(isl_set_universe(isl_space_params_alloc(isl_context(), 0)));
}

std::optional<std::pair<int64_t, int64_t>> constant_range(const LoopKernel& k, const std::string& iname) {
  // The extrema over the joint set (no projection onto the iname: the
  // extrema of one coordinate are those of its projection), memoized by that
  // set and the iname: passes of one kernel ask about the same inames again,
  // and isl's parametric minimum and maximum are the cost here. The entry
  // holds the set, so its address is not reused while cached.
  Question q = ask(k, {iname});
  if (auto cs = joint_constraints(k, q)) {  // a box both of whose ends are attained is the range (no isl)
    auto [lo, hi] = propagated_range(*cs, iname);
    if (lo != INT64_MIN && hi != INT64_MAX && lo <= hi && find_point(*cs, {{iname, lo}}) && find_point(*cs, {{iname, hi}}))
      return std::make_pair(lo, hi);
  }
  isl::set d = joint_set(k, q);
  int pos = isl_set_find_dim_by_name(d.get(), isl_dim_set, iname.c_str());
  if (pos < 0) fail("constant_range");
  struct Range {
    isl::set held;
    std::optional<std::pair<int64_t, int64_t>> range;
  };
  static BoundedMemo<std::pair<const isl_set*, int>, Range, std::map> ranges;
  auto key = std::make_pair(static_cast<const isl_set*>(d.get()), pos);
  if (auto hit = ranges.find(key)) return hit->range;
  auto range = constant_range_of(d, pos);
  ranges.add(key, Range{d, range});
  return range;
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

bool takes_two_values(const LoopKernel& k, const std::string& iname) {
  Question q = ask(k, {iname});
  if (auto cs = joint_constraints(k, q)) {  // two points that differ in it (no isl)
    auto [lo, hi] = propagated_range(*cs, iname);
    if (lo != INT64_MIN && lo != INT64_MAX && find_point(*cs, {{iname, lo}}) && find_point(*cs, {{iname, lo + 1}})) return true;
    if (hi != INT64_MIN && hi != INT64_MAX && find_point(*cs, {{iname, hi}}) && find_point(*cs, {{iname, hi - 1}})) return true;
    if (lo != INT64_MIN && lo == hi) return false;  // (one value at most)
  }
  auto r = constant_range(k, iname);
  return !r || r->second > r->first;
}

}  // namespace loom::islu
