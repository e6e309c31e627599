// The fast path of codegen (see fast_path.h). Each constraint
// a*x + sum(c_v * v) + c >= 0 of an instruction belongs to the innermost of
// its variables in that instruction's order (hardware inames, then loops
// outer to inner): there it is a loop bound (a*x >= -rest), or, when all its
// variables are hardware inames and parameters, a guard around the kernel
// body. Where the instructions of a loop (or of a top-level item) need
// different bounds (guards), the loop runs over their bounds with the thread
// inames set to the ends that loosen them, which must then agree, and each
// instruction keeps its exact ones as a guard of its own (a tile fetch beside
// the update that reads it). Hardware extents come from interval reasoning over the constraints
// (a sound box; exact for the tiles split_iname makes), and guards the launch
// box already implies are dropped.
#include "fast_path.h"

#include "loom/constraints.h"
#include "loom/isl_util.h"

#include <isl/constraint.h>

#include <algorithm>
#include <numeric>
#include <functional>
#include <iterator>

namespace loom::codegen {

namespace {

using Constraint = AffineConstraint;


struct Fail {
  std::string why;
};

class FastPath {
 public:
  FastPath(const LoopKernel& k, const Linearization& L) : k_(k), L_(L), it_(k.options.index_dtype) {
    for (auto& insn : k.instructions) by_id_[insn.id] = &insn;
    std::string why;
    auto dc = read_domain_constraints(k, &why);
    if (!dc) throw Fail{why};
    domain_constraints_ = *dc;
    for (auto& h : L.hardware_inames) hw_.insert(h);
    for (auto& p : k.data_parameters()) data_params_[p];
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::Assign && data_params_.count(insn.assignee_name()))
        for (auto& n : L.loop_inames.at(insn.id)) data_params_[insn.assignee_name()].insert(n);
    order_ = k.all_inames();
    for (auto& insn : k.instructions) {
      auto c = instruction_constraints(k, domain_constraints_, insn, &why);
      if (!c) throw Fail{why};
      statement_constraints_[insn.id] = *c;
    }
    // a constraint on a data parameter whose variables would place it
    // outside the loop computing the value (row_len <= 64 alone, inside the
    // loop over i that computes it) guards the instruction itself
    if (!data_params_.empty())
      for (auto& insn : k.instructions) {
        auto& cs = statement_constraints_[insn.id];
        std::vector<Constraint> kept;
        for (auto& c : cs)
          if (data_level(insn, c) > level(insn, c)) data_guards_[insn.id].insert(c);
          else kept.push_back(c);
        cs = kept;
      }
  }

  FastResult run() {
    FastResult r;
    compute_hardware(r);
    drop_overcomputable_guards();
    // guards over hardware inames and parameters, per top-level item: those
    // all its instructions share go around the item, the rest of each
    // instruction's go around that instruction alone (residual guards, inside
    // its loops); consecutive items with the same guards share one if. A
    // barrier has no guard (every thread reaches it); guards are uniform
    // across a block or per thread, never around a barrier.
    std::vector<std::pair<std::set<Constraint>, StmtPtr>> parts;
    for (auto& item : L_.items) {
      std::vector<const Instruction*> stmts;
      statements_in({item}, stmts);
      std::map<std::string, std::set<Constraint>> own;
      std::optional<std::set<Constraint>> guards;  // the common ones
      for (auto* insn : stmts) {
        std::set<Constraint>& g = own[insn->id];
        for (auto& c : statement_constraints_.at(insn->id))
          if (level(*insn, c) < 0 && !implied_by_launch(c) && !implied_by_assumptions(c)) g.insert(c);
        if (!guards) {
          guards = g;
        } else {
          std::set<Constraint> common;
          std::set_intersection(guards->begin(), guards->end(), g.begin(), g.end(), std::inserter(common, common.end()));
          guards = common;
        }
      }
      for (auto* insn : stmts)
        for (auto& c : own[insn->id])
          if (!guards->count(c)) add_residual(*insn, c);
      StmtPtr code = make_block(items({item}));
      if (!parts.empty() && parts.back().first == *guards) {
        auto b = parts.back().second;
        parts.back().second = make_block({b, code});
      } else {
        parts.push_back({*guards, code});
      }
    }
    std::vector<StmtPtr> body;
    for (auto& [g, code] : parts) {
      if (g.empty()) {
        body.push_back(code);
        continue;
      }
      Expr cond;
      for (auto& c : g) cond = cond.defined() ? make_binary(BinOp::And, cond, as_condition(c), types::boolean) : as_condition(c);
      if (has_barrier(code))  // a guard over block inames and parameters is the same for the whole block
        for (auto& c : g)
          for (auto& [v, a] : c.coef)
            if (k_.tag_of(v).kind == InameTag::Local || data_params_.count(v))
              throw Fail{"a barrier under a guard that depends on the thread" + std::string(data_params_.count(v) ? " ('" + v + "', a value it computes)" : "")};
      body.push_back(make_if(cond, code));
    }
    StmtPtr inner = make_block(body);
    r.body = inner;
    return r;
  }

 private:
  // Overcomputation of register values (full tiles without guards): an
  // instruction that only computes a private value from temporaries may run
  // for iterations past the domain's partial-tile bounds, which lets unrolled
  // register tiles run whole. A bound is dropped for it when
  //  - it involves a parameter (a partial tile's edge, not the tile's shape),
  //  - its inames are hardware inames (each thread or block has its own
  //    registers) or ILP or vector-lane inames that index the written value
  //    (each extra iteration has its own slot), so no iteration inside the domain reads
  //    what an extra one wrote: reductions keep their bounds;
  //  - the instruction writes a private temporary, reads only temporaries at
  //    indices inside their shapes over the whole box (no global memory, no
  //    integer division by a variable, no warp collective).
  // The instructions that store the values keep every guard.
  void drop_overcomputable_guards() {
    for (auto& insn : k_.instructions) {
      if (!overcomputable(insn)) continue;
      std::set<std::string> slot_inames;
      if (auto s = insn.lhs.as<Subscript>())
        for (auto& ix : s->indices) collect_free_vars(ix, slot_inames);
      auto& cs = statement_constraints_.at(insn.id);
      std::vector<Constraint> kept;
      for (auto& c : cs) {
        bool has_param = false, droppable = true;
        for (auto& [v, a] : c.coef) {
          if (!k_.has_iname(v)) {
            has_param = true;
            continue;
          }
          InameTag t = k_.tag_of(v);
          if (hw_.count(v)) continue;
          if ((t.kind == InameTag::Ilp || t.kind == InameTag::Vec) && slot_inames.count(v)) continue;
          droppable = false;
        }
        if (!(has_param && droppable)) kept.push_back(c);
      }
      cs = kept;
    }
  }

