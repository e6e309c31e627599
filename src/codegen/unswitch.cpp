// unswitch_partial_tiles (see unswitch.h): full tiles without the guards of
// the partial last one. The fast path guards each unrolled step of a tile by
// its own bound (a reduction's k tile: one `if` per group of k); ptxas
// cannot move shared-memory loads across those branches and keeps more
// registers live (SGEMM at 4000^3: 3626 us with the guards, 3190 us when
// the sizes were assumed to be multiples of the tile). Testing all the
// guards once per iteration and running an unguarded copy of the body when
// they hold gives the full tiles the code of the multiple-size kernel.
#include "unswitch.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "loom/constraints.h"

namespace loom::codegen {

namespace {

size_t count_stmts(const StmtPtr& s) {
  size_t n = 1;
  for (auto& c : s->children) n += count_stmts(c);
  return n;
}

class Unswitcher {
 public:
  explicit Unswitcher(const LoopKernel& k) : k_(k) {
    for (auto& p : k.parameters()) params_.insert(p);
  }

  StmtPtr run(const StmtPtr& s, const std::set<std::string>& uniform) {
    if (s->kind == Stmt::For) {
      std::set<std::string> inner = uniform;
      inner.insert(s->var);  // (the continuation test mentions the variable itself)
      bool var_uniform = s->vector_lanes == 0 && is_uniform(s->init, uniform) && is_uniform(s->cond, inner);
      if (!var_uniform) inner.erase(s->var);
      StmtPtr body = run(s->children[0], inner);
      if (var_uniform && !contains_unswitched(body)) body = unswitch(body, s->var, inner);
      if (body == s->children[0]) return s;
      auto n = std::make_shared<Stmt>(*s);
      n->children = {body};
      return n;
    }
    return map_children(s, [&](const StmtPtr& c) { return run(c, uniform); });
  }

 private:
  // Whether e is the same for every thread of a block: integer arithmetic of
  // parameters, block inames and uniform loop variables (no memory).
  bool is_uniform(const Expr& e, const std::set<std::string>& uniform) const {
    if (!e.defined()) return true;
    bool memory = false;
    for_each_subscript(e, [&](const Subscript&) { memory = true; });
    if (memory) return false;
    std::set<std::string> vars;
    collect_free_vars(e, vars);
    for (auto& v : vars) {
      if (uniform.count(v) || params_.count(v)) continue;
      if (k_.has_iname(v) && k_.tag_of(v).kind == InameTag::Group) continue;
      return false;
    }
    return true;
  }

  bool contains_unswitched(const StmtPtr& s) const {
    if (made_.count(s.get())) return true;
    for (auto& c : s->children)
      if (contains_unswitched(c)) return true;
    return false;
  }

  // The guards in `body` (ifs without else) that mention `var` and are uniform.
  void collect(const StmtPtr& s, const std::string& var, const std::set<std::string>& uniform, std::vector<Expr>& out) const {
    if (s->kind == Stmt::If && s->children.size() == 1 && mentions_var(s->cond, var) && is_uniform(s->cond, uniform)) {
      bool seen = false;
      for (auto& g : out) seen |= ExprEqual()(g, s->cond);
      if (!seen) out.push_back(s->cond);
    }
    for (auto& c : s->children) collect(c, var, uniform, out);
  }

  StmtPtr without(const StmtPtr& s, const std::vector<Expr>& guards) const {
    if (s->kind == Stmt::If && s->children.size() == 1)
      for (auto& g : guards)
        if (ExprEqual()(g, s->cond)) return without(s->children[0], guards);
    return map_children(s, [&](const StmtPtr& c) { return without(c, guards); });
  }

  // The conjunction of the guards, keeping of conditions that differ only in
  // their constant (l >= 32 * k + 5, l >= 32 * k + 9, ...) the strongest.
  static Expr conjunction(const std::vector<Expr>& guards) {
    std::vector<Expr> parts;
    std::function<void(const Expr&)> split = [&](const Expr& e) {
      auto b = e.as<Binary>();
      if (b && b->op == BinOp::And) {
        split(b->a);
        split(b->b);
      } else {
        parts.push_back(e);
      }
    };
    for (auto& g : guards) split(g);
    // part -> (linear form without its constant, constant) for x >= 0 forms
    std::map<std::map<std::string, int64_t>, std::pair<int64_t, Expr>> strongest;
    std::vector<Expr> others;
    for (auto& p : parts) {
      auto b = p.as<Binary>();
      std::optional<AffineConstraint> f;
      if (b && (b->op == BinOp::Ge || b->op == BinOp::Gt || b->op == BinOp::Le || b->op == BinOp::Lt)) {
        bool ge = b->op == BinOp::Ge || b->op == BinOp::Gt;
        Expr diff = ge ? make_binary(BinOp::Sub, b->a, b->b, b->a.type()) : make_binary(BinOp::Sub, b->b, b->a, b->a.type());
        f = affine_form(diff);
        if (f && (b->op == BinOp::Gt || b->op == BinOp::Lt)) f->constant -= 1;
      }
      if (!f) {
        bool seen = false;
        for (auto& o : others) seen |= ExprEqual()(o, p);
        if (!seen) others.push_back(p);
        continue;
      }
      auto it = strongest.find(f->coef);
      if (it == strongest.end() || f->constant < it->second.first) strongest[f->coef] = {f->constant, p};
    }
    Expr all;
    auto add = [&](const Expr& e) { all = all.defined() ? make_binary(BinOp::And, all, e, types::boolean) : e; };
    for (auto& [coef, c] : strongest) add(c.second);
    for (auto& o : others) add(o);
    return all;
  }

  StmtPtr unswitch(const StmtPtr& body, const std::string& var, const std::set<std::string>& uniform) {
    std::vector<Expr> guards;
    collect(body, var, uniform, guards);
    // Two different guards at least: the steps of an unrolled tile, each with
    // its own bound. One condition, even where it guards several places (a
    // double-buffered fill's `k_outer + 1 <= last` around the a and the b
    // fetch), is left alone: copying the body for it measured 4% slower on
    // sgemm_vec (3152 -> 3295 us, H200), a code size cost with no branch to
    // save inside the products.
    if (guards.size() < 2) return body;
    if (count_stmts(body) > 200000) return body;  // (bounded code size)
    StmtPtr r = make_if(conjunction(guards), without(body, guards), body);
    made_.insert(r.get());
    return r;
  }

  const LoopKernel& k_;
  std::set<std::string> params_;
  std::unordered_set<const Stmt*> made_;
};

}  // namespace

StmtPtr unswitch_partial_tiles(const LoopKernel& k, const StmtPtr& body) { return Unswitcher(k).run(body, {}); }

}  // namespace loom::codegen
