// lower_warp_matrices (warp_matrices.h): after the loop nest is built, a
// tensor_core tile's loops become lane code. The kernel as transformed runs
// the tile's (m, n) loops in one logical thread per warp; here axis l.0
// becomes the warp's 32 lanes and each lane runs the four (m, n) elements
// the mma.sync fragment layout gives it (m16n8k16: m = lane / 4 + 8 * (e / 2),
// n = 2 * (lane mod 4) + e mod 2), the loops' bounds turned into guards. A
// private temporary indexed by [.., m, .., n, ..] in the tile (an
// accumulator) keeps those four (two) elements: [.., e, ..]. The CPU target and
// the interpreter run exactly this code. On CUDA the product's (m, n, k)
// nest is also recognised and wrapped in a WarpMatrix block the printer
// emits as one mma.sync, loading each lane's operand fragments through the
// operands' own expressions (guards become zeros).
#include "warp_matrices.h"

#include <algorithm>

#include "loom/analysis.h"
#include "loom/isl_util.h"

namespace loom::codegen {

namespace {

StmtPtr unwrap(StmtPtr s) {
  while (s->kind == Stmt::Block && s->children.size() == 1 && !s->matrix) s = s->children[0];
  return s;
}

std::vector<Expr> conjuncts(const Expr& e) {
  if (auto b = e.as<Binary>(); b && b->op == BinOp::And) {
    auto l = conjuncts(b->a), r = conjuncts(b->b);
    l.insert(l.end(), r.begin(), r.end());
    return l;
  }
  return {e};
}

Expr conjunction(const std::vector<Expr>& cs) {
  Expr r;
  for (auto& c : cs) r = r.defined() ? make_binary(BinOp::And, r, c, types::boolean) : c;
  return r;
}

// Statement s with every expression mapped by f (children first).
StmtPtr map_exprs(const StmtPtr& s, const std::function<Expr(const Expr&)>& f) {
  auto n = std::make_shared<Stmt>(*s);
  for (Expr* e : {&n->init, &n->cond, &n->lhs, &n->rhs})
    if (e->defined()) *e = f(*e);
  for (auto& a : n->vector_accesses) a = f(a);
  for (auto& c : n->children) c = map_exprs(c, f);
  return n;
}

class Lowering {
 public:
  explicit Lowering(GeneratedKernel& g) : g_(g), k_(g.kernel), it_(g.kernel.options.index_dtype) {}

  void run() {
    bool any = false;
    for (auto& [n, t] : k_.iname_tags) any |= t.is_matrix() && k_.has_iname(n);
    if (!any) return;
    tile_shape();
    fail_unless_lanes_free();
    lane_ = fresh_name("lane");
    cuda_ = g_.target.kind == TargetInfo::Cuda;
    StmtPtr body = rewrite(g_.body);
    check_fragment_uses(body);
    if (cuda_ && products_ == 0)
      fail("no loop nest over the tile's m, n and k holds the product's update alone (it needs the three loops directly "
           "inside one another around it, nothing else in them); see the kernel's schedule");
    // the lanes: an iname of its own on l.0 (every target binds it to the thread's x index)
    g_.kernel.domains.edit().push_back(Domain::parse("{[" + lane_ + "]: 0 <= " + lane_ + " < " + std::to_string(lanes_) + "}"));
    g_.kernel.iname_tags.edit()[lane_] = InameTag{InameTag::Local, 0};
    g_.hardware_inames.push_back(HardwareIname{lane_, InameTag{InameTag::Local, 0}, make_int(0, it_)});
    g_.block[0] = lanes_;
    if (g_.threads_per_block() > g_.target.max_threads_per_block)
      fail("its " + std::string(warpgroup_ ? "warpgroups (" : "warps (") + std::to_string(g_.block[1] * g_.block[2]) + " of " +
           std::to_string(lanes_) + " lanes) exceed the " + std::to_string(g_.target.max_threads_per_block) + " threads a block may have");
    auto& temps = g_.kernel.temporaries.edit();
    for (auto& [name, f] : fragments_) {
      Temporary& t = temps[name];
      int lo = std::min(f.m_dim, f.n_dim), hi = std::max(f.m_dim, f.n_dim);
      t.shape.erase(t.shape.begin() + hi);
      t.shape.erase(t.shape.begin() + lo);
      t.shape.insert(t.shape.begin() + lo, make_int(elements_, it_));
    }
    g_.body = body;
  }