  bool overcomputable(const Instruction& insn) const {
    if (insn.kind != Instruction::Assign || !insn.predicates.empty()) return false;
    const Temporary* t = k_.find_temporary(insn.assignee_name());
    if (!t || t->space == AddressSpace::Local || t->space == AddressSpace::Global) return false;
    // the constant box of every iname the instruction runs in: its constraints without parameters
    Ranges box;
    std::vector<Constraint> shape;
    for (auto& c : statement_constraints_.at(insn.id)) {
      bool params = false;
      for (auto& [v, a] : c.coef) params |= !k_.has_iname(v);
      if (!params) shape.push_back(c);
    }
    for (auto& n : insn.within_inames) box[n] = launch_.count(n) ? launch_.at(n) : std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
    propagate_ranges(shape, box);
    bool ok = true;
    auto in_shape = [&](const Subscript& s) {
      const Temporary* tv = k_.find_temporary(s.name);
      if (!tv || tv->space == AddressSpace::Global || tv->shape.size() != s.indices.size()) return false;
      for (size_t d = 0; d < s.indices.size(); ++d) {
        auto range = index_range(s.indices[d], box);
        auto size = constant_int(tv->shape[d]);
        if (!range || !size || range->first < 0 || range->second >= *size) return false;
      }
      return true;
    };
    struct Reads : ExprVisitor {
      const std::function<bool(const Subscript&)>* in_shape;
      bool* ok;
      void visit_subscript(const Subscript& s) override {
        *ok = *ok && (*in_shape)(s);
        ExprVisitor::visit_subscript(s);
      }
      void visit_binary(const Binary& b) override {
        bool division = b.op == BinOp::FloorDiv || b.op == BinOp::Mod || b.op == BinOp::Div || b.op == BinOp::TruncDiv ||
                        b.op == BinOp::TruncRem || b.op == BinOp::Pow;
        if (division && !b.type.is_float() && !b.b.as<IntImm>()) *ok = false;  // traps on the CPU for a garbage divisor
        ExprVisitor::visit_binary(b);
      }
    } reads;
    std::function<bool(const Subscript&)> check = in_shape;
    reads.in_shape = &check;
    reads.ok = &ok;
    reads.visit(insn.rhs);
    if (auto s = insn.lhs.as<Subscript>()) ok = ok && in_shape(*s);
    if (as_warp_reduce(insn.rhs)) ok = false;
    return ok;
  }

