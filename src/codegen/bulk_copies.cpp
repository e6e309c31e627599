// plan_bulk_copies: where a tma_copy tile's fills become one bulk tensor copy
// each (see bulk_copies.h). The proofs are isl's, over the fill's iteration
// set: with the inames around the fill ("outer") fixed, the tile's leading
// indices (its copy of a double buffer) and the difference between each
// array index and the tile index that follows it must each take one value
// over the fill's own inames; then the box starts where the fill's own
// inames start, and the copy engine, told the array's shape, the box and
// where it starts, writes what the threads would have written (and zeros
// where the box leaves the array, which only a zero-filled fetch may do).
#include "bulk_copies.h"

#include <algorithm>

#include <isl/map.h>
#include <isl/set.h>

#include "loom/error.h"
#include "loom/isl_util.h"

namespace loom::codegen {

namespace {

[[noreturn]] void refuse(const LoopKernel& k, const std::string& temporary, const std::string& why) {
  throw KernelError("kernel '" + k.name + "': tma_copy of '" + temporary + "': " + why);
}

// Whether pa, on `domain` (dims: `outer` first, then the rest), takes one
// value for each value of the first `outer` dims.
bool fixed_by_outer(const isl::set& domain, const isl::pw_aff& pa, unsigned outer) {
  isl_map* m = isl_map_intersect_domain(isl_map_from_pw_aff(pa.copy()), domain.copy());
  unsigned n = unsigned(isl_map_dim(m, isl_dim_in));
  m = isl_map_project_out(m, isl_dim_in, outer, n - outer);
  isl_bool single = isl_map_is_single_valued(m);
  isl_map_free(m);
  return single == isl_bool_true;
}

void collect_assigns(const StmtPtr& s, std::vector<const Stmt*>& path, const std::string& id, std::vector<std::vector<const Stmt*>>& found) {
  path.push_back(s.get());
  if (s->kind == Stmt::Assign && s->insn_id == id) found.push_back(path);
  for (auto& c : s->children) collect_assigns(c, path, id, found);
  path.pop_back();
}

// Whether s holds only assignments of instruction `id` (with loops, guards and blocks around them).
bool only_fill(const StmtPtr& s, const std::string& id) {
  if (s->kind == Stmt::Assign) return s->insn_id == id;
  if (s->kind == Stmt::Barrier || s->matrix) return false;
  for (auto& c : s->children)
    if (!only_fill(c, id)) return false;
  return true;
}

// The loop of `var` and, through `enclosed`, whether another loop holds it.
const Stmt* find_loop(const StmtPtr& s, const std::string& var, bool* enclosed, bool inside = false) {
  if (s->kind == Stmt::For && s->var == var) {
    *enclosed = inside;
    return s.get();
  }
  for (auto& c : s->children)
    if (auto f = find_loop(c, var, enclosed, inside || s->kind == Stmt::For)) return f;
  return nullptr;
}

// The fill's place in the loop nest: the loops of its own inames hold it
// alone and sit inside every other loop, and no guard around it tests them
// (its own inames on threads have no loop, but a guard would show them).
void check_nest(const GeneratedKernel& g, const std::string& temp, const Instruction& insn, const std::set<std::string>& tile) {
  const LoopKernel& k = g.kernel;
  std::vector<const Stmt*> path;
  std::vector<std::vector<const Stmt*>> found;
  collect_assigns(g.body, path, insn.id, found);
  for (auto& p : found) {
    bool inside = false;  // within a loop of the fill's own inames
    for (size_t i = 0; i + 1 < p.size(); ++i) {
      const Stmt* s = p[i];
      if (s->kind == Stmt::For && tile.count(s->var)) {
        inside = true;
        StmtPtr self = i ? nullptr : g.body;
        if (i)
          for (auto& c : p[i - 1]->children)
            if (c.get() == s) self = c;
        if (self && !only_fill(self, insn.id))
          refuse(k, temp, "the loop of '" + s->var + "' (an iname of fill '" + insn.id + "') holds more than the fill; one copy replaces the loop");
      } else if (s->kind == Stmt::For && inside) {
        refuse(k, temp, "the loop of '" + s->var + "' sits inside the loops of fill '" + insn.id + "'s own inames; nest it outside them");
      } else if (s->kind == Stmt::If) {
        for (auto& n : tile)
          if (mentions_var(s->cond, n))
            refuse(k, temp, "fill '" + insn.id + "' runs under a guard on its own iname '" + n + "' (" + s->cond.str() +
                                "); the copy engine copies whole boxes (assume sizes that are multiples of the tile, or fetch with fill_value=0)");
      }
    }
  }
}

}  // namespace

void plan_bulk_copies(GeneratedKernel& g) {
  const LoopKernel& k = g.kernel;
  bool any = std::any_of(k.temporaries.begin(), k.temporaries.end(), [](auto& t) { return t.second.bulk_copy; });
  if (!any || g.target.kind != TargetInfo::Cuda) return;
  Type it = k.options.index_dtype;
  isl::set assumptions = islu::assumptions_of(k);
  for (auto& [name, t] : k.temporaries) {
    if (!t.bulk_copy) continue;
    if (!g.target.tensor_memory_accelerator)
      refuse(k, name, "the target (" + g.target.arch + ") has no tensor memory accelerator (sm_90 or newer)");
    auto stages = !t.shape.empty() ? t.shape[0].as<IntImm>() : nullptr;
    if (t.double_buffered_in.empty() || !stages)
      refuse(k, name, "the tile is not double-buffered (double_buffer): its readers wait for copy t mod stages of the tile in iteration t of that loop");
    bool enclosed = false;
    const Stmt* loop = find_loop(g.body, t.double_buffered_in, &enclosed);
    auto init = loop ? loop->init.as<IntImm>() : nullptr;
    if (!loop || !init || init->value != 0 || loop->step != 1)
      refuse(k, name, "its loop '" + t.double_buffered_in + "' does not run 0, 1, 2, ... (the mbarriers' phases count its iterations)");
    if (enclosed)
      refuse(k, name, "its loop '" + t.double_buffered_in + "' runs inside another loop; the mbarriers' phases count the iterations of one run "
                      "of it per block");
    BulkCopy plan;
    plan.temporary = name;
    plan.dtype = t.dtype;
    plan.swizzle = t.swizzle_bytes;
    plan.stages = stages->value;
    plan.loop = t.double_buffered_in;
    plan.first_barrier = g.bulk_barriers();
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign || insn.assignee_name() != name) continue;
      auto dst = insn.lhs.as<Subscript>();
      auto src = copy_source(insn.rhs).first.as<Subscript>();
      const Argument* a = src ? k.find_argument(src->name) : nullptr;
      if (!dst || !a) refuse(k, name, "instruction '" + insn.id + "' is not a copy of an array argument");
      if (!a->plain_layout())
        refuse(k, name, "array '" + a->name + "' has its own strides or offset; a tensor map describes a C-order array");
      plan.array = a->name;
      size_t rank = a->shape.size(), axes = dst->indices.size();
      if (rank == 0 || rank > 5) refuse(k, name, "array '" + a->name + "' has " + std::to_string(rank) + " axes; the copy engine takes 1 to 5");
      // the fill's own inames: those no instruction but the tile's fills runs in
      std::set<std::string> tile, outer_set;
      for (auto& n : insn.within_inames) {
        bool shared = false;
        for (auto& other : k.instructions)
          if (other.assignee_name() != name && other.within_inames.count(n)) shared = true;
        (shared ? outer_set : tile).insert(n);
      }
      for (auto& n : tile) {
        InameTag tag = k.tag_of(n);
        if (tag.kind == InameTag::Group)
          refuse(k, name, "iname '" + n + "' of fill '" + insn.id + "' is a block index; one block fills one whole tile");
        // (the printer drops the fill's loops and threads for one copy; an
        // unrolled iname has no loop to drop: each unrolled instance would
        // issue the whole box and complete the mbarrier again)
        if (tag.kind != InameTag::Seq && tag.kind != InameTag::Local && tag.kind != InameTag::Vec)
          refuse(k, name, "iname '" + n + "' of fill '" + insn.id + "' is tagged " + tag.str() +
                              "; one copy replaces the fill's own loops, so tag them for, l.N or vec");
      }
      // one thread issues one box per fill and k step: the inames around the
      // fill may be the block's and the pipelined loop, nothing else (a thread
      // index would ask each thread for its own box, another loop would
      // complete a copy's mbarrier more than once per iteration)
      for (auto& n : outer_set)
        if (k.tag_of(n).kind != InameTag::Group && n != t.double_buffered_in)
          refuse(k, name, "fill '" + insn.id + "' runs within iname '" + n + "', which other instructions run in too (" + k.tag_of(n).str() +
                              "); a fill's box may depend on block indices and the pipelined loop '" + t.double_buffered_in + "' only");
      std::vector<std::string> dims, outer(outer_set.begin(), outer_set.end());
      dims = outer;
      dims.insert(dims.end(), tile.begin(), tile.end());
      isl::set domain = islu::iteration_domain(k, dims).intersect_params(assumptions);
      std::map<std::string, Expr> start;  // the fill's own inames at their first values
      isl::set at_start = domain;
      for (auto& n : tile) {
        auto r = islu::constant_range(k, n);
        if (!r) refuse(k, name, "iname '" + n + "' of fill '" + insn.id + "' has no constant range");
        start[n] = make_int(r->first, it);
        int pos = islu::find_dim(at_start.get(), isl_dim_set, n);
        at_start = isl::manage(isl_set_fix_si(at_start.release(), isl_dim_set, unsigned(pos), int(r->first)));
      }
      auto project = [&](isl::set s) {
        return isl::manage(isl_set_project_out(s.release(), isl_dim_set, unsigned(outer.size()), unsigned(tile.size())));
      };
      if (!project(at_start).is_equal(project(domain)))
        refuse(k, name, "fill '" + insn.id + "'s own inames do not start together at their first values");
      auto affine = [&](const Expr& e, const std::string& what) {
        isl::pw_aff pa = islu::pw_aff_from_expr(e, domain.get_space());
        if (pa.is_null()) refuse(k, name, what + " of fill '" + insn.id + "' (" + e.str() + ") is not affine");
        return pa;
      };
      BulkFill fill;
      fill.insn_id = insn.id;
      fill.temporary = name;
      fill.tile_inames = tile;
      std::vector<Expr> origin;  // the tile's index of the box's first element
      auto fixed = [&](const Expr& e, const std::string& what) { return fixed_by_outer(domain, affine(e, what), unsigned(outer.size())); };
      // the tile's first axis is its copies (double_buffer's): one per fill
      size_t lead = 1;
      if (axes < 2 || axes > 6 || !fixed(dst->indices[0], "tile index 0"))
        refuse(k, name, "fill '" + insn.id + "' does not write one copy of the tile (its first axis, fixed by the inames around the fill) "
                        "as a box of 1 to 5 axes");
      origin.push_back(simplify(substitute(dst->indices[0], start)));
      size_t q = axes - lead;
      std::vector<int64_t> extent(q);
      for (size_t j = 0; j < q; ++j) {
        const Expr& ti = dst->indices[lead + j];
        auto e = t.shape[lead + j].as<IntImm>();
        if (!e) refuse(k, name, "axis " + std::to_string(lead + j) + " of the tile has no constant extent");
        extent[j] = e->value;
        // the box is the tile's axis whole: the fill starts at 0 and stays inside
        Expr first = simplify(substitute(ti, start));
        if (!first.as<IntImm>() || first.as<IntImm>()->value != 0)
          refuse(k, name, "tile index " + std::to_string(lead + j) + " of fill '" + insn.id + "' does not start at 0 (" + first.str() + ")");
        isl::set beyond = islu::condition_set(make_binary(BinOp::Ge, ti, make_int(e->value, it), types::boolean), domain.get_space());
        if (beyond.is_null() || !beyond.intersect(domain).is_empty())
          refuse(k, name, "tile index " + std::to_string(lead + j) + " of fill '" + insn.id + "' leaves the tile's axis of " + std::to_string(e->value));
        origin.push_back(make_int(0, it));
      }
      // which axis of the array each axis of the box runs along, and how fast:
      // the array's index minus (tile index) or minus (fine + extent(fine) *
      // coarse) must be fixed by the inames around the fill (the offset)
      std::vector<int> along(q, -1);
      std::vector<int64_t> mult(q, 0);
      std::vector<Expr> offset(rank);
      auto tile_index = [&](size_t j) { return dst->indices[lead + j]; };
      auto minus = [&](const Expr& x, const Expr& y) { return make_binary(BinOp::Sub, x, y, it); };
      for (size_t ax = rank; ax-- > 0;) {
        const Expr& g_ax = src->indices[ax];
        bool found = false;
        for (size_t j = q; j-- > 0 && !found;)
          if (along[j] < 0 && fixed(minus(g_ax, tile_index(j)), "an index of '" + a->name + "'")) {
            along[j] = int(ax), mult[j] = 1, offset[ax] = simplify(substitute(minus(g_ax, tile_index(j)), start));
            found = true;
          }
        for (size_t f = q; f-- > 0 && !found;)
          for (size_t c = 0; c < q && !found; ++c) {
            if (c == f || along[f] >= 0 || along[c] >= 0) continue;
            Expr sh = minus(minus(g_ax, tile_index(f)), make_binary(BinOp::Mul, make_int(extent[f], it), tile_index(c), it));
            if (!fixed(sh, "an index of '" + a->name + "'")) continue;
            along[f] = along[c] = int(ax), mult[f] = 1, mult[c] = extent[f], offset[ax] = simplify(substitute(sh, start));
            found = true;
          }
        if (!found)
          refuse(k, name, "index " + std::to_string(ax) + " of '" + a->name + "' (" + g_ax.str() + ") in fill '" + insn.id +
                              "' is not one tile index plus an offset, nor a tile axis split in two (fine + extent * coarse): the box must be "
                              "a translation of a box of the array");
      }
      for (size_t j = 0; j < q; ++j)
        if (along[j] == -1 && extent[j] == 1) along[j] = -2;  // (an axis of one element: a tensor dimension of 1)
        else if (along[j] < 0) refuse(k, name, "axis " + std::to_string(lead + j) + " of the tile runs along no axis of '" + a->name + "'");
      if (along[q - 1] != int(rank) - 1 || mult[q - 1] != 1)
        refuse(k, name, "the tile's last axis must run along the last axis of '" + a->name + "' (the copy engine's rows are contiguous)");
      // the box, its last axis first, and where it starts in the array
      std::vector<int64_t> box, multipliers;
      std::vector<int> array_axes;
      for (size_t j = q; j-- > 0;) {
        int ax = along[j];
        bool split = ax >= 0 && std::count(along.begin(), along.end(), ax) == 2;
        box.push_back(extent[j]);
        array_axes.push_back(ax < 0 ? -1 : ax);
        multipliers.push_back(split ? mult[j] : 0);  // (0: the array's axis whole)
        if (ax < 0) {
          fill.coordinates.push_back(make_int(0, it));
        } else if (!split) {
          fill.coordinates.push_back(offset[size_t(ax)]);
        } else if (mult[j] == 1) {
          fill.coordinates.push_back(make_int(0, it));
        } else {
          // the coarse axis counts blocks of `mult`: the offset and the array's extent are multiples of it
          Expr rem = make_binary(BinOp::Mod, offset[size_t(ax)], make_int(mult[j], it), it);
          isl::set off_grid = islu::condition_set(make_binary(BinOp::Ne, rem, make_int(0, it), types::boolean), domain.get_space());
          if (off_grid.is_null() || !off_grid.intersect(at_start).is_empty())
            refuse(k, name, "fill '" + insn.id + "' starts at " + offset[size_t(ax)].str() + " along axis " + std::to_string(ax) + " of '" + a->name +
                                "', which is not always a multiple of " + std::to_string(mult[j]) + " (the tile's split of that axis)");
          Expr erem = make_binary(BinOp::Mod, a->shape[size_t(ax)], make_int(mult[j], it), it);
          isl::set ragged = islu::condition_set(make_binary(BinOp::Ne, erem, make_int(0, it), types::boolean), domain.get_space());
          if (ragged.is_null() || !ragged.intersect(domain).is_empty())
            refuse(k, name, "axis " + std::to_string(ax) + " of '" + a->name + "' (" + a->shape[size_t(ax)].str() + ") is split in blocks of " +
                                std::to_string(mult[j]) + " by the tile but its extent is not always a multiple of " + std::to_string(mult[j]) +
                                " (assume it)");
          fill.coordinates.push_back(simplify(make_binary(BinOp::FloorDiv, offset[size_t(ax)], make_int(mult[j], it), it)));
        }
      }
      if (plan.box.empty()) {
        plan.box = box, plan.array_axes = array_axes, plan.multipliers = multipliers;
      } else if (plan.box != box || plan.array_axes != array_axes || plan.multipliers != multipliers) {
        refuse(k, name, "its fills write boxes of different shapes; one tensor map describes one box");
      }
      fill.copy = origin[0];
      fill.destination = k.flat_index(*make_subscript(name, origin, t.dtype).as<Subscript>());
      check_nest(g, name, insn, tile);
      g.bulk_fills.push_back(fill);
    }
    // what the engine takes
    int64_t eb = t.dtype.bytes(), inner = plan.box.empty() ? 0 : plan.box[0] * eb;
    for (int64_t e : plan.box)
      if (e > 256) refuse(k, name, "a box of " + std::to_string(e) + " elements along one axis; the copy engine moves at most 256");
    if (inner % 16) refuse(k, name, "the box's rows are " + std::to_string(inner) + " bytes; the copy engine needs multiples of 16 (it writes boxes "
                                      "densely: a padded tile's rows are its box's, add_prefetch ... padding=0)");
    if (plan.swizzle && inner != 128)
      refuse(k, name, "a swizzled tile's rows must be 128 bytes for the copy engine's 128-byte swizzle; these are " + std::to_string(inner));
    if (plan.box_bytes() % (plan.swizzle ? 1024 : 128))
      refuse(k, name, "each copy of the tile is " + std::to_string(plan.box_bytes()) + " bytes; the copy engine starts boxes at multiples of " +
                          std::to_string(plan.swizzle ? 1024 : 128));
    g.bulk_copies.push_back(plan);
  }
}

}  // namespace loom::codegen
