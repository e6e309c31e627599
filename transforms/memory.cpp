// Memory transformations: where data lives. add_prefetch copies the part of
// an array that the sweep inames touch (its footprint, as a box) into a new
// temporary — local (shared) memory by default — with a fetch instruction
// over new inames, and rewrites the accesses to read the temporary;
// set_temporary_address_space moves a temporary. Barriers between the fetch
// and its readers are not written here: place_local_barriers places them.
//
// The footprint: every index of a prefetched access is affine, with constant
// coefficients on the sweep inames (whose ranges must be constant); the rest
// of the index (outer inames and parameters) must be the same in every
// prefetched access, so it becomes the box's base and the sweep part spans
// the box. The box is fetched whole (loopy's fetch_bounding_box), guarded
// where it leaves the array (partial tiles, halos at the edges).
#include <algorithm>
#include <array>
#include <climits>

#include "common.h"
#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;
using transforms::unique_name;

namespace {

Expr expr_of(const AffineConstraint& a) {
  Expr e;
  for (auto& [v, c] : a.coef) {
    Expr t = c == 1 ? make_var(v) : make_binary(BinOp::Mul, make_int(c), make_var(v));
    e = e.defined() ? make_binary(BinOp::Add, e, t) : t;
  }
  if (!e.defined()) return make_int(a.constant);
  return a.constant == 0 ? e : make_binary(BinOp::Add, e, make_int(a.constant));
}

// One access to the prefetched array and the inames around it.
struct Access {
  size_t insn;
  std::set<std::string> scope;  // within_inames + inames of enclosing reductions
  std::vector<AffineConstraint> index;  // affine forms, one per dimension
};

// Finds the accesses to `array` (with the reductions around each) in an expression.
class AccessFinder : public ExprVisitor {
 public:
  AccessFinder(const std::string& array, std::set<std::string> scope) : array_(array), scope_(std::move(scope)) {}
  std::vector<std::pair<const Subscript*, std::set<std::string>>> found;

 protected:
  void visit_subscript(const Subscript& n) override {
    if (n.name == array_) found.push_back({&n, scope_});
    ExprVisitor::visit_subscript(n);
  }
  void visit_reduce(const Reduce& n) override {
    auto saved = scope_;
    scope_.insert(n.inames.begin(), n.inames.end());
    ExprVisitor::visit_reduce(n);
    scope_ = saved;
  }

 private:
  const std::string& array_;
  std::set<std::string> scope_;
};

// Replaces the accesses to `array` whose scope holds every sweep iname by
// temp[index - base].
class AccessRewriter : public ExprMutator {
 public:
  AccessRewriter(const std::string& array, const std::string& temp, const std::vector<Expr>& base, const std::set<std::string>& sweep,
                 std::set<std::string> scope)
      : array_(array), temp_(temp), base_(base), sweep_(sweep), scope_(std::move(scope)) {}

 protected:
  Expr mutate_subscript(const Subscript& n, const Expr& self) override {
    if (n.name != array_ || !covers(scope_)) return ExprMutator::mutate_subscript(n, self);
    std::vector<Expr> idx;
    for (size_t d = 0; d < n.indices.size(); ++d) {
      // index - base as one affine form, so the outer parts cancel (16*io + ii - 16*io = ii)
      auto x = affine_form(n.indices[d]), b = affine_form(base_[d]);
      if (!x || !b) {
        idx.push_back(simplify(n.indices[d] - base_[d]));
        continue;
      }
      for (auto& [v, c] : b->coef)
        if ((x->coef[v] -= c) == 0) x->coef.erase(v);
      x->constant -= b->constant;
      idx.push_back(expr_of(*x));
    }
    return make_subscript(temp_, idx, n.type);
  }
  Expr mutate_reduce(const Reduce& n, const Expr& self) override {
    auto saved = scope_;
    scope_.insert(n.inames.begin(), n.inames.end());
    Expr r = ExprMutator::mutate_reduce(n, self);
    scope_ = saved;
    return r;
  }

 private:
  bool covers(const std::set<std::string>& scope) const {
    return std::all_of(sweep_.begin(), sweep_.end(), [&](auto& s) { return scope.count(s); });
  }
  const std::string& array_;
  const std::string& temp_;
  const std::vector<Expr>& base_;
  const std::set<std::string>& sweep_;
  std::set<std::string> scope_;
};

// Extents of the local axes as the kernel's local inames use them (0: axis unused).
std::array<int64_t, 3> local_axis_extents(const LoopKernel& k) {
  std::array<int64_t, 3> ext{0, 0, 0};
  for (auto& [n, tag] : k.iname_tags) {
    if (tag.kind != InameTag::Local || !k.has_iname(n)) continue;
    if (auto r = islu::constant_range(k, n)) ext[size_t(tag.axis)] = std::max(ext[size_t(tag.axis)], r->second - r->first + 1);
  }
  return ext;
}

}  // namespace