  // The values an index takes over a box of constant iname ranges: exact for
  // an affine index (terms counted once), else by intervals through
  // constant multiples, floor division and modulo by a positive constant
  // (double_buffer's copy by parity, (k - k0) % 2).
  static std::optional<std::pair<int64_t, int64_t>> index_range(const Expr& e, const Ranges& box) {
    using R = std::optional<std::pair<int64_t, int64_t>>;
    auto known = [](int64_t lo, int64_t hi) { return lo > INT64_MIN / 4 && hi < INT64_MAX / 4; };
    if (auto f = affine_form(e)) {
      int64_t lo = f->constant, hi = f->constant;
      for (auto& [v, a] : f->coef) {
        auto it = box.find(v);
        if (it == box.end() || !known(it->second.first, it->second.second)) return std::nullopt;
        lo += a > 0 ? a * it->second.first : a * it->second.second;
        hi += a > 0 ? a * it->second.second : a * it->second.first;
      }
      return R{{lo, hi}};
    }
    auto b = e.as<Binary>();
    if (!b) return std::nullopt;
    R x = index_range(b->a, box), y = index_range(b->b, box);
    auto positive_constant = [&]() -> std::optional<int64_t> {
      auto c = constant_int(b->b);
      return c && *c > 0 ? c : std::nullopt;
    };
    auto fd = [](int64_t p, int64_t q) { return p / q - ((p % q != 0) && (p < 0)); };
    switch (b->op) {
      case BinOp::Add:
        if (x && y) return R{{x->first + y->first, x->second + y->second}};
        return std::nullopt;
      case BinOp::Sub:
        if (x && y) return R{{x->first - y->second, x->second - y->first}};
        return std::nullopt;
      case BinOp::Mul:
        if (x && y) {
          int64_t c[4] = {x->first * y->first, x->first * y->second, x->second * y->first, x->second * y->second};
          return R{{*std::min_element(c, c + 4), *std::max_element(c, c + 4)}};
        }
        return std::nullopt;
      case BinOp::FloorDiv:
        if (auto q = positive_constant(); q && x) return R{{fd(x->first, *q), fd(x->second, *q)}};
        return std::nullopt;
      case BinOp::Mod:
        if (auto q = positive_constant()) {
          if (x && x->first >= 0 && x->second < *q) return x;
          return R{{0, *q - 1}};
        }
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  // Position of loop n in insn's loop order; -1 when insn is not in it.
  int position(const Instruction& insn, const std::string& n) const {
    const auto& loops = L_.loop_inames.at(insn.id);
    auto it = std::find(loops.begin(), loops.end(), n);
    return it == loops.end() ? -1 : int(it - loops.begin());
  }

  // Position of c's innermost variable in insn's loop order; -1 when it has
  // only hardware inames and parameters.
  int level(const Instruction& insn, const Constraint& c) const {
    int lv = -1;
    for (auto& [v, a] : c.coef) lv = std::max(lv, position(insn, v));
    return lv;
  }

  // Where c's data parameters (bounds the kernel computes) are known: the
  // position in insn's loop order of the innermost loop their writers run
  // in (check_kernel made those loops enclose insn); -1 when c has none or
  // they are computed outside every loop. No bound or guard on them may
  // stand further out.
  int data_level(const Instruction& insn, const Constraint& c) const {
    int lv = -1;
    for (auto& [v, a] : c.coef)
      if (auto d = data_params_.find(v); d != data_params_.end())
        for (auto& n : d->second) lv = std::max(lv, position(insn, n));
    return lv;
  }

  // sum(coef * var) + constant as an Expr, terms in iname order, parameters first
  Expr affine(const std::map<std::string, int64_t>& coef_map, int64_t constant) const {
    std::vector<std::pair<std::string, int64_t>> coef(coef_map.begin(), coef_map.end());
    std::stable_sort(coef.begin(), coef.end(), [&](auto& a, auto& b) { return rank(a.first) < rank(b.first); });
    Expr e;
    auto add = [&](Expr term, bool negative) {
      if (!e.defined()) e = negative ? make_unary(UnOp::Neg, term, it_) : term;
      else e = make_binary(negative ? BinOp::Sub : BinOp::Add, e, term, it_);
    };
    for (auto& [v, a] : coef) {
      Expr var = make_var(v, it_);
      if (auto d = data_params_.find(v); d != data_params_.end())  // a temporary of its own type (int32 under int64 indices)
        if (Type t = k_.find_temporary(v)->dtype; t != it_) var = make_cast(it_, make_var(v, t));
      int64_t m = a < 0 ? -a : a;
      add(m == 1 ? var : make_binary(BinOp::Mul, make_int(m, it_), var, it_), a < 0);
    }
    if (!e.defined()) return make_int(constant, it_);
    if (constant != 0) add(make_int(constant < 0 ? -constant : constant, it_), constant < 0);
    return e;
  }

  int rank(const std::string& v) const {
    auto it = std::find(order_.begin(), order_.end(), v);
    return it == order_.end() ? -1 : int(it - order_.begin());
  }

  // c as "positive terms >= negative terms"
  Expr as_condition(const Constraint& c) const {
    std::map<std::string, int64_t> pos, neg;
    for (auto& [v, a] : c.coef) (a > 0 ? pos : neg)[v] = a > 0 ? a : -a;
    int64_t pc = c.constant > 0 ? c.constant : 0, nc = c.constant < 0 ? -c.constant : 0;
    return make_binary(BinOp::Ge, affine(pos, pc), affine(neg, nc), types::boolean);
  }

  struct Bounds {
    std::vector<Expr> lower, upper;         // x >= each lower, x <= each upper
    std::vector<Constraint> lower_c, upper_c;
  };

  // x's bounds from the constraints that mention x: a*x + rest >= 0.
  Bounds bounds(const std::string& x, const std::vector<Constraint>& cs) const {
    Bounds b;
    for (auto& c : cs) {
      auto it = c.coef.find(x);
      if (it == c.coef.end()) continue;
      int64_t a = it->second;
      std::map<std::string, int64_t> rest = c.coef;
      rest.erase(x);
      if (auto v = constant_over_launch(c, x)) {  // the same for every thread of the launch
        (a > 0 ? b.lower : b.upper).push_back(make_int(*v, it_));
        (a > 0 ? b.lower_c : b.upper_c).push_back(c);
        continue;
      }
      if (a > 0) {  // x >= ceil(-rest / a)
        std::map<std::string, int64_t> neg;
        for (auto& [v, cv] : rest) neg[v] = -cv;
        Expr num = affine(neg, -c.constant);
        b.lower.push_back(fold_constants(a == 1 ? num : make_binary(BinOp::FloorDiv, make_binary(BinOp::Add, num, make_int(a - 1, it_), it_), make_int(a, it_), it_)));
        b.lower_c.push_back(c);
      } else {  // x <= floor(rest / -a)
        Expr num = affine(rest, c.constant);
        b.upper.push_back(fold_constants(a == -1 ? num : make_binary(BinOp::FloorDiv, num, make_int(-a, it_), it_)));
        b.upper_c.push_back(c);
      }
    }
    return b;
  }

  // The bound c gives x when its other variables are thread inames with
  // constant launch ranges and the bound is the same over all of them.
  std::optional<int64_t> constant_over_launch(const Constraint& c, const std::string& x) const {
    int64_t a = c.coef.at(x);
    int64_t lo = c.constant, hi = c.constant;  // range of rest = c - a*x
    bool any = false;
    for (auto& [v, cv] : c.coef) {
      if (v == x) continue;
      auto it = launch_.find(v);
      if (it == launch_.end() || it->second.second == INT64_MAX) return std::nullopt;
      any = true;
      lo += cv * (cv > 0 ? it->second.first : it->second.second);
      hi += cv * (cv > 0 ? it->second.second : it->second.first);
    }
    if (!any) return std::nullopt;
    auto fd = [](int64_t p, int64_t q) { return p / q - ((p % q != 0) && ((p < 0) != (q < 0))); };
    // a > 0: x >= ceil(-rest / a) = -floor(rest / a); a < 0: x <= floor(rest / -a)
    int64_t b1 = a > 0 ? -fd(lo, a) : fd(lo, -a), b2 = a > 0 ? -fd(hi, a) : fd(hi, -a);
    if (b1 != b2) return std::nullopt;
    return b1;
  }

  Expr fold(const char* fn, const std::vector<Expr>& xs) const {
    Expr r = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) r = make_call(fn, {r, xs[i]}, it_);
    return r;
  }

  void statements_in(const std::vector<ScheduleItem>& items, std::vector<const Instruction*>& out) const {
    for (auto& it : items) {
      if (it.kind == ScheduleItem::Insn) out.push_back(&insn(it.name));
      else statements_in(it.body, out);
    }
  }

  std::vector<StmtPtr> items(const std::vector<ScheduleItem>& list) {
    std::vector<StmtPtr> out;
    for (auto& it : list) {
      if (it.kind == ScheduleItem::Insn) {
        out.push_back(statement(insn(it.name)));
        continue;
      }
      // the loop's bounds: constraints whose innermost variable is this iname
      std::vector<const Instruction*> stmts;
      statements_in(it.body, stmts);
      std::optional<std::set<Constraint>> mine;
      std::vector<std::pair<const Instruction*, std::set<Constraint>>> per_stmt;
      bool differ = false;
      // A barrier's domain is its loops' projection (it runs within no thread
      // or block iname): it runs for every iteration the loop has, so the
      // other instructions' bounds make the loop's.
      bool only_barriers = std::all_of(stmts.begin(), stmts.end(), [](auto* s) { return s->kind == Instruction::Barrier; });
      for (auto* insn : stmts) {
        if (insn->kind == Instruction::Barrier && !only_barriers) continue;
        const auto& loops = L_.loop_inames.at(insn->id);
        int pos = int(std::find(loops.begin(), loops.end(), it.name) - loops.begin());
        std::set<Constraint> s;
        for (auto& c : statement_constraints_.at(insn->id)) {
          int lv = level(*insn, c);
          if (lv == pos) s.insert(c);
          else if (lv > pos && c.coef.count(it.name) && data_level(*insn, c) <= pos)
            if (auto r = relax(*insn, c, pos)) s.insert(*r);  // a bound through deeper loops
        }
        per_stmt.push_back({insn, s});
        if (mine && *mine != s) differ = true;
        mine = s;
      }
      if (differ) mine = loosened_bounds(it.name, per_stmt);
      std::vector<Constraint> cs(mine->begin(), mine->end());
      cs = without_redundant_bounds(it.name, cs);
      Bounds b = bounds(it.name, cs);
      if (b.lower.empty() || b.upper.empty()) throw Fail{"loop '" + it.name + "' is unbounded"};
      // constant ends of this loop's range, for dropping implied guards inside it
      std::pair<int64_t, int64_t> range{INT64_MIN, INT64_MAX};
      for (auto& l : b.lower)
        if (auto c = l.as<IntImm>()) range.first = std::max(range.first, c->value);
      for (auto& u : b.upper)
        if (auto c = u.as<IntImm>()) range.second = std::min(range.second, c->value);
      // residual guards over hardware inames and parameters that every
      // instruction of this loop has go around the loop, not inside it
      std::set<Constraint> hoisted = hoistable_residuals(stmts, has_barrier_item(it.body));
      for (auto* insn : stmts)
        for (auto& c : hoisted) residual_[insn->id].erase(c);
      ranges_[it.name] = range;
      loop_context_.push_back({it.name, cs});
      StmtPtr body = make_block(items(it.body));
      loop_context_.pop_back();
      ranges_.erase(it.name);
      Expr guard = residual_condition(hoisted);  // around the loop or its unrolled copies
      if (it.unroll) {
        StmtPtr copies = k_.tag_of(it.name).kind == InameTag::Vec ? vector_loop(it.name, b, body) : nullptr;
        if (!copies) copies = make_block(unrolled(it.name, b, body));
        out.push_back(guard.defined() ? make_if(guard, copies) : copies);
        continue;
      }
      Expr var = make_var(it.name, it_);
      Expr cond;
      for (auto& u : b.upper) {
        Expr c = make_binary(BinOp::Le, var, u, types::boolean);
        if (auto bin = u.as<Binary>(); bin && bin->op == BinOp::Sub && bin->b.as<IntImm>() && bin->b.as<IntImm>()->value == 1)
          c = make_binary(BinOp::Lt, var, bin->a, types::boolean);  // i <= n - 1  ->  i < n
        cond = cond.defined() ? make_binary(BinOp::And, cond, c, types::boolean) : c;
      }
      StmtPtr loop = make_for(it.name, fold("max", b.lower), cond, 1, body);
      out.push_back(guard.defined() ? make_if(guard, loop) : loop);
    }
    return out;
  }

  // Loop x's bounds without those a constant bound of the same side implies
  // (x >= -(16*k_outer) beside x >= 0; x < l - 16*k_outer beside x <= 15 when
  // the assumptions make the tile full), so the loop keeps a constant trip
  // count that the compiler can unroll.
  std::vector<Constraint> without_redundant_bounds(const std::string& x, const std::vector<Constraint>& cs) {
    std::optional<int64_t> lo, hi;
    auto fd = [](int64_t p, int64_t q) { return p / q - ((p % q != 0) && ((p < 0) != (q < 0))); };
    for (auto& c : cs) {
      if (c.coef.size() != 1) continue;
      int64_t a = c.coef.at(x);
      if (a > 0) lo = std::max(lo.value_or(INT64_MIN), -fd(c.constant, a));
      else hi = std::min(hi.value_or(INT64_MAX), fd(c.constant, -a));
    }
    std::vector<Constraint> out;
    for (auto& c : cs) {
      int64_t a = c.coef.at(x);
      std::optional<int64_t> end = a > 0 ? lo : hi;
      if (c.coef.size() > 1 && end) {
        Constraint at = c;  // c where x sits at the constant bound of its side
        at.coef.erase(x);
        at.constant += a * *end;
        if (at.coef.empty() ? at.constant >= 0 : (implied_by_ranges(at) || implied_by_assumptions(at))) continue;
      }
      out.push_back(c);
    }
    return out;
  }

  // The residual guards all of stmts share whose variables are hardware inames
  // and parameters only (none of the loops): they can wrap the loop holding
  // them. Around a barrier only guards that are the same for the whole block.
  std::set<Constraint> hoistable_residuals(const std::vector<const Instruction*>& stmts, bool barrier) const {
    std::optional<std::set<Constraint>> common;
    for (auto* insn : stmts) {
      auto r = residual_.find(insn->id);
      if (r == residual_.end()) return {};
      std::set<Constraint> mine;
      for (auto& c : r->second) {
        bool only_hw = std::all_of(c.coef.begin(), c.coef.end(), [&](auto& v) { return hw_.count(v.first) || !k_.has_iname(v.first); });
        bool uniform = std::none_of(c.coef.begin(), c.coef.end(), [&](auto& v) { return k_.tag_of(v.first).kind == InameTag::Local; });
        if (only_hw && (!barrier || uniform) && (!common || common->count(c))) mine.insert(c);
      }
      common = mine;
    }
    return common.value_or(std::set<Constraint>{});
  }

  bool has_barrier_item(const std::vector<ScheduleItem>& items) const {
    for (auto& it : items) {
      if (it.kind == ScheduleItem::Insn && insn(it.name).kind == Instruction::Barrier) return true;
      if (it.kind == ScheduleItem::Loop && has_barrier_item(it.body)) return true;
    }
    return false;
  }

  // Bounds of loop x when its instructions' bounds differ: each bound with
  // its thread inames set to the end of their launch range that loosens it
  // (a thread-independent superset of every instruction's range); those all
  // instructions share bound the loop (a superset of each one's range), and
  // each instruction keeps its exact bounds as residual guards around itself.
  std::set<Constraint> loosened_bounds(const std::string& x,
                                       const std::vector<std::pair<const Instruction*, std::set<Constraint>>>& per_stmt) {
    std::optional<std::set<Constraint>> loose;
    for (auto& [insn, cs] : per_stmt) {
      std::set<Constraint> l;
      for (auto& c : cs) {
        Constraint r = c;
        for (auto& [v, a] : c.coef) {
          // block inames are the same for every thread of the block: they stay
          if (v == x || !hw_.count(v) || k_.tag_of(v).kind == InameTag::Group) continue;
          auto it = launch_.find(v);
          if (it == launch_.end()) throw Fail{"instructions in loop '" + x + "' have different bounds"};
          int64_t end = a > 0 ? it->second.second : it->second.first;
          if (end == INT64_MAX || end == INT64_MIN) throw Fail{"instructions in loop '" + x + "' have different bounds"};
          r.coef.erase(v);
          r.constant += a * end;
        }
        l.insert(tightened(r));
      }
      // the loop runs over what every instruction's bounds allow (the
      // constraints they share); each keeps the rest as guards of its own
      if (!loose) {
        loose = l;
      } else {
        std::set<Constraint> common;
        std::set_intersection(loose->begin(), loose->end(), l.begin(), l.end(), std::inserter(common, common.end()));
        loose = common;
      }
    }
    for (auto& [insn, cs] : per_stmt)
      for (auto& c : cs)
        if (!loose->count(tightened(c))) add_residual(*insn, c);
    return *loose;
  }

  // c divided by the gcd of its coefficients, the constant rounded down: the
  // same integer points (32*x + 31 >= 0 and 32*x + 3 >= 0 are both x >= 0),
  // so bounds that differ only so compare equal.
  static Constraint tightened(const Constraint& c) {
    int64_t g = 0;
    for (auto& [v, a] : c.coef) g = std::gcd(g, a < 0 ? -a : a);
    if (g <= 1) return c;
    Constraint r = c;
    for (auto& [v, a] : r.coef) a /= g;
    r.constant = floor_div(c.constant, g);
    return r;
  }

  void add_residual(const Instruction& insn, const Constraint& c) {
    if (insn.kind == Instruction::Barrier) {
      for (auto& [v, a] : c.coef)
        if (k_.tag_of(v).kind == InameTag::Local) throw Fail{"a barrier under a guard that depends on the thread"};
    }
    residual_[insn.id].insert(c);
  }

  // c with each variable deeper than loop position `pos` replaced by the end
  // of its constant range that loosens c the most: a bound for the outer
  // loop that holds wherever the deeper loops have iterations (the deeper
  // loops still enforce c exactly).
  std::optional<Constraint> relax(const Instruction& insn, const Constraint& c, int pos) {
    const auto& loops = L_.loop_inames.at(insn.id);
    Constraint r = c;
    for (auto& [v, a] : c.coef) {
      auto it = std::find(loops.begin(), loops.end(), v);
      if (it == loops.end() || int(it - loops.begin()) <= pos) continue;
      auto [lo, hi] = constant_range(insn, v);
      int64_t end = a > 0 ? hi : lo;
      if (end == INT64_MAX || end == INT64_MIN) return std::nullopt;
      r.coef.erase(v);
      r.constant += a * end;
    }
    return r;
  }

  // Constant range of loop iname v in insn's domain by interval propagation
  // over the constraints whose other variables have constant ranges (loop
  // inames, and hardware inames through the launch box); INT64_MIN/MAX where
  // unbounded.
  std::pair<int64_t, int64_t> constant_range(const Instruction& insn, const std::string& v) {
    auto& memo = ranges_memo_[insn.id];
    if (memo.empty()) {
      Ranges r = launch_;
      for (auto& n : L_.loop_inames.at(insn.id)) r[n] = {INT64_MIN, INT64_MAX};
      // (the launch box of hardware inames is fixed: propagation tightens loop inames only)
      Ranges loops;
      for (auto& n : L_.loop_inames.at(insn.id)) loops[n] = r[n];
      Ranges all = r;
      propagate_ranges(statement_constraints_.at(insn.id), all);
      for (auto& [n, range] : loops) r[n] = all[n];
      memo = r;
    }
    auto it = memo.find(v);
    return it == memo.end() ? std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX} : it->second;
  }

