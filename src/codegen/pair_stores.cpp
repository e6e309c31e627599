// pair_adjacent_stores (see pair_stores.h): a peephole over the statement
// runs of the loop nest. The pair becomes the loop the printer already knows
// how to move as one vector (codegen/vectorize.cpp's Stmt::vector_accesses):
// lane v stores the first value's element plus v to the first store's
// element plus v, so the lanes move exactly what the two statements did.
#include "pair_stores.h"

#include <set>

#include <isl/aff.h>
#include <isl/set.h>

#include "loom/isl_util.h"

namespace loom::codegen {

namespace {

class Pairing {
 public:
  explicit Pairing(GeneratedKernel& g) : g_(g), k_(g.kernel), assumptions_(islu::assumptions_of(k_)) {}

  StmtPtr run(const StmtPtr& s) {
    if (s->kind == Stmt::Block && !s->matrix) {
      // the run of statements the block prints (a block inside it is its
      // statements: an unrolled element loop gives each element its own)
      std::vector<StmtPtr> flat, out;
      flatten(s, flat);
      bool paired_any = false;
      for (size_t i = 0; i < flat.size(); ++i) {
        if (i + 1 < flat.size())
          if (StmtPtr pair = paired(*flat[i], *flat[i + 1])) {
            out.push_back(pair);
            ++i;
            paired_any = true;
            continue;
          }
        // an epilogue's lanes: store, the next element's private value, store (the value moves first)
        if (i + 2 < flat.size() && independent(*flat[i], *flat[i + 1]))
          if (StmtPtr pair = paired(*flat[i], *flat[i + 2])) {
            out.push_back(flat[i + 1]);
            out.push_back(pair);
            i += 2;
            paired_any = true;
            continue;
          }
        out.push_back(flat[i]);
      }
      if (!paired_any) return map_children(s, [&](const StmtPtr& c) { return run(c); });
      for (auto& c : out) c = run(c);
      return make_block(out);
    }
    if (s->kind == Stmt::For && s->vector_lanes) return s;  // (a vec loop is the vectorizer's)
    return map_children(s, [&](const StmtPtr& c) { return run(c); });
  }

 private:
  // a block of one statement as that statement
  static const Stmt& only(const StmtPtr& s) {
    const Stmt* x = s.get();
    while (x->kind == Stmt::Block && !x->matrix && x->children.size() == 1) x = x->children[0].get();
    return *x;
  }
  static void flatten(const StmtPtr& s, std::vector<StmtPtr>& out) {
    for (auto& c : s->children)
      if (c->kind == Stmt::Block && !c->matrix) flatten(c, out);
      else out.push_back(c);
  }

  StmtPtr paired(const Stmt& a, const Stmt& b) {
    // two guarded stores whose guards hold together (a partial tile's
    // write-back with even sizes: column 2q + 1 exists where 2q does)
    // (the stores first: most guarded statements are no pair, and asking isl
    // about two guards costs more than that)
    if (a.kind == Stmt::If && b.kind == Stmt::If && a.children.size() == 1 && b.children.size() == 1) {
      StmtPtr inner = paired(only(a.children[0]), only(b.children[0]));
      return inner && same_condition(a.cond, b.cond) ? make_predicated(a.cond, inner, a.insn_id) : nullptr;
    }
    if (a.kind != Stmt::Assign || b.kind != Stmt::Assign || a.op != Stmt::Op::Compute || b.op != Stmt::Op::Compute) return nullptr;
    auto la = a.lhs.as<Subscript>(), lb = b.lhs.as<Subscript>();
    if (!la || !lb || la->name != lb->name || la->indices.size() != lb->indices.size() || la->indices.empty()) return nullptr;
    const Argument* arg = k_.find_argument(la->name);
    Type t = a.lhs.type();
    bool half = t.kind == ScalarKind::Float16 || t.kind == ScalarKind::BFloat16;  // (a __half2 / __nv_bfloat162 of 4 bytes)
    if (!(half || (t.bytes() == 4 && has_vector_type(t, 2)))) return nullptr;
    // a global array in its plain layout (aligned to the pair at launch), or
    // a shared tile (an epilogue staged for wide stores: 16-byte aligned)
    const Temporary* staged = arg ? nullptr : k_.find_temporary(la->name);
    if (arg ? arg->kind != Argument::Array || !arg->plain_layout() : !staged || staged->space != AddressSpace::Local || staged->swizzle_bytes)
      return nullptr;
    if (b.rhs.type() != a.rhs.type()) return nullptr;
    Expr rhs = lanes_of(a.rhs, b.rhs);
    if (!rhs.defined()) return nullptr;
    size_t last = la->indices.size() - 1;
    for (size_t d = 0; d <= last; ++d)
      if (!differ_by(la->indices[d], lb->indices[d], d == last ? 1 : 0)) return nullptr;
    if (!even(k_.flat_index(*la))) return nullptr;
    Type it = la->indices[last].type();
    const std::string& v = kLane;
    Expr lane = make_var(v, it);
    std::vector<Expr> idx = la->indices;
    idx[last] = make_binary(BinOp::Add, idx[last], lane, it);
    Expr lhs = make_subscript(la->name, idx, t);
    auto loop = std::make_shared<Stmt>(*make_for(v, make_int(0, it), make_binary(BinOp::Le, lane, make_int(1, it), types::boolean), 1,
                                                 make_assign(a.insn_id, lhs, rhs)));
    loop->vector_lanes = 2;
    loop->vector_accesses = {loop->children[0]->lhs};
    if (arg) {
      int64_t& al = g_.argument_alignment[la->name];
      al = std::max<int64_t>(al, 2 * t.bytes());
    }
    return loop;
  }

