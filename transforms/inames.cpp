// Iname transformations: split_iname and tag_inames (more of loopy's family
// in later issues). Each validates its input and rewrites domains,
// instructions, substitution rules, tags and loop priorities together.
#include <isl/constraint.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "loom/isl_util.h"
#include "loom/match.h"
#include "common.h"
#include "loom/analysis.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {


std::string unique_iname(const LoopKernel& k, const std::string& base) { return transforms::unique_name(k, base); }

// The outer and inner inames of a split (the options' names, or fresh ones).
std::pair<std::string, std::string> split_names(const LoopKernel& k, const std::string& what, const std::string& iname,
                                                const SplitOptions& o) {
  std::string outer = o.outer_iname.empty() ? unique_iname(k, iname + "_outer") : o.outer_iname;
  std::string inner = o.inner_iname.empty() ? unique_iname(k, iname + "_inner") : o.inner_iname;
  for (auto& n : {outer, inner})
    if (k.name_taken(n)) refuse(k, what, "the name '" + n + "' is already used");
  if (outer == inner) refuse(k, what, "outer and inner inames must differ");
  return {outer, inner};
}

// Replaces dimension `pos` of `type` by (outer, inner) with
// old = factor*outer + inner and 0 <= inner < factor.
isl_set* split_dim(isl_set* s, isl_dim_type type, int pos, int64_t factor, const std::string& outer,
                   const std::string& inner) {
  isl_ctx* ctx = isl_set_get_ctx(s);
  s = isl_set_insert_dims(s, type, unsigned(pos) + 1, 2);
  s = isl_set_set_dim_id(s, type, unsigned(pos) + 1, isl_id_alloc(ctx, outer.c_str(), nullptr));
  s = isl_set_set_dim_id(s, type, unsigned(pos) + 2, isl_id_alloc(ctx, inner.c_str(), nullptr));
  isl_local_space* ls = isl_local_space_from_space(isl_set_get_space(s));
  // old - factor*outer - inner = 0
  isl_constraint* eq = isl_equality_alloc(isl_local_space_copy(ls));
  eq = isl_constraint_set_coefficient_si(eq, type, pos, 1);
  eq = isl_constraint_set_coefficient_si(eq, type, pos + 1, int(-factor));
  eq = isl_constraint_set_coefficient_si(eq, type, pos + 2, -1);
  s = isl_set_add_constraint(s, eq);
  // inner >= 0
  isl_constraint* lo = isl_inequality_alloc(isl_local_space_copy(ls));
  lo = isl_constraint_set_coefficient_si(lo, type, pos + 2, 1);
  s = isl_set_add_constraint(s, lo);
  // factor - 1 - inner >= 0
  isl_constraint* hi = isl_inequality_alloc(ls);
  hi = isl_constraint_set_coefficient_si(hi, type, pos + 2, -1);
  hi = isl_constraint_set_constant_si(hi, int(factor - 1));
  s = isl_set_add_constraint(s, hi);
  return islu::check(isl_set_project_out(s, type, unsigned(pos), 1), "split_iname");
}

// Substitutes the split iname in expressions; reductions over it reduce over
// both new inames.
class SplitRewriter : public ExprMutator {
 public:
  // keep: the iname stays (a derived iname, see chunk_iname), and reductions over it
  // reduce over all three
  SplitRewriter(std::string iname, Expr repl, std::string outer, std::string inner, bool keep = false)
      : iname_(std::move(iname)), repl_(std::move(repl)), outer_(std::move(outer)), inner_(std::move(inner)), keep_(keep) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& self) override { return v.name == iname_ ? repl_ : self; }
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr body = mutate(r.body);
    std::vector<std::string> names;
    bool changed = body.get() != r.body.get();
    for (auto& n : r.inames) {
      if (n == iname_) {
        names.push_back(outer_);
        names.push_back(inner_);
        if (keep_) names.push_back(n);
        changed = true;
      } else {
        names.push_back(n);
      }
    }
    return changed ? make_reduce(r.op, names, body, r.type) : self;
  }

 private:
  std::string iname_;
  Expr repl_;
  std::string outer_, inner_;
  bool keep_;
};

}  // namespace

LoopKernel split_iname(const LoopKernel& k, const std::string& iname, int64_t inner_length, const SplitOptions& o) {
  const std::string what = "split_iname('" + iname + "', " + std::to_string(inner_length) + ")";
  if (!o.within.empty()) {
    // the matching instructions get a copy of the iname (duplicate_inames), which is split
    if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
    SplitOptions rest = o;
    rest.within.clear();
    std::string copy = unique_iname(k, iname + "_within");
    LoopKernel d = duplicate_inames(k, iname, o.within, copy, "");
    if (rest.outer_iname.empty()) rest.outer_iname = unique_iname(d, iname + "_outer");
    if (rest.inner_iname.empty()) rest.inner_iname = unique_iname(d, iname + "_inner");
    return split_iname(d, copy, inner_length, rest);
  }
  if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
  if (inner_length < 1) refuse(k, what, "the inner length must be at least 1");
  if (inner_length > (int64_t(1) << 30)) refuse(k, what, "the inner length is too large");
  if (k.tag_of(iname).kind != InameTag::Seq)
    refuse(k, what, "iname '" + iname + "' is tagged '" + k.tag_of(iname).str() + "'; split it before tagging");
  auto [outer, inner] = split_names(k, what, iname, o);

  LoopKernel r = k;
  for (auto& d : r.domains.edit()) {
    int pos;
    isl_dim_type type;
    if ((pos = islu::find_dim(d.get(), isl_dim_set, iname)) >= 0) type = isl_dim_set;
    else if ((pos = islu::find_dim(d.get(), isl_dim_param, iname)) >= 0) type = isl_dim_param;
    else continue;
    d = Domain(split_dim(d.copy(), type, pos, inner_length, outer, inner));
  }

  Expr repl = make_binary(BinOp::Add, make_binary(BinOp::Mul, make_int(inner_length), make_var(outer)), make_var(inner));
  SplitRewriter rw(iname, repl, outer, inner);
  for (auto& insn : r.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = rw.mutate(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = rw.mutate(insn.rhs);
    for (auto& p : insn.predicates) p = rw.mutate(p);
    transforms::update_origin(insn, [&](const Expr& e) { return rw.mutate(e); });
    if (insn.within_inames.erase(iname)) {
      insn.within_inames.insert(outer);
      insn.within_inames.insert(inner);
    }
  }
  transforms::rewrite_rule_bodies(r, {iname}, [&](const Expr& e) { return rw.mutate(e); });
  for (auto& prio : r.loop_priority.edit()) {
    auto it = std::find(prio.begin(), prio.end(), iname);
    if (it != prio.end()) {
      *it = inner;
      prio.insert(it, outer);
    }
  }
  if (o.outer_tag && o.outer_tag->kind != InameTag::Seq) r.iname_tags.edit()[outer] = *o.outer_tag;
  if (o.slabs.first < 0 || o.slabs.second < 0) refuse(k, what, "slabs are counts of iterations (>= 0)");
  if (o.slabs != std::pair<int, int>{0, 0}) {
    // a block axis (g.N) takes slabs too: its first/last blocks run the guarded code, the others not
    if (o.outer_tag && o.outer_tag->kind != InameTag::Seq && o.outer_tag->kind != InameTag::Group)
      refuse(k, what, "slabs need a sequential or block (g.N) outer iname; '" + o.outer_tag->str() +
                          "' would put the slabs' code under branches that the threads of one block take apart");
    r.slabs.edit()[outer] = o.slabs;
  }
  if (o.inner_tag && o.inner_tag->kind != InameTag::Seq) r.iname_tags.edit()[inner] = *o.inner_tag;
  return r;
}

LoopKernel tag_inames(const LoopKernel& k, const std::map<std::string, std::string>& tags) {
  LoopKernel r = k;
  for (auto& [iname, tag_text] : tags) {
    const std::string what = "tag_inames('" + iname + ":" + tag_text + "')";
    if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
    auto tag = InameTag::parse(tag_text);
    if (!tag) refuse(k, what, "unknown tag '" + tag_text + "' (use g.0-2, l.0-2, unr, ilp, ilp.seq, ilp.unr, vec, for)");
    InameTag old = r.tag_of(iname);
    if (old.is_hardware() && tag->is_hardware() && !(old == *tag))
      refuse(k, what, "iname '" + iname + "' is already tagged '" + old.str() + "'");
    if (tag->kind == InameTag::Seq) r.iname_tags.edit().erase(iname);
    else r.iname_tags.edit()[iname] = *tag;
  }
  return r;
}

LoopKernel tag_inames(const LoopKernel& k, const std::string& spec) {
  std::map<std::string, std::string> tags;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto b = item.find_first_not_of(" \t\n");
    if (b == std::string::npos) continue;
    auto e = item.find_last_not_of(" \t\n");
    item = item.substr(b, e - b + 1);
    auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw TransformError("tag_inames on kernel '" + k.name + "': expected 'iname:tag', got '" + item + "'");
    tags[item.substr(0, colon)] = item.substr(colon + 1);
  }
  if (tags.empty()) throw TransformError("tag_inames on kernel '" + k.name + "': no 'iname:tag' pairs given");
  return tag_inames(k, tags);
}

