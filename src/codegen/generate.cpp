// generate: the whole path from a transformed kernel to a GeneratedKernel:
// preprocess, linearize, hardware axes, loop nest. launch_dims evaluates the
// launch geometry for parameter values.
#include <algorithm>
#include <chrono>

#include "bulk_copies.h"
#include "fast_path.h"
#include "pair_stores.h"
#include "hardware_axes.h"
#include "unswitch.h"
#include "vectorize.h"
#include "warp_matrices.h"
#include "loom/preprocess.h"

namespace loom {

namespace {
double lap(std::chrono::steady_clock::time_point& t) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}
}  // namespace

int64_t BulkCopy::box_bytes() const {
  int64_t b = dtype.bytes();
  for (int64_t e : box) b *= e;
  return b;
}

const BulkFill* GeneratedKernel::bulk_fill(const std::string& insn_id) const {
  for (auto& f : bulk_fills)
    if (f.insn_id == insn_id) return &f;
  return nullptr;
}

const BulkCopy* GeneratedKernel::bulk_copy(const std::string& temporary) const {
  for (auto& c : bulk_copies)
    if (c.temporary == temporary) return &c;
  return nullptr;
}

int64_t GeneratedKernel::bulk_barriers() const {
  int64_t n = 0;
  for (auto& c : bulk_copies) n += c.stages;
  return n;
}

int64_t GeneratedKernel::local_bytes() const {
  int64_t total = 0;
  for (auto& l : launches) total = std::max(total, l.local_bytes());  // (several launches: the largest)
  for (auto& [n, t] : kernel.temporaries) {
    if (t.space != AddressSpace::Local) continue;
    int64_t elems = 1;
    for (auto& d : t.shape) elems *= eval_int(d, {});
    int64_t a = t.local_alignment();
    total = (total + a - 1) / a * a + t.local_size(elems);
  }
  if (int64_t n = bulk_barriers()) total = (total + 7) / 8 * 8 + 8 * n;  // (the bulk copies' mbarriers, after the temporaries)
  return total;
}

namespace {

// On the CPU target a GPU schedule's unrolled and ILP loops (register tiles,
// k steps) stay loops, and the CPU lowering tells LLVM not to unroll them:
// one straight-line function of thousands of statements spent seconds in
// instruction selection and register allocation (sgemm_any: 8.6 s to
// compile, 0.24 s with its loops kept). Vector loops stay as they are
// (float4 accesses), and so does a tensor-core tile's k loop in the lane
// code. `rolled` collects them.
void keep_unrolled_loops(const LoopKernel& k, std::vector<ScheduleItem>& items, std::set<std::string>& rolled) {
  for (auto& it : items) {
    if (it.kind != ScheduleItem::Loop) continue;
    InameTag::Kind kind = k.tag_of(it.name).kind;
    if (kind == InameTag::Unroll || kind == InameTag::Ilp || kind == InameTag::MatrixK) {
      it.unroll = false;
      rolled.insert(it.name);
    }
    keep_unrolled_loops(k, it.body, rolled);
  }
}

}  // namespace

