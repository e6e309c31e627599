// realize_reductions: sum/product/max/min/argmax/argmin become instructions.
//
// Sequential (no reduction iname is a thread iname): a private accumulator,
// an init instruction within the instruction's inames, and an update within
// those plus the reduction's inames; the reduction's value is the
// accumulator. argmax/argmin keep (value, index) pairs; ties go to the
// smallest index. Nested reductions realize inside their enclosing update.
//
// Parallel (one reduction iname p is tagged l.N; loopy's tree reduction):
// each thread reduces its share of the other reduction inames into a private
// partial, writes it to a local buffer slot [other thread inames..., p], and
// after a barrier log2(extent) stages halve the live slots
// (buf[p] = op(buf[p], buf[p + s]) for p < s, barrier after each); the
// result is buf[..., 0]. An instruction that stores it to memory runs on the
// threads with p at its lower bound only (one writer), and when the
// reduction sits in a sequential loop a barrier after the instruction keeps
// the next iteration from overwriting the buffer early. Both targets run
// this as it is: it is plain instructions, local memory and barriers.
// Reductions over block inames (g.N) are refused (they need a second kernel
// or atomics).
#include <cmath>
#include <limits>

#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

// An arg reduction whose result is the index (argmax, argmin), not the value.
bool gives_index(ReduceOp op) { return is_arg_reduction(op) && !is_arg_value_reduction(op); }
bool maximizes(ReduceOp op) { return op == ReduceOp::ArgMax || op == ReduceOp::ArgMaxValue; }

Expr neutral(ReduceOp op, Type t) {
  auto f = [&](double v) { return t.is_float() ? make_float(v, t) : make_int(int64_t(v), t); };
  switch (op) {
    case ReduceOp::Sum: return f(0);
    case ReduceOp::Product: return f(1);
    case ReduceOp::Max: case ReduceOp::ArgMax: case ReduceOp::ArgMaxValue:
      if (t.is_float()) return make_float(-std::numeric_limits<double>::infinity(), t);
      if (!t.is_signed_int()) return make_int(0, t);
      return make_int(t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits() - 1)), t);
    case ReduceOp::Min: case ReduceOp::ArgMin: case ReduceOp::ArgMinValue:
      if (t.is_float()) return make_float(std::numeric_limits<double>::infinity(), t);
      if (t.bits() == 64) return make_int(t.is_signed_int() ? std::numeric_limits<int64_t>::max() : -1, t);
      return make_int(t.is_signed_int() ? (int64_t(1) << (t.bits() - 1)) - 1 : (int64_t(1) << t.bits()) - 1, t);
  }
  return Expr();
}

Expr combine(ReduceOp op, Expr acc, Expr x, Type t) {
  switch (op) {
    case ReduceOp::Sum: return make_binary(BinOp::Add, acc, x, t);
    case ReduceOp::Product: return make_binary(BinOp::Mul, acc, x, t);
    case ReduceOp::Max: return make_call("max", {acc, x}, t);
    case ReduceOp::Min: return make_call("min", {acc, x}, t);
    default: return Expr();
  }
}

// Whether candidate (v, i) replaces current (cv, ci) in an arg reduction.
Expr better(ReduceOp op, const Expr& v, const Expr& i, const Expr& cv, const Expr& ci) {
  BinOp strict = maximizes(op) ? BinOp::Gt : BinOp::Lt;
  Expr wins = make_binary(strict, v, cv, types::boolean);
  Expr tie = make_binary(BinOp::And, make_binary(BinOp::Eq, v, cv, types::boolean),
                         make_binary(BinOp::Lt, i, ci, types::boolean), types::boolean);
  return make_binary(BinOp::Or, wins, tie, types::boolean);
}

// A reduction's accumulators: its value, its index (argmax/argmin) and the
// instruction that updates them last.
struct Partial {
  Expr value, index;
  std::string last;
};

