// vectorize_loops: the codegen pass that gives `vec` inames vector loads and
// stores (float2/float4 and their integer and double kin on the CUDA target).
//
// The loop nest keeps a `vec` loop as a loop when its trip count is constant
// and no guard tells its lanes apart. Here each access of such a loop's
// assignments is examined: an access of a global argument or of local
// (shared) memory moves as one vector when its flattened offset is the lane
// plus something the same for every lane (contiguous), and that something is
// a multiple of the lane count for every parameter value the assumptions
// allow (aligned: a parameter contributes its proven divisibility, e.g. from
// `assume n mod 4 = 0`). Offsets are taken as polynomials, because a row
// stride (`i*n`) is not affine and isl cannot reason about it.
//
// Correctness of the order: each assignment runs for all lanes before the
// next (legal when what one writes, the others touch only through the same
// access, one element per lane); its vector loads happen before its lanes
// and a vector store after them, so an array it writes may only be read
// through the very access it writes (each lane then reads the element it
// alone writes); otherwise none of that array's accesses is vectorized.
// Private memory stays scalar (registers). A guard that does not mention
// the lanes moves around the loop; a loop with nothing to vectorize, or
// whose body holds anything but assignments, is unrolled, which is loopy's
// fallback for `vec`.
#include "vectorize.h"

#include <algorithm>
#include <numeric>

#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom::codegen {

namespace {

// A polynomial over variables: monomial (sorted variable names, repeated for
// powers) -> coefficient. An integer subterm that is no polynomial (a floor
// division or modulo, e.g. of a joined fetch iname) and does not mention the
// vector loop's variable is an opaque atom, named by its text after '#' so it
// never meets a variable's name: it is the same for every lane, and a
// multiple of nothing more than its coefficient says.
using Poly = std::map<std::vector<std::string>, int64_t>;

bool is_atom(const std::string& v) { return !v.empty() && v[0] == '#'; }

std::optional<Poly> polynomial(const Expr& e, const std::string& lane) {
  auto atom = [&]() -> std::optional<Poly> {
    if (!e.type().is_int() || mentions_var(e, lane)) return std::nullopt;
    return Poly{{{"#" + e.str()}, 1}};
  };
  switch (e.kind()) {
    case ExprKind::Int: {
      int64_t v = e.as<IntImm>()->value;
      return v ? Poly{{{}, v}} : Poly{};
    }
    case ExprKind::Var: return Poly{{{e.as<Var>()->name}, 1}};
    case ExprKind::Cast:
      if (!e.type().is_int()) return std::nullopt;
      return polynomial(e.as<Cast>()->value, lane);
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      if (u->op != UnOp::Neg) return atom();
      auto p = polynomial(u->a, lane);
      if (p)
        for (auto& [m, c] : *p) c = -c;
      return p;
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      if (b->op != BinOp::Add && b->op != BinOp::Sub && b->op != BinOp::Mul) return atom();
      auto x = polynomial(b->a, lane), y = polynomial(b->b, lane);
      if (!x || !y) return std::nullopt;
      Poly r;
      if (b->op == BinOp::Mul) {
        for (auto& [mx, cx] : *x)
          for (auto& [my, cy] : *y) {
            std::vector<std::string> m = mx;
            m.insert(m.end(), my.begin(), my.end());
            std::sort(m.begin(), m.end());
            r[m] += cx * cy;
          }
      } else {
        r = *x;
        for (auto& [m, c] : *y) r[m] += b->op == BinOp::Add ? c : -c;
      }
      for (auto it = r.begin(); it != r.end();) it = it->second == 0 ? r.erase(it) : std::next(it);
      return r;
    }
    default: return atom();
  }
}

// floor((A + v) / c) -> floor(A / c) and (A + v) mod c -> q (A / q mod
// c / q) + v, where q = gcd(c, A's coefficients) (A is a multiple of q, and
// so is A mod c) and the lane v stays within [0, q): the lane does not carry
// into the quotient (v alone when q = c). Such indices come from a
// temporary whose axes were split into pieces (split_array_axis, a tensor
// core's tile layout), accessed within a piece by the lanes.
class LaneOutOfFloors : public ExprMutator {
 public:
  LaneOutOfFloors(std::string lane, int64_t lo, int64_t lanes) : lane_(std::move(lane)), lo_(lo), lanes_(lanes) {}