namespace {


void require_inames(const LoopKernel& k, const std::string& what, const std::vector<std::string>& names) {
  if (names.empty()) refuse(k, what, "no inames given");
  for (auto& n : names)
    if (!k.has_iname(n)) refuse(k, what, "no iname '" + n + "'");
}

// Renames iname `from` to `to` in expressions, reductions and instruction inames.
class InameRenamer : public ExprMutator {
 public:
  InameRenamer(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& self) override { return v.name == from_ ? make_var(to_, v.type) : self; }
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr body = mutate(r.body);
    auto names = r.inames;
    bool changed = body.get() != r.body.get();
    for (auto& n : names)
      if (n == from_) n = to_, changed = true;
    return changed ? make_reduce(r.op, names, body, r.type) : self;
  }

 private:
  std::string from_, to_;
};

void rename_in_instruction(Instruction& insn, const std::string& from, const std::string& to) {
  InameRenamer rn(from, to);
  if (insn.lhs.defined()) insn.lhs = rn.mutate(insn.lhs);
  if (insn.rhs.defined()) insn.rhs = rn.mutate(insn.rhs);
  for (auto& p : insn.predicates) p = rn.mutate(p);
  transforms::update_origin(insn, [&](const Expr& e) { return rn.mutate(e); });
  if (insn.within_inames.erase(from)) insn.within_inames.insert(to);
}

isl_set* rename_dim(isl_set* s, const std::string& from, const std::string& to) {
  for (isl_dim_type t : {isl_dim_set, isl_dim_param}) {
    int pos = isl_set_find_dim_by_name(s, t, from.c_str());
    if (pos >= 0) s = isl_set_set_dim_id(s, t, unsigned(pos), isl_id_alloc(isl_set_get_ctx(s), to.c_str(), nullptr));
  }
  return s;
}

void check_fresh(const LoopKernel& k, const std::string& what, const std::string& n) {
  if (k.name_taken(n)) refuse(k, what, "the name '" + n + "' is already used");
}

// Constant [min, max] of an iname over all parameter values.
std::pair<int64_t, int64_t> constant_bounds(const LoopKernel& k, const std::string& what, const std::string& iname) {
  auto r = islu::constant_range(k, iname);
  if (!r) refuse(k, what, "the range of '" + iname + "' depends on the parameters; it needs a constant range");
  return *r;
}

}  // namespace

namespace {

// The iteration set of an instruction's loops (and sums), each named as after the renaming.
isl::set instances_of(const LoopKernel& k, const Instruction& insn, const std::string& from, const std::string& to) {
  std::set<std::string> names = insn.within_inames;
  if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, names);
  std::vector<std::string> inames;
  for (auto& n : k.all_inames())
    if (names.count(n)) inames.push_back(n);
  isl_set* s = islu::iteration_domain(k, inames).release();
  s = rename_dim(s, from, to);
  s = isl_set_intersect_params(s, isl_set_align_params(islu::assumptions_of(k).release(), isl_set_get_space(s)));
  return isl::manage(s);
}