class Realizer : public ExprMutator {
 public:
  Realizer(LoopKernel& k, const Instruction& insn, std::vector<Instruction>& out, int warp_size)
      : k_(k), insn_(insn), out_(out), scope_(insn.within_inames), warp_size_(warp_size) {}
  std::set<std::string> final_updates;  // what the rewritten instruction must wait for
  std::vector<std::string> parallel_inames;  // thread inames reduced over in parallel
  bool in_sequential_loop = false;
  Partial last_sequential;  // the accumulators of the last sequential reduction realized

  // Whether instruction `id` runs inside a loop this instruction reduces over
  // that a part running in `inames` is outside of.
  bool runs_in_other_loop(const std::string& id, const std::set<std::string>& inames) {
    if (!reduced_known_) {
      collect_reduction_inames(insn_.rhs, reduced_);
      reduced_known_ = true;
    }
    for (auto& other : k_.instructions) {
      if (other.id != id) continue;
      for (auto& n : other.within_inames)
        if (reduced_.count(n) && !inames.count(n)) return true;
      return false;  // (ids are unique)
    }
    return false;
  }

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr&) override {
    std::vector<std::string> local, seq;
    for (auto& n : r.inames) {
      if (scope_.count(n)) fail("reduces over '" + n + "', but the instruction already runs within '" + n + "'");
      InameTag t = k_.tag_of(n);
      if (t.kind == InameTag::Group)
        fail("reduction over '" + n + "', which is tagged '" + t.str() +
             "': a reduction across blocks needs a second kernel; reduce over thread (l.N) or sequential inames");
      (t.kind == InameTag::Local ? local : seq).push_back(n);
    }
    if (local.size() > 1)
      fail("reduction over several thread inames at once (" + local[0] + ", " + local[1] +
           "): split it first (split_reduction_inward/outward)");
    if (local.empty()) return sequential(r, r.inames);
    return parallel(r, local[0], seq);
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw KernelError("kernel '" + k_.name + "', instruction '" + insn_.id + "': " + why);
  }
  std::string unique_name(const std::string& base) {
    std::string n = base;
    for (int i = 0; k_.find_temporary(n) || k_.find_argument(n) || k_.has_iname(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }
  std::string unique_id(const std::string& base) {
    auto taken = [&](const std::string& id) {
      for (auto& i : k_.instructions)
        if (i.id == id) return true;
      for (auto& i : out_)
        if (i.id == id) return true;
      return false;
    };
    std::string n = base;
    for (int i = 0; taken(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }
  std::string temp(const std::string& base, Type t, std::vector<Expr> shape = {}, AddressSpace sp = AddressSpace::Private) {
    std::string n = unique_name(base);
    k_.temporaries.edit()[n] = Temporary{n, t, std::move(shape), sp, {}, {}};
    return n;
  }
  // (returns a reference into out_: read what is needed before the next emit)
  Instruction& emit(const std::string& id, Expr lhs, Expr rhs, std::set<std::string> inames, std::set<std::string> deps,
                    std::vector<Expr> extra_predicates = {}) {
    Instruction i;
    i.id = unique_id(id);
    i.lhs = std::move(lhs);
    i.rhs = std::move(rhs);
    i.within_inames = std::move(inames);
    i.inames_given = true;
    // The instruction's own dependencies, except those on instructions inside
    // a reduction loop that this part is outside of: a fetch inside the
    // reduction loop feeds the update, and the accumulator's init before
    // that loop cannot wait for it (the wait would be a cycle).
    for (auto& d : insn_.depends_on)
      if (!runs_in_other_loop(d, i.within_inames)) i.depends_on.insert(d);
    i.depends_on.insert(deps.begin(), deps.end());
    i.predicates = insn_.predicates;
    i.predicates.insert(i.predicates.end(), extra_predicates.begin(), extra_predicates.end());
    i.priority = insn_.priority;
    i.loc = insn_.loc;
    // a part of the reduction's instances (its update runs over the reduced
    // inames too): the reorder check follows its accesses to the instruction
    // as written (the sum's reads of an array the kernel writes)
    if (insn_.origin) {
      i.origin = insn_.origin;
      i.origin_of = insn_.origin_of.empty() ? insn_.id : insn_.origin_of;
      i.origin_part = true;
    }
    out_.push_back(i);
    return out_.back();
  }
  Instruction& barrier(const std::string& id, std::set<std::string> deps) {
    Instruction b;
    b.kind = Instruction::Barrier;
    b.id = unique_id(id);
    for (auto& n : scope_)
      if (k_.tag_of(n).kind != InameTag::Local) b.within_inames.insert(n);
    b.inames_given = true;
    b.depends_on = deps;
    b.loc = insn_.loc;
    out_.push_back(b);
    return out_.back();
  }

  // The body with nested reductions realized inside `inames`.
  Expr realize_body(const Expr& body, const std::vector<std::string>& inames, std::set<std::string>& inner_updates) {
    std::set<std::string> saved = scope_, saved_final = final_updates;
    scope_.insert(inames.begin(), inames.end());
    final_updates.clear();
    Expr b = mutate(body);
    inner_updates = final_updates;
    scope_ = saved;
    final_updates = saved_final;
    return b;
  }

  // Accumulates body over `inames` (sequentially) within the current scope
  // plus `extra`; returns the value expression and the instruction to wait for.
  // init_within: inames the initialization runs within; update_within: those
  // the updates run within besides `inames` (the body realizes there).
  Partial accumulate(const Reduce& r, const std::vector<std::string>& inames, const std::set<std::string>& init_within,
                     const std::set<std::string>& update_within) {
    std::set<std::string> base = init_within;
    std::set<std::string> inner;
    std::set<std::string> saved = scope_;
    scope_ = update_within;
    Expr body = realize_body(r.body, inames, inner);
    scope_ = saved;
    std::set<std::string> within = update_within;
    within.insert(inames.begin(), inames.end());
    std::string who = insn_.assignee_name();
    if (!is_arg_reduction(r.op)) {
      std::string acc = temp("acc_" + who, r.type);
      std::string init = emit(insn_.id + "_" + acc + "_init", make_var(acc, r.type), neutral(r.op, r.type), base, {}).id;
      std::set<std::string> deps = inner;
      deps.insert(init);
      Instruction& upd = emit(insn_.id + "_" + acc + "_update", make_var(acc, r.type),
                              combine(r.op, make_var(acc, r.type), body, r.type), within, deps);
      return {make_var(acc, r.type), Expr(), upd.id};
    }
    // argmax/argmin: (value, index) with the first index on ties
    Expr index = body.as<Call>()->args[1];
    body = body.as<Call>()->args[0];
    Type vt = body.type(), it = k_.options.index_dtype;
    std::string val = temp("acc_" + who + "_value", vt), idx = temp("acc_" + who + "_index", it);
    std::string take = temp("acc_" + who + "_take", types::boolean);
    std::string iv = emit(insn_.id + "_" + val + "_init", make_var(val, vt), neutral(r.op, vt), base, {}).id;
    std::string ii = emit(insn_.id + "_" + idx + "_init", make_var(idx, it), make_int(-1, it), base, {}).id;
    const Expr& j = index;
    std::set<std::string> deps = inner;
    deps.insert(iv);
    deps.insert(ii);
    // (the first candidate always wins over the empty start, index -1)
    Expr cond = make_binary(BinOp::Or, better(r.op, body, j, make_var(val, vt), make_var(idx, it)),
                            make_binary(BinOp::Eq, make_var(idx, it), make_int(-1, it), types::boolean), types::boolean);
    Instruction& tk = emit(insn_.id + "_" + take, make_var(take, types::boolean), cond, within, deps);
    Instruction& ui = emit(insn_.id + "_" + idx + "_update", make_var(idx, it),
                           make_select(make_var(take, types::boolean), j, make_var(idx, it), it), within, {tk.id});
    Instruction& uv = emit(insn_.id + "_" + val + "_update", make_var(val, vt),
                           make_select(make_var(take, types::boolean), body, make_var(val, vt), vt), within, {ui.id});
    return {make_var(val, vt), make_var(idx, it), uv.id};
  }

  Expr sequential(const Reduce& r, const std::vector<std::string>& inames) {
    Partial p = accumulate(r, inames, scope_, scope_);
    final_updates.insert(p.last);
    last_sequential = p;
    return gives_index(r.op) ? p.index : p.value;
  }

  std::pair<int64_t, int64_t> constant_range(const std::string& iname) {
    auto r = islu::constant_range(k_, iname);
    if (!r) fail("the thread iname '" + iname + "' needs a constant range");
    return *r;
  }

  Expr parallel(const Reduce& r, const std::string& p, const std::vector<std::string>& seq) {
    Type it = k_.options.index_dtype;
    auto [plo, phi] = constant_range(p);
    int64_t extent = phi - plo + 1;
    // Every thread of the axis takes part, also those for which p's domain
    // (coupled to the sequential reduction inames, e.g. a partial last tile)
    // is empty: the buffer slots, the stages and the result use `pr`, a copy
    // of p over its whole range on the same axis (the same thread index).
    std::string pr = unique_name(p + "_red");
    {
      std::string set = "{[" + pr + "]: " + std::to_string(plo) + " <= " + pr + " <= " + std::to_string(phi) + "}";
      k_.domains.edit().push_back(Domain::parse(set));
      k_.iname_tags.edit()[pr] = k_.tag_of(p);
    }
    if (warp_eligible(p, plo, extent, r.op)) return warp(r, p, pr, seq, extent);
    // one buffer slot per thread: the other thread inames in scope, then pr
    std::vector<Expr> shape, slot;
    for (auto& n : k_.all_inames())
      if (scope_.count(n) && k_.tag_of(n).kind == InameTag::Local) {
        auto [lo, hi] = constant_range(n);
        shape.push_back(make_int(hi - lo + 1, it));
        slot.push_back(simplify(make_binary(BinOp::Sub, make_var(n, it), make_int(lo, it), it)));
      }
    shape.push_back(make_int(extent, it));
    Expr pos = simplify(make_binary(BinOp::Sub, make_var(pr, it), make_int(plo, it), it));
    Expr pos_p = simplify(make_binary(BinOp::Sub, make_var(p, it), make_int(plo, it), it));
    auto at = [&](const std::string& buf, Type t, Expr last) {
      std::vector<Expr> idx = slot;
      idx.push_back(std::move(last));
      return make_subscript(buf, idx, t);
    };
    std::set<std::string> with_pr = scope_, with_p = scope_;
    with_pr.insert(pr);
    with_p.insert(p);
    std::string who = insn_.assignee_name();
    Type vt = is_arg_reduction(r.op) ? r.body.as<Call>()->args[0].type() : r.type;
    // 1. each thread's partial (its share of the sequential inames), into the buffer
    std::string vbuf = temp("red_" + who, vt, shape, AddressSpace::Local);
    std::string ibuf = is_arg_reduction(r.op) ? temp("red_" + who + "_index", it, shape, AddressSpace::Local) : "";
    std::set<std::string> stores;
    if (seq.empty()) {
      // every slot starts neutral; the threads in p's domain then store their value
      std::set<std::string> inits{emit(insn_.id + "_" + vbuf + "_init", at(vbuf, vt, pos), neutral(r.op, vt), with_pr, {}).id};
      if (is_arg_reduction(r.op)) inits.insert(emit(insn_.id + "_" + ibuf + "_init", at(ibuf, it, pos), make_int(-1, it), with_pr, {}).id);
      std::set<std::string> inner;
      std::set<std::string> saved = scope_;
      scope_ = with_p;
      Expr body = realize_body(r.body, {}, inner);
      scope_ = saved;
      inner.insert(inits.begin(), inits.end());
      stores = inits;
      Expr value = is_arg_reduction(r.op) ? body.as<Call>()->args[0] : body;
      stores.insert(emit(insn_.id + "_" + vbuf + "_store", at(vbuf, vt, pos_p), value, with_p, inner).id);
      if (is_arg_reduction(r.op))
        stores.insert(emit(insn_.id + "_" + ibuf + "_store", at(ibuf, it, pos_p), body.as<Call>()->args[1], with_p, inner).id);
    } else {
      std::set<std::string> init = scope_, update = scope_;
      init.insert(pr);
      update.insert(p);
      Partial part = accumulate(r, seq, init, update);
      stores.insert(emit(insn_.id + "_" + vbuf + "_store", at(vbuf, vt, pos), part.value, with_pr, {part.last}).id);
      if (is_arg_reduction(r.op))
        stores.insert(emit(insn_.id + "_" + ibuf + "_store", at(ibuf, it, pos), part.index, with_pr, {part.last}).id);
    }
    std::string last = barrier(insn_.id + "_" + vbuf + "_barrier", stores).id;
    // 2. the tree: stage s combines slot p with slot p + s, for p < s (and p + s < extent)
    int64_t s = 1;
    while (s < extent) s *= 2;
    for (s /= 2; s >= 1; s /= 2) {
      Expr other = simplify(make_binary(BinOp::Add, pos, make_int(s, it), it));
      std::vector<Expr> guard{make_binary(BinOp::Lt, pos, make_int(s, it), types::boolean)};
      if (2 * s > extent)  // only then can p + s run past the last slot
        guard.push_back(make_binary(BinOp::Lt, other, make_int(extent, it), types::boolean));
      std::string stage = insn_.id + "_" + vbuf + "_stage" + std::to_string(s);
      std::set<std::string> done;
      if (!is_arg_reduction(r.op)) {
        done.insert(emit(stage, at(vbuf, vt, pos), combine(r.op, at(vbuf, vt, pos), at(vbuf, vt, other), vt), with_pr, {last}, guard).id);
      } else {
        std::string take = temp("red_" + who + "_take", types::boolean);
        Expr cond = better(r.op, at(vbuf, vt, other), at(ibuf, it, other), at(vbuf, vt, pos), at(ibuf, it, pos));
        // an empty slot (index -1) never wins; a full one always wins over an empty one
        cond = make_binary(BinOp::And, make_binary(BinOp::Ne, at(ibuf, it, other), make_int(-1, it), types::boolean),
                           make_binary(BinOp::Or, cond, make_binary(BinOp::Eq, at(ibuf, it, pos), make_int(-1, it), types::boolean),
                                       types::boolean),
                           types::boolean);
        std::string tk = emit(stage + "_take", make_var(take, types::boolean), cond, with_pr, {last}, guard).id;
        Instruction& ui = emit(stage + "_index", at(ibuf, it, pos),
                               make_select(make_var(take, types::boolean), at(ibuf, it, other), at(ibuf, it, pos), it), with_pr,
                               {tk}, guard);
        // slots p < s are written, slots p + s >= s read: no thread reads what another writes in one stage
        ui.no_sync_with.insert(tk);
        std::string ui_id = ui.id;
        Instruction& uv = emit(stage + "_value", at(vbuf, vt, pos),
                               make_select(make_var(take, types::boolean), at(vbuf, vt, other), at(vbuf, vt, pos), vt), with_pr,
                               {ui_id}, guard);
        uv.no_sync_with.insert(tk);
        uv.no_sync_with.insert(ui_id);
        done.insert(uv.id);
      }
      last = barrier(stage + "_barrier", done).id;
    }
    final_updates.insert(last);
    parallel_inames.push_back(pr);
    for (auto& n : scope_)
      if (!k_.tag_of(n).is_hardware()) in_sequential_loop = true;
    return gives_index(r.op) ? at(ibuf, it, make_int(0, it)) : at(vbuf, vt, make_int(0, it));
  }

  // Warp shuffles instead of a shared-memory tree: the reduction iname is
  // the block's whole x axis (l.0 from 0, a power of two of at most the
  // target's warp size), so each group of `extent` lanes is aligned in a warp and is
  // one row of the block: a guard on another axis is the same for all its
  // lanes, and the shuffles name the group's lanes only (cuda_printer).
  bool warp_eligible(const std::string& p, int64_t plo, int64_t extent, ReduceOp op) {
    if (is_arg_reduction(op) || plo != 0 || extent > warp_size_ || (extent & (extent - 1)) != 0) return false;
    if (!(k_.tag_of(p) == InameTag{InameTag::Local, 0})) return false;
    for (auto& n : k_.all_inames()) {
      InameTag t = k_.tag_of(n);
      if (t.kind != InameTag::Local) continue;
      if (t.axis != 0) continue;
      auto [lo, hi] = constant_range(n);
      if (lo != 0 || hi - lo + 1 > extent) return false;
    }
    return conditions_are_lane_uniform();
  }

  // The shuffles run under the instruction's conditions, so these must hold
  // for all lanes of a group or for none (lane_uniformity.cpp).
  bool conditions_are_lane_uniform() const {
    if (insn_.predicates.empty()) return true;
    std::set<std::string> varying = lane_varying_names(k_);
    std::set<std::string> names;
    for (auto& p : insn_.predicates) collect_free_names(p, names);
    for (auto& n : names)
      if (varying.count(n)) return false;
    return true;
  }

  // A copy of a thread iname over its whole range on the same axis (the
  // same thread index), so every thread runs what must run on all of them.
  std::string full_range_copy(const std::string& n) {
    auto [lo, hi] = constant_range(n);
    std::string c = unique_name(n + "_red");
    k_.domains.edit().push_back(Domain::parse("{[" + c + "]: " + std::to_string(lo) + " <= " + c + " <= " + std::to_string(hi) + "}"));
    k_.iname_tags.edit()[c] = k_.tag_of(n);
    return c;
  }

  Expr warp(const Reduce& r, const std::string& p, const std::string& pr, const std::vector<std::string>& seq, int64_t extent) {
    // the init and the collective run on every lane of the group:
    // full-range copies of the other x-axis inames in scope, too. A group
    // is one row of the x axis, so the inames of the other axes are the
    // same on all its lanes: outside their domain no lane of the group has
    // work, and the group skips the shuffles together, under conditions
    // that hold where the instruction's own do (its predicates may read
    // memory at those inames: split[c] == 0).
    std::set<std::string> with_pr, with_p = scope_;
    for (auto& n : scope_) with_pr.insert(k_.tag_of(n) == InameTag{InameTag::Local, 0} ? full_range_copy(n) : n);
    with_pr.insert(pr);
    with_p.insert(p);
    std::string who = insn_.assignee_name();
    std::string last;
    Expr value;
    if (seq.empty()) {
      // lanes outside p's domain contribute the neutral element
      std::string v = temp("warp_" + who + "_value", r.type);
      std::string init = emit(insn_.id + "_" + v + "_init", make_var(v, r.type), neutral(r.op, r.type), with_pr, {}).id;
      std::set<std::string> inner;
      std::set<std::string> saved = scope_;
      scope_ = with_p;
      Expr body = realize_body(r.body, {}, inner);
      scope_ = saved;
      inner.insert(init);
      last = emit(insn_.id + "_" + v + "_store", make_var(v, r.type), body, with_p, inner).id;
      value = make_var(v, r.type);
    } else {
      Partial part = accumulate(r, seq, with_pr, with_p);
      last = part.last;
      value = part.value;
    }
    std::string res = temp("warp_" + who, r.type);
    std::string red = emit(insn_.id + "_" + res, make_var(res, r.type), make_warp_reduce(r.op, value, extent), with_pr, {last}).id;
    final_updates.insert(red);
    parallel_inames.push_back(pr);
    return make_var(res, r.type);
  }

  LoopKernel& k_;
  std::set<std::string> reduced_;  // the inames the instruction reduces over (runs_in_other_loop)
  bool reduced_known_ = false;
  const Instruction& insn_;
  std::vector<Instruction>& out_;
  std::set<std::string> scope_;
  int warp_size_ = 32;  // (TargetInfo::warp_size: the most lanes a shuffle group spans)
};

// The lower bound of an iname of constant range.
int64_t lower_of(const LoopKernel& k, const std::string& iname) {
  auto r = islu::constant_range(k, iname);
  return r ? r->first : 0;
}

// loopy's `v, i = argmax(j, value, index)` is two adjacent instructions,
// `v = argmax_value(...)` and `i = argmax(...)` over the same pairs in the
// same loops: the second reads the accumulators the first leaves rather
// than reducing again (sequential reductions; a parallel one is reduced
// twice, which is correct too).
struct SharedArgReduction {
  const Instruction* insn = nullptr;  // the first of the two
  Partial accumulators;
};

bool same_arg_reduction(const Instruction& a, const Instruction& b) {
  auto ra = a.rhs.as<Reduce>(), rb = b.rhs.as<Reduce>();
  if (!ra || !rb || !is_arg_reduction(ra->op) || !is_arg_reduction(rb->op) || maximizes(ra->op) != maximizes(rb->op)) return false;
  if (ra->inames != rb->inames || !ExprEqual()(ra->body, rb->body)) return false;
  if (a.within_inames != b.within_inames || a.predicates.size() != b.predicates.size()) return false;
  for (size_t i = 0; i < a.predicates.size(); ++i)
    if (!ExprEqual()(a.predicates[i], b.predicates[i])) return false;
  return true;
}

}  // namespace

LoopKernel realize_reductions(const LoopKernel& k, const TargetInfo& target) {
  LoopKernel r = k;
  std::vector<Instruction> out;
  SharedArgReduction prev;
  for (const Instruction& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) {
      out.push_back(insn);
      prev = {};
      continue;
    }
    if (prev.insn && same_arg_reduction(*prev.insn, insn) && insn.depends_on.count(prev.insn->id)) {
      Instruction copy = insn;
      copy.rhs = is_arg_value_reduction(insn.rhs.as<Reduce>()->op) ? prev.accumulators.value : prev.accumulators.index;
      copy.depends_on.insert(prev.accumulators.last);
      out.push_back(copy);
      prev = {};
      continue;
    }
    prev = {};
    Realizer rz(r, insn, out, target.warp_size);
    Instruction copy = insn;
    copy.rhs = rz.mutate(insn.rhs);
    for (auto& p : copy.predicates) p = rz.mutate(p);
    // (it waits for the final updates, and they for what feeds the reduction loop)
    for (auto d = copy.depends_on.begin(); d != copy.depends_on.end();)
      d = rz.runs_in_other_loop(*d, copy.within_inames) ? copy.depends_on.erase(d) : std::next(d);
    copy.depends_on.insert(rz.final_updates.begin(), rz.final_updates.end());
    // a parallel result stored to memory: one writer, the thread at p's lower bound
    bool to_memory = copy.lhs.as<Subscript>() != nullptr;
    if (!to_memory)
      if (auto v = copy.lhs.as<Var>(); v && r.find_temporary(v->name) && r.find_temporary(v->name)->space == AddressSpace::Local)
        to_memory = true;
    if (to_memory)
      for (auto& p : rz.parallel_inames) {
        copy.within_inames.insert(p);
        copy.predicates.push_back(make_binary(BinOp::Eq, make_var(p, r.options.index_dtype),
                                              make_int(lower_of(r, p), r.options.index_dtype), types::boolean));
      }
    out.push_back(copy);
    if (auto red = insn.rhs.as<Reduce>(); red && is_arg_reduction(red->op) && rz.parallel_inames.empty())
      prev = {&insn, rz.last_sequential};
    if (rz.in_sequential_loop) {  // the next iteration must not overwrite the buffer before it is read
      Instruction b;
      b.kind = Instruction::Barrier;
      b.id = copy.id + "_reduction_done";
      for (auto& n : copy.within_inames)
        if (r.tag_of(n).kind != InameTag::Local) b.within_inames.insert(n);
      b.inames_given = true;
      b.depends_on = {copy.id};
      b.loc = copy.loc;
      out.push_back(b);
    }
  }
  r.instructions = std::move(out);
  return r;
}

}  // namespace loom