 private:
  struct Fragment {
    int m_dim = -1, n_dim = -1;
  };

  [[noreturn]] void fail(const std::string& why) const {
    throw KernelError("kernel '" + k_.name + "': tensor_core: " + why);
  }

  std::string fresh_name(const std::string& base) const {
    std::string n = base;
    for (int i = 0; k_.has_iname(n) || k_.find_argument(n) || k_.find_temporary(n); ++i) n = base + "_" + std::to_string(i);
    return n;
  }

  InameTag::Kind tag(const std::string& v) const { return k_.has_iname(v) ? k_.tag_of(v).kind : InameTag::Seq; }

  // The tiles' shape, from the extents of their m and n inames (tensor_core
  // checked them): 16 x 8 on a warp (mma.sync), or 64 x N on a warpgroup
  // (wgmma); one kernel's tiles are all of one kind and one N.
  void tile_shape() {
    bool first = true;
    for (auto& [name, t] : k_.iname_tags) {
      if (!k_.has_iname(name) || (t.kind != InameTag::MatrixM && t.kind != InameTag::MatrixN)) continue;
      auto r = islu::constant_range(k_, name);
      if (!r || r->first != 0) fail("the tile's iname '" + name + "' does not run from 0 over a constant extent");
      int64_t extent = r->second + 1;
      if (t.kind == InameTag::MatrixM) {
        if (!first && extent != tile_m_) fail("the kernel mixes tiles of " + std::to_string(tile_m_) + " and " + std::to_string(extent) + " rows");
        warpgroup_ = extent == 64;
        tile_m_ = int(extent);
        first = false;
      } else if (tile_n_seen_ && extent != tile_n_) {
        fail("its tiles have different widths (" + std::to_string(tile_n_) + " and " + std::to_string(extent) + ")");
      } else {
        tile_n_ = int(extent);
        tile_n_seen_ = true;
      }
    }
    lanes_ = warpgroup_ ? 4 * g_.target.warp_size : g_.target.warp_size;  // (a warpgroup is four warps)
    elements_ = tile_m_ * tile_n_ / lanes_;
  }

  // Axis l.0 is the lanes: an iname on it must span exactly one warp, and
  // nothing inside a tile may run within one (the tile's elements pick the lane).
  void fail_unless_lanes_free() const {
    const std::string who = warpgroup_ ? "warpgroup" : "warp";
    if (g_.block[0] != 1 && g_.block[0] != lanes_)
      fail("axis l.0 holds the " + who + "'s " + std::to_string(lanes_) + " lanes, but the kernel's l.0 inames span " +
           std::to_string(g_.block[0]) + " threads; put " + who + "s on l.1 and l.2, and tag l.0 only inames of extent " + std::to_string(lanes_));
    for (auto& insn : k_.instructions) {
      bool in_tile = false;
      std::string on_lanes;
      for (auto& n : insn.within_inames) {
        in_tile |= tag(n) == InameTag::MatrixM;
        if (k_.tag_of(n) == InameTag{InameTag::Local, 0}) on_lanes = n;
      }
      if (in_tile && !on_lanes.empty())
        fail("instruction '" + insn.id + "' runs within the tile and within '" + on_lanes + "' (l.0), the lanes the tile is spread over");
    }
  }

  Expr lane() const { return make_var(lane_, it_); }
  Expr num(int64_t v) const { return make_int(v, it_); }
  Expr bin(BinOp op, Expr a, Expr b) const { return make_binary(op, std::move(a), std::move(b), it_); }
  // the fragment layout of m16n8k16's accumulator (and A's rows, B's
  // columns); m8n8k4's (float64) is its top half, elements 0 and 1; a
  // warpgroup's m64nNk16 accumulator repeats it: warp w of the four holds
  // rows 16w.., and element e of a lane is in columns 8 (e / 4)..
  Expr row_of(int e) const {
    if (!warpgroup_) return simplify(bin(BinOp::Add, bin(BinOp::FloorDiv, lane(), num(4)), num(8 * (e / 2))));
    Expr warp = bin(BinOp::Mul, bin(BinOp::FloorDiv, lane(), num(g_.target.warp_size)), num(16));
    Expr in_warp = bin(BinOp::FloorDiv, bin(BinOp::Mod, lane(), num(g_.target.warp_size)), num(4));
    return simplify(bin(BinOp::Add, bin(BinOp::Add, warp, in_warp), num(8 * ((e / 2) % 2))));
  }
  Expr col_of(int e) const {
    return simplify(bin(BinOp::Add, bin(BinOp::Mul, bin(BinOp::Mod, lane(), num(4)), num(2)), num(8 * (e / 4) + e % 2)));
  }

