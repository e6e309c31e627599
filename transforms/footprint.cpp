// The footprint engine of add_prefetch, precompute and buffer_array (see
// footprint.h). The box: every storage index of a use is affine, with
// constant coefficients on the sweep inames (whose ranges must be constant);
// the rest of the index (outer inames and parameters) must be the same in
// every use, so it becomes the box's base and the sweep part spans the box.
#include "footprint.h"

#include <isl/constraint.h>
#include <isl/map.h>
#include <isl/set.h>

#include <algorithm>
#include <array>
#include <climits>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom::transforms {

Expr expr_of(const AffineConstraint& a) {
  Expr e;
  for (auto& [v, c] : a.coef) {
    Expr t = c == 1 ? make_var(v) : make_binary(BinOp::Mul, make_int(c), make_var(v));
    e = e.defined() ? make_binary(BinOp::Add, e, t) : t;
  }
  if (!e.defined()) return make_int(a.constant);
  return a.constant == 0 ? e : make_binary(BinOp::Add, e, make_int(a.constant));
}

namespace {

// The uses of a name (a[...] or f(...), or a bare f for a rule without
// parameters) in an expression, with the reductions around each.
class UseFinder : public ExprVisitor {
 public:
  UseFinder(const FootprintRequest& rq, std::set<std::string> scope) : rq_(rq), scope_(std::move(scope)) {}
  std::vector<std::pair<std::vector<Expr>, std::set<std::string>>> found;

 protected:
  void visit_subscript(const Subscript& n) override {
    if (!rq_.rule && n.name == rq_.name && selected(rq_, n.indices)) found.push_back({n.indices, scope_});
    ExprVisitor::visit_subscript(n);
  }
  void visit_call(const Call& n) override {
    if (rq_.rule && n.name == rq_.name) found.push_back({n.args, scope_});
    ExprVisitor::visit_call(n);
  }
  void visit_var(const Var& n) override {
    if (rq_.rule && n.name == rq_.name) found.push_back({{}, scope_});
  }
  void visit_reduce(const Reduce& n) override {
    auto saved = scope_;
    scope_.insert(n.inames.begin(), n.inames.end());
    ExprVisitor::visit_reduce(n);
    scope_ = saved;
  }

 private:
  const FootprintRequest& rq_;
  std::set<std::string> scope_;
};

}  // namespace

bool selected(const FootprintRequest& rq, const std::vector<Expr>& args) {
  if (rq.only_using.empty()) return true;
  std::set<std::string> vars;
  for (auto& a : args) collect_free_vars(a, vars);
  return vars.count(rq.only_using) > 0;
}

namespace {

bool covers(const std::vector<std::string>& sweep, const std::set<std::string>& scope) {
  return std::all_of(sweep.begin(), sweep.end(), [&](auto& s) { return scope.count(s) != 0; });
}

// Replaces the covered uses by temp[index - base].
class UseRewriter : public ExprMutator {
 public:
  UseRewriter(const FootprintRequest& rq, const Footprint& fp, const std::string& temp, std::set<std::string> scope)
      : rq_(rq), fp_(fp), temp_(temp), scope_(std::move(scope)) {}

 protected:
  Expr mutate_subscript(const Subscript& n, const Expr& self) override {
    if (rq_.rule || n.name != rq_.name || !covers(rq_.sweep, scope_) || !selected(rq_, n.indices)) return ExprMutator::mutate_subscript(n, self);
    return stored(n.indices, n.type);
  }
  Expr mutate_call(const Call& n, const Expr& self) override {
    if (!rq_.rule || n.name != rq_.name || !covers(rq_.sweep, scope_)) return ExprMutator::mutate_call(n, self);
    return stored(n.args, n.type);
  }
  Expr mutate_var(const Var& n, const Expr& self) override {
    if (!rq_.rule || n.name != rq_.name || !covers(rq_.sweep, scope_)) return self;
    return stored({}, n.type);
  }
  Expr mutate_reduce(const Reduce& n, const Expr& self) override {
    auto saved = scope_;
    scope_.insert(n.inames.begin(), n.inames.end());
    Expr r = ExprMutator::mutate_reduce(n, self);
    scope_ = saved;
    return r;
  }