  static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }

  // Full unrolling: one copy per value of the constant bounds; bounds that
  // are not constant guard each copy.
  std::vector<StmtPtr> unrolled(const std::string& x, const Bounds& b, const StmtPtr& body) {
    auto [lo, hi, guards] = unroll_range(x, b);
    std::vector<StmtPtr> out;
    for (int64_t v = lo; v <= hi; ++v) {
      std::map<std::string, Expr> val{{x, make_int(v, it_)}};
      StmtPtr copy = substitute_stmt(body, val);
      Expr cond = lane_guard(x, v, guards);
      out.push_back(cond.defined() ? make_if(cond, copy) : copy);
    }
    return out;
  }

  // A `vec` loop whose lanes no guard tells apart stays a loop of constant
  // trip count, marked for codegen/vectorize.cpp (which proves its accesses
  // contiguous and aligned, or unrolls it); null when some lane is guarded.
  StmtPtr vector_loop(const std::string& x, const Bounds& b, const StmtPtr& body) {
    auto [lo, hi, guards] = unroll_range(x, b);
    if (hi - lo + 1 < 2 || hi - lo + 1 > 16) return nullptr;
    // A guard that differs between lanes is kept when it holds for all lanes
    // or for none (a tail of 4*q + l < n with n a multiple of 4): then it
    // guards the whole vector.
    Expr whole;
    for (auto& g : guards) {
      Constraint first = at_value(g, x, lo), last = at_value(g, x, hi);
      bool up = g.coef.at(x) < 0;  // an upper bound: the last lane is the first to fail
      const Constraint& strong = up ? last : first;
      const Constraint& weak = up ? first : last;
      if (implied_by_ranges(strong) || implied_by_assumptions(strong)) continue;
      if (!implied_by_assumptions(strong, &weak)) return nullptr;
      Expr c = as_condition(strong);
      whole = whole.defined() ? make_binary(BinOp::And, whole, c, types::boolean) : c;
    }
    Expr cond = make_binary(BinOp::Lt, make_var(x, it_), make_int(hi + 1, it_), types::boolean);
    auto loop = std::make_shared<Stmt>(*make_for(x, make_int(lo, it_), cond, 1, body));
    loop->vector_lanes = hi - lo + 1;
    return whole.defined() ? make_if(whole, loop) : loop;
  }

