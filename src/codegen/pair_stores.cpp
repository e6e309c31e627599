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
      std::vector<StmtPtr> out;
      bool changed = false;
      for (size_t i = 0; i < s->children.size(); ++i) {
        if (i + 1 < s->children.size())
          if (StmtPtr pair = paired(single(s->children[i]), single(s->children[i + 1]))) {
            out.push_back(pair);
            ++i;
            changed = true;
            continue;
          }
        StmtPtr c = run(s->children[i]);
        changed |= c != s->children[i];
        out.push_back(c);
      }
      return changed ? make_block(out) : s;
    }
    if (s->kind == Stmt::For && s->vector_lanes) return s;  // (a vec loop is the vectorizer's)
    return map_children(s, [&](const StmtPtr& c) { return run(c); });
  }

 private:
  // A block of one statement is that statement (an unrolled loop's iterations are such blocks).
  static const Stmt& single(const StmtPtr& s) {
    const Stmt* x = s.get();
    while (x->kind == Stmt::Block && !x->matrix && x->children.size() == 1) x = x->children[0].get();
    return *x;
  }

  StmtPtr paired(const Stmt& a, const Stmt& b) {
    if (a.kind != Stmt::Assign || b.kind != Stmt::Assign || a.op != Stmt::Op::Compute || b.op != Stmt::Op::Compute) return nullptr;
    auto la = a.lhs.as<Subscript>(), lb = b.lhs.as<Subscript>();
    if (!la || !lb || la->name != lb->name || la->indices.size() != lb->indices.size() || la->indices.empty()) return nullptr;
    const Argument* arg = k_.find_argument(la->name);
    Type t = a.lhs.type();
    bool offset = arg && arg->offset.defined() && !(arg->offset.as<IntImm>() && arg->offset.as<IntImm>()->value == 0);
    if (!arg || arg->kind != Argument::Array || !arg->strides.empty() || offset || t.bytes() != 4 || !has_vector_type(t, 2))
      return nullptr;
    // the values: adjacent elements of one private temporary (a register tile's write-back)
    auto ra = a.rhs.as<Subscript>(), rb = b.rhs.as<Subscript>();
    const Temporary* acc = ra ? k_.find_temporary(ra->name) : nullptr;
    if (!ra || !rb || ra->name != rb->name || !acc || acc->space != AddressSpace::Private || ra->indices.size() != rb->indices.size() ||
        ra->indices.empty() || b.rhs.type() != a.rhs.type())
      return nullptr;
    for (size_t d = 0; d < ra->indices.size(); ++d)
      if (!differ_by(ra->indices[d], rb->indices[d], d + 1 == ra->indices.size() ? 1 : 0)) return nullptr;
    size_t last = la->indices.size() - 1;
    for (size_t d = 0; d <= last; ++d)
      if (!differ_by(la->indices[d], lb->indices[d], d == last ? 1 : 0)) return nullptr;
    if (!even(k_.flat_index(*la))) return nullptr;
    Type it = la->indices[last].type();
    std::string v = "loom_pair";
    Expr lane = make_var(v, it);
    std::vector<Expr> idx = la->indices;
    idx[last] = make_binary(BinOp::Add, idx[last], lane, it);
    Expr lhs = make_subscript(la->name, idx, t);
    std::vector<Expr> from = ra->indices;
    from.back() = make_binary(BinOp::Add, from.back(), make_var(v, from.back().type()), from.back().type());
    Expr rhs = make_subscript(ra->name, from, a.rhs.type());
    auto loop = std::make_shared<Stmt>(*make_for(v, make_int(0, it), make_binary(BinOp::Le, lane, make_int(1, it), types::boolean), 1,
                                                 make_assign(a.insn_id, lhs, rhs)));
    loop->vector_lanes = 2;
    loop->vector_accesses = {loop->children[0]->lhs};
    int64_t& al = g_.argument_alignment[la->name];
    al = std::max<int64_t>(al, 8);
    return loop;
  }

  // Whether b - a is `by` for every value of their variables (isl: the
  // indices are affine in inames and parameters, with floor and mod).
  bool differ_by(const Expr& a, const Expr& b, int by) {
    if (a.str() == b.str()) return by == 0;
    std::set<std::string> vars;
    collect_vars(a, vars);
    collect_vars(b, vars);
    std::string names;
    for (auto& v : vars) names += (names.empty() ? "" : ", ") + v;
    isl::set universe(assumptions_.ctx(), "[" + names + "] -> { : }");
    isl::pw_aff pa = islu::pw_aff_from_expr(a, universe.get_space()), pb = islu::pw_aff_from_expr(b, universe.get_space());
    if (pa.is_null() || pb.is_null()) return false;
    isl::pw_aff shifted = isl::manage(isl_pw_aff_add_constant_val(pa.copy(), isl_val_int_from_si(universe.ctx().get(), by)));
    return pb.ne_set(shifted).is_empty();
  }
  static void collect_vars(const Expr& e, std::set<std::string>& out) {
    struct Vars : ExprVisitor {
      std::set<std::string>& out;
      explicit Vars(std::set<std::string>& o) : out(o) {}
      void visit_var(const Var& n) override { out.insert(n.name); }
    } v(out);
    v.visit(e);
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