// rename_iname onto an existing iname (loopy's existing_ok=True): the two
// loops become one. Each keeps the instances it had: the joined range is the
// union of both (one interval), and the instructions of either may not gain
// an instance from it (an inner loop that is empty where the other range
// reaches further, as the steps of a right-looking factorization are: the
// update of step k has no rows left at the last k). That is what the tuner's
// per-statement schedules need (tuner/steps.cpp): statements whose loops
// were mapped apart share their outermost loop again.
LoopKernel join_into_iname(const LoopKernel& k, const std::string& from, const std::string& to, const std::string& what) {
  require_inames(k, what, {from, to});
  if (from == to) return k;
  if (k.tag_of(from) != k.tag_of(to))
    refuse(k, what, "'" + from + "' is tagged '" + k.tag_of(from).str() + "' and '" + to + "' '" + k.tag_of(to).str() + "'");
  if (k.slabs->count(from) || k.slabs->count(to)) refuse(k, what, "an iname with slabs cannot join another");
  for (auto& insn : k.instructions) {
    std::set<std::string> reduced;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    for (auto& n : {from, to})
      if (reduced.count(n)) refuse(k, what, "iname '" + n + "' is reduced over in '" + insn.id + "'");
    if (insn.within_inames.count(from) && insn.within_inames.count(to))
      refuse(k, what, "instruction '" + insn.id + "' runs in both loops");
  }
  int df = k.domain_of(from), dt = k.domain_of(to);
  if (df == dt) refuse(k, what, "'" + from + "' and '" + to + "' are dimensions of one domain (their values are related)");
  for (int d : {df, dt}) {
    std::vector<std::string> dims = k.domains[size_t(d)].inames();
    const std::string& n = d == df ? from : to;
    if (dims.front() != n) refuse(k, what, "'" + n + "' is not the outermost iname of its domain (" + dims.front() + " is)");
    for (auto& p : k.domains[size_t(d)].params())
      if (k.has_iname(p)) refuse(k, what, "the range of '" + n + "' depends on iname '" + p + "'");
  }
  // the joined range: both ranges' union, one interval
  isl_set* range_f = rename_dim(islu::arrange_dims(islu::to_isl(k.domains[size_t(df)]), {from}).release(), from, to);
  isl_set* range_t = islu::arrange_dims(islu::to_isl(k.domains[size_t(dt)]), {to}).release();
  range_t = isl_set_align_params(range_t, isl_set_get_space(range_f));
  range_f = isl_set_align_params(range_f, isl_set_get_space(range_t));
  isl_set* range = isl_set_coalesce(isl_set_union(range_f, range_t));
  if (isl_set_n_basic_set(range) != 1) {
    isl_set_free(range);
    refuse(k, what, "the union of the ranges of '" + from + "' and '" + to + "' is not one interval");
  }
  // each domain without its first dimension, which becomes the parameter `to`
  auto rest_of = [&](int d, const std::string& n) -> std::optional<Domain> {
    std::vector<std::string> dims = k.domains[size_t(d)].inames();
    if (dims.size() == 1) return std::nullopt;
    isl_set* s = islu::dims_to_params(islu::to_isl(k.domains[size_t(d)]), {n}).release();
    return Domain(rename_dim(s, n, to));
  };
  std::vector<Domain> domains;
  for (size_t d = 0; d < k.domains.size(); ++d) {
    if (int(d) == std::min(df, dt)) domains.push_back(Domain(range));
    if (int(d) == df || int(d) == dt) {
      if (auto rest = rest_of(int(d), int(d) == df ? from : to)) domains.push_back(*rest);
    } else {
      domains.push_back(Domain(rename_dim(k.domains[d].copy(), from, to)));
    }
  }
  LoopKernel r = k;
  r.domains.edit() = domains;
  for (auto& insn : r.instructions.edit()) rename_in_instruction(insn, from, to);
  InameRenamer rn(from, to);
  transforms::rewrite_rule_bodies(r, {from}, [&](const Expr& e) { return rn.mutate(e); });
  r.iname_tags.edit().erase(from);
  for (auto& prio : r.loop_priority.edit()) std::replace(prio.begin(), prio.end(), from, to);
  for (auto& [tn, tv] : r.temporaries.edit())
    if (tv.double_buffered_in == from) tv.double_buffered_in = to;
  // no instruction gains (or loses) an instance
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& before = k.instructions[i];
    if (!before.within_inames.count(from) && !before.within_inames.count(to)) continue;
    isl::set was = instances_of(k, before, from, to), is = instances_of(r, r.instructions[i], from, to);
    isl_set* a = isl_set_align_params(was.copy(), isl_set_get_space(is.get()));
    isl_set* b = isl_set_align_params(is.copy(), isl_set_get_space(a));
    isl_bool same = isl_set_is_equal(a, b);
    isl_set_free(a);
    isl_set_free(b);
    if (same != isl_bool_true)
      refuse(k, what, "instruction '" + before.id + "' would run " + (same == isl_bool_false ? "other" : "unproven") +
                          " iterations in the joined range of '" + to + "' (its other loops are not empty where the ranges differ)");
  }
  return r;
}

}  // namespace

LoopKernel rename_iname(const LoopKernel& k, const std::string& from, const std::string& to, bool existing_ok) {
  const std::string what = "rename_iname('" + from + "', '" + to + "')";
  if (existing_ok && k.has_iname(to)) return join_into_iname(k, from, to, what);
  require_inames(k, what, {from});
  check_fresh(k, what, to);
  LoopKernel r = k;
  for (auto& d : r.domains.edit()) d = Domain(rename_dim(d.copy(), from, to));
  for (auto& insn : r.instructions.edit()) rename_in_instruction(insn, from, to);
  InameRenamer rn(from, to);
  transforms::rewrite_rule_bodies(r, {from}, [&](const Expr& e) { return rn.mutate(e); });
  if (auto it = r.iname_tags.find(from); it != r.iname_tags.end()) {
    r.iname_tags.edit()[to] = it->second;
    r.iname_tags.edit().erase(from);
  }
  for (auto& prio : r.loop_priority.edit()) std::replace(prio.begin(), prio.end(), from, to);
  for (auto& [tn, tv] : r.temporaries.edit())
    if (tv.double_buffered_in == from) tv.double_buffered_in = to;
  return r;
}

LoopKernel untag_inames(const LoopKernel& k, const std::string& inames) {
  auto names = name_list(inames);
  require_inames(k, "untag_inames('" + inames + "')", names);
  LoopKernel r = k;
  for (auto& n : names) r.iname_tags.edit().erase(n);
  return r;
}

LoopKernel prioritize_loops(const LoopKernel& k, const std::string& inames) {
  auto names = name_list(inames);
  const std::string what = "prioritize_loops('" + inames + "')";
  require_inames(k, what, names);
  if (names.size() < 2) return k;  // one iname orders nothing (loopy accepts it too)
  LoopKernel r = k;
  r.loop_priority.edit().push_back(names);
  return r;
}

LoopKernel remove_unused_inames(const LoopKernel& k) {
  std::set<std::string> used;
  for (auto& insn : k.instructions) {
    used.insert(insn.within_inames.begin(), insn.within_inames.end());
    collect_reduction_inames(insn.lhs, used);
    collect_reduction_inames(insn.rhs, used);
  }
  for (auto& d : k.domains)  // inames other domains depend on stay
    for (auto& p : d.params())
      if (k.has_iname(p)) used.insert(p);
  LoopKernel r = k;
  for (auto& d : r.domains.edit()) {
    isl_set* s = d.copy();
    for (int i = isl_set_dim(s, isl_dim_set) - 1; i >= 0; --i) {
      const char* n = isl_set_get_dim_name(s, isl_dim_set, unsigned(i));
      if (n && !used.count(n)) {
        r.iname_tags.edit().erase(n);
        s = isl_set_project_out(s, isl_dim_set, unsigned(i), 1);
      }
    }
    d = Domain(s);
  }
  r.domains.edit().erase(std::remove_if(r.domains.edit().begin(), r.domains.edit().end(), [](const Domain& d) { return d.inames().empty(); }),
                  r.domains.edit().end());
  for (auto& prio : r.loop_priority.edit())
    prio.erase(std::remove_if(prio.begin(), prio.end(), [&](auto& n) { return !used.count(n); }), prio.end());
  return r;
}

