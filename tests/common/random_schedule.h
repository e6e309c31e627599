// A random schedule for a kernel: 1 to 4 steps among splits (random
// lengths, outer/inner tags for blocks, threads, unrolling, ILP, slabs),
// tags, loop priorities, reduction splits, chunks, joins, renames,
// assumptions (and do_not_specialize), prefetches (local or private, random sweeps and tags, async
// copies, zero fills and the sums over their tiles rounded up) and the
// other memory transformations (precompute, buffer_array, privatize,
// double_buffer, tma_copy, assignment_to_subst, expand_subst), the blocks' launch
// order (group_blocks), reductions in two launches (rfactor), a product's tile
// on the tensor cores (tensor_core), and the whole-program steps of the nests
// sketches (accumulation_to_reduction, distribute_loops, add_global_barrier,
// affine_map_inames skews and shifts, read_initial_values, expand_array,
// split_index_set, reorder_instructions, run_on_first_thread, rename_iname
// existing_ok, forward_substitute, rename_temporary within=);
// `log` is the applied steps as a transformation script (one per line), so a
// failing case replays (and shrinks) through apply_transforms. steps a transform refuses are skipped. Used by the CPU and GPU
// random-schedule tests; `log` records what was applied.
#pragma once
#include <functional>
#include <random>
#include <set>
#include <string>

#include "loom/isl_util.h"
#include "loom/parser.h"
#include "loom/transforms.h"