  // Where loop `f`'s variable may take value v: its bounds, without those
  // every value of the tile (0..extent-1) meets.
  std::vector<Expr> loop_bounds(const Stmt& f, int64_t extent, const Expr& v) const {
    if (f.step != 1) fail("the loop over '" + f.var + "' steps by " + std::to_string(f.step));
    std::vector<Expr> r;
    auto lo = f.init.as<IntImm>();
    if (!lo || lo->value > 0) r.push_back(make_binary(BinOp::Ge, v, f.init, types::boolean));
    for (auto& c : conjuncts(f.cond)) {
      auto b = c.as<Binary>();
      auto var = b ? b->a.as<Var>() : nullptr;
      auto bound = b ? b->b.as<IntImm>() : nullptr;
      if (var && var->name == f.var && bound && ((b->op == BinOp::Le && bound->value >= extent - 1) || (b->op == BinOp::Lt && bound->value >= extent)))
        continue;
      r.push_back(simplify(substitute(c, {{f.var, v}})));
    }
    return r;
  }

  // Rewrites the tile's fragment accesses ([.., m, .., n, ..] of a private
  // temporary) to element `e`.
  Expr fragments(const Expr& x, const std::string& m, const std::string& n, const Expr& e) {
    struct M : ExprMutator {
      Lowering* self;
      std::string m, n;
      Expr e;
      Expr mutate_subscript(const Subscript& s, const Expr& me) override {
        Expr r = ExprMutator::mutate_subscript(s, me);
        auto sub = r.as<Subscript>();
        const Temporary* t = self->k_.find_temporary(sub->name);
        if (!t || t->space == AddressSpace::Local || t->space == AddressSpace::Global) return r;
        int dm = -1, dn = -1;
        for (size_t d = 0; d < sub->indices.size(); ++d)
          if (auto v = sub->indices[d].as<Var>()) {
            if (v->name == m) dm = int(d);
            if (v->name == n) dn = int(d);
          }
        if (dm < 0 || dn < 0) return r;
        Fragment& f = self->fragments_[sub->name];
        if (f.m_dim < 0) f = {dm, dn};
        if (f.m_dim != dm || f.n_dim != dn)
          self->fail("temporary '" + sub->name + "' is accessed as " + r.str() + " and elsewhere with the tile's inames in other places");
        std::vector<Expr> idx = sub->indices;
        int lo = std::min(dm, dn), hi = std::max(dm, dn);
        idx.erase(idx.begin() + hi);
        idx.erase(idx.begin() + lo);
        idx.insert(idx.begin() + lo, e);
        return make_subscript(sub->name, idx, sub->type);
      }
    } mut;
    mut.self = this;
    mut.m = m;
    mut.n = n;
    mut.e = e;
    return mut.mutate(x);
  }

  // The (m, n) loop pair `outer` (whose body is the partner's loop) as four
  // copies of the body, one per element of the lane's fragment.
  StmtPtr distribute(const StmtPtr& outer) {
    StmtPtr inner = unwrap(outer->children[0]);
    InameTag::Kind want = tag(outer->var) == InameTag::MatrixM ? InameTag::MatrixN : InameTag::MatrixM;
    if (inner->kind != Stmt::For || tag(inner->var) != want)
      fail("the loop over '" + outer->var + "' must hold the tile's other loop (" + (want == InameTag::MatrixN ? "mma.n" : "mma.m") +
           ") directly, with nothing beside it");
    const Stmt& mf = tag(outer->var) == InameTag::MatrixM ? *outer : *inner;
    const Stmt& nf = tag(outer->var) == InameTag::MatrixM ? *inner : *outer;
    StmtPtr body = rewrite(inner->children[0]);
    std::vector<StmtPtr> copies;
    for (int e = 0; e < elements_; ++e) {
      Expr row = row_of(e), col = col_of(e);
      std::vector<Expr> valid = loop_bounds(mf, tile_m_, row);
      for (auto& c : loop_bounds(nf, tile_n_, col)) valid.push_back(c);
      // (a triangular tile's bounds name the other loop: that too is the element's row or column)
      for (auto& c : valid) c = simplify(substitute(c, {{mf.var, row}, {nf.var, col}}));
      StmtPtr b = map_exprs(body, [&](const Expr& x) { return fragments(x, mf.var, nf.var, num(e)); });
      b = substitute_stmt(b, {{mf.var, row}, {nf.var, col}});
      copies.push_back(valid.empty() ? b : make_if(conjunction(valid), b));
    }
    return make_block(copies);
  }