  static constexpr const char* kLane = "loom_pair";

  // Lane v's value of the pair: a's value with each of its subscripts whose
  // element in b's value is one further along moved by v (the rest of the two
  // values alike, term for term); undefined when the values are not so, or
  // read no private temporary (the pairs are a register tile's write-back).
  Expr lanes_of(const Expr& a, const Expr& b) {
    std::vector<const Subscript*> sa = subscripts(a), sb = subscripts(b);
    if (sa.size() != sb.size() || sa.empty() || placeheld(a) != placeheld(b)) return Expr();
    bool registers = false;
    std::vector<int> moved(sa.size(), -1);  // the index of each subscript that moves with the lane
    for (size_t s = 0; s < sa.size(); ++s) {
      if (sa[s]->name != sb[s]->name || sa[s]->indices.size() != sb[s]->indices.size()) return Expr();
      const Temporary* t = k_.find_temporary(sa[s]->name);
      registers |= t && t->space == AddressSpace::Private;
      for (size_t d = 0; d < sa[s]->indices.size(); ++d) {
        if (differ_by(sa[s]->indices[d], sb[s]->indices[d], 0)) continue;
        if (moved[s] >= 0 || !differ_by(sa[s]->indices[d], sb[s]->indices[d], 1)) return Expr();
        moved[s] = int(d);
      }
    }
    if (!registers) return Expr();
    struct Move : ExprMutator {
      const std::vector<int>& moved;
      size_t next = 0;
      explicit Move(const std::vector<int>& m) : moved(m) {}
      Expr mutate_subscript(const Subscript& n, const Expr& self) override {
        int d = moved[next++];  // (numbered before its indices' subscripts, as subscripts() lists them)
        Expr e = ExprMutator::mutate_subscript(n, self);
        if (d < 0) return e;
        auto s = e.as<Subscript>();
        std::vector<Expr> idx = s->indices;
        Type it = idx[size_t(d)].type();
        idx[size_t(d)] = make_binary(BinOp::Add, idx[size_t(d)], make_var(kLane, it), it);
        return make_subscript(s->name, idx, e.type());
      }
    } move(moved);
    return move.mutate(a);
  }
  // The subscripts of e, each before those in its indices (for_each_subscript's order, which Move follows).
  static std::vector<const Subscript*> subscripts(const Expr& e) {
    std::vector<const Subscript*> found;
    for_each_subscript(e, [&](const Subscript& s) { found.push_back(&s); });
    return found;
  }
  // e's text with each subscript a placeholder: two values alike but for their elements print alike.
  static std::string placeheld(const Expr& e) {
    struct Hold : ExprMutator {
      int n = 0;
      Expr mutate_subscript(const Subscript&, const Expr& self) override { return make_var("loom_s" + std::to_string(n++), self.type()); }
    } h;
    return h.mutate(e).str();
  }
  // Whether the private assignment c may move before store a: it writes an
  // element a does not read (a different one, provably) and reads nothing a writes.
  bool independent(const Stmt& a, const Stmt& c) {
    if (a.kind != Stmt::Assign || c.kind != Stmt::Assign || c.op != Stmt::Op::Compute) return false;
    auto lc = c.lhs.as<Subscript>();
    auto la = a.lhs.as<Subscript>();
    const Temporary* t = lc ? k_.find_temporary(lc->name) : nullptr;
    if (!lc || !la || !t || t->space != AddressSpace::Private) return false;
    for (const Subscript* r : subscripts(c.rhs))
      if (r->name == la->name) return false;
    for (const Subscript* r : subscripts(a.rhs)) {
      if (r->name != lc->name) continue;
      bool apart = false;
      for (size_t d = 0; d < r->indices.size() && d < lc->indices.size(); ++d)
        apart |= differ_by(r->indices[d], lc->indices[d], 1) || differ_by(r->indices[d], lc->indices[d], -1);
      if (!apart) return false;
    }
    return true;
  }

