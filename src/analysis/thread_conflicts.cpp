// Dependences between threads and blocks through global memory, exactly,
// with isl (an analysis the preprocess checks, the linearizer's barrier
// placement and the transformations ask): two accesses to one element of a
// global array, at least one a write, by instances that run on different
// blocks, or on different threads of one block; whether an index tells a
// loop's iterations apart; whether a writer overwrites across iterations.
// An index isl cannot analyse (non-affine, read from memory) makes the
// answer unknown. An instruction that runs within no iname of a hardware
// axis runs on every index of that axis; its instances are placed on all of them.
#include <isl/map.h>
#include <isl/set.h>

#include <algorithm>
#include <regex>

#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/analysis.h"

namespace loom {

std::vector<std::string> inames_in_order(const LoopKernel& k, const Instruction& insn) {
  std::vector<std::string> v;
  for (auto& n : k.all_inames())
    if (insn.within_inames.count(n)) v.push_back(n);
  return v;
}

namespace {

// The hardware iname of insn on (kind, axis), or "".
std::string axis_iname(const LoopKernel& k, const Instruction& insn, InameTag::Kind kind, int axis) {
  for (auto& n : insn.within_inames)
    if (k.tag_of(n) == InameTag{kind, axis}) return n;
  return "";
}


isl::set renamed(isl::set s, const std::string& prefix) {
  isl_set* r = s.release();
  isl_size n = isl_set_dim(r, isl_dim_set);
  for (isl_size i = 0; i < n; ++i) {
    std::string name = prefix + isl_set_get_dim_name(r, isl_dim_set, unsigned(i));
    r = isl_set_set_dim_id(r, isl_dim_set, unsigned(i), isl_id_alloc(isl_context(), name.c_str(), nullptr));
  }
  return isl::manage(r);
}

Expr renamed(const Expr& e, const Instruction& insn, const std::string& prefix) {
  std::map<std::string, Expr> m;
  for (auto& n : insn.within_inames) m[n] = make_var(prefix + n);
  return substitute(e, m);
}

// p = q (or p < q) as a set on space.
isl::set relation(isl::pw_aff p, isl::pw_aff q, bool less) {
  return isl::manage(less ? isl_pw_aff_lt_set(p.release(), q.release()) : isl_pw_aff_eq_set(p.release(), q.release()));
}

}  // namespace

std::string pair_witness(const isl::set& s) {
  std::string w = islu::witness(s);
  w = std::regex_replace(w, std::regex(R"(src:(\w+))"), "$1 (first)");
  return std::regex_replace(w, std::regex(R"(dst:(\w+))"), "$1 (second)");
}

bool index_tells_iterations_apart(const LoopKernel& k, const Expr& a, const Expr& b, const std::string& x,
                                  const std::set<std::string>& fixed) {
  auto fa = affine_form(a), fb = affine_form(b);
  if (!fa || !fb || !(*fa == *fb) || !fa->coef.count(x)) return false;
  return std::all_of(fa->coef.begin(), fa->coef.end(),
                     [&](auto& c) { return c.first == x || fixed.count(c.first) || !k.has_iname(c.first); });
}

std::string overwritten_across_iterations(const LoopKernel& k, const Instruction& w, const std::string& x,
                                          const std::set<std::string>& outer) {
  auto s = w.lhs.as<Subscript>();
  if (!s || std::none_of(s->indices.begin(), s->indices.end(), [&](const Expr& i) { return mentions_var(i, x); }))
    return "scalar";
  // the same instance: the loops around x, the block, and for a private value the thread
  std::set<std::string> fixed = outer;
  const Temporary* t = k.find_temporary(w.assignee_name());
  bool priv = t && t->space == AddressSpace::Private;
  for (auto& n : w.within_inames)
    if (k.tag_of(n).kind == InameTag::Group || (priv && k.tag_of(n).is_hardware())) fixed.insert(n);
  for (auto& i : s->indices)
    if (index_tells_iterations_apart(k, i, i, x, fixed)) return "";
  isl::set pairs = element_pairs(k, w, *s, w, *s);
  if (pairs.is_null()) return "its indices are not affine, so isl cannot tell the iterations' elements apart";
  isl::space sp = pairs.space();
  auto var = [&](const std::string& side, const std::string& n) { return islu::pw_aff_from_expr(make_var(side + n), sp); };
  pairs = pairs.intersect(relation(var("src:", x), var("dst:", x), true));
  for (auto& n : fixed)
    if (w.within_inames.count(n)) pairs = pairs.intersect(relation(var("src:", n), var("dst:", n), false));
  if (pairs.is_empty()) return "";
  return pair_witness(pairs);
}

// The pairs of instances (a's at src:, b's at dst:) that touch one element
// through sa and sb; a null set when an index is not affine.
isl::set element_pairs(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb) {
  isl::set da = renamed(islu::iteration_domain(k, inames_in_order(k, a)), "src:");
  isl::set db = renamed(islu::iteration_domain(k, inames_in_order(k, b)), "dst:");
  isl_set* prod = isl_set_flat_product(isl_set_align_params(da.copy(), isl_set_get_space(db.get())),
                                       isl_set_align_params(db.copy(), isl_set_get_space(da.get())));
  isl::set pairs = isl::manage(islu::check(prod, "global_conflict"));
  if (k.assumptions.defined()) pairs = isl::manage(isl_set_intersect_params(pairs.release(), k.assumptions.copy()));
  if (sa.indices.size() != sb.indices.size()) return isl::manage(isl_set_empty(isl_set_get_space(pairs.get())));
  isl::space sp = pairs.space();
  for (size_t d = 0; d < sa.indices.size(); ++d) {
    isl::pw_aff ia = islu::pw_aff_from_expr(renamed(sa.indices[d], a, "src:"), sp);
    isl::pw_aff ib = islu::pw_aff_from_expr(renamed(sb.indices[d], b, "dst:"), sp);
    if (ia.is_null() || ib.is_null()) return isl::set();  // not analysable: may conflict anywhere
    pairs = pairs.intersect(relation(ia, ib, false));
  }
  return pairs;
}

namespace {

// The pairs of `base` whose coordinates on the hardware axes of `kind`
// differ (some axis); `same` gets those that agree on all of them.
isl::set differ_on(const LoopKernel& k, const Instruction& a, const Instruction& b, InameTag::Kind kind, const isl::set& base,
                   isl::set& same) {
  isl::space sp = base.space();
  isl::set differ = isl::manage(isl_set_empty(isl_set_get_space(base.get())));
  same = base;
  for (int axis = 0; axis < 3; ++axis) {
    std::string ha = axis_iname(k, a, kind, axis), hb = axis_iname(k, b, kind, axis);
    if (ha.empty() && hb.empty()) continue;  // both run on every index: a copy of each on the same one exists
    if (!ha.empty() && !hb.empty()) {
      isl::pw_aff pa = islu::pw_aff_from_expr(make_var("src:" + ha), sp), pb = islu::pw_aff_from_expr(make_var("dst:" + hb), sp);
      differ = differ.unite(base.intersect(relation(pa, pb, true))).unite(base.intersect(relation(pb, pa, true)));
      same = same.intersect(relation(pa, pb, false));
      continue;
    }
    // one runs on every index of the axis: it meets the other on another index too when the axis has more than one
    const std::string& h = ha.empty() ? hb : ha;
    auto range = islu::constant_range(k, h);
    if (!range || range->second > range->first) differ = differ.unite(base);
  }
  return differ;
}

}  // namespace

BlockConflict block_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb,
                             const std::vector<std::string>& common, bool same_thread_too) {
  BlockConflict r;
  isl::set pairs = element_pairs(k, a, sa, b, sb);
  if (pairs.is_null()) return {true, true, true};
  if (pairs.is_empty()) return r;
  isl::set same_block, same_thread;
  differ_on(k, a, b, InameTag::Group, pairs, same_block);
  isl::set threads = differ_on(k, a, b, InameTag::Local, same_block, same_thread);
  if (same_thread_too) threads = same_block;
  if (threads.is_empty()) return r;
  // lexicographic order of the two instances on the common loops
  isl::space sp = threads.space();
  isl::set equal = threads;
  isl::set a_first = isl::manage(isl_set_empty(isl_set_get_space(threads.get())));
  isl::set b_first = a_first;
  for (auto& n : common) {
    isl::pw_aff pa = islu::pw_aff_from_expr(make_var("src:" + n), sp), pb = islu::pw_aff_from_expr(make_var("dst:" + n), sp);
    if (pa.is_null() || pb.is_null()) return {true, true, true};
    a_first = a_first.unite(equal.intersect(relation(pa, pb, true)));
    b_first = b_first.unite(equal.intersect(relation(pb, pa, true)));
    equal = equal.intersect(relation(pa, pb, false));
  }
  r.same_iteration = !equal.is_empty();
  r.a_earlier = !a_first.is_empty();
  r.b_earlier = !b_first.is_empty();
  return r;
}

GlobalConflict global_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb) {
  GlobalConflict r;
  isl::set pairs = element_pairs(k, a, sa, b, sb);
  if (pairs.is_null()) {  // not analysable: may conflict anywhere
    r.unknown = true;
    r.across_blocks = r.across_threads = true;
    return r;
  }
  if (pairs.is_empty()) return r;
  isl::set same_block;
  isl::set blocks = differ_on(k, a, b, InameTag::Group, pairs, same_block);
  if (!blocks.is_empty()) {
    r.across_blocks = true;
    r.witness = pair_witness(blocks);
  }
  isl::set same_thread;
  isl::set threads = differ_on(k, a, b, InameTag::Local, same_block, same_thread);
  if (!threads.is_empty()) {
    r.across_threads = true;
    if (r.witness.empty()) r.witness = pair_witness(threads);
  }
  return r;
}

}  // namespace loom