namespace {

// A temporary that one instruction writes within loop `old` and another
// reads in it (within it, or in a reduction over it: a sum over `old` reads
// its operands once per iteration, as a loop would) carries a value from an
// iteration to the same iteration. If only one of them moves to the copy of
// `old`, the reader runs in the other loop and finds the value of the last
// iteration instead, unless the temporary is indexed by `old` (each
// iteration has its own element).
void check_temporaries_stay_together(const LoopKernel& k, const std::string& what, const std::string& old,
                                     const std::set<const Instruction*>& moved) {
  // Each iteration has elements of its own when isl proves that no two
  // iterations (on one block; one thread for a private value) write one
  // element: `tmp[old]` does, a double-buffered `tmp[(old + 1) % 2]` does not.
  auto indexed_by_old = [&](const Instruction& w) { return overwritten_across_iterations(k, w, old, {}).empty(); };
  for (auto& w : k.instructions) {
    if (w.kind != Instruction::Assign || !w.within_inames.count(old) || !k.find_temporary(w.assignee_name())) continue;
    std::optional<bool> own_elements;  // (isl only where a reader is moved apart)
    for (auto& r : k.instructions) {
      if (&r == &w || r.kind != Instruction::Assign || !r.iteration_inames().count(old) || moved.count(&r) == moved.count(&w)) continue;
      if (!r.read_names().count(w.assignee_name())) continue;
      if (!own_elements) own_elements = indexed_by_old(w);
      if (*own_elements) break;
      refuse(k, what, "instruction '" + r.id + "' reads temporary '" + w.assignee_name() + "', which '" + w.id +
                          "' writes in the same iteration of '" + old + "'; a copy of '" + old +
                          "' for one of them only would give the reader the last iteration's value: let within= match both");
    }
  }
}

}  // namespace

LoopKernel duplicate_inames(const LoopKernel& k, const std::string& inames, const std::string& within,
                            const std::string& new_inames, const std::string& tags) {
  const std::string what = "duplicate_inames('" + inames + "')";
  auto names = name_list(inames);
  require_inames(k, what, names);
  auto fresh = name_list(new_inames);
  if (!fresh.empty() && fresh.size() != names.size()) refuse(k, what, "give as many new names as inames");
  auto tag_list = name_list(tags);
  if (!tag_list.empty() && tag_list.size() != names.size()) refuse(k, what, "give as many tags as inames");
  InstructionMatch m = InstructionMatch::parse(within.empty() ? "*" : within);
  // whether an instruction uses iname n: as a loop, in an expression or as a reduction's iname
  auto uses = [](const Instruction& insn, const std::string& n) {
    if (insn.within_inames.count(n) || mentions_var(insn.rhs, n)) return true;
    std::set<std::string> reduced;
    collect_reduction_inames(insn.rhs, reduced);
    return reduced.count(n) != 0;
  };
  LoopKernel r = k;
  std::vector<std::string> copies;
  for (auto& old : names) {
    std::string nw = fresh.empty() ? unique_iname(r, old + "_dup") : fresh[copies.size()];
    check_fresh(r, what, nw);
    if (std::find(copies.begin(), copies.end(), nw) != copies.end()) refuse(k, what, "the name '" + nw + "' is given twice");
    copies.push_back(nw);
  }
  // The loops around every instruction that gets the copies: the copies keep
  // their constraints against those (a fetch's remainder loop 128*o + t <= 129
  // stays tied to the thread t); inames of the same domain that are not
  // around are projected out, and copies of one domain keep their relations.
  std::optional<std::set<std::string>> around;
  for (auto& insn : k.instructions) {
    if (!m(insn) || std::none_of(names.begin(), names.end(), [&](const std::string& n) { return uses(insn, n); })) continue;
    if (!around) {
      around = insn.within_inames;
      continue;
    }
    std::set<std::string> both;
    for (auto& n : *around)
      if (insn.within_inames.count(n)) both.insert(n);
    around = both;
  }
  std::map<int, std::vector<size_t>> by_domain;  // the copies' domains, one per domain copied from
  for (size_t i = 0; i < names.size(); ++i) by_domain[k.domain_of(names[i])].push_back(i);
  for (auto& [d, which] : by_domain) {
    std::vector<std::string> kept, copied;
    for (size_t i : which) copied.push_back(names[i]);
    for (auto& n : k.domains[size_t(d)].inames())
      if (around && around->count(n) && std::find(copied.begin(), copied.end(), n) == copied.end()) kept.push_back(n);
    isl::set s = islu::arrange_dims(islu::dims_to_params(islu::to_isl(k.domains[size_t(d)]), kept), copied);
    isl_set* c = s.release();
    // (a copied iname's bounds that use another copied iname use its copy)
    for (size_t i = 0; i < names.size(); ++i) c = rename_dim(c, names[i], copies[i]);
    r.domains.edit().push_back(Domain(c));
  }
  // Domains that depend on a duplicated iname (`{[k]: i <= k < n}`): the
  // instructions that get the copy see k's range through the copy. Where
  // only they use the domain's inames, its parameter is renamed; where other
  // instructions use them too, each side would need its own k: refused.
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& old = names[i];
    for (size_t d = 0; d < k.domains.size(); ++d) {
      if (!k.domains[d].has_param(old)) continue;
      auto inames_of_d = k.domains[d].inames();
      if (std::all_of(inames_of_d.begin(), inames_of_d.end(), [&](auto& n) { return std::count(names.begin(), names.end(), n) > 0; }))
        continue;  // (copied too: the copies' domain uses the copy)
      std::string user_in, user_out;
      for (auto& insn : k.instructions) {
        bool uses_domain = false;
        for (auto& n : k.domains[d].inames()) uses_domain |= uses(insn, n);
        if (!uses_domain) continue;
        std::string& side = m(insn) && uses(insn, old) ? user_in : user_out;
        if (side.empty()) side = insn.id;
      }
      if (!user_in.empty() && !user_out.empty())
        refuse(k, what, "the domain of '" + k.domains[d].inames().front() + "' depends on '" + old + "', and instructions with the copy ('" +
                            user_in + "') and without it ('" + user_out + "') both run in it; duplicate its inames too");
      if (!user_in.empty()) r.domains.edit()[d] = Domain(rename_dim(r.domains[d].copy(), old, copies[i]));
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& old = names[i];
    const std::string& nw = copies[i];
    std::set<const Instruction*> moved;
    for (auto& insn : r.instructions)
      if (m(insn) && insn.iteration_inames().count(old)) moved.insert(&insn);  // (within it, or reducing over it)
    check_temporaries_stay_together(r, what, old, moved);
    bool any = false;
    for (auto& insn : r.instructions.edit()) {
      if (!m(insn) || !uses(insn, old)) continue;
      rename_in_instruction(insn, old, nw);
      any = true;
    }
    if (!any) refuse(k, what, "no instruction matching '" + m.text() + "' uses '" + old + "'");
    if (!tag_list.empty()) {
      auto t = InameTag::parse(tag_list[i]);
      if (!t) refuse(k, what, "unknown tag '" + tag_list[i] + "'");
      if (t->kind != InameTag::Seq) r.iname_tags.edit()[nw] = *t;
    }
  }
  return r;
}