 private:
  Expr stored(const std::vector<Expr>& args, Type type) {
    if (rq_.storage_axes.empty()) return make_var(temp_, type);
    std::vector<Expr> idx;
    for (size_t a = 0; a < rq_.storage_axes.size(); ++a) {
      const Expr& arg = args[rq_.storage_axes[a]];
      // index - base as one affine form, so the outer parts cancel (16*io + ii - 16*io = ii)
      auto x = affine_form(arg), b = affine_form(fp_.base[a]);
      if (!x || !b) {
        idx.push_back(simplify(arg - fp_.base[a]));
        continue;
      }
      for (auto& [v, c] : b->coef)
        if ((x->coef[v] -= c) == 0) x->coef.erase(v);
      x->constant -= b->constant;
      idx.push_back(expr_of(*x));
    }
    return make_subscript(temp_, idx, type);
  }
  const FootprintRequest& rq_;
  const Footprint& fp_;
  const std::string& temp_;
  std::set<std::string> scope_;
};

// Extents of the local axes as the block of the given instructions uses
// them (0: axis unused). The block is that of their launch: the instructions
// between the global barriers around them (a kernel without global barriers
// is one launch), so another launch's block shape does not stretch this one.
std::array<int64_t, 3> local_axis_extents(const LoopKernel& k, const std::set<size_t>& users) {
  std::vector<bool> launch = transforms::same_launch(k, users);
  std::set<std::string> used;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    if (!launch[i] && !users.empty()) continue;
    const Instruction& insn = k.instructions[i];
    used.insert(insn.within_inames.begin(), insn.within_inames.end());
    collect_reduction_inames(insn.rhs, used);
  }
  std::array<int64_t, 3> ext{0, 0, 0};
  for (auto& [n, tag] : k.iname_tags) {
    if (tag.kind != InameTag::Local || !k.has_iname(n) || !used.count(n)) continue;
    if (auto r = islu::constant_range(k, n)) ext[size_t(tag.axis)] = std::max(ext[size_t(tag.axis)], r->second - r->first + 1);
  }
  return ext;
}

std::string what_uses(const FootprintRequest& rq) { return rq.rule ? "calls of rule '" + rq.name + "'" : "accesses to '" + rq.name + "'"; }

}  // namespace

