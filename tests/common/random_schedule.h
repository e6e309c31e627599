// A random schedule for a kernel: 1 to 4 steps among splits (random
// lengths, outer/inner tags for blocks, threads, unrolling, ILP, slabs),
// tags, loop priorities, reduction splits, chunks, joins, renames,
// assumptions and prefetches (local or private, random sweeps and tags); steps a transform refuses are skipped. Used by the CPU and GPU
// random-schedule tests; `log` records what was applied.
#pragma once
#include <random>
#include <string>

#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom::testing {

inline LoopKernel random_schedule(const LoopKernel& k, std::mt19937& rng, std::string& log) {
  LoopKernel t = k;
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  std::vector<std::string> used_axes;
  int steps = 1 + pick(4);
  for (int s = 0; s < steps; ++s) {
    auto inames = t.all_inames();
    std::vector<std::string> free;
    for (auto& n : inames)
      if (t.tag_of(n).kind == InameTag::Seq) free.push_back(n);
    if (free.empty()) break;
    const std::string& n = free[size_t(pick(int(free.size())))];
    int what = pick(11);
    if (what == 10) what = 9;  // prefetches need a split before them: give them two chances
    try {
      if (what <= 1) {
        int64_t f = std::vector<int64_t>{2, 3, 4, 8, 16, 32}[size_t(pick(6))];
        SplitOptions o;
        static const char* tags[] = {"for", "g.0", "g.1", "l.0", "l.1", "unr", "ilp"};
        o.outer_tag = InameTag::parse(tags[pick(3)]);
        o.inner_tag = InameTag::parse(tags[pick(7)]);
        if (o.inner_tag->kind == InameTag::Unroll || o.inner_tag->kind == InameTag::Ilp) f = std::min<int64_t>(f, 4);
        if (o.outer_tag->kind == InameTag::Seq && pick(3) == 0) o.slabs = {0, 1};
        t = split_iname(t, n, f, o);
        log += "split " + n + " " + std::to_string(f) + " " + o.outer_tag->str() + "/" + o.inner_tag->str() +
               (o.slabs.second ? " slabs" : "") + "; ";
      } else if (what == 5) {
        t = chunk_iname(t, n, 1 + pick(4));
        log += "chunk " + n + "; ";
      } else if (what == 6 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = join_inames(t, a + ", " + b);
          log += "join " + a + "," + b + "; ";
        }
      } else if (what == 7) {
        t = rename_iname(t, n, n + "_r");
        log += "rename " + n + "; ";
      } else if (what == 8) {
        auto params = t.parameters();
        if (!params.empty()) {
          // a lower bound, or a multiple of 16 (full tiles: tail guards may go)
          std::string a = params[size_t(pick(int(params.size())))] + (pick(2) ? " >= 1" : " mod 16 = 0");
          t = assume(t, a);
          log += "assume " + a + "; ";
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
          t = add_prefetch(t, array, names, po);
          log += "prefetch " + array + " " + names + " " + to_string(po.temporary_address_space) + " " + po.default_tag + "; ";
        }
      } else if (what == 2) {
        static const char* tags[] = {"g.0", "g.1", "unr"};
        std::string tag = tags[pick(3)];
        t = tag_inames(t, n + ":" + tag);
        log += "tag " + n + ":" + tag + "; ";
      } else if (what == 3 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = prioritize_loops(t, b + ", " + a);
          log += "prioritize " + b + "," + a + "; ";
        }
      } else {
        t = split_reduction_inward(t, n);
        log += "split_reduction_inward " + n + "; ";
      }
    } catch (const TransformError&) {
      // refused: try another step
    }
  }
  return t;
}


}  // namespace loom::testing