 protected:
  Expr mutate_binary(const Binary& b, const Expr& self) override {
    Expr e = ExprMutator::mutate_binary(b, self);
    auto r = e.as<Binary>();
    if (!r || (r->op != BinOp::FloorDiv && r->op != BinOp::Mod)) return e;
    auto c = r->b.as<IntImm>();
    auto sum = r->a.as<Binary>();
    if (!c || c->value <= 0 || !sum || sum->op != BinOp::Add || lo_ < 0 || lo_ + lanes_ > c->value) return e;
    auto is_lane = [&](const Expr& x) {
      auto v = x.as<Var>();
      return v && v->name == lane_;
    };
    Expr rest = is_lane(sum->b) ? sum->a : is_lane(sum->a) ? sum->b : Expr();
    if (!rest.defined() || mentions_var(rest, lane_)) return e;
    auto poly = polynomial(rest, lane_);
    if (!poly) return e;
    int64_t q = c->value;
    for (auto& [m, coef] : *poly) q = std::gcd(q, coef);
    if (lo_ + lanes_ > q) return e;
    if (r->op == BinOp::FloorDiv) return make_binary(BinOp::FloorDiv, rest, r->b, r->type);
    Expr lane = is_lane(sum->b) ? sum->b : sum->a;
    if (q == c->value) return lane;
    Type t = r->type;
    Expr within = make_binary(BinOp::Mod, make_binary(BinOp::FloorDiv, rest, make_int(q, t), t), make_int(c->value / q, t), t);
    return make_binary(BinOp::Add, make_binary(BinOp::Mul, make_int(q, t), within, t), lane, t);
  }

 private:
  std::string lane_;
  int64_t lo_, lanes_;
};

class Collect : public ExprMutator {
 public:
  // only_unconditional: leave out the accesses in a select's branches,
  // which run for the lanes whose condition picks them only (a vector load
  // hoisted out of one could read past the array's end)
  explicit Collect(bool only_unconditional = false) : only_unconditional_(only_unconditional) {}
  std::vector<Expr> subscripts;

 protected:
  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    subscripts.push_back(self);
    return ExprMutator::mutate_subscript(s, self);
  }
  Expr mutate_select(const Select& s, const Expr& self) override {
    if (!only_unconditional_) return ExprMutator::mutate_select(s, self);
    mutate(s.cond);
    return self;
  }
  Expr mutate_binary(const Binary& b, const Expr& self) override {
    if (!only_unconditional_ || (b.op != BinOp::And && b.op != BinOp::Or)) return ExprMutator::mutate_binary(b, self);
    mutate(b.a);  // b.b runs only when b.a does not decide
    return self;
  }
  bool only_unconditional_;
};

class Vectorizer {
 public:
  Vectorizer(const LoopKernel& k, std::map<std::string, int64_t>& alignment) : k_(k), alignment_(alignment) {}

  StmtPtr visit(const StmtPtr& s) {
    if (s->kind == Stmt::For && s->vector_lanes) return vector_loop(s);
    return map_children(s, [&](const StmtPtr& c) { return visit(c); });
  }

 private:
  StmtPtr vector_loop(const StmtPtr& loop) {
    // a guard the lanes share (an instruction's predicate that does not
    // mention the vec iname) goes around the loop
    StmtPtr body = loop->children[0];
    while (body->kind == Stmt::Block && body->children.size() == 1) body = body->children[0];
    if (body->kind == Stmt::If && body->children.size() == 1 && lanes_agree(*loop, body->cond)) {
      auto inner = std::make_shared<Stmt>(*loop);
      inner->children = {body->children[0]};
      int64_t lo = loop->init.as<IntImm>()->value;
      return make_predicated(simplify(substitute(body->cond, {{loop->var, make_int(lo, loop->init.type())}})), vector_loop(inner),
                             body->insn_id);
    }
    std::vector<const Stmt*> assigns;
    std::vector<Expr> accesses;
    // `x = c ? a[...] : value` whose lanes disagree on c stays scalar (the
    // CUDA printer loads a guarded vector under the first lane's c)
    bool only_assignments = vector_assignments(loop->children[0], assigns);
    for (auto* a : assigns)
      if (auto sel = a->rhs.as<Select>(); sel && !lanes_agree(*loop, sel->cond)) return unrolled(loop);
    if (only_assignments && lanes_independent(*loop, assigns))
      for (auto* a : assigns)
        for (auto& e : vector_accesses(*loop, *a))
          if (std::none_of(accesses.begin(), accesses.end(), [&](const Expr& o) { return o.same_as(e); })) accesses.push_back(e);
    if (accesses.empty()) return unrolled(loop);
    auto n = std::make_shared<Stmt>(*loop);
    n->children = {visit(loop->children[0])};
    n->vector_accesses = std::move(accesses);
    return n;
  }