  // The product's nest: loops over the tile's m, n and k (any order, each
  // holding the next alone) around guards and the update acc = acc + x * y
  // (or acc + (x1 * y1 + x2 * y2 ...): syr2k's two products into one
  // accumulator). A WarpMatrix for each product, in order, or none when s
  // is not such a nest.
  std::vector<std::shared_ptr<WarpMatrix>> products(const StmtPtr& s) {
    std::map<InameTag::Kind, const Stmt*> loops;
    std::vector<Expr> guards;  // (ifs between the loops too: a guard of the warp's, or of the tile's bounds)
    StmtPtr at = s;
    while (true) {
      if (at->kind == Stmt::For && k_.has_iname(at->var) && k_.tag_of(at->var).is_matrix() && !loops.count(tag(at->var))) {
        loops[tag(at->var)] = at.get();
      } else if (at->kind == Stmt::If && at->children.size() == 1) {
        for (auto& c : conjuncts(at->cond)) guards.push_back(c);
      } else {
        break;
      }
      at = unwrap(at->children[0]);
    }
    if (loops.size() != 3) return {};
    if (at->kind != Stmt::Assign || at->op != Stmt::Op::Compute) return {};
    const Stmt& mf = *loops[InameTag::MatrixM];
    const Stmt& nf = *loops[InameTag::MatrixN];
    const Stmt& kf = *loops[InameTag::MatrixK];
    auto add = at->rhs.as<Binary>();
    if (!add || add->op != BinOp::Add) return {};
    Expr summand = add->a.same_as(at->lhs) ? add->b : add->b.same_as(at->lhs) ? add->a : Expr();
    if (!summand.defined()) return {};
    std::string why;
    auto ps = matrix_products(summand, mf.var, nf.var, why);
    if (!ps) fail("the update of instruction '" + at->insn_id + "': " + why);
    std::vector<std::shared_ptr<WarpMatrix>> out;
    for (auto& p : *ps) out.push_back(warp_matrix(&p, at.get(), mf, nf, kf, guards));
    return out;
  }

