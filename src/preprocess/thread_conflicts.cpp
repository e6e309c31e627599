// Dependences between threads and blocks through global memory, exactly,
// with isl: two accesses to one element of a global array, at least one a
// write, by instances that run on different blocks, or on different threads
// of one block. Across blocks nothing orders them: check_global_dependences
// refuses the kernel and names both accesses, the array and a witness (the
// parameters and both iterations). Within a block, a barrier orders two
// different instructions (place_local_barriers asks global_conflict), but not
// one instruction with itself across threads (refused). A write through an
// index isl cannot analyse (non-affine, read from memory) on a parallel iname
// is refused unless the instruction is declared race-free (`nosync` with
// itself: `{nosync=<its id>}`); a read through one is allowed, and an
// instruction that reads such an array's element some other thread writes
// is treated as conflicting.
//
// An instruction that runs within no iname of a hardware axis runs on every
// index of that axis; its instances are placed on all of them.
#include <isl/map.h>
#include <isl/set.h>

#include <algorithm>
#include <regex>

#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

// The hardware iname of insn on (kind, axis), or "".
std::string axis_iname(const LoopKernel& k, const Instruction& insn, InameTag::Kind kind, int axis) {
  for (auto& n : insn.within_inames)
    if (k.tag_of(n) == InameTag{kind, axis}) return n;
  return "";
}

std::vector<std::string> inames_in_order(const LoopKernel& k, const Instruction& insn) {
  std::vector<std::string> v;
  for (auto& n : k.all_inames())
    if (insn.within_inames.count(n)) v.push_back(n);
  return v;
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

namespace {

bool is_global_array(const LoopKernel& k, const std::string& n) {
  const Argument* a = k.find_argument(n);
  return a && a->kind == Argument::Array;
}

void global_reads(const Instruction& insn, const LoopKernel& k, std::vector<const Subscript*>& out) {
  auto look = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) {
        if (is_global_array(k, s.name)) out.push_back(&s);
      });
  };
  look(insn.rhs);
  for (auto& p : insn.predicates) look(p);
  if (auto s = insn.lhs.as<Subscript>())
    for (auto& i : s->indices) look(i);
}

bool parallel(const LoopKernel& k, const Instruction& insn) {
  for (auto& n : insn.within_inames)
    if (k.tag_of(n).is_hardware()) return true;
  return false;
}

}  // namespace

void check_global_dependences(const LoopKernel& k) {
  bool any_hw = false;
  for (auto& [n, t] : k.iname_tags) any_hw |= t.is_hardware() && k.has_iname(n);
  if (!any_hw) return;
  const std::string pre = "kernel '" + k.name + "': ";
  std::vector<std::string> params = k.parameters();
  auto is_parameter = [&](const std::string& v) { return std::find(params.begin(), params.end(), v) != params.end(); };
  // the reads of each global array, by instruction (once: a kernel of many
  // instructions over many arrays would otherwise be quadratic)
  std::map<std::string, std::vector<std::pair<size_t, const Subscript*>>> reads_of;
  std::vector<bool> is_parallel(k.instructions.size(), false);
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& other = k.instructions[i];
    if (other.kind != Instruction::Assign) continue;
    is_parallel[i] = parallel(k, other);
    std::vector<const Subscript*> reads;
    global_reads(other, k, reads);
    for (auto* r : reads) reads_of[r->name].push_back({i, r});
  }
  for (auto& w : k.instructions) {
    auto ws = w.lhs.as<Subscript>();
    if (w.kind != Instruction::Assign || !ws || !is_global_array(k, ws->name)) continue;
    bool declared = w.no_sync_with.count(w.id) != 0 || w.atomic;
    // a write through an index isl cannot analyse, on a parallel iname
    bool affine = std::all_of(ws->indices.begin(), ws->indices.end(), [&](const Expr& e) {
      auto f = affine_form(e);
      if (!f) return false;
      for (auto& [v, c] : f->coef)  // in inames and parameters only (a temporary's value is data)
        if (!k.has_iname(v) && !is_parameter(v)) return false;
      return true;
    });
    if (parallel(k, w) && !declared && !affine) {  // (affine with integer coefficients: isl reads it; no need to ask)
      isl::set dom = islu::iteration_domain(k, inames_in_order(k, w));
      for (size_t d = 0; d < ws->indices.size(); ++d)
        if (islu::pw_aff_from_expr(ws->indices[d], dom.space()).is_null())
          throw KernelError(pre + "instruction '" + w.id + "' writes " + ws->name + " through index " + ws->indices[d].str() +
                            ", which Loom cannot analyse, on parallel inames: several threads may write one element. Declare it "
                            "race-free with {nosync=" + w.id + "} if the index is injective, make it an atomic update ({atomic}: " +
                            ws->name + "[...] = " + ws->name + "[...] + value), or run it sequentially");
    }
    auto readers = reads_of.find(ws->name);
    if (readers == reads_of.end()) continue;
    for (auto& [other_index, r] : readers->second) {
      const Instruction& other = k.instructions[other_index];
      if (!is_parallel[size_t(&w - k.instructions.data())] && !is_parallel[other_index]) continue;
      {
        bool self = &other == &w;
        if (w.no_sync_with.count(other.id) || other.no_sync_with.count(w.id)) continue;
        if (self && w.atomic) continue;  // the read is part of the atomic update
        GlobalConflict c = global_conflict(k, w, *ws, other, *r);
        std::string what = self ? "instruction '" + w.id + "' reads " + r->name + " at an element that another block writes"
                                : "instruction '" + w.id + "' writes " + ws->name + " and instruction '" + other.id + "' reads " +
                                      (c.unknown ? "it through an index Loom cannot analyse" : "an element of it that the other writes");
        if (c.across_blocks)
          throw KernelError(pre + what + ", in different blocks, which nothing can order" +
                            (c.witness.empty() ? "" : " (for " + c.witness + ")") + "; keep the dependent inames sequential or in one block");
        if (c.across_threads && self)
          throw KernelError(pre + "instruction '" + w.id + "' reads " + r->name + " at an element that another thread of the block writes "
                            "in the same instruction, which no barrier can order" + (c.witness.empty() ? "" : " (for " + c.witness + ")"));
      }
    }
  }
}

}  // namespace loom