Footprint find_footprint(const LoopKernel& k, const FootprintRequest& rq) {
  std::set<std::string> sweep_set(rq.sweep.begin(), rq.sweep.end());
  for (auto& s : rq.sweep)
    if (!k.has_iname(s)) refuse(k, rq.what, "no iname '" + s + "'");
  Footprint fp;
  std::set<size_t> storage(rq.storage_axes.begin(), rq.storage_axes.end());
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    if (insn.kind != Instruction::Assign) continue;
    UseFinder f(rq, insn.within_inames);
    f.visit(insn.rhs);
    for (auto& p : insn.predicates) f.visit(p);
    if (rq.include_writes) {
      if (auto s = insn.lhs.as<Subscript>(); s && s->name == rq.name) f.found.push_back({s->indices, insn.within_inames});
      for (auto& ix : insn.lhs.as<Subscript>() ? insn.lhs.as<Subscript>()->indices : std::vector<Expr>{}) f.visit(ix);
    }
    for (auto& [args, scope] : f.found) {
      if (!covers(rq.sweep, scope)) continue;
      // (a rule called with too few arguments: the front ends refuse it, but a
      // kernel built another way must not index past the call's arguments)
      bool short_use = std::any_of(rq.storage_axes.begin(), rq.storage_axes.end(), [&](size_t a) { return a >= args.size(); });
      if (short_use || (!fp.uses.empty() && args.size() != fp.uses[0].args.size()))
        refuse(k, rq.what, "the " + what_uses(rq) + " in instruction '" + insn.id + "' has " + std::to_string(args.size()) +
                               (rq.rule ? " argument(s)" : " index(es)") + ", which does not match " +
                               (short_use ? std::string("the storage axes") : "the other uses"));
      FootprintUse u{i, scope, {}, args};
      for (size_t d = 0; d < args.size(); ++d) {
        if (!storage.count(d)) {
          // a position that is not stored: the same expression everywhere, outside the sweep
          std::set<std::string> vars;
          collect_free_vars(args[d], vars);
          for (auto& s : rq.sweep)
            if (vars.count(s))
              refuse(k, rq.what, "argument " + std::to_string(d) + " of " + rq.name + " in instruction '" + insn.id + "' (" +
                                     args[d].str() + ") depends on sweep iname '" + s + "' but is not a storage axis");
          u.index.push_back({});
          continue;
        }
        auto form = affine_form(args[d]);
        if (!form)
          refuse(k, rq.what, (rq.rule ? "argument " : "index ") + std::to_string(d) + " of " + rq.name + " in instruction '" + insn.id +
                                 "' (" + args[d].str() + ") is not affine with integer coefficients");
        u.index.push_back(*form);
      }
      fp.uses.push_back(u);
    }
  }
  if (fp.uses.empty())
    refuse(k, rq.what, "no " + what_uses(rq) + (rq.only_using.empty() ? "" : " whose indices use '" + rq.only_using + "'") +
                           " run within all of the sweep inames");

  // ---- positions that are not stored: one expression for all uses ----
  size_t npos = fp.uses[0].args.size();
  for (size_t d = 0; d < npos; ++d) {
    if (storage.count(d)) continue;
    for (auto& u : fp.uses)
      if (!u.args[d].same_as(fp.uses[0].args[d]))
        refuse(k, rq.what, "the " + what_uses(rq) + " differ in argument " + std::to_string(d) + ", which is not a storage axis (" +
                               fp.uses[0].args[d].str() + " vs " + u.args[d].str() + ")");
    fp.fixed.push_back(fp.uses[0].args[d]);
  }

  // ---- the box: base (outer part) + [lo, hi] per storage axis ----
  std::map<std::string, std::pair<int64_t, int64_t>> range;
  for (auto& s : rq.sweep) {
    auto r = islu::constant_range(k, s);
    if (!r) refuse(k, rq.what, "sweep iname '" + s + "' has a range that depends on the parameters; split it and sweep the inner iname");
    range[s] = *r;
  }
  size_t rank = rq.storage_axes.size();
  std::vector<AffineConstraint> rest(rank);
  std::vector<int64_t> lo(rank, INT64_MAX), hi(rank, INT64_MIN);
  std::set<std::string> outer_used;
  for (size_t ui = 0; ui < fp.uses.size(); ++ui) {
    const FootprintUse& u = fp.uses[ui];
    for (size_t a = 0; a < rank; ++a) {
      const AffineConstraint& ix = u.index[rq.storage_axes[a]];
      AffineConstraint outer;
      int64_t mn = ix.constant, mx = ix.constant;
      for (auto& [v, c] : ix.coef) {
        if (sweep_set.count(v)) {
          auto [rl, rh] = range[v];
          mn += c > 0 ? c * rl : c * rh;
          mx += c > 0 ? c * rh : c * rl;
        } else {
          outer.coef[v] = c;
          outer_used.insert(v);
        }
      }
      if (ui == 0) rest[a] = outer;
      else if (!(rest[a] == outer))
        refuse(k, rq.what, "the " + what_uses(rq) + " differ in dimension " + std::to_string(rq.storage_axes[a]) + " outside the sweep (" +
                               expr_of(rest[a]).str() + " vs " + expr_of(outer).str() + "); store them separately");
      lo[a] = std::min(lo[a], mn);
      hi[a] = std::max(hi[a], mx);
    }
  }
  for (auto& e : fp.fixed) {
    std::set<std::string> vars;
    collect_free_vars(e, vars);
    for (auto& v : vars)
      if (k.has_iname(v)) outer_used.insert(v);
  }
  for (size_t a = 0; a < rank; ++a) {
    AffineConstraint b = rest[a];
    b.constant = lo[a];
    fp.base.push_back(simplify(expr_of(b)));
    fp.extent.push_back(hi[a] - lo[a] + 1);
  }

  // ---- where the storing instruction runs: the outer inames the base depends on ----
  if (rq.outer_inames) {
    for (auto& n : name_list(*rq.outer_inames)) {
      if (!k.has_iname(n)) refuse(k, rq.what, "outer inames: no iname '" + n + "'");
      fp.outer.insert(n);
    }
  } else {
    for (auto& u : fp.uses)
      for (auto& n : u.scope)
        if (!sweep_set.count(n) && outer_used.count(n)) fp.outer.insert(n);
  }
  for (auto& n : outer_used)
    if (k.has_iname(n) && !fp.outer.count(n))
      refuse(k, rq.what, "the footprint depends on iname '" + n + "', which is neither swept nor among the outer inames");
  if (rq.local)
    for (auto& n : fp.outer)
      if (k.tag_of(n).kind == InameTag::Local)
        refuse(k, rq.what, "the footprint depends on local iname '" + n + "' (" + k.tag_of(n).str() +
                               "), so the threads of a block would need different tiles; add it to the sweep inames");
  return fp;
}