namespace {

// chunk_iname of an iname whose range [lo, hi] depends on the parameters:
// chunks of c = ceil((hi - lo + 1) / K) iterations, i = lo + c*i_outer +
// i_inner. The product c*i_outer is not affine, so `i` stays as an iname
// that the two new ones determine, and the domain is a union of K affine
// pieces, one per value o of i_outer (where c*o is affine). The loop over
// `i` becomes degenerate (one value) inside i_outer and i_inner.
LoopKernel chunk_parametric_range(const LoopKernel& k, const std::string& what, const std::string& iname, int64_t num_chunks,
                                  const SplitOptions& o) {
  static const int64_t kMaxPieces = 64;  // each chunk is a piece of the domain for isl
  if (num_chunks > kMaxPieces)
    refuse(k, what, "the range of '" + iname + "' depends on the parameters, and more than " + std::to_string(kMaxPieces) +
                        " chunks of it would make the domain too large; use split_iname with a constant length");
  if (!o.within.empty()) refuse(k, what, "within= needs a constant range");
  if (o.slabs != std::pair<int, int>{0, 0}) refuse(k, what, "slabs need a constant range");
  if (k.tag_of(iname).kind != InameTag::Seq)
    refuse(k, what, "iname '" + iname + "' is tagged '" + k.tag_of(iname).str() + "'; chunk it before tagging");
  auto [outer, inner] = split_names(k, what, iname, o);

  LoopKernel r = k;
  int dom = k.domain_of(iname);
  // the inames not coupled to `iname` keep a domain of their own (see join_inames)
  if (auto parts = islu::separate_coupled(r.domains[size_t(dom)], {iname})) {
    r.domains.edit()[size_t(dom)] = parts->first;
    r.domains.edit().push_back(parts->second);
  }
  isl_set* d = r.domains[size_t(dom)].copy();
  int pos = islu::find_dim(d, isl_dim_set, iname);
  // the bounds of `iname` as functions of the parameters (the other inames of its domain projected out)
  isl_set* only = isl_set_project_out(isl_set_project_out(isl_set_copy(d), isl_dim_set, unsigned(pos) + 1,
                                                          unsigned(isl_set_dim(d, isl_dim_set)) - unsigned(pos) - 1),
                                      isl_dim_set, 0, unsigned(pos));
  // Bounds through integer divisions (a join of a tiled iname: 15360*floor(b_t/256)
  // < n - 4b_t) are rarely one affine expression, and isl's parametric
  // maximum of such a set can run for minutes: refused before asking.
  bool divs = isl_set_foreach_basic_set(
                  only,
                  [](isl_basic_set* b, void*) {
                    isl_size n = isl_basic_set_dim(b, isl_dim_div);
                    isl_basic_set_free(b);
                    return n > 0 ? isl_stat_error : isl_stat_ok;  // (an error ends the walk)
                  },
                  nullptr) < 0;
  if (divs) {
    isl_set_free(only);
    isl_set_free(d);
    isl_ctx_reset_error(isl_context());
    refuse(k, what, "the bounds of '" + iname + "' go through integer divisions (" + r.domains[size_t(dom)].str() +
                        "), so a chunk's length is not one affine expression; use split_iname");
  }
  isl_pw_aff* lo = isl_set_dim_min(isl_set_copy(only), 0);
  isl_pw_aff* hi = isl_set_dim_max(only, 0);
  if (!lo || !hi || isl_pw_aff_n_piece(lo) != 1 || isl_pw_aff_n_piece(hi) != 1) {
    isl_pw_aff_free(lo);
    isl_pw_aff_free(hi);
    isl_set_free(d);
    isl_ctx_reset_error(isl_context());
    refuse(k, what, "the bounds of '" + iname + "' are not one affine expression each");
  }
  // the domain with the two new inames after `iname`
  unsigned n = unsigned(isl_set_dim(d, isl_dim_set));
  d = isl_set_add_dims(d, isl_dim_set, 2);
  d = isl_set_set_dim_id(d, isl_dim_set, n, isl_id_alloc(isl_context(), outer.c_str(), nullptr));
  d = isl_set_set_dim_id(d, isl_dim_set, n + 1, isl_id_alloc(isl_context(), inner.c_str(), nullptr));
  isl_space* sp = isl_set_get_space(d);
  auto on_set = [&](isl_pw_aff* pa) { return isl_pw_aff_insert_domain(pa, isl_space_copy(sp)); };
  auto var = [&](unsigned p) { return isl_pw_aff_var_on_domain(isl_local_space_from_space(isl_space_copy(sp)), isl_dim_set, p); };
  auto constant = [&](int64_t v) {
    return isl_pw_aff_val_on_domain(isl_set_universe(isl_space_copy(sp)), isl_val_int_from_si(isl_context(), long(v)));
  };
  isl_pw_aff* lo_s = on_set(lo);
  isl_pw_aff* len = isl_pw_aff_add(isl_pw_aff_sub(on_set(hi), isl_pw_aff_copy(lo_s)), constant(1));
  // c = floor((len + K - 1) / K)
  isl_pw_aff* c = isl_pw_aff_floor(isl_pw_aff_scale_down_val(isl_pw_aff_add(isl_pw_aff_copy(len), constant(num_chunks - 1)),
                                                             isl_val_int_from_si(isl_context(), long(num_chunks))));
  isl_set* pieces = nullptr;
  for (int64_t v = 0; v < num_chunks; ++v) {
    isl_set* p = isl_pw_aff_eq_set(var(n), constant(v));
    p = isl_set_intersect(p, isl_pw_aff_ge_set(var(n + 1), constant(0)));
    p = isl_set_intersect(p, isl_pw_aff_lt_set(var(n + 1), isl_pw_aff_copy(c)));
    // i = lo + v*c + i_inner
    isl_pw_aff* at = isl_pw_aff_add(isl_pw_aff_add(isl_pw_aff_copy(lo_s), isl_pw_aff_scale_val(isl_pw_aff_copy(c), isl_val_int_from_si(isl_context(), long(v)))),
                                    var(n + 1));
    p = isl_set_intersect(p, isl_pw_aff_eq_set(var(unsigned(pos)), at));
    pieces = pieces ? isl_set_union(pieces, p) : p;
  }
  isl_pw_aff_free(lo_s);
  isl_pw_aff_free(len);
  isl_pw_aff_free(c);
  isl_space_free(sp);
  d = isl_set_coalesce(isl_set_intersect(d, pieces));
  r.domains.edit()[size_t(dom)] = Domain(islu::check(d, "chunk_iname"));

  SplitRewriter rw(iname, make_var(iname), outer, inner, /*keep=*/true);
  for (auto& insn : r.instructions.edit()) {
    if (insn.rhs.defined()) insn.rhs = rw.mutate(insn.rhs);
    if (insn.within_inames.count(iname)) {
      insn.within_inames.insert(outer);
      insn.within_inames.insert(inner);
    }
  }
  transforms::rewrite_rule_bodies(r, {iname}, [&](const Expr& e) { return rw.mutate(e); });
  for (auto& prio : r.loop_priority.edit()) {
    auto it = std::find(prio.begin(), prio.end(), iname);
    if (it != prio.end()) it = prio.insert(prio.insert(it, inner), outer);
  }
  // `iname` innermost: its loop has one iteration there
  r.loop_priority.edit().push_back({outer, inner, iname});
  if (o.outer_tag && o.outer_tag->kind != InameTag::Seq) r.iname_tags.edit()[outer] = *o.outer_tag;
  if (o.inner_tag && o.inner_tag->kind != InameTag::Seq) r.iname_tags.edit()[inner] = *o.inner_tag;
  return r;
}

}  // namespace