  // Whether a guard holds for all lanes or for none: it does not mention the
  // lane, or (a conjunction of) comparisons `lane + X < Y` whose Y - X is a
  // multiple of the lane count (lanes from a multiple of it): the edge of an
  // array whose size the assumptions make a multiple of the vector, say.
  bool lanes_agree(const Stmt& loop, const Expr& c) {
    if (!mentions_var(c, loop.var)) return true;
    auto b = c.as<Binary>();
    if (!b) return false;
    if (b->op == BinOp::And) return lanes_agree(loop, b->a) && lanes_agree(loop, b->b);
    bool strict = b->op == BinOp::Lt || b->op == BinOp::Gt;
    if (!strict && b->op != BinOp::Le && b->op != BinOp::Ge) return false;
    // small < big (or <=): the lane on the small side, once, with coefficient 1
    bool less = b->op == BinOp::Lt || b->op == BinOp::Le;
    auto d = polynomial(less ? b->b - b->a : b->a - b->b, loop.var);
    int64_t lanes = loop.vector_lanes, lo = loop.init.as<IntImm>()->value;
    if (!d || !d->count({loop.var}) || d->at({loop.var}) != -1 || lo % lanes != 0) return false;
    // big - small = R - lane: lane < R (strict) or lane < R + 1, alike for all lanes when that bound is a multiple of lanes
    for (auto& [m, coeff] : *d)
      if (std::count(m.begin(), m.end(), loop.var) && m.size() != 1) return false;
    return multiple_of_lanes(*d, loop.var, lanes, strict ? 0 : 1);
  }

  // Whether the polynomial without the lane's term, plus `constant`, is a
  // multiple of the lane count for every value the assumptions allow.
  bool multiple_of_lanes(const Poly& p, const std::string& lane, int64_t lanes, int64_t constant) {
    for (auto& [m, c] : p) {
      if (m.size() == 1 && m[0] == lane) continue;
      if (m.empty()) {
        constant += c;
        continue;
      }
      int64_t multiple = c;
      for (auto& v : m) multiple *= divisor(v, lanes);
      if (multiple % lanes != 0) return false;
    }
    return constant % lanes == 0;
  }

  // The assignments of a vec loop's body, which must hold nothing else.
  static bool vector_assignments(const StmtPtr& s, std::vector<const Stmt*>& out) {
    if (s->kind == Stmt::Block) {
      for (auto& c : s->children)
        if (!vector_assignments(c, out)) return false;
      return true;
    }
    if (s->kind != Stmt::Assign || is_collective(*s)) return false;
    out.push_back(s.get());
    return true;
  }

  // Whether running each assignment for all lanes before the next one keeps
  // the plain loop's meaning: what one assignment writes, another touches
  // only through the same access, one element per lane.
  bool lanes_independent(const Stmt& loop, const std::vector<const Stmt*>& assigns) {
    for (auto* a : assigns)
      if (atomic_instruction(k_, a->insn_id)) return false;
    if (assigns.size() == 1) return true;
    for (size_t i = 0; i < assigns.size(); ++i) {
      std::string written = name_of(assigns[i]->lhs);
      for (size_t j = 0; j < assigns.size(); ++j) {
        if (i == j) continue;
        Collect c;
        c.mutate(assigns[j]->rhs);
        c.mutate(assigns[j]->lhs);
        std::vector<Expr> touched;
        for (auto& e : c.subscripts)
          if (e.as<Subscript>()->name == written) touched.push_back(e);
        if (assigns[j]->lhs.as<Var>() && name_of(assigns[j]->lhs) == written) return false;
        if (mentions_var(assigns[j]->rhs, written)) return false;  // a scalar, shared by all lanes
        for (auto& e : touched)
          if (!e.same_as(assigns[i]->lhs) || !one_element_per_lane(loop, e)) return false;
      }
    }
    return true;
  }

  static std::string name_of(const Expr& lhs) {
    if (auto s = lhs.as<Subscript>()) return s->name;
    if (auto v = lhs.as<Var>()) return v->name;
    return "";
  }

