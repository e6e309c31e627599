// The automatic space: sketches derived from a kernel as written, in the
// manner of Ansor's sketch rules and tinygrad's actions. The kernel's
// structure decides which sketches apply; each sketch leaves the numbers
// (tile sizes, threads per block, work per thread) and the optional steps
// (shared-memory tiles) as choice points. Nothing here decides legality:
// every configuration goes through Loom's checks, and one they refuse is
// recorded with the reason and never measured.
//
// The inames: *parallel* ones index the written element of every
// instruction (out[i, j] = ...: i and j); the last axis of the written
// subscript is the contiguous one (x), the one before it y. *Reduction*
// inames are those of a sum/product/max/... in a right-hand side.
//   map:        x over blocks of threads (l.0), y over rows of threads (l.1)
//   map + work: as map, each thread also runs an unrolled strip of y
//               (stencils, element-wise kernels with 2-D data)
//   rows:       a reduction across the threads of a block (l.0: warp
//               shuffles within a warp, shared memory across warps), several
//               rows per block on l.1
//   tiles:      (two parallel inames and a reduction: products) register
//               tiles per thread (ilp), a tiled reduction loop, and
//               optional shared-memory tiles of each array read
#include <algorithm>
#include <set>

#include "loom/expr.h"
#include "loom/tuner.h"

namespace loom::tune {

namespace {

struct Reads : ExprVisitor {
  explicit Reads(const LoopKernel& k) : k(k) {}
  const LoopKernel& k;
  std::map<std::string, std::vector<std::set<std::string>>> arrays;  // array -> inames of each axis
  // iname -> the size parameter of an array axis it indexes alone (a[i, j]
  // with a: float32[n, m]: j -> m), for the divisibility a vector access needs
  std::map<std::string, std::string> extent;
  void visit_subscript(const Subscript& s) override {
    note(s);
    auto& axes = arrays[s.name];
    axes.resize(std::max(axes.size(), s.indices.size()));
    for (size_t d = 0; d < s.indices.size(); ++d) collect_free_vars(s.indices[d], axes[d]);
    ExprVisitor::visit_subscript(s);
  }
  void note(const Subscript& s) {
    const Argument* a = k.find_argument(s.name);
    if (!a || a->shape.size() != s.indices.size()) return;
    for (size_t d = 0; d < s.indices.size(); ++d) {
      auto v = s.indices[d].as<Var>();
      Expr shape = simplify(a->shape[d]);
      auto p = shape.as<Var>();
      if (v && p && !extent.count(v->name)) extent[v->name] = p->name;
    }
  }
};

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

Space auto_space(const LoopKernel& k, const std::string& target, const std::map<std::string, int64_t>& sizes) {
  (void)target;  // (the CPU target runs the GPU's schedules; one space serves both)
  std::set<std::string> inames;
  for (auto& n : k.all_inames()) inames.insert(n);
  // parallel: in every written subscript; x: the last axis's, y: the one before
  std::optional<std::set<std::string>> parallel;
  std::string x, y;
  std::set<std::string> reduction;
  Reads reads(k);
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> mine;
    if (auto s = insn.lhs.as<Subscript>()) {
      reads.note(*s);
      for (size_t d = 0; d < s->indices.size(); ++d) {
        std::set<std::string> axis;
        collect_free_vars(s->indices[d], axis);
        for (auto& n : axis)
          if (inames.count(n)) {
            mine.insert(n);
            if (d + 1 == s->indices.size() && x.empty()) x = n;
            if (d + 2 == s->indices.size() && y.empty() && axis.size() == 1) y = n;
          }
      }
    }
    collect_reduction_inames(insn.rhs, reduction);
    reads.visit(insn.rhs);
    if (!parallel) {
      parallel = mine;
    } else {
      std::set<std::string> both;
      std::set_intersection(parallel->begin(), parallel->end(), mine.begin(), mine.end(), std::inserter(both, both.end()));
      parallel = both;
    }
  }
  if (!parallel || parallel->empty()) throw Error("auto_space: kernel '" + k.name + "' has no loop that indexes what every instruction writes; write a space (choice(...)) for it");
  if (!parallel->count(x)) x = *parallel->begin();
  if (y == x || !parallel->count(y)) y.clear();
  if (y.empty())
    for (auto& n : *parallel)
      if (n != x) {
        y = n;
        break;
      }
  std::string r;  // the innermost reduction iname (the last one declared)
  for (auto& n : k.all_inames())
    if (reduction.count(n)) r = n;

  // add_prefetch lines for each array the kernel reads whose subscripts use
  // only tiled inames (its sweep: their tile inames), optional or not
  auto prefetches = [&](std::map<std::string, std::vector<std::string>> tile_inames, bool optional) {
    std::string out;
    for (auto& [array, axes] : reads.arrays) {
      if (!k.find_argument(array)) continue;
      std::vector<std::string> sweep;
      bool tiled = true;
      for (auto& axis : axes)
        for (auto& n : axis) {
          if (!inames.count(n)) continue;
          if (!tile_inames.count(n)) tiled = false;
          else
            for (auto& m : tile_inames[n]) sweep.push_back(m);
        }
      if (tiled && !sweep.empty()) out += std::string(optional ? "optional " : "") + "add_prefetch " + array + " " + join(sweep) + " default_tag=l.auto\n";
    }
    return out;
  };
  // a vector axis: its size parameter is a multiple of 4 at the timed sizes (or none are given)
  auto vector_axis = [&](const std::string& iname) {
    auto e = reads.extent.find(iname);
    if (e == reads.extent.end()) return false;
    auto s = sizes.find(e->second);
    return s == sizes.end() || s->second % 4 == 0;
  };
  std::vector<Sketch> sketches;
  auto add = [&](const std::string& name, const std::string& text) {
    Space s = Space::parse(text, "<auto space: " + name + ">");
    Sketch sk = s.sketches().front();
    sk.name = name;
    sketches.push_back(sk);
  };