GeneratedKernel generate(const LoopKernel& k, StageTimes* times, CodegenPath path, const TargetInfo& target) {
  StageTimes local;
  StageTimes& st = times ? *times : local;
  // (where an auto temporary lives decides whether the kernel is several launches)
  LaunchProgram program = split_global_barriers(resolve_address_spaces(k));
  if (program.launches.size() > 1 || !program.global_temporaries.empty() || program.has_host_loops()) {
    const bool whole = program.checked_as_a_whole;
    const std::set<std::string> host_loops = program.host_loops();
    GeneratedKernel g;
    g.kernel = k;
    g.target = target;
    g.global_temporaries = std::move(program.global_temporaries);
    g.host_steps = std::move(program.steps);
    g.body = make_block({});
    g.grid = {make_int(1), make_int(1), make_int(1)};
    st = StageTimes{};
    for (auto& l : program.launches) {
      StageTimes one;
      g.launches.push_back(generate(l, &one, path, target));
      st.preprocess += one.preprocess;
      st.linearize += one.linearize;
      st.hardware_axes += one.hardware_axes;
      st.loop_nest += one.loop_nest;
      st.legality += one.legality;
    }
    // (after each launch's own checks: a race inside a launch is named as such)
    if (whole) check_program_order(resolve_address_spaces(k), host_loops);
    g.fast_path = std::all_of(g.launches.begin(), g.launches.end(), [](auto& l) { return l.fast_path; });
    return g;
  }
  const std::vector<LoopKernel>& launches = program.launches;
  // a global barrier only first or last: one launch, without the barrier
  if (launches.front().instructions.size() != k.instructions.size()) return generate(launches.front(), times, path, target);
  auto t = std::chrono::steady_clock::now();
  GeneratedKernel g;
  g.target = target;
  g.kernel = preprocess(k, target, true, &g.unproven_accesses);
  st.preprocess = lap(t);
  g.linearization = linearize(g.kernel);
  if (target.kind == TargetInfo::Cpu) keep_unrolled_loops(g.kernel, g.linearization.items, g.rolled_loops);
  // (placement ends only when no conflicting pair lacks a barrier: what
  // check_local_barriers would ask again)
  g.kernel = place_local_barriers(g.kernel, g.linearization);
  for (auto& [iname, tag] : g.kernel.iname_tags)  // full unrolling needs a known trip count
    if (tag.is_unrolled() && g.kernel.has_iname(iname)) {
      auto r = islu::constant_range(g.kernel, iname);
      if (!r) throw KernelError("kernel '" + g.kernel.name + "': iname '" + iname + "' is tagged '" + tag.str() +
                                "' but its range depends on the parameters; split it and unroll the inner iname");
      if (r->second - r->first >= 1024)
        throw KernelError("kernel '" + g.kernel.name + "': iname '" + iname + "' is tagged '" + tag.str() + "' with " +
                          std::to_string(r->second - r->first + 1) + " iterations; unroll at most 1024");
    }
  st.linearize = lap(t);
  check_reorderings(g.kernel, g.linearization);
  st.legality = lap(t);
  if (path == CodegenPath::Auto && g.kernel.slabs.empty()) {
    if (auto fast = codegen::try_fast_path(g.kernel, g.linearization, &g.isl_reason)) {
      g.hardware_inames = fast->inames;
      g.grid = fast->grid;
      g.block = fast->block;
      g.body = codegen::unswitch_partial_tiles(g.kernel, fast->body);
      g.body = codegen::vectorize_loops(g.kernel, g.body, g.argument_alignment);
      g.fast_path = true;
      codegen::check_synchronization(g.kernel, g);
      codegen::lower_warp_matrices(g);
      codegen::plan_bulk_copies(g);
      codegen::pair_adjacent_stores(g);
      st.loop_nest = lap(t);
      return g;
    }
  } else {
    g.isl_reason = path == CodegenPath::Isl ? "isl requested" : "slabs: separated by isl's AST generator";
  }
  if (auto data = g.kernel.data_parameters(); !data.empty()) {
    // isl's AST generator would hoist conditions on them out of the loops
    // that compute them: it sees parameters, fixed for the whole launch
    std::string names;
    for (auto& d : data) names += (names.empty() ? "'" : ", '") + d + "'";
    throw KernelError("kernel '" + g.kernel.name + "': loop bounds computed by the kernel (" + names +
                      ") need the loop nests Loom builds itself, which this kernel's do not fit: " + g.isl_reason);
  }
  isl::set assumptions = islu::assumptions_of(g.kernel);
  codegen::HardwareAxes hw = codegen::compute_hardware_axes(g.kernel, g.linearization.hardware_inames, assumptions, target);
  g.hardware_inames = hw.inames;
  g.grid = hw.grid;
  g.block = hw.block;
  st.hardware_axes = lap(t);
  g.body = codegen::build_loop_nest(g.kernel, g.linearization, hw);
  codegen::check_vector_axes(g.kernel, g.body);  // (isl's loop nests unroll vec loops)
  codegen::check_synchronization(g.kernel, g);
  codegen::lower_warp_matrices(g);
  codegen::plan_bulk_copies(g);
  codegen::pair_adjacent_stores(g);
  st.loop_nest = lap(t);
  return g;
}

LaunchDims launch_dims(const GeneratedKernel& g, const std::map<std::string, int64_t>& params) {
  LaunchDims d;
  for (int a = 0; a < 3; ++a) {
    d.grid[a] = eval_int(g.grid[a], params);
    d.block[a] = g.block[a];
  }
  return d;
}

}  // namespace loom