StorageLoops add_storage_loops(LoopKernel& r, const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                               const std::string& prefix, const std::string& dim_names) {
  size_t rank = rq.storage_axes.size();
  std::vector<std::string> names = name_list(dim_names);
  if (!names.empty() && names.size() != rank)
    refuse(k, rq.what, "gives " + std::to_string(names.size()) + " iname(s) for " + std::to_string(rank) + " storage axes");
  StorageLoops loops;
  loops.index.resize(rank);
  loops.source.resize(rank);
  for (size_t a = 0; a < rank; ++a) {
    if (fp.extent[a] == 1) {
      loops.index[a] = make_int(0);
      loops.source[a] = fp.base[a];
      continue;
    }
    std::string n = names.empty() ? unique_name(r, prefix + "_dim_" + std::to_string(a)) : names[a];
    bool reuse = !names.empty() && r.has_iname(n) && !loops.reused.count(n);
    if (reuse) {
      auto range = islu::constant_range(r, n);
      if (!range || range->first != 0 || range->second != fp.extent[a] - 1)
        refuse(k, rq.what, "iname '" + n + "' exists with " +
                               (range ? "range [" + std::to_string(range->first) + ", " + std::to_string(range->second) + "]"
                                      : std::string("a range that depends on the parameters")) +
                               ", but storage axis " + std::to_string(a) + " needs [0, " + std::to_string(fp.extent[a] - 1) + "]");
      loops.reused.insert(n);
    } else if (r.name_taken(n)) {
      refuse(k, rq.what, "iname '" + n + "' is already taken");
    }
    loops.inames.push_back(n);
    loops.axes.push_back(a);
    loops.index[a] = make_var(n);
    loops.source[a] = simplify(fp.base[a] + make_var(n));
    // a domain of its own per iname, so the next names are chosen knowing this one
    if (!reuse) r.domains.edit().push_back(Domain::interval(n, fp.extent[a]));
  }
  return loops;
}

void rewrite_uses(LoopKernel& r, const FootprintRequest& rq, const Footprint& fp, const std::string& temp,
                  const std::string& producer_id) {
  std::set<size_t> touched;
  for (auto& u : fp.uses) touched.insert(u.insn);
  for (size_t i : touched) {
    Instruction& insn = r.instructions.edit()[i];
    if (!producer_id.empty()) insn.depends_on.insert(producer_id);
    auto rewriter = [&] { return UseRewriter(rq, fp, temp, insn.within_inames); };
    insn.rhs = rewriter().mutate(insn.rhs);
    for (auto& p : insn.predicates) p = rewriter().mutate(p);
    if (rq.include_writes) insn.lhs = rewriter().mutate(insn.lhs);
  }
}