  // The instruction for one product p of the update `at` in the nest of mf,
  // nf and kf under `guards`.
  std::shared_ptr<WarpMatrix> warp_matrix(const MatrixProduct* p, const Stmt* at, const Stmt& mf, const Stmt& nf, const Stmt& kf,
                                          const std::vector<Expr>& guards) {
    const bool f64 = p->input == types::float64;
    const Type accumulates = f64 ? types::float64 : types::float32;
    if (!(at->lhs.type() == accumulates))
      fail("the update of instruction '" + at->insn_id + "' accumulates in " + at->lhs.type().name() + "; the instruction accumulates in " +
           accumulates.name());
    auto w = std::make_shared<WarpMatrix>();
    auto k_range = islu::constant_range(k_, kf.var);  // (the shape's k: tensor_core checked the loop's extent against it)
    if (!k_range || k_range->first != 0) fail("the tile's iname '" + kf.var + "' does not run from 0 over a constant extent");
    const int kk = int(k_range->second + 1);
    const std::string shape = "m" + std::to_string(tile_m_) + "n" + std::to_string(tile_n_) + "k" + std::to_string(kk);
    const MatrixInstruction* mi = g_.target.find_matrix_instruction(tile_m_, tile_n_, kk, p->input);
    if (!mi)
      fail("architecture " + g_.target.arch + " has no " + shape + " matrix instruction for " + (p->tf32 ? "tf32" : p->input.name()) +
           (warpgroup_ ? " (wgmma needs sm_90a: --arch sm_90a)" : f64 && tile_m_ == 16 ? " (float64's m16n8k4/k8/k16 need sm_90)" : " (mma.sync needs sm_80 or later)"));
    const std::string types = p->tf32 ? "tf32.tf32" : f64 ? "f64.f64" : p->input.kind == ScalarKind::BFloat16 ? "bf16.bf16" : "f16.f16";
    const std::string acc = f64 ? "f64" : "f32";
    w->instruction = warpgroup_ ? "wgmma.mma_async.sync.aligned." + shape + ".f32." + types
                                : "mma.sync.aligned." + shape + ".row.col." + acc + "." + types + "." + acc;
    w->warpgroup = warpgroup_;
    w->m = tile_m_;
    w->n = tile_n_;
    w->k = kk;
    w->tf32 = p->tf32;
    w->input = p->input;
    w->m_var = mf.var;
    w->n_var = nf.var;
    w->k_var = kf.var;
    w->lane = lane_;
    w->element = fresh_name("element");
    w->a = p->a;
    w->b = p->b;
    // A bound that ties the tile's rows to its columns (syrk's j <= i) says
    // which elements of the accumulator the sum is for: the instruction
    // computes the whole tile, and the elements outside it are never
    // stored (the accumulator's initialization and its store keep the bound
    // as guards, element by element). The operands are read where their
    // own bounds allow, as for any tile.
    auto rows_or_columns = [&](std::vector<Expr> bounds) {
      bounds.erase(std::remove_if(bounds.begin(), bounds.end(),
                                  [&](const Expr& c) { return mentions_var(c, mf.var) && mentions_var(c, nf.var); }),
                   bounds.end());
      return bounds;
    };
    std::vector<Expr> va = rows_or_columns(loop_bounds(mf, tile_m_, make_var(mf.var, it_))),
                      vb = rows_or_columns(loop_bounds(nf, tile_n_, make_var(nf.var, it_)));
    // A bound of k that ties it to the rows (trmm's k > i) is the domain's,
    // not an edge of an array: it masks operand A alone (a product with a
    // zero is zero), and no zero-filled tile stands in for it.
    std::vector<Expr> tied_a, tied_b;
    for (auto& c : loop_bounds(kf, kk, make_var(kf.var, it_))) {
      bool on_m = mentions_var(c, mf.var), on_n = mentions_var(c, nf.var);
      if (on_m && on_n)
        fail("the bound " + c.str() + " of the tile's loops in instruction '" + at->insn_id + "' ties its rows to its columns");
      if (on_m) tied_a.push_back(c);
      else if (on_n) tied_b.push_back(c);
      else {
        va.push_back(c);
        vb.push_back(c);
      }
    }
    size_t bounds_a = va.size(), bounds_b = vb.size();
    std::vector<Expr> loop_a = va, loop_b = vb;
    va.clear();
    vb.clear();
    for (auto& g : guards) {
      bool on_m = mentions_var(g, mf.var), on_n = mentions_var(g, nf.var);
      if (!on_m && !on_n && !mentions_var(g, kf.var)) {  // the warp's own: around the instruction
        w->uniform.push_back(g);
        continue;
      }
      if (on_m && on_n) continue;  // (the accumulator's elements the sum is for, as a tied bound above)
      if (!on_n) va.push_back(g);
      if (!on_m) vb.push_back(g);
    }
    va.insert(va.end(), loop_a.begin(), loop_a.end());  // (the loops' bounds last: a zero-filled operand drops them)
    vb.insert(vb.end(), loop_b.begin(), loop_b.end());
    // An operand read from a zero-filled tile (add_prefetch fill_value=0: the
    // whole box copied, zeros outside the array) needs no loop-bound guards:
    // inside the box, where the tile's loops stop short, the tile holds 0.
    auto zero_filled = [&](const Expr& operand) {
      auto sub = operand.as<Subscript>();
      const Temporary* t = sub ? k_.find_temporary(sub->name) : nullptr;
      return t && t->space == AddressSpace::Local && !t->zero_fill_of.empty();
    };
    if (zero_filled(p->a)) va.resize(va.size() - bounds_a);
    if (zero_filled(p->b)) vb.resize(vb.size() - bounds_b);
    va.insert(va.end(), tied_a.begin(), tied_a.end());
    vb.insert(vb.end(), tied_b.begin(), tied_b.end());
    w->a_valid = conjunction(va);
    w->b_valid = conjunction(vb);
    if (warpgroup_) {
      if (p->tf32 && !p->tf32_truncated)
        fail("the update of instruction '" + at->insn_id + "' rounds its factors to nearest (round_tf32), but the warpgroup reads float32 "
             "tiles and drops their 13 low mantissa bits: write trunc_tf32 (tensor_core tf32=true with an m64nNk8 shape does)");
      if (w->a_valid.defined() || w->b_valid.defined())
        fail("the update of instruction '" + at->insn_id + "' is guarded within the tile (" + conjunction(va.empty() ? vb : va).str() +
             "); wgmma reads whole tiles from shared memory: fetch them with fill_value=0, or assume sizes that are multiples of the tile");
      // (TF32: the tiles hold the float32 values; the call is the instruction's own rounding)
      auto tile_of = [&](const Expr& f) { return p->tf32 ? f.as<Call>()->args[0] : f; };
      w->a_desc = descriptor(tile_of(p->a), mf.var, kf.var, "A", at->insn_id);
      w->b_desc = descriptor(tile_of(p->b), nf.var, kf.var, "B", at->insn_id);
    }
    w->accumulator = fragments(at->lhs, mf.var, nf.var, make_var(w->element, it_));
    if (w->accumulator.same_as(at->lhs)) fail("the update of instruction '" + at->insn_id + "' does not write a temporary private to the tile");
    return w;
  }