  static Constraint at_value(const Constraint& g, const std::string& x, int64_t v) {
    Constraint gv = g;
    gv.constant += gv.coef.at(x) * v;
    gv.coef.erase(x);
    return gv;
  }

  // The guards of copy x = v that the ranges and assumptions do not imply.
  Expr lane_guard(const std::string& x, int64_t v, const std::vector<Constraint>& guards) {
    Expr cond;
    for (auto& g : guards) {
      Constraint gv = at_value(g, x, v);
      if (implied_by_ranges(gv) || implied_by_assumptions(gv)) continue;
      Expr c = as_condition(gv);
      cond = cond.defined() ? make_binary(BinOp::And, cond, c, types::boolean) : c;
    }
    return cond;
  }

  struct UnrollRange {
    int64_t lo, hi;
    std::vector<Constraint> guards;  // the bounds that are not constant
  };
  UnrollRange unroll_range(const std::string& x, const Bounds& b) {
    std::optional<int64_t> lo, hi;
    std::vector<Constraint> guards;
    for (size_t i = 0; i < b.lower.size(); ++i) {
      if (b.lower_c[i].coef.size() == 1) lo = std::max(lo.value_or(INT64_MIN), eval_int(b.lower[i], {}));
      else guards.push_back(b.lower_c[i]);
    }
    for (size_t i = 0; i < b.upper.size(); ++i) {
      if (b.upper_c[i].coef.size() == 1) hi = std::min(hi.value_or(INT64_MAX), eval_int(b.upper[i], {}));
      else guards.push_back(b.upper_c[i]);
    }
    if (!lo || !hi) {  // bounds through other variables of constant range
      if (auto r = loop_range(x)) {
        lo = lo ? std::max(*lo, r->first) : r->first;
        hi = hi ? std::min(*hi, r->second) : r->second;
      }
    } else if (auto u = range_over_all(x)) {
      // constant bounds looser than what every instruction allows (a split by
      // more than the iname's range): copies past them would only be guarded off
      lo = std::max(*lo, u->first);
      hi = std::min(*hi, u->second);
    }
    if (!lo || !hi) throw Fail{"unrolled iname '" + x + "' has no constant bounds"};
    if (*hi - *lo >= 1024) throw Fail{"unrolled iname '" + x + "' has more than 1024 iterations"};
    return {*lo, *hi, guards};
  }