  // Some index is the loop variable plus terms without it.
  static bool one_element_per_lane(const Stmt& loop, const Expr& access) {
    for (auto& idx : access.as<Subscript>()->indices) {
      auto p = polynomial(idx, loop.var);
      if (!p || !p->count({loop.var}) || std::abs(p->at({loop.var})) != 1) continue;
      if (std::all_of(p->begin(), p->end(), [&](auto& t) { return t.first == std::vector<std::string>{loop.var} ||
                                                                   !std::count(t.first.begin(), t.first.end(), loop.var); }))
        return true;
    }
    return false;
  }

  StmtPtr unrolled(const StmtPtr& loop) {
    int64_t lo = loop->init.as<IntImm>()->value;
    std::vector<StmtPtr> copies;
    Type it = k_.options.index_dtype;
    for (int64_t l = 0; l < loop->vector_lanes; ++l)
      copies.push_back(visit(substitute_stmt(loop->children[0], {{loop->var, make_int(lo + l, it)}})));
    return make_block(std::move(copies));
  }

  // The accesses that may move as vectors: those every lane runs, and the
  // load of a guarded copy `x = c ? a[...] : value` (c alike for all lanes:
  // checked by vector_loop), which the printer loads under c.
  std::vector<Expr> vector_accesses(const Stmt& loop, const Stmt& assign) {
    Collect reads(true);
    reads.mutate(assign.rhs);
    if (const Select* sel = guarded_copy(assign.rhs)) reads.subscripts.push_back(sel->t);
    if (assign.lhs.as<Subscript>()) reads.mutate(assign.lhs);  // the store, and reads in its subscript
    std::string written;
    if (auto s = assign.lhs.as<Subscript>()) written = s->name;
    else if (auto v = assign.lhs.as<Var>()) written = v->name;
    bool written_read_elsewhere = false;
    for (auto& r : reads.subscripts)
      if (r.as<Subscript>()->name == written && !r.same_as(assign.lhs)) written_read_elsewhere = true;
    // a plain copy (x[..] = y[..], or its zero-filled guarded form) moves
    // raw bytes: element types without a CUDA vector type (16-bit floats:
    // 8 of them in 16 bytes) move too
    Expr source = copy_source(assign.rhs).first;
    bool copy = assign.lhs.as<Subscript>() && source.defined() && source.type() == assign.lhs.type();
    std::vector<Expr> out;
    for (auto& r : reads.subscripts) {
      const Subscript& s = *r.as<Subscript>();
      if (s.name == written && written_read_elsewhere) continue;
      if (std::any_of(out.begin(), out.end(), [&](const Expr& o) { return o.same_as(r); })) continue;
      if (contiguous_and_aligned(loop, r, copy)) out.push_back(r);
    }
    return out;
  }

  bool contiguous_and_aligned(const Stmt& loop, const Expr& access, bool copy) {
    const Subscript& s = *access.as<Subscript>();
    const Argument* arg = k_.find_argument(s.name);
    const Temporary* temp = k_.find_temporary(s.name);
    bool global = arg && arg->kind == Argument::Array;
    if (!global && !(temp && temp->space == AddressSpace::Local)) return false;
    int64_t lanes = loop.vector_lanes;
    int64_t bytes = lanes * access.type().bytes();
    if (!has_vector_type(access.type(), lanes) && !(copy && access.type().lanes == 1 && access.type().bits() == 16 && (bytes == 8 || bytes == 16)))
      return false;
    int64_t lo = loop.init.as<IntImm>()->value;
    auto poly = polynomial(LaneOutOfFloors(loop.var, lo, lanes).mutate(k_.flat_index(s)), loop.var);
    if (!poly) return false;
    // contiguous: the loop variable appears exactly as "+ 1 * var"
    for (auto& [m, c] : *poly) {
      bool has_var = std::count(m.begin(), m.end(), loop.var) > 0;
      if (has_var && !(m.size() == 1 && c == 1)) return false;
    }
    if (!poly->count({loop.var})) return false;
    // aligned: every other term a multiple of the lane count
    if (!multiple_of_lanes(*poly, loop.var, lanes, lo)) return false;
    if (global) alignment_[s.name] = std::max(alignment_[s.name], lanes * access.type().bytes());
    return true;
  }