namespace loom::testing {

// A sequential loop the instruction that writes temporary tv runs in (a
// random one), or "".
template <class Pick>
std::string filler_loop(const LoopKernel& t, const std::string& tv, Pick& pick) {
  std::vector<std::string> loops;
  for (auto& insn : t.instructions)
    if (insn.kind == Instruction::Assign && insn.assignee_name() == tv)
      for (auto& i : insn.within_inames)
        if (t.tag_of(i).kind == InameTag::Seq) loops.push_back(i);
  return loops.empty() ? "" : loops[size_t(pick(int(loops.size())))];
}

// whole_programs: half the steps are the nests sketches' (PolyBench's
// kernels, where those steps apply).
inline LoopKernel random_schedule(const LoopKernel& k, std::mt19937& rng, std::string& log, bool whole_programs = false) {
  LoopKernel t = k;
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  std::vector<std::string> used_axes;
  // a product's tile on the tensor cores, sometimes first (refused where the
  // kernel has no float16/bfloat16 product): m by 16, n by 8, k by 16
  if (pick(3) == 0) {
    std::vector<std::string> loops, sums;
    for (auto& n : t.all_inames()) {
      bool reduced = false;
      for (auto& insn : t.instructions) {
        std::set<std::string> r;
        if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, r);
        reduced |= r.count(n) > 0;
      }
      (reduced ? sums : loops).push_back(n);
    }
    if (loops.size() >= 2 && !sums.empty()) {
      std::string m = loops[size_t(pick(int(loops.size())))], n = loops[size_t(pick(int(loops.size())))], kk = sums[size_t(pick(int(sums.size())))];
      static const char* outer[] = {"for", "g.0", "g.1", "ilp"};
      LoopKernel before = t;
      std::string steps_log;
      try {
        for (auto [iname, length] : {std::pair{m, 16}, std::pair{n, 8}, std::pair{kk, 16}}) {
          SplitOptions o;
          o.outer_tag = InameTag::parse(outer[iname == kk ? 0 : pick(4)]);
          t = split_iname(t, iname, length, o);
          steps_log += "split_iname " + iname + " " + std::to_string(length) + " outer_tag=" + o.outer_tag->str() + "\n";
        }
        t = tensor_core(t, m + "_inner", n + "_inner", kk + "_inner");
        log += steps_log + "tensor_core " + m + "_inner " + n + "_inner " + kk + "_inner\n";
      } catch (const TransformError&) {
        t = before;
      }
    }
  }
  int steps = 1 + pick(4);
  for (int s = 0; s < steps; ++s) {
    auto inames = t.all_inames();
    std::vector<std::string> free;
    for (auto& n : inames)
      if (t.tag_of(n).kind == InameTag::Seq) free.push_back(n);
    if (free.empty()) break;
    const std::string& n = free[size_t(pick(int(free.size())))];
    int what = whole_programs && pick(2) == 0 ? 14 : pick(15);
    if (what == 10) what = 9;  // prefetches need a split before them: give them two chances
    try {
      if (what == 14) {  // the whole-program steps the nests sketches take, through the registry as scripts
        const std::string& id = t.instructions[size_t(pick(int(t.instructions.size())))].id;
        const std::string& other = free[size_t(pick(int(free.size())))];
        std::string line;
        const Instruction& insn = t.instruction(id);
        const std::string written = insn.kind == Instruction::Assign ? insn.assignee_name() : "";
        const std::string& another = t.instructions[size_t(pick(int(t.instructions.size())))].id;
        switch (pick(13)) {
          case 0: line = "accumulation_to_reduction id:" + id; break;
          // a sum over a loop of one's choice (one that holds other instructions as written: the check reads its terms there)
          case 10: line = "accumulation_to_reduction id:" + id + " inames=" + n; break;
          case 11: line = "forward_substitute id:" + id; break;  // a constant store folded into its readers
          case 12: line = "rename_temporary " + written + " " + written + "_web within=id:" + id; break;  // one web of a temporary
          case 1: line = "distribute_loops " + n + " after=id:" + id; break;
          case 2: line = "add_global_barrier " + id + " id=random_barrier_" + std::to_string(s); break;
          // the copies of an array (reads of its values from before the kernel; a copy per iteration of a loop)
          case 3: line = "read_initial_values " + written; break;
          case 4: line = "expand_array " + written + " " + n; break;
          case 5: line = "split_index_set " + n + " " + (other != n ? other : "3"); break;
          case 6: line = "reorder_instructions \"" + another + ", " + id + "\""; break;
          case 7: line = "run_on_first_thread id:" + id; break;
          case 8: line = "rename_iname " + n + " " + other + " existing_ok=true"; break;
          default:  // a skew (or a shift) of one loop by another's index, loopy's affine_map_inames
            line = "affine_map_inames " + n + " " + n + "_w \"" + n + "_w = " + n + (other != n ? " + " + other : " + 3") + "\"";
        }
        try {
          t = apply_transforms(t, parse_transform_script(line + "\n"));
          log += line + "\n";
        } catch (const Error&) {
          // refused (not an accumulation, a dependence the distribution or the barrier would break, ...)
        }
      } else if (what <= 1) {
        int64_t f = std::vector<int64_t>{2, 3, 4, 8, 16, 32}[size_t(pick(6))];
        SplitOptions o;
        static const char* tags[] = {"for", "g.0", "g.1", "l.0", "l.1", "unr", "ilp"};
        o.outer_tag = InameTag::parse(tags[pick(3)]);
        o.inner_tag = InameTag::parse(tags[pick(7)]);
        if (o.inner_tag->kind == InameTag::Unroll || o.inner_tag->kind == InameTag::Ilp) f = std::min<int64_t>(f, 4);
        if ((o.outer_tag->kind == InameTag::Seq || o.outer_tag->kind == InameTag::Group) && pick(3) == 0) o.slabs = {0, 1};
        // loopy's within: only one instruction's use of the iname is split
        if (t.instructions.size() >= 2 && pick(4) == 0)
          o.within = "id:" + t.instructions[size_t(pick(int(t.instructions.size())))].id;
        t = split_iname(t, n, f, o);
        log += "split_iname " + n + " " + std::to_string(f) + " outer_tag=" + o.outer_tag->str() + " inner_tag=" + o.inner_tag->str() +
               (o.slabs.second ? " slabs=0,1" : "") + (o.within.empty() ? "" : " within=" + o.within) + "\n";
      } else if (what == 5) {
        int64_t chunks = 1 + pick(4);
        t = chunk_iname(t, n, chunks);
        log += "chunk_iname " + n + " " + std::to_string(chunks) + "\n";
      } else if (what == 6 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = join_inames(t, a + ", " + b);
          log += "join_inames " + a + "," + b + "\n";
        }
      } else if (what == 7) {
        t = rename_iname(t, n, n + "_r");
        log += "rename_iname " + n + " " + n + "_r\n";
      } else if (what == 8) {
        auto params = t.parameters();
        if (pick(5) == 0) {  // 64-bit index arithmetic (loopy's index_dtype)
          t = set_index_dtype(t, "int64");
          log += "set_index_dtype int64\n";
        } else if (pick(6) == 0) {  // the blocks' launch order (the schedules use g.0 and g.1 only)
          int64_t g = 1 + pick(4);
          t = group_blocks(t, g);
          log += "group_blocks " + std::to_string(g) + "\n";
        } else if (!params.empty() && pick(6) == 0) {  // calls keep the general code (no change to it)
          const std::string& p = params[size_t(pick(int(params.size())))];
          t = do_not_specialize(t, p);
          log += "do_not_specialize " + p + "\n";
        } else if (!params.empty()) {
          // a lower bound, or a multiple of 16 (full tiles: tail guards may go)
          std::string a = params[size_t(pick(int(params.size())))] + (pick(2) ? " >= 1" : " mod 16 = 0");
          t = assume(t, a);
          log += "assume " + a + "\n";
        }
      } else if (what == 9) {
        std::vector<std::string> arrays, sweep;
        for (auto& a : t.arguments)
          if (a.kind == Argument::Array && !t.is_written(a.name) && t.is_read(a.name)) arrays.push_back(a.name);
        for (auto& i : inames)
          if (t.tag_of(i).kind != InameTag::Group && islu::constant_range(t, i) && pick(3)) sweep.push_back(i);
        if (!arrays.empty() && !sweep.empty()) {
          std::string array = arrays[size_t(pick(int(arrays.size())))], names;
          for (auto& i : sweep) names += (names.empty() ? "" : ",") + i;
          PrefetchOptions po;
          po.temporary_address_space = pick(2) ? AddressSpace::Local : AddressSpace::Private;
          static const char* tags[] = {"l.auto", "for", "unr"};
          po.default_tag = tags[pick(3)];
          po.async_copy = po.temporary_address_space == AddressSpace::Local && pick(3) == 0;  // cp.async on the GPU
          if (pick(3) == 0) po.fill_value = 0;  // the whole box, zeros outside the array
          t = add_prefetch(t, array, names, po);
          log += "add_prefetch " + array + " " + names + " temporary_address_space=" + to_string(po.temporary_address_space) +
                 " default_tag=" + po.default_tag + (po.async_copy ? " async_copy=true" : "") + (po.fill_value ? " fill_value=0" : "") + "\n";
          // a sum over the zero-filled tile run whole in a swept iname (refused unless every factor reads zeros there)
          if (po.fill_value && pick(2)) {
            const std::string& i = sweep[size_t(pick(int(sweep.size())))];
            try {
              t = round_up_reduction(t, i);
              log += "round_up_reduction " + i + "\n";
            } catch (const TransformError&) {
            }
          }
          // its layout, sometimes: axes reordered, one axis padded, or (local) 16-byte pieces swizzled;
          // none changes what the kernel computes
          std::string fetched = array + "_fetch";
          if (const Temporary* ft = t.find_temporary(fetched); ft && !ft->shape.empty() && pick(3) == 0) {
            size_t rank = ft->shape.size();
            int layout = pick(3);
            if (layout == 0 && rank >= 2) {
              t = tag_array_axes(t, fetched, rank == 2 ? "f,f" : "f,f,f");
              log += "tag_array_axes " + fetched + " " + (rank == 2 ? "f,f" : "f,f,f") + "\n";
            } else if (layout == 1) {
              int axis = pick(int(rank)), pad = 1 + pick(3);
              t = pad_array_axis(t, fetched, axis, pad);
              log += "pad_array_axis " + fetched + " " + std::to_string(axis) + " " + std::to_string(pad) + "\n";
            } else if (ft->space == AddressSpace::Local) {
              t = swizzle_array(t, fetched, 128);
              log += "swizzle_array " + fetched + "\n";
            }
          }
          // a local tile fetched in a sequential loop: double-buffered in that loop, sometimes
          std::string loop = filler_loop(t, fetched, pick);
          if (po.temporary_address_space == AddressSpace::Local && !loop.empty() && pick(2)) {
            try {
              t = double_buffer(t, fetched, loop);
              log += "double_buffer " + fetched + " " + loop + "\n";
              // filled by the copy engine, sometimes (code generation proves the fill's shape or refuses it)
              if (pick(2)) {
                t = tma_copy(t, fetched);
                log += "tma_copy " + fetched + "\n";
              }
            } catch (const TransformError&) {
            }
          }
        }
      } else if (what >= 11) {
        // the memory transformations: precompute a rule, buffer a written array,
        // privatize / turn into a rule / expand the kernel's temporaries and rules
        std::vector<std::string> sweep;
        for (auto& i : inames)
          if (t.tag_of(i).kind != InameTag::Group && islu::constant_range(t, i) && pick(2)) sweep.push_back(i);
        std::string names;
        for (auto& i : sweep) names += (names.empty() ? "" : ",") + i;
        std::vector<std::string> rules, written, temps;
        for (auto& [r, rule] : t.substitutions) rules.push_back(r);
        for (auto& a : t.arguments)
          if (a.kind == Argument::Array && t.is_written(a.name)) written.push_back(a.name);
        for (auto& [tn, tv] : t.temporaries) temps.push_back(tn);
        static const char* spaces[] = {"auto", "private", "local"};
        static const char* tags[] = {"l.auto", "for", "unr"};
        if (what == 11 && !rules.empty() && !names.empty()) {
          std::string rule = rules[size_t(pick(int(rules.size())))];
          PrecomputeOptions o;
          o.temporary_address_space = spaces[pick(3)];
          o.default_tag = tags[pick(3)];
          t = precompute(t, rule, names, o);
          log += "precompute " + rule + " " + names + " temporary_address_space=" + o.temporary_address_space +
                 " default_tag=" + o.default_tag + "\n";
        } else if (what == 12 && !written.empty() && !names.empty()) {
          std::string array = written[size_t(pick(int(written.size())))];
          BufferOptions o;
          o.temporary_scope = spaces[pick(3)];
          o.default_tag = tags[pick(3)];
          t = buffer_array(t, array, names, o);
          log += "buffer_array " + array + " " + names + " temporary_scope=" + o.temporary_scope + " default_tag=" + o.default_tag + "\n";
        } else if (!temps.empty() && pick(2)) {
          std::string tv = temps[size_t(pick(int(temps.size())))];
          if (pick(2) && !sweep.empty()) {
            t = privatize_temporaries_with_inames(t, sweep[0], tv);
            log += "privatize_temporaries_with_inames " + sweep[0] + " only_var_names=" + tv + "\n";
          } else if (pick(2)) {
            std::string loop = filler_loop(t, tv, pick);
            t = double_buffer(t, tv, loop.empty() ? n : loop);
            log += "double_buffer " + tv + " " + (loop.empty() ? n : loop) + "\n";
          } else {
            t = assignment_to_subst(t, tv);
            log += "assignment_to_subst " + tv + "\n";
          }
        } else if (!rules.empty()) {
          t = expand_subst(t);
          log += "expand_subst\n";
        }
      } else if (what == 2) {
        static const char* tags[] = {"g.0", "g.1", "unr"};
        std::string tag = tags[pick(3)];
        t = tag_inames(t, n + ":" + tag);
        log += "tag_inames " + n + ":" + tag + "\n";
      } else if (what == 3 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = prioritize_loops(t, b + ", " + a);
          log += "prioritize_loops " + b + "," + a + "\n";
        }
      } else if (pick(2)) {  // a reduction across blocks: its partial results by n, a global barrier, their reduction
        t = rfactor(t, n);
        log += "rfactor " + n + "\n";
      } else {
        t = split_reduction_inward(t, n);
        log += "split_reduction_inward " + n + "\n";
      }
    } catch (const TransformError&) {
      // refused: try another step
    }
  }
  return t;
}


// The shortest script made of lines of `script` (dropping one at a time while
// the case still fails) for which `fails(kernel)` holds: a failing random case
// shrunk to what a regression test needs.
inline std::string shrink_script(const LoopKernel& k, const std::string& script, const std::function<bool(const LoopKernel&)>& fails) {
  std::vector<std::string> lines;
  for (size_t b = 0, e; b < script.size(); b = e + 1) {
    e = script.find('\n', b);
    if (e == std::string::npos) e = script.size();
    if (e > b) lines.push_back(script.substr(b, e - b));
  }
  auto join = [](const std::vector<std::string>& ls) {
    std::string r;
    for (auto& l : ls) r += l + "\n";
    return r;
  };
  // passes until none drops a line: a step may go only once the steps that used it went
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (size_t i = 0; i < lines.size();) {
      std::vector<std::string> fewer = lines;
      fewer.erase(fewer.begin() + long(i));
      bool still = false;
      try {
        still = fails(apply_transforms(k, parse_transform_script(join(fewer))));
      } catch (const Error&) {  // a step that needed the dropped one is refused: keep the line
      }
      if (still) {
        lines = fewer;
        dropped = true;
      } else {
        ++i;
      }
    }
  }
  return join(lines);
}

}  // namespace loom::testing