LoopKernel add_prefetch(const LoopKernel& k, const std::string& array, const std::string& sweep_inames, const PrefetchOptions& o) {
  const std::string what = "add_prefetch('" + array + "', '" + sweep_inames + "')";
  const Argument* arg = k.find_argument(array);
  if (!arg || arg->kind != Argument::Array) refuse(k, what, "'" + array + "' is not an array argument");
  if (k.is_written(array)) refuse(k, what, "array '" + array + "' is written by the kernel; only arrays it only reads can be prefetched");
  std::vector<std::string> sweep = name_list(sweep_inames);
  std::set<std::string> sweep_set(sweep.begin(), sweep.end());
  for (auto& s : sweep)
    if (!k.has_iname(s)) refuse(k, what, "no iname '" + s + "'");
  AddressSpace space = o.temporary_address_space;
  if (space != AddressSpace::Local && space != AddressSpace::Private)
    refuse(k, what, "a prefetch goes into local or private memory, not " + std::string(to_string(space)));

  // ---- the accesses the sweep covers ----
  std::vector<Access> accesses;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    if (insn.kind != Instruction::Assign) continue;
    AccessFinder f(array, insn.within_inames);
    f.visit(insn.rhs);
    for (auto& p : insn.predicates) f.visit(p);
    for (auto& found : f.found) {  // (no structured binding: a lambda below captures the scope)
      const Subscript* sub = found.first;
      const std::set<std::string>& scope = found.second;
      if (!std::all_of(sweep.begin(), sweep.end(), [&](auto& s) { return scope.count(s); })) continue;
      Access a{i, scope, {}};
      for (size_t d = 0; d < sub->indices.size(); ++d) {
        auto form = affine_form(sub->indices[d]);
        if (!form)
          refuse(k, what, "index " + std::to_string(d) + " of " + array + " in instruction '" + insn.id + "' (" + sub->indices[d].str() +
                              ") is not affine with integer coefficients");
        a.index.push_back(*form);
      }
      accesses.push_back(a);
    }
  }
  if (accesses.empty()) refuse(k, what, "no access to '" + array + "' runs within all of the sweep inames");

  // ---- the footprint's box: base (outer part) + [lo, hi] per dimension ----
  std::map<std::string, std::pair<int64_t, int64_t>> range;
  for (auto& s : sweep) {
    auto r = islu::constant_range(k, s);
    if (!r) refuse(k, what, "sweep iname '" + s + "' has a range that depends on the parameters; split it and sweep the inner iname");
    range[s] = *r;
  }
  size_t rank = arg->shape.size();
  std::vector<AffineConstraint> rest(rank);  // the outer part of each dimension, without its constant
  std::vector<int64_t> lo(rank, INT64_MAX), hi(rank, INT64_MIN);
  std::set<std::string> outer_used;
  for (size_t ai = 0; ai < accesses.size(); ++ai) {
    const Access& a = accesses[ai];
    for (size_t d = 0; d < rank; ++d) {
      AffineConstraint outer;
      int64_t mn = a.index[d].constant, mx = a.index[d].constant;
      for (auto& [v, c] : a.index[d].coef) {
        if (sweep_set.count(v)) {
          auto [rl, rh] = range[v];
          mn += c > 0 ? c * rl : c * rh;
          mx += c > 0 ? c * rh : c * rl;
        } else {
          outer.coef[v] = c;
          outer_used.insert(v);
        }
      }
      if (ai == 0) rest[d] = outer;
      else if (!(rest[d] == outer))
        refuse(k, what, "the accesses to '" + array + "' differ in dimension " + std::to_string(d) + " outside the sweep (" +
                            expr_of(rest[d]).str() + " vs " + expr_of(outer).str() + "); prefetch them separately (within=)");
      lo[d] = std::min(lo[d], mn);
      hi[d] = std::max(hi[d], mx);
    }
  }

  // ---- where the fetch runs: the outer inames the base depends on ----
  std::set<std::string> outer;
  if (o.fetch_outer_inames) {
    for (auto& n : name_list(*o.fetch_outer_inames)) {
      if (!k.has_iname(n)) refuse(k, what, "fetch_outer_inames: no iname '" + n + "'");
      outer.insert(n);
    }
  } else {
    for (auto& a : accesses)
      for (auto& n : a.scope)
        if (!sweep_set.count(n) && outer_used.count(n)) outer.insert(n);
  }
  for (auto& n : outer_used)
    if (k.has_iname(n) && !outer.count(n))
      refuse(k, what, "the footprint depends on iname '" + n + "', which is neither swept nor among the fetch's outer inames");
  if (space == AddressSpace::Local)
    for (auto& n : outer)
      if (k.tag_of(n).kind == InameTag::Local)
        refuse(k, what, "the footprint depends on local iname '" + n + "' (" + k.tag_of(n).str() +
                            "), so the threads of a block would need different tiles; add it to the sweep inames");

  // ---- the temporary, the fetch inames and their domain ----
  LoopKernel r = k;
  std::string temp = unique_name(k, o.temporary_name.empty() ? array + "_fetch" : o.temporary_name);
  if (!o.temporary_name.empty() && temp != o.temporary_name)
    refuse(k, what, "temporary_name '" + o.temporary_name + "' is already taken");
  std::vector<std::string> dim_names = name_list(o.dim_arg_names);
  if (!dim_names.empty() && dim_names.size() != rank)
    refuse(k, what, "dim_arg_names gives " + std::to_string(dim_names.size()) + " names for " + std::to_string(rank) + " dimensions");
  Temporary t{temp, arg->dtype, {}, space};
  std::vector<Expr> base(rank), fetch_index(rank), source_index(rank);
  std::vector<std::string> fetch_inames;  // those of extent > 1
  std::vector<size_t> fetch_dims;
  for (size_t d = 0; d < rank; ++d) {
    AffineConstraint b = rest[d];
    b.constant = lo[d];
    base[d] = simplify(expr_of(b));
    int64_t extent = hi[d] - lo[d] + 1;
    t.shape.push_back(make_int(extent));
    if (extent == 1) {
      fetch_index[d] = make_int(0);
      source_index[d] = base[d];
      continue;
    }
    std::string n = dim_names.empty() ? unique_name(r, array + "_dim_" + std::to_string(d)) : dim_names[d];
    if (r.has_iname(n) || r.find_argument(n) || r.find_temporary(n)) refuse(k, what, "dim_arg_names: '" + n + "' is already taken");
    fetch_inames.push_back(n);
    fetch_dims.push_back(d);
    fetch_index[d] = make_var(n);
    source_index[d] = simplify(base[d] + make_var(n));
    // a domain of its own per fetch iname, so the next names are chosen knowing this one
    r.domains.push_back(Domain::parse("{[" + n + "]: 0 <= " + n + " < " + std::to_string(extent) + "}"));
  }
  r.temporaries[temp] = t;

  // ---- the fetch instruction, guarded where the box leaves the array ----
  Instruction fetch;
  fetch.id = unique_name(r, "fetch_" + array);
  for (int i = 0; std::any_of(r.instructions.begin(), r.instructions.end(), [&](auto& x) { return x.id == fetch.id; }); ++i)
    fetch.id = "fetch_" + array + "_" + std::to_string(i);
  fetch.lhs = make_subscript(temp, fetch_index);
  fetch.rhs = make_subscript(array, source_index);
  fetch.within_inames = outer;
  fetch.within_inames.insert(fetch_inames.begin(), fetch_inames.end());
  fetch.inames_given = true;
  fetch.loc = k.instructions[accesses[0].insn].loc;
  for (size_t d = 0; d < rank; ++d) {
    bool may_be_negative = lo[d] < 0 || std::any_of(rest[d].coef.begin(), rest[d].coef.end(), [](auto& c) { return c.second < 0; });
    if (may_be_negative) fetch.predicates.push_back(make_binary(BinOp::Ge, source_index[d], make_int(0)));
    fetch.predicates.push_back(make_binary(BinOp::Lt, source_index[d], arg->shape[d]));
  }

  // ---- rewrite the covered accesses ----
  std::set<size_t> touched;
  for (auto& a : accesses) touched.insert(a.insn);
  for (size_t i : touched) {
    Instruction& insn = r.instructions[i];
    insn.rhs = AccessRewriter(array, temp, base, sweep_set, insn.within_inames).mutate(insn.rhs);
    for (auto& p : insn.predicates) p = AccessRewriter(array, temp, base, sweep_set, insn.within_inames).mutate(p);
  }
  r.instructions.insert(r.instructions.begin() + long(*touched.begin()), fetch);

  // ---- tags of the fetch inames ----
  std::string tag = o.default_tag.empty() ? "l.auto" : o.default_tag;
  if (tag == "l.auto" && space == AddressSpace::Local) {
    // the contiguous (last) dimension on l.0, the next on l.1, ...: only axes the block
    // already has, split by their extent where the box is larger (the rest loops)
    auto ext = local_axis_extents(r);
    size_t axis = 0;
    for (size_t f = fetch_inames.size(); f-- > 0;) {
      while (axis < 3 && ext[axis] == 0) ++axis;
      if (axis == 3) break;
      const std::string& n = fetch_inames[f];
      int64_t extent = hi[fetch_dims[f]] - lo[fetch_dims[f]] + 1;
      InameTag lt{InameTag::Local, int(axis)};
      if (extent <= ext[axis]) {
        r.iname_tags[n] = lt;
      } else {
        SplitOptions so;
        so.inner_tag = lt;
        r = split_iname(r, n, ext[axis], so);
      }
      ++axis;
    }
  } else if (tag != "l.auto" && tag != "for") {
    auto parsed = InameTag::parse(tag);
    if (!parsed) refuse(k, what, "default_tag '" + tag + "' is not a tag (l.auto, for, unr, l.N, ...)");
    for (auto& n : fetch_inames) r.iname_tags[n] = *parsed;
  }
  return r;
}