  // The largest power of two up to `lanes` that the assumptions prove
  // divides parameter v (1 for inames and unconstrained parameters).
  int64_t divisor(const std::string& v, int64_t lanes) {
    if (!k_.assumptions.defined() || k_.has_iname(v) || is_atom(v)) return 1;
    auto key = std::make_pair(v, lanes);
    if (auto it = divisors_.find(key); it != divisors_.end()) return it->second;
    isl::set assumed = islu::to_isl(k_.assumptions);
    int64_t best = 1;
    for (int64_t q = lanes; q > 1; q /= 2) {
      isl::set multiple(assumed.ctx(), "[" + v + "] -> { : " + v + " mod " + std::to_string(q) + " = 0 }");
      if (assumed.is_subset(multiple)) {
        best = q;
        break;
      }
    }
    return divisors_[key] = best;
  }

  const LoopKernel& k_;
  std::map<std::string, int64_t>& alignment_;
  std::map<std::pair<std::string, int64_t>, int64_t> divisors_;
};

// Arrays with a vec axis (tag_array_axes) promise vectors: every access whose
// vec-axis index runs over a `vec` iname must move as one vector in the final
// loop nest (a vector loop lists it among its vector accesses); KernelError
// naming the access and why otherwise.
class VectorAxisCheck {
 public:
  explicit VectorAxisCheck(const LoopKernel& k) : k_(k) {}

  void visit(const StmtPtr& s, const Stmt* vector_loop = nullptr) {
    if (s->kind == Stmt::For && s->vector_lanes && !s->vector_accesses.empty()) vector_loop = s.get();
    if (s->kind == Stmt::Assign && !s->insn_id.empty()) check_assignment(*s, vector_loop);
    for (auto& c : s->children) visit(c, vector_loop);
  }

 private:
  void check_assignment(const Stmt& assign, const Stmt* loop) {
    Collect c;
    c.mutate(assign.rhs);
    c.mutate(assign.lhs);
    for (auto& e : c.subscripts) {
      const Subscript& s = *e.as<Subscript>();
      const Argument* a = k_.find_argument(s.name);
      if (!a || a->vector_axis < 0 || size_t(a->vector_axis) >= s.indices.size()) continue;
      const Expr& lane_index = s.indices[size_t(a->vector_axis)];
      bool in_vector = loop && mentions_var(lane_index, loop->var);
      if (in_vector) {
        if (std::none_of(loop->vector_accesses.begin(), loop->vector_accesses.end(), [&](const Expr& v) { return v.same_as(e); }))
          throw KernelError("kernel '" + k_.name + "': array '" + s.name + "' has a vec axis (tag_array_axes), but " + e.str() +
                            " in the vec loop over '" + loop->var + "' cannot move as one vector: it is not contiguous and aligned " +
                            "for every size the assumptions allow, or another access of the loop writes '" + s.name + "'");
        continue;
      }
      // unrolled before it could be vectorized: the instruction as written names a vec iname on the vec axis
      const Instruction* insn = nullptr;
      for (auto& i : k_.instructions)
        if (i.id == assign.insn_id) insn = &i;
      if (!insn) continue;
      for (auto& iname : insn->within_inames)
        if (k_.tag_of(iname).kind == InameTag::Vec && vec_axis_mentions(*insn, s.name, a->vector_axis, iname))
          throw KernelError("kernel '" + k_.name + "': array '" + s.name + "' has a vec axis (tag_array_axes), but instruction '" +
                            insn->id + "' reads or writes it in lanes of '" + iname + "' that run one by one (a guard tells the " +
                            "lanes apart, or the vec loop holds more than assignments); its accesses cannot move as vectors");
    }
  }

  static bool vec_axis_mentions(const Instruction& insn, const std::string& array, int axis, const std::string& iname) {
    Collect c;
    c.mutate(insn.rhs);
    if (insn.lhs.defined()) c.mutate(insn.lhs);
    for (auto& e : c.subscripts) {
      const Subscript& s = *e.as<Subscript>();
      if (s.name == array && size_t(axis) < s.indices.size() && mentions_var(s.indices[size_t(axis)], iname)) return true;
    }
    return false;
  }

  const LoopKernel& k_;
};

}  // namespace

StmtPtr vectorize_loops(const LoopKernel& k, const StmtPtr& body, std::map<std::string, int64_t>& alignment) {
  StmtPtr out = Vectorizer(k, alignment).visit(body);
  check_vector_axes(k, out);
  return out;
}

void check_vector_axes(const LoopKernel& k, const StmtPtr& body) {
  if (std::none_of(k.arguments.begin(), k.arguments.end(), [](const Argument& a) { return a.vector_axis >= 0; })) return;
  VectorAxisCheck(k).visit(body);
}

}  // namespace loom::codegen