  // The shared-memory descriptor of a wgmma operand: its 64 (A) or N (B)
  // rows of 16 k values must lie in the canonical K-major layout without
  // swizzling: 8 x 8 core matrices of 16-byte rows stored contiguously
  // (128 bytes), core matrices adjacent along k `lbo` bytes apart and along
  // the rows `sbo` bytes apart. Proven with isl for every value of the
  // other inames (a layout that only sometimes fits is refused), as is the
  // 16-byte alignment of the tile's start.
  SharedDescriptor descriptor(const Expr& operand, const std::string& rows, const std::string& k, const std::string& which, const std::string& insn) {
    auto sub = operand.as<Subscript>();
    const Temporary* t = sub ? k_.find_temporary(sub->name) : nullptr;
    const std::string says = "instruction '" + insn + "': wgmma reads its operand " + which + " (" + operand.str() + ") ";
    if (!t || t->space != AddressSpace::Local)
      fail(says + "from shared memory: prefetch it into a local temporary (add_prefetch) first");
    const int64_t per_row = 16 / operand.type().bytes();  // elements in a core matrix's 16-byte row
    const int64_t row_count = which == "A" ? tile_m_ : tile_n_;
    Expr off = k_.flat_index(*sub);
    std::set<std::string> vars;
    collect_free_vars(off, vars);
    vars.insert(rows);
    vars.insert(k);
    auto at = [&](int64_t r, int64_t c) -> std::optional<int64_t> {
      std::map<std::string, Expr> point;
      for (auto& v : vars) point[v] = num(0);
      point[rows] = num(r);
      point[k] = num(c);
      Expr value = simplify(substitute(off, point));  // (kept: as<> points into it)
      auto i = value.as<IntImm>();
      return i ? std::optional<int64_t>(i->value) : std::nullopt;
    };
    auto o = at(0, 0), along_k = at(0, per_row), along_rows = at(8, 0);
    if (!o || !along_k || !along_rows) fail(says + "through an index isl cannot read (" + off.str() + ")");
    const bool swizzled = t->swizzle_bytes == 128;
    const int64_t row_bytes = 128, row_elements = row_bytes / operand.type().bytes();
    // no swizzle: core matrices lbo apart along k, sbo apart along the rows;
    // 128-byte swizzle: rows of 128 bytes, 8-row blocks of 1024 bytes (the
    // swizzle's period) one after another, the k values along each row
    int64_t lbo = swizzled ? 16 / operand.type().bytes() : *along_k - *o, sbo = swizzled ? 8 * row_elements : *along_rows - *o;
    const std::string layout = swizzled ? "rows of " + std::to_string(row_elements) + " k values (128 bytes, swizzle_array 128) one after another"
                                        : "K-major core matrices (8 rows of " + std::to_string(per_row) + " k values, 16 contiguous bytes each)";
    Expr r = make_var(rows, it_), c = make_var(k, it_);
    Expr canonical = swizzled ? bin(BinOp::Add, bin(BinOp::Mul, r, num(row_elements)), c)
                              : bin(BinOp::Add, bin(BinOp::Add, bin(BinOp::Mul, bin(BinOp::Mod, r, num(8)), num(per_row)), bin(BinOp::Mod, c, num(per_row))),
                                    bin(BinOp::Add, bin(BinOp::Mul, bin(BinOp::FloorDiv, c, num(per_row)), num(lbo)),
                                        bin(BinOp::Mul, bin(BinOp::FloorDiv, r, num(8)), num(sbo))));
    Expr start = substitute(off, {{rows, num(0)}, {k, num(0)}});
    std::string names;
    for (auto& v : vars) names += (names.empty() ? "" : ", ") + v;
    isl::set box = islu::to_isl(Domain::parse("{[" + names + "]: 0 <= " + rows + " < " + std::to_string(row_count) + " and 0 <= " + k + " < " +
                                              std::to_string(2 * per_row) + "}"));
    auto never = [&](const Expr& e) {
      isl::pw_aff pa = islu::pw_aff_from_expr(e, box.space());
      if (pa.is_null()) fail(says + "through an index isl cannot read (" + off.str() + ")");
      return box.intersect(isl::manage(isl_pw_aff_non_zero_set(pa.release()))).is_empty();
    };
    const bool fits = never(bin(BinOp::Sub, bin(BinOp::Sub, off, start), canonical));
    if (!fits && swizzled && operand.type().bytes() == 4)  // (the transpose bit is for 16-bit operands only)
      fail(says + "in a layout wgmma cannot read as TF32: it needs " + layout + " (TF32 operands are K-major only: store the tile with k contiguous)");
    if (!fits && swizzled)
      if (auto mn = mn_major_descriptor(operand, rows, k, row_count, *o, off, start, r, c, never, at, says)) return *mn;
    if (!fits)
      fail(says + "in a layout wgmma cannot describe: it needs " + layout +
           (swizzled ? "" : "; split the temporary's axes into 8s (split_array_axis) and order them [rows / 8, k / 8, rows mod 8, k mod 8] "
                            "(tag_array_axes with N<k> tags), or swizzle rows of 128 bytes (swizzle_array)"));
    if (!never(bin(BinOp::Mod, start, num(per_row))))
      fail(says + "from a tile that does not start on 16 bytes");
    // (swizzled: the tile starts in the first row of a 1024-byte block, its
    // 16 k values within that row, so the hardware's swizzle is the printer's)
    if (swizzled && !never(bin(BinOp::Sub, bin(BinOp::Mod, start, num(8 * row_elements)), bin(BinOp::Mod, start, num(row_elements)))))
      fail(says + "from a tile whose first row is not the first of an 8-row (1024-byte) block of the swizzle");
    if (swizzled && !never(bin(BinOp::Mod, start, num(2 * per_row))))
      fail(says + "from a tile whose k values do not start on 32 bytes of a swizzled row");
    return described(operand, rows, k, lbo, sbo, t->swizzle_bytes, false, says, "core matrices");
  }