  // map
  std::string map = "split_iname " + x + " choice(32|64|128|256|512) outer_tag=g.0 inner_tag=l.0\n";
  if (!y.empty()) map += "split_iname " + y + " choice(1|2|4|8) outer_tag=g.1 inner_tag=l.1\n";
  add("map", map);
  // vector accesses (float4) along x, where x indexes an axis whose size is
  // a parameter: assumed a multiple of 4 (a timed size that is not fails)
  if (vector_axis(x)) {
    std::string v = "assume " + reads.extent[x] + " mod 4 = 0\nsplit_iname " + x + " 4 inner_tag=vec\n" + "split_iname " + x +
                    "_outer choice(32|64|128|256|512) outer_tag=g.0 inner_tag=l.0\n";
    if (!y.empty()) v += "split_iname " + y + " choice(1|2|4|8) outer_tag=g.1 inner_tag=l.1\n";
    add("map + vec", v);
  }
  // map + work per thread (an unrolled strip of y)
  if (!y.empty())
    add("map + work", "split_iname " + x + " choice(32|64|128|256) outer_tag=g.0 inner_tag=l.0\n" + "split_iname " + y +
                          " choice(4|8|16|32) outer_tag=g.1\n" + "split_iname " + y + "_inner choice(1|2|4|8) outer_tag=l.1 inner_tag=unr\n");
  // rows: the reduction across threads
  if (!r.empty())
    add("rows", "split_iname " + r + " choice(32|64|128|256|512) inner_tag=l.0\n" + "split_iname " + x +
                    " choice(1|2|4|8|16) outer_tag=g.0 inner_tag=l.1\n");
  // rows with vector loads: float4 along the reduction, threads across it,
  // rows per block on l.1 and two rows per thread (ilp)
  if (!r.empty() && vector_axis(r))
    add("rows + vec", "assume " + reads.extent[r] + " mod 4 = 0\nsplit_iname " + r + " 4 inner_tag=vec\n" + "split_iname " + r +
                          "_outer choice(4|8|16|32|64|128|256) inner_tag=l.0\n" + "split_iname " + x +
                          " choice(2|4|8|16|32|64|128) outer_tag=g.0\n" + "split_iname " + x + "_inner choice(1|2) outer_tag=l.1 inner_tag=ilp\n");
  // tiles: products (two parallel inames and a reduction)
  if (!r.empty() && !y.empty()) {
    std::string t = "split_iname " + y + " choice(32|64|128) outer_tag=g.1\n" + "split_iname " + x + " choice(32|64|128) outer_tag=g.0\n" +
                    "split_iname " + y + "_inner choice(2|4|8) outer_tag=l.1 inner_tag=ilp\n" + "split_iname " + x +
                    "_inner choice(16|32) outer_tag=ilp inner_tag=l.0\n" + "split_iname " + r + " choice(8|16|32)\n" + "prioritize_loops " + r +
                    "_outer," + r + "_inner," + y + "_inner_inner," + x + "_inner_outer\n";
    t += prefetches({{y, {y + "_inner_outer", y + "_inner_inner"}}, {x, {x + "_inner_outer", x + "_inner_inner"}}, {r, {r + "_inner"}}}, true);
    add("tiles", t);
    // the same with float4 along x (the hand-written sgemm_vec's shape): tiles of
    // each input in shared memory, each optionally double-buffered across r's tiles
    if (vector_axis(x)) {
      std::string v = "assume " + reads.extent[x] + " mod 4 = 0\n" + "split_iname " + y + " choice(64|128) outer_tag=g.1\n" + "split_iname " + x +
                      " choice(64|128) outer_tag=g.0\n" + "split_iname " + y + "_inner choice(8|16) outer_tag=ilp inner_tag=l.1\n" +
                      "split_iname " + x + "_inner 4 inner_tag=vec\n" + "split_iname " + x + "_inner_outer choice(8|16) outer_tag=ilp inner_tag=l.0\n" +
                      "split_iname " + r + " choice(16|32)\n" + "prioritize_loops " + r + "_outer," + r + "_inner," + y + "_inner_outer," + x +
                      "_inner_outer_outer," + x + "_inner_inner\n";
      // (each tile fetched with float4 copies or not, with cp.async or not)
      std::string fetches = prefetches({{y, {y + "_inner_outer", y + "_inner_inner"}},
                                        {x, {x + "_inner_outer_outer", x + "_inner_outer_inner", x + "_inner_inner"}},
                                        {r, {r + "_inner"}}},
                                       false);
      for (size_t at = 0; (at = fetches.find(" default_tag=l.auto\n", at)) != std::string::npos; at += 1)
        fetches.replace(at, 20, " default_tag=l.auto vector_width=choice(1|4) async_copy=choice(false|true)\n");
      v += fetches;
      for (auto& [array, axes] : reads.arrays)
        if (k.find_argument(array) && v.find("add_prefetch " + array + " ") != std::string::npos)
          v += "optional double_buffer " + array + "_fetch " + r + "_outer\n";
      v += "optional split_iname " + r + "_inner 4 inner_tag=unr outer_tag=unr\n";  // the k tile unrolled whole
      add("tiles + vec", v);
    }
  }
  return Space(sketches);
}

}  // namespace loom::tune