  StmtPtr statement(const Instruction& insn) {
    StmtPtr s;
    if (insn.kind == Instruction::Barrier) s = make_barrier();
    else if (insn.kind == Instruction::NoOp) return make_block({});
    else s = make_assign(insn.id, insn.lhs, insn.rhs, assignment_op(insn));
    if (!insn.predicates.empty()) {
      Expr c;
      for (auto& p : insn.predicates) c = c.defined() ? make_binary(BinOp::And, c, p, types::boolean) : p;
      s = make_predicated(c, s, insn.id);  // (its reads are checked as the instruction's)
    }
    // the instruction's own guards where its loops or item are shared with others
    if (auto r = residual_.find(insn.id); r != residual_.end())
      if (Expr c = residual_condition(r->second); c.defined()) s = make_if(c, s);
    if (auto d = data_guards_.find(insn.id); d != data_guards_.end()) {
      if (insn.kind == Instruction::Barrier) throw Fail{"a barrier under a guard on a value the kernel computes"};
      if (Expr c = residual_condition(d->second); c.defined()) s = make_if(c, s);
    }
    return s;
  }

  // Residual guards as one condition, without those the ranges or the
  // assumptions imply; undefined when none is left.
  Expr residual_condition(const std::set<Constraint>& guards) {
    Expr c;
    for (auto& g : guards) {
      if (implied_by_ranges(g) || implied_by_assumptions(g)) continue;
      Expr e = as_condition(g);
      c = c.defined() ? make_binary(BinOp::And, c, e, types::boolean) : e;
    }
    return c;
  }

  // ---- hardware axes ----

  // Sound bounds of hardware iname h in the parameters: the union over the
  // statements that run within h of each one's range of h (a statement's
  // bound: the tightest of its candidates, each with the other hardware
  // inames replaced by their own extremes). The grid must cover every
  // statement: a nested domain that narrows one statement's h (k = i + 5 and
  // k < n) must not narrow another's. A statement without a readable bound
  // leaves h without one (isl's path then decides).
  Expr extreme(const std::string& h, bool upper, std::set<std::string>& visiting) {
    auto key = h + (upper ? "+" : "-");
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    visiting.insert(h);
    std::vector<Expr> per_statement;
    std::set<std::string> distinct;
    bool unbounded = false;
    for (auto& [id, cs] : statement_constraints_) {
      std::vector<Expr> cands;
      std::set<Constraint> seen;
      bool uses = false;
      for (auto& c : cs) {
        auto a = c.coef.find(h);
        if (a == c.coef.end()) continue;
        uses = true;
        if ((a->second < 0) != upper || !seen.insert(c).second) continue;
        if (Expr b = bound_from(h, c, a->second, upper, visiting); b.defined()) cands.push_back(b);
      }
      if (!uses) continue;
      if (cands.empty()) {
        unbounded = true;
        break;
      }
      Expr b = fold_constants(fold(upper ? "min" : "max", cands));
      if (distinct.insert(b.str()).second) per_statement.push_back(b);
    }
    visiting.erase(h);
    Expr r = unbounded || per_statement.empty() ? Expr() : fold_constants(fold(upper ? "max" : "min", per_statement));
    memo_[key] = r;
    return r;
  }

  // The bound constraint c (a*h + rest >= 0) gives h, with the other
  // hardware inames at the extremes that loosen it and loop inames at their
  // constant ends; undefined where c cannot be read so.
  Expr bound_from(const std::string& h, const Constraint& c, int64_t av, bool upper, std::set<std::string>& visiting) {
    for (auto& [v, cv] : c.coef)
      if (!(v == h || !k_.has_iname(v) || (hw_.count(v) && !visiting.count(v)) || (!hw_.count(v) && loop_range(v)))) return Expr();
    for (auto& [v, cv] : c.coef)  // a launch is sized before the kernel computes anything
      if (data_params_.count(v)) return Expr();
    std::map<std::string, int64_t> params;
    Expr sum;
    for (auto& [v, cv] : c.coef) {
      if (v == h) continue;
      if (!k_.has_iname(v)) {
        params[v] = cv;
        continue;
      }
      // a sound bound needs the largest rest (upper: h <= rest/-a; lower: h >= -rest/a),
      // so cv*v at its largest either way: v's maximum when cv > 0
      bool want_max = cv > 0;
      Expr ev;
      if (!hw_.count(v)) {  // a loop iname of constant range: its end
        auto r = loop_range(v);
        ev = make_int(want_max ? r->second : r->first, it_);
      } else {
        ev = extreme(v, want_max, visiting);
      }
      if (!ev.defined()) return Expr();
      Expr term = make_binary(BinOp::Mul, make_int(cv, it_), ev, it_);
      sum = sum.defined() ? make_binary(BinOp::Add, sum, term, it_) : term;
    }
    Expr rest = affine(params, c.constant);
    if (sum.defined()) rest = make_binary(BinOp::Add, rest, sum, it_);
    if (upper) return av == -1 ? rest : make_binary(BinOp::FloorDiv, rest, make_int(-av, it_), it_);
    Expr num = make_unary(UnOp::Neg, rest, it_);
    return av == 1 ? num : make_binary(BinOp::FloorDiv, make_binary(BinOp::Add, num, make_int(av - 1, it_), it_), make_int(av, it_), it_);
  }

  // v's range in one statement's constraints by interval propagation (ends
  // INT64_MIN/MAX where unbounded); nullopt when the statement does not use v.
  std::optional<std::pair<int64_t, int64_t>> range_in(const std::vector<Constraint>& cs, const std::string& v) const {
    bool has = false;
    for (auto& c : cs) has |= c.coef.count(v) > 0;
    if (!has) return std::nullopt;
    Ranges r;
    for (auto& c : cs)
      for (auto& [x, a] : c.coef)
        if (k_.has_iname(x)) r.emplace(x, std::make_pair(INT64_MIN, INT64_MAX));
    propagate_ranges(cs, r);
    return r.at(v);
  }