  // The descriptor of a proven layout (strides in elements), once its strides
  // fit a descriptor's fields: positive multiples of 16 bytes below 256 KiB.
  SharedDescriptor described(const Expr& operand, const std::string& rows, const std::string& k, int64_t lbo, int64_t sbo, int swizzle,
                             bool mn_major, const std::string& says, const std::string& pieces) {
    const int64_t bytes = operand.type().bytes();
    for (int64_t x : {lbo * bytes, sbo * bytes})
      if (x <= 0 || x % 16 != 0 || x >= (int64_t(1) << 18))
        fail(says + "with " + pieces + " " + std::to_string(x) + " bytes apart; a descriptor holds positive multiples of 16 below 256 KiB");
    SharedDescriptor d;
    d.start = simplify(substitute(operand, {{rows, num(0)}, {k, num(0)}}));
    d.lbo = lbo * bytes;
    d.sbo = sbo * bytes;
    d.swizzle = swizzle;
    d.mn_major = mn_major;
    return d;
  }

  // The 128-byte swizzle with the operand's rows (A: m, B: n) contiguous
  // (MN-major, the instruction's transpose bit: b stored [k, n], say): each
  // k is a 128-byte row of 64 (16-bit) values along the rows, 8 k rows a
  // 1024-byte block of the swizzle; blocks `sbo` apart along k and `lbo`
  // apart from one 64 rows to the next. The tile starts on a block.
  // (o: the flat offset at rows 0, k 0 with the other inames 0)
  template <class Never, class At>
  std::optional<SharedDescriptor> mn_major_descriptor(const Expr& operand, const std::string& rows, const std::string& k, int64_t row_count,
                                                      int64_t o, const Expr& off, const Expr& start, const Expr& r, const Expr& c, Never& never,
                                                      At& at, const std::string& says) {
    const int64_t row_elements = 128 / operand.type().bytes();
    auto along_k = at(0, 8);
    // (one block of rows: its lbo is never used; a block's size keeps the field valid)
    auto along_rows = row_count > row_elements ? at(row_elements, 0) : std::optional<int64_t>(o + 8 * row_elements);
    if (!along_k || !along_rows) return std::nullopt;
    int64_t sbo = *along_k - o, lbo = *along_rows - o;
    Expr canonical = bin(BinOp::Add, bin(BinOp::Add, bin(BinOp::Mod, r, num(row_elements)), bin(BinOp::Mul, bin(BinOp::Mod, c, num(8)), num(row_elements))),
                         bin(BinOp::Add, bin(BinOp::Mul, bin(BinOp::FloorDiv, r, num(row_elements)), num(lbo)),
                             bin(BinOp::Mul, bin(BinOp::FloorDiv, c, num(8)), num(sbo))));
    if (!never(bin(BinOp::Sub, bin(BinOp::Sub, off, start), canonical))) return std::nullopt;
    if (!never(bin(BinOp::Mod, start, num(8 * row_elements))))
      fail(says + "from a tile that does not start on a 1024-byte block of the swizzle");
    return described(operand, rows, k, lbo, sbo, 128, true, says, "blocks");
  }

