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
// A scalar temporary every statement overwrites (ludcmp's w) would order
// all of them: each of its webs first gets a copy per iteration of its
// loops (expanded_temporaries), as PPCG expands scalars.
#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <map>
#include <set>

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

// The statements (tuple names) a schedule node's domain holds.
std::vector<std::string> statements_of(isl_schedule_node* node) {
  std::vector<std::string> out;
  isl_union_set* dom = isl_schedule_node_get_domain(node);
  isl_union_set_foreach_set(
      dom,
      [](isl_set* set, void* u) {
        static_cast<std::vector<std::string>*>(u)->push_back(isl_set_get_tuple_name(set));
        isl_set_free(set);
        return isl_stat_ok;
      },
      &out);
  isl_union_set_free(dom);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Each scalar temporary's webs (rename_temporary within: the accesses among
// which its values flow) with a copy per iteration of the loops around all
// of a web's accesses (expand_array): isl's scheduler then sees only the
// dataflow, not one variable every statement overwrites (ludcmp's w, one
// per (i, j), as lu's A[i, j]); "" where no temporary has such a web.
std::string expanded_temporaries(const LoopKernel& k, LoopKernel& out) {
  std::string lines;
  out = k;
  for (auto& [name, t] : k.temporaries) {
    if (!t.shape.empty() || t.space == AddressSpace::Local || t.stand_in) continue;
    std::optional<std::vector<std::vector<std::string>>> webs;
    try {
      webs = temporary_webs(k, name);
    } catch (const Error&) {
    }
    if (!webs) continue;
    for (size_t w = 0; w < webs->size(); ++w) {
      const std::vector<std::string>& web = (*webs)[w];
      std::vector<std::string> common;  // the loops around all its accesses, in domain order
      for (auto& n : k.all_inames())
        if (std::all_of(web.begin(), web.end(), [&](auto& id) { return k.instruction(id).within_inames.count(n) != 0; }))
          common.push_back(n);
      if (common.empty()) continue;
      std::string var = name, step;
      if (webs->size() > 1) {
        var = name + "_" + std::to_string(w);
        while (out.name_taken(var)) var += "_";
        std::string match;
        for (auto& id : web) match += (match.empty() ? "id:" : " or id:") + id;
        step = "rename_temporary " + name + " " + var + " within=\"" + match + "\"\n";
      }
      step += "expand_array " + var + " \"" + joined(common) + "\"\n";
      try {
        out = apply_transforms(out, parse_transform_script(step));
        lines += step;
      } catch (const Error&) {
        // (a read gets a value from another iteration)
      }
    }
  }
  return lines;
}

std::optional<IslSchedule> rescheduled(const LoopKernel& k, bool new_step_only) {
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
  // The outermost bands' first members: the steps (one per phase, where the
  // schedule is a sequence of phases: ludcmp's factorization, then its two
  // substitutions). A phase whose first member is parallel keeps its
  // statements' loops as written (the nests planner's own business: an
  // initialization before a factorization's steps).
  struct Bands {
    std::set<std::string> parallel;  // the statements of the parallel phases
    int stepped = 0;
  } bands;
  isl_schedule_foreach_schedule_node_top_down(
      schedule,
      [](isl_schedule_node* node, void* user) -> isl_bool {
        if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return isl_bool_true;
        auto* b = static_cast<Bands*>(user);
        if (isl_schedule_node_band_member_get_coincident(node, 0) == isl_bool_false) ++b->stepped;
        else
          for (auto& n : statements_of(node)) b->parallel.insert(n);
        return isl_bool_false;  // (not the bands inside it)
      },
      &bands);
  const std::set<std::string>& parallel_phase = bands.parallel;
  bool stepped = bands.stepped > 0;
  // the statements in the schedule's order (its leaves, depth first; those
  // of one leaf as written)
  std::vector<std::vector<std::string>> leaves;
  isl_schedule_foreach_schedule_node_top_down(
      schedule,
      [](isl_schedule_node* node, void* user) -> isl_bool {
        if (isl_schedule_node_get_type(node) != isl_schedule_node_leaf) return isl_bool_true;
        static_cast<std::vector<std::vector<std::string>>*>(user)->push_back(statements_of(node));
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
  // each statement's schedule: its non-constant dimensions, in order, and
  // its phase (the constant dimensions before the first of them: the
  // positions in the outermost sequences)
  std::map<std::string, std::vector<isl::pw_aff>> dims_of;
  std::map<std::string, std::vector<long>> phase_of;
  struct Walk {
    const KernelDependences* d;
    std::map<std::string, std::vector<isl::pw_aff>>* dims_of;
    std::map<std::string, std::vector<long>>* phase_of;
    bool ok = true;
  } walk{&*d, &dims_of, &phase_of};
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
            if (dims.empty()) {
              isl_val* v = nullptr;
              isl_pw_aff_foreach_piece(
                  pa,
                  [](isl_set* set, isl_aff* a, void* user) {
                    isl_set_free(set);
                    isl_val** v = static_cast<isl_val**>(user);
                    if (!*v) *v = isl_aff_get_constant_val(a);
                    isl_aff_free(a);
                    return isl_stat_ok;
                  },
                  &v);
              (*w->phase_of)[tuple].push_back(v ? isl_val_get_num_si(v) : 0);
              isl_val_free(v);
            }
            isl_pw_aff_free(pa);
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
  // first dimension joined into one step loop per phase (a statement of a
  // parallel phase: its loops copied, as they are)
  std::map<std::vector<long>, std::string> step_of_phase;
  for (auto& insn : k.instructions)
    if (!parallel_phase.count(insn.id)) step_of_phase[phase_of[insn.id]];
  int phases = 0;
  for (auto& [phase, step] : step_of_phase) {
    step = step_of_phase.size() == 1 ? "step" : "step_" + std::to_string(phases++);
    while (k.name_taken(step)) step += "_";
  }
  std::set<std::string> steps_made;
  IslSchedule out;
  LoopKernel cur = k;
  bool reordered = false;
  try {
    for (auto& insn : k.instructions) {
      const std::vector<std::string>& keys = d->keys.at(insn.id);
      const std::vector<isl::pw_aff>& dims = dims_of.at(insn.id);
      // the statement's own copies of its loops
      std::vector<std::string> copies;
      for (auto& key : keys) {
        std::string c = key + "_" + insn.id;
        while (cur.name_taken(c)) c += "_";
        copies.push_back(c);
      }
      const std::string duplicate = "duplicate_inames \"" + joined(keys) + "\" within=id:" + insn.id + " new_inames=\"" + joined(copies) + "\"\n";
      if (parallel_phase.count(insn.id)) {
        cur = apply_transforms(cur, parse_transform_script(duplicate));
        out.lines += duplicate;
        continue;
      }
      if (dims.empty() || dims.size() > keys.size()) return std::nullopt;  // (every other statement is in a step)
      const std::string& step = step_of_phase[phase_of[insn.id]];
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
      std::vector<std::string> mapped;
      std::string equations;
      for (size_t i = 0; i < keys.size(); ++i) {
        std::string n = i == 0 ? step + "_" + insn.id : insn.id + "_" + std::to_string(i);
        while (cur.name_taken(n)) n += "_";
        mapped.push_back(n);
        std::string value = i < dims.size() ? affine_text(dims[i].copy(), copies) : copies[extra[i - dims.size()]];
        equations += (equations.empty() ? "" : ", ") + n + " = " + value;
      }
      std::string lines = duplicate + "affine_map_inames \"" + joined(copies) + "\" \"" + joined(mapped) + "\" \"" + equations + "\"\n" +
                          "rename_iname " + mapped.front() + " " + step + (steps_made.insert(step).second ? "" : " existing_ok=true") + "\n";
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

}  // namespace

std::optional<IslSchedule> isl_rescheduled(const LoopKernel& k, bool new_step_only) {
  LoopKernel expanded;
  std::string prefix = expanded_temporaries(k, expanded);
  if (!prefix.empty())
    if (auto s = rescheduled(expanded, new_step_only)) {
      s->lines = prefix + s->lines;
      return s;
    }
  return rescheduled(k, new_step_only);
}

}  // namespace loom::tune