LoopKernel tag_storage_loops(LoopKernel r, const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                             const StorageLoops& loops_in, const std::string& tag, const std::string& store_id,
                             int64_t vector_width) {
  StorageLoops loops = loops_in;
  for (size_t f = loops.inames.size(); f-- > 0;)  // (reused inames keep their own tags)
    if (loops.reused.count(loops.inames[f])) {
      loops.inames.erase(loops.inames.begin() + long(f));
      loops.axes.erase(loops.axes.begin() + long(f));
    }
  std::vector<int64_t> extent = fp.extent;
  if (vector_width > 1) {
    if (tag != "l.auto") refuse(k, rq.what, "vector_width needs default_tag='l.auto'");
    if (loops.inames.empty()) refuse(k, rq.what, "vector_width: the temporary has no fetch loop to vectorize");
    size_t axis = loops.axes.back();
    if (extent[axis] % vector_width != 0)
      refuse(k, rq.what, "vector_width " + std::to_string(vector_width) + " does not divide the contiguous extent " +
                             std::to_string(extent[axis]) + " of the fetched box");
    SplitOptions so;
    so.inner_tag = InameTag{InameTag::Vec, 0};
    so.outer_iname = unique_name(r, loops.inames.back() + "_outer");
    r = split_iname(r, loops.inames.back(), vector_width, so);
    loops.inames.back() = so.outer_iname;
    extent[axis] /= vector_width;
  }
  if (tag == "l.auto") {
    if (!rq.local) return r;  // a private temporary: each thread runs the loops itself
    // the contiguous (last) axis on l.0, the next on l.1, ...: only axes the block
    // already has, split by their extent where the box is larger (the rest loops)
    std::set<std::string> user_ids{store_id};  // the storing instruction and the uses (fp indexes k's list)
    for (auto& u : fp.uses) user_ids.insert(k.instructions[u.insn].id);
    std::set<size_t> users;
    for (size_t i = 0; i < r.instructions.size(); ++i)
      if (user_ids.count(r.instructions[i].id)) users.insert(i);
    auto ext = local_axis_extents(r, users);
    std::array<bool, 3> used{false, false, false};
    std::vector<std::string> sequential;  // loops each thread still runs, outermost first
    // loop n of length len onto local axis a: tagged, or split by the axis'
    // extent (the outer part, returned, stays sequential)
    auto place = [&](const std::string& n, int64_t len, size_t a) -> std::string {
      InameTag lt{InameTag::Local, int(a)};
      if (len <= ext[a]) {
        r.iname_tags.edit()[n] = lt;
        return "";
      }
      SplitOptions so;
      so.inner_tag = lt;
      so.outer_iname = unique_name(r, n + "_outer");
      r = split_iname(r, n, ext[a], so);
      return so.outer_iname;
    };
    size_t axis = 0;
    for (size_t f = loops.inames.size(); f-- > 0;) {
      while (axis < 3 && ext[axis] == 0) ++axis;
      const std::string& n = loops.inames[f];
      if (axis == 3) {
        sequential.insert(sequential.begin(), n);
        continue;
      }
      std::string rest = place(n, extent[loops.axes[f]], axis);
      if (!rest.empty()) sequential.insert(sequential.begin(), rest);
      used[axis++] = true;
    }
    // A local axis the loops do not use would have every thread along it
    // store the same elements (a race). It takes over a loop that is still
    // sequential (split by its extent where longer), or else the store runs
    // on its first thread only.
    bool has_store = std::any_of(r.instructions.begin(), r.instructions.end(), [&](const Instruction& i) { return i.id == store_id; });
    for (size_t a = 0; a < 3; ++a) {
      if (ext[a] <= 1 || used[a]) continue;
      InameTag lt{InameTag::Local, int(a)};
      if (!sequential.empty()) {
        std::string n = sequential.back();
        sequential.pop_back();
        auto range = islu::constant_range(r, n);  // the storage loops' ranges are constant
        std::string rest = place(n, range ? range->second - range->first + 1 : ext[a] + 1, a);
        if (!rest.empty()) sequential.push_back(rest);
        continue;
      }
      if (!has_store) refuse(k, rq.what, "no instruction '" + store_id + "' to place on local axis " + lt.str());
      std::string n = unique_name(r, store_id + "_l" + std::to_string(a));
      r.domains.edit().push_back(Domain::interval(n, ext[a]));
      r.iname_tags.edit()[n] = lt;
      for (auto& insn : r.instructions.edit())
        if (insn.id == store_id) {
          insn.within_inames.insert(n);
          insn.predicates.push_back(make_binary(BinOp::Eq, make_var(n), make_int(0)));
        }
    }
    return r;
  }
  if (tag == "for") return r;
  auto parsed = InameTag::parse(tag);
  if (!parsed) refuse(k, rq.what, "default_tag '" + tag + "' is not a tag (l.auto, for, unr, l.N, ...)");
  for (auto& n : loops.inames) r.iname_tags.edit()[n] = *parsed;
  return r;
}