  // The union over every instruction that uses v of v's constant range there
  // (by propagation); nullopt when one of them leaves v unbounded.
  std::optional<std::pair<int64_t, int64_t>> range_over_all(const std::string& v) {
    std::optional<std::pair<int64_t, int64_t>> result;
    for (auto& [id, cs] : statement_constraints_) {
      auto range = range_in(cs, v);
      if (!range) continue;
      if (range->first == INT64_MIN || range->second == INT64_MAX) return std::nullopt;
      result = result ? std::make_pair(std::min(result->first, range->first), std::max(result->second, range->second)) : *range;
    }
    return result;
  }

  // The constant range of a loop iname: interval propagation over the
  // constraints of the statements it appears in (other variables with
  // constant ranges, hardware ones included, tighten it).
  std::optional<std::pair<int64_t, int64_t>> loop_range(const std::string& v) {
    if (auto it = loop_ranges_.find(v); it != loop_ranges_.end()) return it->second;
    std::optional<std::pair<int64_t, int64_t>> result;
    for (auto& [id, cs] : statement_constraints_) {
      auto range = range_in(cs, v);
      if (range && range->first != INT64_MIN && range->second != INT64_MAX) {
        result = *range;
        break;
      }
    }
    loop_ranges_[v] = result;
    return result;
  }

  // constant subexpressions folded (eval_int succeeds on them)
  Expr fold_constants(const Expr& e) const {
    if (auto v = constant_int(e)) return make_int(*v, it_);
    if (auto c = e.as<Call>(); c && c->args.size() == 2) {
      Expr a = fold_constants(c->args[0]), b = fold_constants(c->args[1]);
      return make_call(c->name, {a, b}, it_);
    }
    return e;
  }

  // the constant candidate bounds of a local iname (block sizes must be constants)
  std::optional<int64_t> constant_extreme(const Expr& e, bool upper) const {
    if (auto v = constant_int(e)) return v;
    auto c = e.as<Call>();
    if (!c) return std::nullopt;
    auto a = constant_extreme(c->args[0], upper), b = constant_extreme(c->args[1], upper);
    bool is_min = c->name == "min";
    // min(x, const) <= const: a sound upper bound; max(x, const) >= const: a sound lower bound
    if (a && b) return is_min ? std::min(*a, *b) : std::max(*a, *b);
    if ((upper && is_min) || (!upper && !is_min)) return a ? a : b;
    return std::nullopt;
  }

  void compute_hardware(FastResult& r) {
    for (int a = 0; a < 3; ++a) r.grid[a] = make_int(1, it_);
    std::map<std::pair<int, int>, std::vector<Expr>> sizes;
    std::map<std::pair<int, int>, int64_t> local_size;
    for (auto& h : L_.hardware_inames) {
      std::set<std::string> visiting;
      Expr lo = extreme(h, false, visiting), hi = extreme(h, true, visiting);
      if (!lo.defined() || !hi.defined()) throw Fail{"hardware iname '" + h + "' has no bound readable from constraints"};
      InameTag tag = k_.tag_of(h);
      if (tag.kind == InameTag::Local) {
        auto clo = constant_extreme(lo, false), chi = constant_extreme(hi, true);
        if (!clo || !chi) throw Fail{"local iname '" + h + "' has no constant bounds"};
        lo = make_int(*clo, it_);
        int64_t& s = local_size[{1, tag.axis}];
        s = std::max(s, *chi - *clo + 1);
        launch_[h] = {*clo, *clo + s - 1};
      } else {
        group_bounds_[h] = {lo, hi};
        Expr size = make_binary(BinOp::Add, make_binary(BinOp::Sub, hi, lo, it_), make_int(1, it_), it_);
        sizes[{0, tag.axis}].push_back(make_call("max", {size, make_int(0, it_)}, it_));
        if (auto v = lo.as<IntImm>()) launch_[h] = {v->value, INT64_MAX};
      }
      r.inames.push_back({h, tag, lo});
    }
    for (auto& [key, s] : local_size) {
      if (s < 1) throw Fail{"empty local axis"};
      r.block[key.second] = s;
    }
    // several inames on one local axis: the launch box is the axis, not the iname
    for (auto& h : L_.hardware_inames) {
      InameTag tag = k_.tag_of(h);
      if (tag.kind == InameTag::Local) launch_[h].second = launch_[h].first + r.block[tag.axis] - 1;
    }
    for (auto& [key, s] : sizes) r.grid[key.second] = fold("max", s);
    // a block iname runs over its axis' whole grid, which another iname on the axis may make larger
    for (auto& [h, bounds] : group_bounds_)
      bounds.second = make_binary(BinOp::Sub, make_binary(BinOp::Add, bounds.first, r.grid[k_.tag_of(h).axis], it_),
                                  make_int(1, it_), it_);
    int64_t threads = r.block[0] * r.block[1] * r.block[2];
    if (threads > 1024 || r.block[2] > 64) throw Fail{"a block over CUDA's limits"};  // isl's path reports it with details
  }

  // Whether c holds for every value in the given ranges (interval arithmetic).
  static bool implied(const Constraint& c, const std::map<std::string, std::pair<int64_t, int64_t>>& ranges) {
    int64_t min = c.constant;
    for (auto& [v, a] : c.coef) {
      auto it = ranges.find(v);
      if (it == ranges.end()) return false;  // a parameter, or a variable without a known range
      int64_t bound = a > 0 ? it->second.first : it->second.second;
      if (bound == INT64_MAX || bound == INT64_MIN) return false;
      min += a * bound;
    }
    return min >= 0;
  }
  // by the launch box (lower <= h <= upper per hardware iname)
  bool implied_by_launch(const Constraint& c) const { return implied(c, launch_); }
  // by the launch box and the constant ranges of the enclosing loops
  bool implied_by_ranges(const Constraint& c) const {
    auto all = launch_;
    for (auto& [v, r] : ranges_) all[v] = r;
    return implied(c, all);
  }