LoopKernel chunk_iname(const LoopKernel& k, const std::string& iname, int64_t num_chunks, const SplitOptions& o) {
  const std::string what = "chunk_iname('" + iname + "', " + std::to_string(num_chunks) + ")";
  require_inames(k, what, {iname});
  if (num_chunks < 1) refuse(k, what, "the number of chunks must be at least 1");
  if (auto range = islu::constant_range(k, iname)) {
    int64_t len = range->second - range->first + 1;
    return split_iname(k, iname, std::max<int64_t>(1, (len + num_chunks - 1) / num_chunks), o);
  }
  return chunk_parametric_range(k, what, iname, num_chunks, o);
}

namespace {

// Puts the domains of `names` into one (their product) and returns its index:
// inames from separate domains (a prefetch's storage loops have one each) are
// independent, so the product is their set. A domain whose bounds use an
// iname of another one is not independent of it: refused.
int merge_domains_of(LoopKernel& r, const std::string& what, const std::vector<std::string>& names) {
  // First, each domain's inames coupled to none of `names` go to a domain of
  // their own: projecting the joined inames out leaves existentials, after
  // which an empty range of an unrelated iname (a reduction's k at l = 0)
  // would empty the domain of the instructions that do not run inside it.
  // Done per domain, while each is one basic set: after merging, a chunked
  // j's two pieces made a union the separation cannot take apart (a join of i
  // with j's outer iname skipped the whole product at l = 0,
  // LOOM_RANDOM_SEED=136).
  std::set<int> seen;
  for (auto& n : names) {
    int d = r.domain_of(n);
    if (d < 0 || !seen.insert(d).second) continue;
    std::vector<std::string> mine;
    for (auto& x : names)
      if (r.domains[size_t(d)].has_iname(x)) mine.push_back(x);
    if (auto parts = islu::separate_coupled(r.domains[size_t(d)], mine)) {
      r.domains.edit()[size_t(d)] = parts->first;
      r.domains.edit().push_back(parts->second);
    }
  }
  std::vector<int> doms;
  for (auto& n : names)
    if (int d = r.domain_of(n); std::find(doms.begin(), doms.end(), d) == doms.end()) doms.push_back(d);
  std::sort(doms.begin(), doms.end());
  for (int a : doms)
    for (int b : doms)
      for (auto& p : r.domains[size_t(a)].params())
        if (a != b && r.domains[size_t(b)].has_iname(p))
          refuse(r, what, "the domain of '" + r.domains[size_t(a)].inames().front() + "' depends on '" + p +
                              "', whose domain is joined with it");
  isl_set* s = r.domains[size_t(doms[0])].copy();
  for (size_t i = 1; i < doms.size(); ++i) s = isl_set_flat_product(s, r.domains[size_t(doms[i])].copy());
  r.domains.edit()[size_t(doms[0])] = Domain(islu::check(s, "join_inames"));
  for (size_t i = doms.size(); i-- > 1;) r.domains.edit().erase(r.domains.edit().begin() + doms[i]);
  return doms[0];
}

}  // namespace

namespace {

// A value passed through a temporary between two instructions that run
// within different (non-empty) subsets of the joined inames (a prefetch's storage loop
// and its reader's loop): joined, each runs once per iteration of the
// other's loops too, interleaved with them, so the reader would find values
// fetched for other iterations (a miscompile the GPU random test found).
void check_joined_temporaries(const LoopKernel& k, const std::string& what, const std::vector<std::string>& names) {
  auto joined_part = [&](const Instruction& insn) {
    std::string part;
    for (auto& n : names)
      if (insn.within_inames.count(n)) part += (part.empty() ? "" : ", ") + n;
    return part;
  };
  for (auto& w : k.instructions) {
    if (w.kind != Instruction::Assign || !k.find_temporary(w.assignee_name())) continue;
    std::string wp = joined_part(w);
    for (auto& r : k.instructions) {
      if (&r == &w || r.kind != Instruction::Assign || !r.reads(w.assignee_name())) continue;
      std::string rp = joined_part(r);
      if (rp == wp || rp.empty() || wp.empty()) continue;  // (one outside all of them: it keeps its loops)
      refuse(k, what, "instruction '" + r.id + "' reads temporary '" + w.assignee_name() + "', which '" + w.id + "' writes, and they run within '" +
                          rp + "' and '" + wp + "' of the joined inames: joined, each would also run in the other's iterations and the "
                          "reader would find values written for other iterations");
    }
  }
}

}  // namespace