void order_outer_before_sweep(LoopKernel& r, const FootprintRequest& rq, const Footprint& fp) {
  auto reversed = [&](const std::string& a, const std::string& b) {
    for (auto& chain : r.loop_priority) {
      auto pa = std::find(chain.begin(), chain.end(), a), pb = std::find(chain.begin(), chain.end(), b);
      if (pa != chain.end() && pb != chain.end() && pb < pa) return true;
    }
    return false;
  };
  for (auto& o : fp.outer) {
    if (r.tag_of(o).is_hardware()) continue;
    for (auto& s : rq.sweep)
      if (!r.tag_of(s).is_hardware() && !reversed(o, s)) r.loop_priority.edit().push_back({o, s});
  }
}

namespace {

// isl operations allowed for the footprint's hull (about 0.1 s): the unit
// tests all pass with a tenth of it, and the hull of seed 89's chunked
// triangular domain ran for minutes.
constexpr unsigned long kFootprintHullOperations = 200000;

std::string affine_text(const AffineConstraint& a) {
  std::string s = std::to_string(a.constant);
  for (auto& [v, c] : a.coef)
    if (c != 0) s += (c < 0 ? " - " : " + ") + std::to_string(c < 0 ? -c : c) + "*" + v;
  return s;
}

}  // namespace