  // Whether c holds in every launch the kernel's assumptions allow, inside
  // the enclosing loops (isl: assumptions, launch box, the bounds of the
  // enclosing loops c mentions, and not-c have no point). Only for kernels
  // with assumptions (the divisibility that makes a register tile's guards
  // and a full tile's loop bounds redundant); memoized.
  // Whether c holds wherever the enclosing loops and the launch do, under
  // the assumptions (and where `given` holds too, when there is one).
  bool implied_by_assumptions(const Constraint& c, const Constraint* given = nullptr) {
    if (!k_.assumptions.defined()) return false;
    if (!params_) params_ = k_.parameters();  // (once per kernel: it scans every domain and shape)
    const auto& params = *params_;
    auto is_param = [&](const std::string& v) { return std::find(params.begin(), params.end(), v) != params.end(); };
    // the enclosing loops c needs, with the loops their bounds need in turn (outer first)
    std::vector<size_t> loops;
    std::set<std::string> need;
    for (auto& [v, a] : c.coef) need.insert(v);
    if (given)
      for (auto& [v, a] : given->coef) need.insert(v);
    for (size_t i = loop_context_.size(); i-- > 0;) {
      if (!need.count(loop_context_[i].first)) continue;
      loops.insert(loops.begin(), i);
      for (auto& b : loop_context_[i].second)
        for (auto& [v, a] : b.coef) need.insert(v);
    }
    std::string key_text;
    auto text_of = [](const Constraint& x) {
      std::string t;
      for (auto& [v, a] : x.coef) t += (t.empty() ? "" : " + ") + std::to_string(a) + "*" + v;
      return (t.empty() ? "0" : t) + " + " + std::to_string(x.constant);
    };
    std::string conds = text_of(c) + " < 0";
    if (given) conds += " and " + text_of(*given) + " >= 0";
    // the hardware inames the question mentions, and every block iname (an
    // empty grid, n < 1, makes every guard hold); the other thread inames lie
    // in constant ranges that change nothing, and a kernel with a warp
    // reduction per instruction has hundreds (each dimension more costs every
    // isl operation: 200 such reductions took 15 s)
    std::string dims;
    std::vector<std::string> hardware;
    for (auto& h : L_.hardware_inames)
      if (need.count(h) || k_.tag_of(h).kind == InameTag::Group) {
        hardware.push_back(h);
        dims += (dims.empty() ? "" : ", ") + h;
      }
    for (size_t i : loops) {
      dims += (dims.empty() ? "" : ", ") + loop_context_[i].first;
      for (auto& b : loop_context_[i].second) conds += " and " + text_of(b) + " >= 0";
    }
    for (auto& v : need)
      if (!hw_.count(v) && !is_param(v) &&
          std::none_of(loops.begin(), loops.end(), [&](size_t i) { return loop_context_[i].first == v; }))
        return false;  // a variable this check cannot bound
    std::string p;
    for (auto& n : params) p += (p.empty() ? "" : ", ") + n;
    std::string text = "[" + p + "] -> { [" + dims + "] : " + conds + " }";
    if (auto it = assumed_memo_.find(text); it != assumed_memo_.end()) return it->second;
    bool& result = assumed_memo_[text];
    result = false;
    isl_set* fails = isl_set_read_from_str(isl_context(), text.c_str());
    if (!fails) return false;
    isl::set s = isl::manage(fails);
    isl::set box = launch_box(s.get_space(), hardware);
    if (box.is_null()) return false;
    s = s.intersect(box);
    isl_set* assumed = isl_set_align_params(k_.assumptions.copy(), isl_set_get_space(s.get()));
    s = isl::manage(isl_set_intersect_params(s.release(), assumed));
    result = s.is_empty();
    return result;
  }

  // The launch box as an isl set over the hardware inames: local inames in
  // their constant ranges, group inames between their bounds in the parameters.
  isl::set launch_box(const isl::space& space, const std::vector<std::string>& hardware) {
    std::string key = std::to_string(isl_space_dim(space.get(), isl_dim_set));
    for (auto& h : hardware) key += " " + h;
    if (auto it = launch_boxes_.find(key); it != launch_boxes_.end()) return it->second;
    isl_set* box = isl_set_universe(space.copy());
    for (size_t i = 0; i < hardware.size(); ++i) {
      const std::string& h = hardware[i];
      isl_pw_aff* var = isl_pw_aff_var_on_domain(isl_local_space_from_space(space.copy()), isl_dim_set, unsigned(i));
      isl::pw_aff lo, hi;
      if (auto g = group_bounds_.find(h); g != group_bounds_.end()) {
        lo = islu::pw_aff_from_expr(g->second.first, space);
        hi = islu::pw_aff_from_expr(g->second.second, space);
      } else if (auto l = launch_.find(h); l != launch_.end()) {
        lo = islu::pw_aff_from_expr(make_int(l->second.first, it_), space);
        hi = islu::pw_aff_from_expr(make_int(l->second.second, it_), space);
      }
      if (lo.is_null() || hi.is_null()) {
        isl_pw_aff_free(var);
        isl_set_free(box);
        return isl::set();
      }
      box = isl_set_intersect(box, isl_pw_aff_ge_set(isl_pw_aff_copy(var), lo.release()));
      box = isl_set_intersect(box, isl_pw_aff_le_set(var, hi.release()));
    }
    launch_boxes_[key] = isl::manage(box);
    return launch_boxes_[key];
  }

  // the instruction with this id (an index: the schedule names each one, and a scan per name is quadratic)
  const Instruction& insn(const std::string& id) const { return *by_id_.at(id); }
  std::map<std::string, const Instruction*> by_id_;
  const LoopKernel& k_;
  const Linearization& L_;
  Type it_;
  std::map<std::string, std::pair<Expr, Expr>> group_bounds_;  // group iname -> (lowest, lowest + its axis' grid - 1)
  std::map<std::string, bool> assumed_memo_;                  // by the isl text of the question
  std::map<std::string, isl::set> launch_boxes_;              // by the set's dimensions: their count, then the hardware inames
  // bounds the kernel computes (LoopKernel::data_parameters), each with the loops its writers run in
  std::map<std::string, std::set<std::string>> data_params_;
  std::map<std::string, std::set<Constraint>> data_guards_;  // per instruction: see the constructor
  std::optional<std::vector<std::string>> params_;            // the kernel's parameters
  std::vector<std::pair<std::string, std::vector<Constraint>>> loop_context_;  // enclosing loops and their bounds
  std::vector<std::vector<Constraint>> domain_constraints_;
  std::map<std::string, std::vector<Constraint>> statement_constraints_;
  std::map<std::string, std::set<Constraint>> residual_;  // per instruction: guards of its own
  std::set<std::string> hw_;
  std::vector<std::string> order_;
  std::map<std::string, Expr> memo_;
  std::map<std::string, std::optional<std::pair<int64_t, int64_t>>> loop_ranges_;
  std::map<std::string, std::pair<int64_t, int64_t>> launch_;  // constant launch box of hardware inames
  std::map<std::string, std::pair<int64_t, int64_t>> ranges_;  // constant ranges of the enclosing loops
  std::map<std::string, std::map<std::string, std::pair<int64_t, int64_t>>> ranges_memo_;  // per instruction
};

}  // namespace

std::optional<FastResult> try_fast_path(const LoopKernel& k, const Linearization& L, std::string* why_not) {
  try {
    return FastPath(k, L).run();
  } catch (const Fail& f) {
    if (why_not) *why_not = f.why;
    return std::nullopt;
  }
}

}  // namespace loom::codegen