  StmtPtr rewrite(const StmtPtr& s) {
    if (s->kind == Stmt::For) {
      InameTag::Kind t = tag(s->var);
      bool tile = t == InameTag::MatrixM || t == InameTag::MatrixN;
      if (cuda_ && (tile || t == InameTag::MatrixK))
        if (auto ws = products(s); !ws.empty()) {
          cuda_ = false;  // the lane code beside the first, for analyses
          StmtPtr lanes = rewrite(s);
          cuda_ = true;
          std::vector<StmtPtr> parts;
          for (auto& w : ws) {
            auto b = std::make_shared<Stmt>(*make_block(parts.empty() ? std::vector<StmtPtr>{lanes} : std::vector<StmtPtr>{}));
            b->matrix = w;
            parts.push_back(b);
            ++products_;
          }
          StmtPtr all = parts.size() == 1 ? parts[0] : make_block(parts);
          // the warp's guards around it (every lane takes the same branch; the products' are the same)
          return ws[0]->uniform.empty() ? all : make_if(conjunction(ws[0]->uniform), all);
        }
      if (tile && cuda_) {
        // the product's update beside other statements in the tile's loops
        // (init, update and store of a tile whose k is whole): one (m, n)
        // nest per statement, so the update's nest holds it alone. Each
        // element keeps its statements' order; elements are lanes anyway.
        StmtPtr inner = unwrap(s->children[0]);
        StmtPtr body = inner->kind == Stmt::For ? unwrap(inner->children[0]) : nullptr;
        if (body && body->kind == Stmt::Block && body->children.size() > 1 && !body->matrix) {
          std::vector<StmtPtr> parts;
          bool any = false;
          for (auto& c : body->children) {
            auto in = std::make_shared<Stmt>(*inner);
            in->children = {c};
            auto out = std::make_shared<Stmt>(*s);
            out->children = {in};
            any |= !products(out).empty();
            parts.push_back(out);
          }
          if (any) {
            for (auto& p : parts) p = rewrite(p);
            return make_block(parts);
          }
        }
      }
      if (tile) return distribute(s);
    }
    return map_children(s, [&](const StmtPtr& c) { return rewrite(c); });
  }

  // Every access of a fragment temporary now names its element.
  void check_fragment_uses(const StmtPtr& s) {
    auto check = [&](const Expr& e) {
      if (!e.defined()) return;
      for_each_subscript(e, [&](const Subscript& sub) {
        auto it = fragments_.find(sub.name);
        if (it == fragments_.end()) return;
        const Temporary* t = k_.find_temporary(sub.name);
        if (sub.indices.size() == t->shape.size())
          fail("temporary '" + sub.name + "' holds the tile's elements, one lane each; " + make_subscript(sub.name, sub.indices, sub.type).str() +
               " reads or writes it outside the tile's loops or away from its (m, n) element");
      });
    };
    for (const Expr* e : {&s->init, &s->cond, &s->lhs, &s->rhs}) check(*e);
    for (auto& c : s->children) check_fragment_uses(c);
  }

  GeneratedKernel& g_;
  const LoopKernel& k_;
  Type it_;
  bool warpgroup_ = false, tile_n_seen_ = false;
  int tile_m_ = 16, tile_n_ = 8, lanes_ = 32, elements_ = 4;  // (lanes_: set from the target's warp size)
  std::string lane_;
  bool cuda_ = false;
  int products_ = 0;
  std::map<std::string, Fragment> fragments_;
};

}  // namespace

void lower_warp_matrices(GeneratedKernel& g) { Lowering(g).run(); }

}  // namespace loom::codegen