namespace {
// The box of s's constant per-dimension bounds (a new set), or null when a
// bound is not a constant.
isl_set* constant_box(isl_set* s) {
  isl_set* box = isl_set_universe(isl_set_get_space(s));
  int n = int(isl_set_dim(s, isl_dim_set));
  for (int d = 0; d < n && box; ++d) {
    isl_val* lo = isl_set_dim_min_val(isl_set_copy(s), d);
    isl_val* hi = isl_set_dim_max_val(isl_set_copy(s), d);
    if (lo && hi && isl_val_is_int(lo) && isl_val_is_int(hi)) {
      box = isl_set_lower_bound_val(box, isl_dim_set, unsigned(d), lo);
      box = isl_set_upper_bound_val(box, isl_dim_set, unsigned(d), hi);
    } else {
      isl_val_free(lo);
      isl_val_free(hi);
      isl_set_free(box);
      box = nullptr;
    }
  }
  return box;
}
}  // namespace

namespace {

// A reduction over the joined inames reduces over the joined iname: its
// list names it once, where the first of them stood (the body is rewritten
// by the substitution of the joined inames like any other expression).
class JoinedReductionInames : public ExprMutator {
 public:
  JoinedReductionInames(const std::vector<std::string>& names, std::string joined) : names_(names), joined_(std::move(joined)) {}

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr body = mutate(r.body);
    std::vector<std::string> inames;
    bool any = false;
    for (auto& n : r.inames) {
      bool joined = std::find(names_.begin(), names_.end(), n) != names_.end();
      if (joined && !any) inames.push_back(joined_);
      if (!joined) inames.push_back(n);
      any |= joined;
    }
    if (!any && body.same_as(r.body)) return self;
    return make_reduce(r.op, inames, body, r.type);
  }

 private:
  const std::vector<std::string>& names_;
  std::string joined_;
};

}  // namespace

LoopKernel join_inames(const LoopKernel& k, const std::string& inames, const std::string& new_iname) {
  const std::string what = "join_inames('" + inames + "')";
  auto names = name_list(inames);
  require_inames(k, what, names);
  if (names.size() < 2) refuse(k, what, "give at least two inames, outermost first");
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (names[i] == names[j]) refuse(k, what, "'" + names[i] + "' is named twice; join distinct inames");
  for (auto& n : names)
    if (k.tag_of(n).kind != InameTag::Seq) refuse(k, what, "'" + n + "' is tagged; join before tagging");
  check_joined_temporaries(k, what, names);
  // a reduction over some of them and not the others would leave the
  // joined iname both reduced and not (a loop and a reduction at once)
  for (auto& insn : k.instructions) {
    transforms::ReductionsOver over({names.begin(), names.end()});
    if (insn.rhs.defined()) over.visit(insn.rhs);
    for (const Reduce* red : over.found)
      for (auto& n : names)
        if (std::find(red->inames.begin(), red->inames.end(), n) == red->inames.end())
          refuse(k, what, "instruction '" + insn.id + "' reduces over some of these inames and not the others; join inames that are all reduced or all not");
  }
  LoopKernel r = k;
  int dom = merge_domains_of(r, what, names);
  std::string nw = new_iname.empty() ? unique_iname(k, names[0] + "_" + names[1]) : new_iname;
  check_fresh(k, what, nw);
  // all but the outermost need constant ranges starting at 0: joined = ((i0 * L1 + i1) * L2 + i2) ...
  std::vector<int64_t> len(names.size(), 0);
  for (size_t i = 1; i < names.size(); ++i) {
    auto [lo, hi] = constant_bounds(k, what, names[i]);
    if (lo != 0) refuse(k, what, "'" + names[i] + "' must start at 0");
    len[i] = hi + 1;
  }
  // the new domain (merge_domains_of left it only the inames coupled to the joined ones): joined = sum(i_d * stride_d) over the old points, old inames projected out
  isl_set* s = r.domains[size_t(dom)].copy();
  unsigned n = unsigned(isl_set_dim(s, isl_dim_set));
  s = isl_set_add_dims(s, isl_dim_set, 1);
  s = isl_set_set_dim_id(s, isl_dim_set, n, isl_id_alloc(isl_set_get_ctx(s), nw.c_str(), nullptr));
  isl_local_space* ls = isl_local_space_from_space(isl_set_get_space(s));
  isl_constraint* eq = isl_equality_alloc(ls);
  eq = isl_constraint_set_coefficient_si(eq, isl_dim_set, int(n), -1);
  int64_t stride = 1;
  std::map<std::string, Expr> repl;
  Expr joined = make_var(nw);
  for (size_t i = names.size(); i-- > 0;) {
    int pos = isl_set_find_dim_by_name(s, isl_dim_set, names[i].c_str());
    eq = isl_constraint_set_coefficient_si(eq, isl_dim_set, pos, int(stride));
    // i_d = (joined // stride) % L_d (the outermost: joined // stride)
    Expr v = stride == 1 ? joined : make_binary(BinOp::FloorDiv, joined, make_int(stride));
    repl[names[i]] = i == 0 ? v : make_binary(BinOp::Mod, v, make_int(len[i]));
    if (i > 0) stride *= len[i];
  }
  s = isl_set_add_constraint(s, eq);
  for (auto& name : names) s = isl_set_project_out(s, isl_dim_set, unsigned(isl_set_find_dim_by_name(s, isl_dim_set, name.c_str())), 1);
  // Joined inames taken from different axes (a lane over rows and chunks of
  // a tile) leave floor divisions in the constraints that only restate the
  // box the parts ran over; when the set is a box of constant bounds, it is
  // written as that box (Loom's direct loop generator needs no existential
  // variables, isl's AST generator would stand in otherwise).
  if (isl_set* box = constant_box(s); box && isl_set_is_equal(box, s) == isl_bool_true) {
    isl_set_free(s);
    s = box;
  } else {
    isl_set_free(box);
  }
  r.domains.edit()[size_t(dom)] = Domain(islu::check(s, "join_inames"));
  for (auto& insn : r.instructions.edit()) {
    bool within = false;
    for (auto& name : names) within |= insn.within_inames.erase(name) > 0;
    if (within) insn.within_inames.insert(nw);
    if (insn.lhs.defined()) insn.lhs = substitute(insn.lhs, repl);
    if (insn.rhs.defined()) insn.rhs = JoinedReductionInames(names, nw).mutate(substitute(insn.rhs, repl));
    for (auto& p : insn.predicates) p = substitute(p, repl);
    transforms::update_origin(insn, [&](const Expr& e) { return substitute(e, repl); });
  }
  transforms::rewrite_rule_bodies(r, {names.begin(), names.end()}, [&](const Expr& e) { return substitute(e, repl); });
  for (auto& prio : r.loop_priority.edit())
    for (auto& x : prio)
      if (std::find(names.begin(), names.end(), x) != names.end()) x = nw;
  return r;
}