std::vector<Expr> footprint_conditions(const LoopKernel& k, const FootprintRequest& rq, const Footprint& fp,
                                       const StorageLoops& loops, bool* exact) {
  size_t rank = rq.storage_axes.size();
  std::vector<std::string> outer(fp.outer.begin(), fp.outer.end());
  std::vector<std::string> out_dims;  // the outer inames (equated below), then the box axes
  for (size_t o = 0; o < outer.size(); ++o) out_dims.push_back("loom_o" + std::to_string(o));
  std::vector<std::string> axis_names(rank);
  for (size_t a = 0; a < rank; ++a) {
    axis_names[a] = "loom_p" + std::to_string(a);
    out_dims.push_back(axis_names[a]);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  isl::set used;
  for (auto& u : fp.uses) {
    std::vector<std::string> scope(u.scope.begin(), u.scope.end());
    for (auto& o : outer)
      if (!u.scope.count(o)) scope.push_back(o);
    isl::set dom = islu::iteration_domain(k, scope);
    std::set<std::string> params;
    for (auto& p : islu::dim_names(dom.get(), isl_dim_param)) params.insert(p);
    std::string cons;
    for (size_t a = 0; a < rank; ++a) {
      AffineConstraint diff = u.index[rq.storage_axes[a]];
      auto b = affine_form(fp.base[a]);
      if (!b) refuse(k, rq.what, "the footprint's base " + fp.base[a].str() + " is not affine");
      for (auto& [v, c] : b->coef) diff.coef[v] -= c;
      diff.constant -= b->constant;
      for (auto& [v, c] : diff.coef)
        if (!std::count(scope.begin(), scope.end(), v)) params.insert(v);
      cons += (cons.empty() ? "" : " and ") + axis_names[a] + " = " + affine_text(diff);
    }
    std::string text = "[" + join({params.begin(), params.end()}) + "] -> { [" + join(scope) + "] -> [" + join(out_dims) + "]" +
                       (cons.empty() ? "" : " : " + cons) + " }";
    // the outer inames map to themselves
    isl::map m = isl::map(isl::ctx(isl_context()), text);
    for (size_t o = 0; o < outer.size(); ++o) {
      int pos = int(std::find(scope.begin(), scope.end(), outer[o]) - scope.begin());
      m = isl::manage(isl_map_equate(m.release(), isl_dim_in, unsigned(pos), isl_dim_out, unsigned(o)));
    }
    isl::set image = dom.apply(m);
    used = used.is_null() ? image : used.unite(image);
  }
  // The hull of a union of pieces with integer divisions (a chunked
  // parametric range: four pieces with floor(n/4) in them) can make isl
  // wrap facets for minutes: its work is bounded, and a hull beyond the
  // bound is refused (the same family as chunk_iname's refusal of bounds
  // through divisions).
  isl_ctx* ctx = isl_context();
  isl_ctx_reset_operations(ctx);
  isl_ctx_set_max_operations(ctx, kFootprintHullOperations);
  isl::set used_copy = used;
  isl_basic_set* hull = isl_set_convex_hull(used.release());
  isl_ctx_set_max_operations(ctx, 0);
  if (!hull) {
    isl_ctx_reset_error(ctx);
    refuse(k, rq.what, "isl could not take the convex hull of the footprint within its work bound (its domain has integer "
                       "divisions, e.g. from chunk_iname or a join); sweep fewer inames, or split with constant lengths first");
  }
  hull = isl_basic_set_remove_divs(hull);
  {
    // what the loops around the compute already guarantee need not be tested again
    std::string box;
    for (size_t a = 0; a < rank; ++a)
      box += (box.empty() ? "" : " and ") + std::string("0 <= ") + axis_names[a] + " < " + std::to_string(fp.extent[a]);
    isl_set* boxes = isl_set_read_from_str(isl_context(), ("{ [" + join(axis_names) + "]" + (box.empty() ? "" : " : " + box) + " }").c_str());
    isl_set* context = isl_set_flat_product(islu::iteration_domain(k, outer).release(), islu::check(boxes, "footprint box"));
    isl::set within = isl::manage(isl_set_copy(context));
    isl_set* g = isl_set_gist(isl_set_from_basic_set(hull), context);
    hull = isl_basic_set_remove_divs(isl_set_simple_hull(g));
    if (exact) {
      // the points the conditions admit where the loops run: all used?
      // (the constraints left out below are the box's, which `within` has)
      isl::set admitted = isl::manage(isl_set_intersect(isl_set_from_basic_set(isl_basic_set_copy(hull)), within.release()));
      *exact = isl_set_is_subset(admitted.get(), used_copy.get()) == isl_bool_true;
    }
  }
  struct Data {
    std::vector<Expr> conds;
    const std::vector<std::string>* out_dims;
    const std::vector<std::string>* outer;
    size_t n_outer;
    const StorageLoops* loops;
    const Footprint* fp;
  } data{{}, &out_dims, &outer, outer.size(), &loops, &fp};
  isl_basic_set_foreach_constraint(
      hull,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto* d = static_cast<Data*>(user);
        AffineConstraint a;
        auto coef = [&](isl_dim_type type, int pos) {
          isl_val* v = isl_constraint_get_coefficient_val(c, type, pos);
          int64_t r = isl_val_get_num_si(v);
          isl_val_free(v);
          return r;
        };
        isl_val* cst = isl_constraint_get_constant_val(c);
        a.constant = isl_val_get_num_si(cst);
        isl_val_free(cst);
        // the box's bounds: min and max over the storage loops (constraints the box implies are left out)
        int64_t mn = 0, mx = 0;
        bool only_storage = true;
        int nparam = isl_constraint_dim(c, isl_dim_param);
        for (int p = 0; p < nparam; ++p)
          if (int64_t v = coef(isl_dim_param, p)) {
            a.coef[isl_constraint_get_dim_name(c, isl_dim_param, unsigned(p))] = v;
            only_storage = false;
          }
        for (size_t o = 0; o < d->out_dims->size(); ++o) {
          int64_t v = coef(isl_dim_set, int(o));
          if (!v) continue;
          if (o < d->n_outer) {
            a.coef[(*d->outer)[o]] = v;
            only_storage = false;
            continue;
          }
          size_t axis = o - d->n_outer;
          int64_t ext = d->fp->extent[axis];
          const Expr& ix = d->loops->index[axis];
          if (auto var = ix.as<Var>()) a.coef[var->name] += v;
          mn += std::min<int64_t>(0, v * (ext - 1));
          mx += std::max<int64_t>(0, v * (ext - 1));
        }
        bool eq = isl_constraint_is_equality(c);
        isl_constraint_free(c);
        if (only_storage && a.constant + mn >= 0 && (!eq || (a.constant + mn == 0 && a.constant + mx == 0))) return isl_stat_ok;
        Expr e = expr_of(a);
        d->conds.push_back(make_binary(eq ? BinOp::Eq : BinOp::Ge, e, make_int(0)));
        return isl_stat_ok;
      },
      &data);
  isl_basic_set_free(hull);
  return data.conds;
}

}  // namespace loom::transforms