namespace {
// "local" (or CUDA's "shared"), "private", "global", "auto"
std::optional<AddressSpace> parse_address_space(const std::string& name) {
  if (name == "local" || name == "shared") return AddressSpace::Local;
  if (name == "private") return AddressSpace::Private;
  if (name == "global") return AddressSpace::Global;
  if (name == "auto") return AddressSpace::Auto;
  return std::nullopt;
}
}  // namespace

LoopKernel set_temporary_address_space(const LoopKernel& k, const std::string& temporaries, const std::string& space) {
  const std::string what = "set_temporary_address_space('" + temporaries + "', '" + space + "')";
  auto parsed = parse_address_space(space);
  if (!parsed) refuse(k, what, "unknown address space '" + space + "' (private, local, global or auto)");
  AddressSpace s = *parsed;
  LoopKernel r = k;
  auto names = name_list(temporaries);
  if (names.empty()) refuse(k, what, "no temporaries given");
  for (auto& n : names) {
    auto it = r.temporaries.find(n);
    if (it == r.temporaries.end()) refuse(k, what, "no temporary '" + n + "'");
    if (s == AddressSpace::Global) refuse(k, what, "global temporaries are not supported yet");
    it->second.space = s;
  }
  return r;
}

void register_memory_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"add_prefetch",
           "Copy the part of an array the sweep inames touch into a temporary (local memory by default) and read it from there.",
           {{"var_name", P::String, true, "the array to prefetch"},
            {"sweep_inames", P::String, true, "inames whose accesses the temporary covers ('i_inner, k_inner')"},
            {"temporary_name", P::String, false, "name of the temporary (default <array>_fetch)"},
            {"temporary_address_space", P::String, false, "local (default) or private"},
            {"dim_arg_names", P::String, false, "names of the fetch inames, one per dimension ('a_i,a_k')"},
            {"default_tag", P::String, false, "tag of the fetch inames: l.auto (default: onto the block's local axes), for, unr, l.N"},
            {"fetch_outer_inames", P::String, false, "inames around the fetch (default: those the footprint depends on)"},
            {"fetch_bounding_box", P::String, false, "accepted for loopy's scripts: the bounding box is always fetched"}},
           [](const LoopKernel& k, const TransformArgs& a) {
             PrefetchOptions o;
             o.temporary_name = a.str_or("temporary_name", "");
             std::string sp = a.str_or("temporary_address_space", "local");
             auto space = parse_address_space(sp);
             if (!space) throw TransformError("add_prefetch on kernel '" + k.name + "': unknown temporary_address_space '" + sp + "' (local or private)");
             o.temporary_address_space = *space;  // global/auto: add_prefetch refuses them with the reason
             o.dim_arg_names = a.str_or("dim_arg_names", "");
             o.default_tag = a.str_or("default_tag", "l.auto");
             if (a.has("fetch_outer_inames")) o.fetch_outer_inames = a.str("fetch_outer_inames");
             return add_prefetch(k, a.str("var_name"), a.str("sweep_inames"), o);
           }});
  reg.add({"set_temporary_address_space", "Put temporaries into private, local (shared) or auto memory.",
           {{"temporaries", P::String, true, "comma-separated temporaries"}, {"address_space", P::String, true, "private, local or auto"}},
           [](const LoopKernel& k, const TransformArgs& a) {
             return set_temporary_address_space(k, a.str("temporaries"), a.str("address_space"));
           }});
}

}  // namespace loom
