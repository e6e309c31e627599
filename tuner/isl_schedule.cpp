// Per-statement schedules from isl's scheduler, as PPCG finds them: where
// every loop of a kernel as written carries a dependence (a factorization's
// rows, each from all earlier rows), isl's scheduler (Pluto's algorithm, the
// outermost loops as parallel as it can make them) may find an order of the
// same instances in which one sequential step holds loops that carry none:
// Cholesky and LU, right-looking (step k: the pivot, then the column below
// it, then the trailing update, each a parallel loop), from PolyBench's
// left-looking text. Each statement's new loops are its schedule's
// dimensions, written as transformation steps the legality check verifies
// like any other: duplicate_inames (the statement's own loops),
// affine_map_inames (its schedule), rename_iname existing_ok (the shared
// step joined), reorder_instructions (the schedule's order within a step).
// The nests planner then runs the step on the host around the launches.
#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <map>

#include "loom/isl_util.h"
#include "loom/parser.h"
#include "loom/schedule.h"
#include "loom/transforms.h"
#include "sketches.h"

namespace loom::tune {

namespace {

// isl's scheduler on the shared context with the options PPCG uses for
// parallelism (the outermost band as coincident as it can be), restored after.
isl_schedule* compute_schedule(const KernelDependences& d) {
  isl_ctx* ctx = isl_context();
  int outer = isl_options_get_schedule_outer_coincidence(ctx);
  int maximize = isl_options_get_schedule_maximize_coincidence(ctx);
  isl_options_set_schedule_outer_coincidence(ctx, 1);
  isl_options_set_schedule_maximize_coincidence(ctx, 1);
  isl_schedule_constraints* sc = isl_schedule_constraints_on_domain(d.instances.copy());
  sc = isl_schedule_constraints_set_validity(sc, d.deps.copy());
  sc = isl_schedule_constraints_set_coincidence(sc, d.deps.copy());
  sc = isl_schedule_constraints_set_proximity(sc, d.deps.copy());
  isl_ctx_reset_operations(ctx);
  isl_ctx_set_max_operations(ctx, 2000000);  // (PolyBench's kernels need far less)
  isl_schedule* s = isl_schedule_constraints_compute_schedule(sc);
  isl_ctx_set_max_operations(ctx, 0);
  if (!s) isl_ctx_reset_error(ctx);
  isl_options_set_schedule_outer_coincidence(ctx, outer);
  isl_options_set_schedule_maximize_coincidence(ctx, maximize);
  return s;
}

// An affine expression of a tuple's dimensions with integer coefficients, as
// text ("2*i + j - 1"); "" when the piece is not that.
std::string affine_text(isl_pw_aff* pa, const std::vector<std::string>& dims) {
  std::string out;
  if (isl_pw_aff_n_piece(pa) != 1) {
    isl_pw_aff_free(pa);
    return out;
  }
  isl_aff* aff = nullptr;
  isl_pw_aff_foreach_piece(
      pa,
      [](isl_set* set, isl_aff* a, void* user) {
        isl_set_free(set);
        *static_cast<isl_aff**>(user) = a;
        return isl_stat_ok;
      },
      &aff);
  isl_pw_aff_free(pa);
  if (!aff || isl_aff_dim(aff, isl_dim_div) != 0) {
    isl_aff_free(aff);
    return out;
  }
  bool integral = true;
  auto term = [&](isl_val* v, const std::string& name) {
    integral &= isl_val_is_int(v) == isl_bool_true;
    long c = isl_val_get_num_si(v);
    isl_val_free(v);
    if (c == 0) return;
    std::string mag = std::to_string(c < 0 ? -c : c);
    std::string t = name.empty() ? mag : (c == 1 || c == -1 ? name : mag + "*" + name);
    out += out.empty() ? (c < 0 ? "-" + t : t) : (c < 0 ? " - " + t : " + " + t);
  };
  for (size_t i = 0; i < dims.size(); ++i) term(isl_aff_get_coefficient_val(aff, isl_dim_in, int(i)), dims[i]);
  isl_size np = isl_aff_dim(aff, isl_dim_param);
  for (isl_size p = 0; p < np; ++p) term(isl_aff_get_coefficient_val(aff, isl_dim_param, int(p)), isl_aff_get_dim_name(aff, isl_dim_param, unsigned(p)));
  term(isl_aff_get_constant_val(aff), "");
  isl_aff_free(aff);
  if (!integral) return "";
  return out.empty() ? "0" : out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::optional<IslSchedule> isl_rescheduled(const LoopKernel& k, bool new_step_only) {
  // (a sum's iterations are instances of their own, which the steps below
  // cannot map: kernels written with sums are the other sketches' business)
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) return std::nullopt;
    std::set<std::string> reduced;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    if (!reduced.empty() || insn.within_inames.empty()) return std::nullopt;
  }
  std::optional<KernelDependences> d;
  try {
    d = dependences_of(k);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!d || d->deps.is_empty()) return std::nullopt;
  isl_schedule* schedule = compute_schedule(*d);
  if (!schedule) return std::nullopt;
  // the outermost band's first member: the step; a parallel one is the
  // nests planner's own business (the kernel's loops as written)
  isl_schedule_node* root = isl_schedule_get_root(schedule);
  isl_schedule_node* band = isl_schedule_node_get_child(root, 0);
  isl_schedule_node_free(root);
  bool stepped = isl_schedule_node_get_type(band) == isl_schedule_node_band &&
                 isl_schedule_node_band_member_get_coincident(band, 0) == isl_bool_false;
  isl_schedule_node_free(band);
  // the statements in the schedule's order (its leaves, depth first; those
  // of one leaf as written)
  std::vector<std::vector<std::string>> leaves;
  isl_schedule_foreach_schedule_node_top_down(
      schedule,
      [](isl_schedule_node* node, void* user) -> isl_bool {
        if (isl_schedule_node_get_type(node) != isl_schedule_node_leaf) return isl_bool_true;
        isl_union_set* dom = isl_schedule_node_get_domain(node);
        auto* leaves = static_cast<std::vector<std::vector<std::string>>*>(user);
        leaves->emplace_back();
        isl_union_set_foreach_set(
            dom,
            [](isl_set* s, void* u) {
              static_cast<std::vector<std::string>*>(u)->push_back(isl_set_get_tuple_name(s));
              isl_set_free(s);
              return isl_stat_ok;
            },
            &leaves->back());
        isl_union_set_free(dom);
        return isl_bool_true;
      },
      &leaves);
  std::map<std::string, size_t> as_written;
  for (size_t i = 0; i < k.instructions.size(); ++i) as_written[k.instructions[i].id] = i;
  std::vector<std::string> order;
  for (auto& leaf : leaves) {
    std::sort(leaf.begin(), leaf.end(), [&](auto& a, auto& b) { return as_written[a] < as_written[b]; });
    order.insert(order.end(), leaf.begin(), leaf.end());
  }
  isl_union_map* map = isl_schedule_get_map(schedule);
  isl_schedule_free(schedule);
  if (!stepped) {
    isl_union_map_free(map);
    return std::nullopt;
  }
  // each statement's schedule: its non-constant dimensions, in order
  std::map<std::string, std::vector<isl::pw_aff>> dims_of;
  struct Walk {
    const KernelDependences* d;
    std::map<std::string, std::vector<isl::pw_aff>>* dims_of;
    bool ok = true;
  } walk{&*d, &dims_of};
  isl_union_map_foreach_map(
      map,
      [](isl_map* m, void* user) {
        auto* w = static_cast<Walk*>(user);
        std::string tuple = isl_map_get_tuple_name(m, isl_dim_in);
        const std::vector<std::string>& keys = w->d->keys.at(tuple);
        isl_pw_multi_aff* f = isl_pw_multi_aff_from_map(m);
        isl_size n = isl_pw_multi_aff_dim(f, isl_dim_out);
        std::vector<isl::pw_aff> dims;
        for (isl_size i = 0; i < n; ++i) {
          isl_pw_aff* pa = isl_pw_multi_aff_get_pw_aff(f, int(i));
          if (isl_pw_aff_is_cst(pa) == isl_bool_true) {
            isl_pw_aff_free(pa);
            if (i == 0) w->ok = false;  // (every statement is in the step)
            continue;
          }
          if (affine_text(isl_pw_aff_copy(pa), keys).empty()) w->ok = false;
          dims.push_back(isl::manage(pa));
        }
        isl_pw_multi_aff_free(f);
        (*w->dims_of)[tuple] = dims;
        return isl_stat_ok;
      },
      &walk);
  isl_union_map_free(map);
  if (!walk.ok || order.size() != k.instructions.size()) return std::nullopt;