  // Every value of the free variables of a and b (as parameters).
  isl::set universe_of(const Expr& a, const Expr& b) const {
    std::set<std::string> vars;
    collect_free_vars(a, vars);
    collect_free_vars(b, vars);
    std::string names;
    for (auto& v : vars) names += (names.empty() ? "" : ", ") + v;
    return isl::set(assumptions_.ctx(), "[" + names + "] -> { : }");
  }

  // Whether b - a is `by` for every value of their variables (isl: the
  // indices are affine in inames and parameters, with floor and mod).
  bool differ_by(const Expr& a, const Expr& b, int by) {
    if (a.str() == b.str()) return by == 0;
    isl::set universe = universe_of(a, b);
    isl::pw_aff pa = islu::pw_aff_from_expr(a, universe.get_space()), pb = islu::pw_aff_from_expr(b, universe.get_space());
    if (pa.is_null() || pb.is_null()) return false;
    isl::pw_aff shifted = isl::manage(isl_pw_aff_add_constant_val(pa.copy(), isl_val_int_from_si(universe.ctx().get(), by)));
    return pb.ne_set(shifted).is_empty();
  }

  // Whether conditions a and b hold for the same values of their variables
  // where the kernel's assumptions hold (isl).
  bool same_condition(const Expr& a, const Expr& b) {
    if (a.str() == b.str()) return true;
    isl::set universe = universe_of(a, b);
    isl::set sa = islu::condition_set(a, universe.get_space()), sb = islu::condition_set(b, universe.get_space());
    if (sa.is_null() || sb.is_null()) return false;
    isl::set params = assumptions_;
    // (the assumptions' parameters are among the names or absent from both conditions)
    isl::set within = universe.intersect_params(params.params());
    return sa.intersect(within).is_equal(sb.intersect(within));
  }

  // Whether e is even for every value: term by term.
  bool even(const Expr& e) {
    if (auto i = e.as<IntImm>()) return i->value % 2 == 0;
    if (auto v = e.as<Var>()) return even_parameter(v->name);
    auto b = e.as<Binary>();
    if (!b) return false;
    if (b->op == BinOp::Mul) return even(b->a) || even(b->b);
    if (b->op == BinOp::Add || b->op == BinOp::Sub) return even(b->a) && even(b->b);
    return false;
  }
  bool even_parameter(const std::string& p) {
    const Argument* a = k_.find_argument(p);
    if (!a || a->kind != Argument::Value || !a->dtype.is_int()) return false;
    isl::set odd(assumptions_.ctx(), "[" + p + "] -> { : exists (q: " + p + " = 2q + 1) }");
    isl::set params = assumptions_;
    return params.intersect_params(odd).is_empty();
  }

  GeneratedKernel& g_;
  const LoopKernel& k_;
  isl::set assumptions_;
};

}  // namespace

void pair_adjacent_stores(GeneratedKernel& g) {
  if (g.target.kind != TargetInfo::Cuda) return;
  g.body = Pairing(g).run(g.body);
}

}  // namespace loom::codegen
