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
// itself: `{nosync=<its id>}`) or the index is `f % q` with f affine and its
// values spanning fewer than q (then as injective as f); a read through one is allowed, and an
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

// Whether an instruction that reads the element it writes (x[i] = x[i] + v)
// does so on one thread of its block only: each local hardware iname it runs
// within is pinned by a predicate (iname == c, as a parallel reduction's
// store to memory is: its first lane writes) or names the element (the
// write is injective in it, or its race is refused elsewhere).
bool read_on_the_writing_thread(const LoopKernel& k, const Instruction& insn, const Subscript& write, const Subscript& read) {
  if (write.indices.size() != read.indices.size()) return false;
  for (size_t d = 0; d < write.indices.size(); ++d)
    if (!write.indices[d].same_as(read.indices[d])) return false;
  std::set<std::string> pinned;
  for (auto& p : insn.predicates)
    if (auto b = p.as<Binary>(); b && b->op == BinOp::Eq && b->b.as<IntImm>())
      if (auto v = b->a.as<Var>()) pinned.insert(v->name);
  bool any = false;
  for (auto& n : insn.within_inames) {
    if (k.tag_of(n).kind != InameTag::Local) continue;
    bool names_element = false;
    for (auto& e : write.indices) names_element |= mentions_var(e, n);
    if (!pinned.count(n) && !names_element) return false;
    any |= pinned.count(n) > 0;
  }
  return any;
}

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

// Whether a write whose indices isl cannot read is still one element per
// instance: every such index is `f % q` (f affine, q a parameter or a
// positive constant, loopy's rotate: arr[(i + 1) % n]) where f's values on
// the domain span fewer than q, so that two instances meet modulo q only
// where they meet in f; and the indices with f in place of `f % q` are
// injective on the domain.
bool modulo_write_is_injective(const LoopKernel& k, const Instruction& w, const Subscript& ws) {
  isl::set dom = islu::iteration_domain(k, inames_in_order(k, w));
  if (k.assumptions.defined()) dom = isl::manage(isl_set_intersect_params(dom.release(), islu::to_isl(k.assumptions).release()));
  isl::space space = dom.space();
  isl_pw_aff_list* list = isl_pw_aff_list_alloc(isl_context(), int(ws.indices.size()));
  bool ok = true;
  for (auto& index : ws.indices) {
    isl::pw_aff p = islu::pw_aff_from_expr(index, space);
    auto b = index.as<Binary>();
    if (p.is_null() && b && (b->op == BinOp::Mod || b->op == BinOp::TruncRem)) {
      isl::pw_aff f = islu::pw_aff_from_expr(b->a, space), q = islu::pw_aff_from_expr(b->b, space);
      if (f.is_null() || q.is_null()) {  // (a null isl object may not be copied)
        isl_pw_aff_list_free(list);
        isl_ctx_reset_error(isl_context());
        return false;
      }
      ok = !f.is_null() && !q.is_null() && isl_pw_aff_involves_dims(q.get(), isl_dim_in, 0, unsigned(isl_space_dim(space.get(), isl_dim_set))) == isl_bool_false;
      if (ok) {
        // f's values: their largest minus their smallest stays below q
        isl::set values = isl::manage(isl_map_range(isl_map_from_pw_aff(isl_pw_aff_intersect_domain(f.copy(), dom.copy()))));
        isl::pw_aff hi = isl::manage(isl_set_dim_max(values.copy(), 0)), lo = isl::manage(isl_set_dim_min(values.copy(), 0));
        isl::pw_aff span = isl::manage(isl_pw_aff_sub(hi.release(), lo.release()));
        isl::pw_aff qp = isl::manage(isl_pw_aff_project_domain_on_params(q.copy()));
        isl::set too_wide = isl::manage(isl_pw_aff_ge_set(span.release(), qp.release()));
        ok = isl_set_is_empty(too_wide.get()) == isl_bool_true;
      }
      p = std::move(f);
    }
    if (p.is_null() || !ok) {
      isl_pw_aff_list_free(list);
      isl_ctx_reset_error(isl_context());
      return false;
    }
    list = isl_pw_aff_list_add(list, p.release());
  }
  isl_space* range = isl_space_add_dims(isl_space_set_from_params(isl_space_params(space.copy())), isl_dim_set, unsigned(ws.indices.size()));
  isl_map* m = isl_map_from_multi_pw_aff(isl_multi_pw_aff_from_pw_aff_list(isl_space_map_from_domain_and_range(space.copy(), range), list));
  m = isl_map_intersect_domain(m, dom.release());
  isl_bool injective = isl_map_is_injective(m);
  isl_map_free(m);
  isl_ctx_reset_error(isl_context());
  return injective == isl_bool_true;
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
    if (parallel(k, w) && !declared && !affine && !modulo_write_is_injective(k, w, *ws)) {  // (affine with integer coefficients: isl reads it; no need to ask)
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
      if (!is_parallel[size_t(&w - k.instructions->data())] && !is_parallel[other_index]) continue;
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
        if (c.across_threads && self && !read_on_the_writing_thread(k, w, *ws, *r))
          throw KernelError(pre + "instruction '" + w.id + "' reads " + r->name + " at an element that another thread of the block writes "
                            "in the same instruction, which no barrier can order" + (c.witness.empty() ? "" : " (for " + c.witness + ")"));
      }
    }
  }
}

}  // namespace loom
