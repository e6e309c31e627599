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

const Stmt* find_loop(const StmtPtr& s, const std::string& var) {
  if (s->kind == Stmt::For && s->var == var) return s.get();
  for (auto& c : s->children)
    if (auto f = find_loop(c, var)) return f;
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
    const Stmt* loop = find_loop(g.body, t.double_buffered_in);
    auto init = loop ? loop->init.as<IntImm>() : nullptr;
    if (!loop || !init || init->value != 0 || loop->step != 1)
      refuse(k, name, "its loop '" + t.double_buffered_in + "' does not run 0, 1, 2, ... (the mbarriers' phases count its iterations)");
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
      if (!a->strides.empty() || (a->offset.defined() && !(a->offset.as<IntImm>() && a->offset.as<IntImm>()->value == 0)))
        refuse(k, name, "array '" + a->name + "' has its own strides or offset; a tensor map describes a C-order array");
      plan.array = a->name;
      size_t rank = a->shape.size(), lead = dst->indices.size() - rank;
      if (rank == 0 || rank > 5 || dst->indices.size() <= rank)
        refuse(k, name, "the tile has " + std::to_string(dst->indices.size()) + " axes and array '" + a->name + "' " + std::to_string(rank) +
                            "; the tile's copies come first, then one axis per array axis (at most 5)");
      // the fill's own inames: those no instruction but the tile's fills runs in
      std::set<std::string> tile, outer_set;
      for (auto& n : insn.within_inames) {
        bool shared = false;
        for (auto& other : k.instructions)
          if (other.assignee_name() != name && other.within_inames.count(n)) shared = true;
        (shared ? outer_set : tile).insert(n);
      }
      for (auto& n : tile)
        if (k.tag_of(n).kind == InameTag::Group)
          refuse(k, name, "iname '" + n + "' of fill '" + insn.id + "' is a block index; one block fills one whole tile");
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
      for (size_t d = 0; d < dst->indices.size(); ++d) {
        const Expr& ti = dst->indices[d];
        if (d < lead) {
          if (!fixed_by_outer(domain, affine(ti, "tile index " + std::to_string(d)), unsigned(outer.size())))
            refuse(k, name, "tile index " + std::to_string(d) + " (" + ti.str() + ") of fill '" + insn.id +
                                "' changes with the fill's own inames; the tile's axes before the array's are its copies, one per fill");
          origin.push_back(simplify(substitute(ti, start)));
          continue;
        }
        auto extent = t.shape[d].as<IntImm>();
        if (!extent) refuse(k, name, "axis " + std::to_string(d) + " of the tile has no constant extent");
        Expr shift = make_binary(BinOp::Sub, src->indices[d - lead], ti, it);
        if (!fixed_by_outer(domain, affine(shift, "index " + std::to_string(d - lead) + " of '" + a->name + "' minus tile index " + std::to_string(d)),
                            unsigned(outer.size())))
          refuse(k, name, "index " + std::to_string(d - lead) + " of '" + a->name + "' (" + src->indices[d - lead].str() + ") is not tile index " +
                              std::to_string(d) + " (" + ti.str() + ") plus an offset: the tile's last axes must follow the array's, in order");
        origin.push_back(make_int(0, it));
        fill.coordinates.insert(fill.coordinates.begin(), simplify(substitute(shift, start)));
        if (plan.box.size() < rank) plan.box.insert(plan.box.begin(), extent->value);
        // the box is the tile's axis whole: the fill starts at 0 and stays inside
        Expr first = simplify(substitute(ti, start));
        auto f0 = first.as<IntImm>();
        if (!f0 || f0->value != 0)
          refuse(k, name, "tile index " + std::to_string(d) + " of fill '" + insn.id + "' does not start at 0 (" + first.str() + ")");
        isl::set beyond = islu::condition_set(make_binary(BinOp::Ge, ti, make_int(extent->value, it), types::boolean), domain.get_space());
        if (beyond.is_null() || !beyond.intersect(domain).is_empty())
          refuse(k, name, "tile index " + std::to_string(d) + " of fill '" + insn.id + "' leaves the tile's axis of " + std::to_string(extent->value));
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
    int64_t copy_elems = 1;
    for (size_t d = 1; d < t.shape.size(); ++d) copy_elems *= t.shape[d].as<IntImm>() ? t.shape[d].as<IntImm>()->value : 0;
    if (copy_elems * eb != plan.box_bytes())
      refuse(k, name, "the tile has axes besides its copies and the array's; each copy must be one box");
    g.bulk_copies.push_back(plan);
  }
}

}  // namespace loom::codegen