void register_iname_transforms(TransformRegistry& reg) {
  reg.add({"split_iname",
           "Split iname into an outer and an inner iname of inner_length iterations; a partial last tile is guarded.",
           {TransformParam{"iname", TransformParam::String, true, "the iname to split"}.of(TransformParam::Type::Iname).searched(TransformParam::Search::Inames),
            TransformParam{"inner_length", TransformParam::Int, true, "iterations of the inner iname"}.of(TransformParam::Type::Int).at_least(1).searched(TransformParam::Search::PowersOfTwoToExtent, "iname"),
            TransformParam{"outer_tag", TransformParam::Tag, false, "tag of the outer iname"}.of(TransformParam::Type::Tag).searched(TransformParam::Search::BlockTags),
            TransformParam{"inner_tag", TransformParam::Tag, false, "tag of the inner iname"}.of(TransformParam::Type::Tag).searched(TransformParam::Search::ThreadTags),
            TransformParam{"outer_iname", TransformParam::String, false, "name of the outer iname"}.of(TransformParam::Type::Name),
            TransformParam{"inner_iname", TransformParam::String, false, "name of the inner iname"}.of(TransformParam::Type::Name),
            TransformParam{"slabs", TransformParam::String, false, "two counts head,tail (e.g. 0,1): first/last iterations of the outer loop generated apart, without bounds checks"}.of(TransformParam::Type::Text),
            TransformParam{"within", TransformParam::String, false, "split only in the matching instructions (e.g. id:a); the others keep the iname"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) {
             SplitOptions o;
             if (a.has("slabs")) {
               std::string s = a.str("slabs");
               auto c = s.find(',');
               try {
                 if (c == std::string::npos) throw 0;
                 o.slabs = {std::stoi(s.substr(s.find_first_not_of("( ") == std::string::npos ? 0 : s.find_first_not_of("( "))),
                            std::stoi(s.substr(c + 1))};
               } catch (...) {
                 throw TransformError("split_iname on kernel '" + k.name + "': slabs= takes two iteration counts 'head,tail' (e.g. slabs=0,1), got '" + s + "'");
               }
             }
             o.outer_tag = a.tag("outer_tag");
             o.inner_tag = a.tag("inner_tag");
             if (a.has("outer_iname")) o.outer_iname = a.str("outer_iname");
             if (a.has("inner_iname")) o.inner_iname = a.str("inner_iname");
             if (a.has("within")) o.within = a.str("within");
             return split_iname(k, a.str("iname"), a.integer("inner_length"), o);
           }});
  using P = TransformParam;
  reg.add({"rename_iname",
           "Rename an iname everywhere; with existing_ok, onto an existing iname, joining the two loops (each instruction keeping its "
           "iterations).",
           {TransformParam{"iname", TransformParam::String, true, "the iname"}.of(TransformParam::Type::Iname),
            TransformParam{"new_iname", TransformParam::String, true, "its new name"}.of(TransformParam::Type::Name),
            TransformParam{"existing_ok", TransformParam::String, false, "new_iname may exist: the two loops become one"}
                .of(TransformParam::Type::Bool)
                .otherwise("false")},
           [](const LoopKernel& k, const TransformArgs& a) {
             return rename_iname(k, a.str("iname"), a.str("new_iname"), a.flag("existing_ok", false));
           }});
  reg.add({"untag_inames", "Remove the tags of inames ('i, j'): they become sequential loops.",
           {TransformParam{"inames", TransformParam::TagMap, true, "comma-separated inames"}.of(TransformParam::Type::Inames)},
           [](const LoopKernel& k, const TransformArgs& a) { return untag_inames(k, a.str("inames")); }});
  reg.add({"prioritize_loops", "Nest loops in this order where they nest: 'i, j, k' (outermost first).",
           {TransformParam{"inames", TransformParam::TagMap, true, "comma-separated inames"}.of(TransformParam::Type::Inames)},
           [](const LoopKernel& k, const TransformArgs& a) { return prioritize_loops(k, a.str("inames")); }});
  reg.add({"remove_unused_inames", "Drop inames no instruction uses from the domains.", {},
           [](const LoopKernel& k, const TransformArgs&) { return remove_unused_inames(k); }});
  reg.add({"duplicate_inames", "Give the matching instructions their own copy of inames (same range).",
           {TransformParam{"inames", TransformParam::String, true, "comma-separated inames"}.of(TransformParam::Type::Inames),
            TransformParam{"within", TransformParam::String, false, "match expression (default: all)"}.of(TransformParam::Type::Match),
            TransformParam{"new_inames", TransformParam::String, false, "comma-separated new names"}.of(TransformParam::Type::Names),
            TransformParam{"tags", TransformParam::String, false, "comma-separated tags of the copies"}.of(TransformParam::Type::Text)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return duplicate_inames(k, a.str("inames"), a.str_or("within", ""),
                                     a.str_or("new_inames", ""), a.str_or("tags", ""));
           }});
  reg.add({"chunk_iname", "Split an iname into num_chunks outer iterations of ceil(length / num_chunks) (a parameter range: at most 64 chunks).",
           {TransformParam{"iname", TransformParam::String, true, "the iname"}.of(TransformParam::Type::Iname).searched(TransformParam::Search::Inames),
            TransformParam{"num_chunks", TransformParam::Int, true, "iterations of the outer iname"}.of(TransformParam::Type::Int).at_least(1).searched(TransformParam::Search::PowersOfTwoToExtent, "iname"),
            TransformParam{"outer_tag", TransformParam::Tag, false, "tag of the outer iname"}.of(TransformParam::Type::Tag).searched(TransformParam::Search::BlockTags),
            TransformParam{"inner_tag", TransformParam::Tag, false, "tag of the inner iname"}.of(TransformParam::Type::Tag).searched(TransformParam::Search::ThreadTags)},
           [](const LoopKernel& k, const TransformArgs& a) {
             SplitOptions o;
             o.outer_tag = a.tag("outer_tag");
             o.inner_tag = a.tag("inner_tag");
             return chunk_iname(k, a.str("iname"), a.integer("num_chunks"), o);
           }});
  reg.add({"join_inames", "Join inames (outermost first; all but the first of constant range from 0) into one.",
           {TransformParam{"inames", TransformParam::String, true, "comma-separated inames"}.of(TransformParam::Type::Inames), TransformParam{"new_iname", TransformParam::String, false, "the joined iname"}.of(TransformParam::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return join_inames(k, a.str("inames"), a.str_or("new_iname", ""));
           }});
  reg.add({"tag_inames",
           "Tag inames: 'i:g.0, j:l.0' (g.N block axis, l.N thread axis, unr unrolled, ilp / ilp.unr / ilp.seq instruction-level parallelism, vec, for sequential).",
           {TransformParam{"tags", TransformParam::TagMap, true, "comma-separated iname:tag pairs"}.of(TransformParam::Type::TagMap)},
           [](const LoopKernel& k, const TransformArgs& a) { return tag_inames(k, a.str("tags")); }});
}

}  // namespace loom