  // the steps: each statement's loops copied and mapped to its schedule, the
  // first dimension joined into one step loop
  std::string step = "step";
  while (k.name_taken(step)) step += "_";
  IslSchedule out;
  LoopKernel cur = k;
  bool reordered = false;
  try {
    for (auto& insn : k.instructions) {
      const std::vector<std::string>& keys = d->keys.at(insn.id);
      const std::vector<isl::pw_aff>& dims = dims_of.at(insn.id);
      if (dims.size() > keys.size()) return std::nullopt;
      // a loop of one iteration (a piece at a point) leaves fewer dimensions
      // than loops: the loops no dimension names come after, one to one on
      // the instances where the schedule is (affine_map_inames checks)
      std::vector<std::string> texts;
      for (auto& dim : dims) texts.push_back(affine_text(dim.copy(), keys));
      std::vector<size_t> extra;
      for (size_t key = 0; key < keys.size() && dims.size() + extra.size() < keys.size(); ++key)
        if (!std::count(texts.begin(), texts.end(), keys[key])) extra.push_back(key);
      if (dims.size() + extra.size() != keys.size()) return std::nullopt;
      std::string outermost;  // (its loop as written)
      for (auto& n : k.all_inames())
        if (outermost.empty() && insn.within_inames.count(n)) outermost = n;
      reordered |= texts.front() != outermost;
      std::vector<std::string> copies, mapped;
      std::string equations;
      for (auto& key : keys) {
        std::string c = key + "_" + insn.id;
        while (cur.name_taken(c)) c += "_";
        copies.push_back(c);
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        std::string n = i == 0 ? step + "_" + insn.id : insn.id + "_" + std::to_string(i);
        while (cur.name_taken(n)) n += "_";
        mapped.push_back(n);
        std::string value = i < dims.size() ? affine_text(dims[i].copy(), copies) : copies[extra[i - dims.size()]];
        equations += (equations.empty() ? "" : ", ") + n + " = " + value;
      }
      std::string lines = "duplicate_inames \"" + joined(keys) + "\" within=id:" + insn.id + " new_inames=\"" + joined(copies) + "\"\n" +
                          "affine_map_inames \"" + joined(copies) + "\" \"" + joined(mapped) + "\" \"" + equations + "\"\n" +
                          "rename_iname " + mapped.front() + " " + step + (&insn == &k.instructions[0] ? "" : " existing_ok=true") + "\n";
      cur = apply_transforms(cur, parse_transform_script(lines));
      out.lines += lines;
    }
    std::string line = "reorder_instructions \"" + joined(order) + "\"\nremove_unused_inames\n";
    cur = apply_transforms(cur, parse_transform_script(line));
    out.lines += line;
  } catch (const Error&) {
    return std::nullopt;  // (a step refused: not this kernel's shape)
  }
  if (!reordered && new_step_only) return std::nullopt;  // the step is the loop as written: nothing new
  out.kernel = cur;
  return out;
}

}  // namespace loom::tune
