// The "nests" sketch: parallelism from dependences for whole programs
// (PolyBench's kernels as written: time loops, several loop nests, scale
// then accumulate). The kernel's loop tree is read from its instruction
// list (loops nest in domain order, as linearize() nests them). From the
// outside in, a loop is parallel when Loom's own legality checks accept it
// on blocks and threads (split by 32, g.0 and l.0): the isl dataflow of the
// kernel as written against the transformed one, and the conflicts between
// threads and blocks; so the answer is exact for the schedule tried, and a
// refusal names the dependence. A loop that is not parallel and holds
// parallel loops runs on the host: global barriers (add_global_barrier)
// between its nests, and after its last one, make each nest a launch of
// each of its iterations. Nests at the top level are launches of their own
// too (the second of 2mm's products reads the whole first). A parallel
// loop roots a nest: it and the loops nested alone inside it are the
// candidates for blocks and threads, the one indexing the written array's
// last axis on l.0 (coalesced), another on l.1, their tile sizes choice
// points. Private values never cross a barrier: one that would moves to
// global memory (one without a dtype keeps its nests in one launch). A
// sequential loop holding one nest whose inner loop is parallel stays inside
// each thread (one launch). Arrays read across l.0 with a stride may be
// staged through shared memory. nests_sketches plans the kernel as written,
// then with its loops distributed (distribute_loops), then with its
// accumulations read as sums (accumulation_to_reduction, a private sum
// read once folded into its reader): one-sum nests
// along rows summed across l.0 ("nests, rows"), products in the tiles
// sketch's tiles ("nests, tiles"), float64 products on the FP64 tensor
// cores ("nests, tensor cores"); and all of those again after the reads of
// an array's values from before the kernel read a copy (read_initial_values,
// "..., initial copies") or after a work array gets a copy per iteration
// (expand_array, "..., expanded"), where that frees more loops.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "loom/analysis.h"
#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "sketches.h"

namespace loom::tune {

namespace {

// The loop tree of the instruction list: a statement (insn >= 0) or a loop
// over `iname` holding what runs inside it, in order.
struct Node {
  std::string iname;
  int insn = -1;
  std::vector<Node> children;
};

std::vector<Node> tree_of(const LoopKernel& k, const std::vector<int>& insns, const std::set<std::string>& around,
                          const std::vector<std::string>& order) {
  std::vector<Node> out;
  auto first_missing = [&](int i) {
    for (auto& n : order)
      if (k.instructions[size_t(i)].within_inames.count(n) && !around.count(n)) return n;
    return std::string();
  };
  for (size_t p = 0; p < insns.size();) {
    std::string loop = first_missing(insns[p]);
    if (loop.empty()) {
      out.push_back({"", insns[p], {}});
      ++p;
      continue;
    }
    std::vector<int> inside;
    while (p < insns.size() && first_missing(insns[p]) == loop) inside.push_back(insns[p++]);
    std::set<std::string> deeper = around;
    deeper.insert(loop);
    out.push_back({loop, -1, tree_of(k, inside, deeper, order)});
  }
  return out;
}

void instructions_of(const Node& n, std::vector<int>& out) {
  if (n.insn >= 0) out.push_back(n.insn);
  for (auto& c : n.children) instructions_of(c, out);
}

// The accesses_using option that picks one read of `name` in insn's sum
// over r from the array's other reads: none where it is the only read; the
// sum's own loop (r_iname) where the others are outside the sum (symm's
// A[i, i] beside A[i, k]); the side's loop (side_iname) where two reads run
// over r (syrk's A[i, k] and A[j, k]); nullopt where neither tells them apart.
std::optional<std::string> accesses_using(const Instruction& insn, const std::string& name, const std::string& r, const std::string& r_iname,
                                          const std::string& side_iname) {
  std::set<std::string> over_r, others;
  for_each_subscript(insn.rhs, [&](const Subscript& s) {
    if (s.name != name) return;
    std::string at;
    bool uses_r = false;
    for (auto& e : s.indices) {
      at += e.str() + ",";
      uses_r |= mentions_var(e, r);
    }
    (uses_r ? over_r : others).insert(at);
  });
  if (over_r.size() == 1 && others.empty()) return std::string();
  if (over_r.size() == 1) return " accesses_using=" + r_iname;
  if (over_r.size() == 2 && others.empty() && !side_iname.empty()) return " accesses_using=" + side_iname;
  return std::nullopt;
}

// The non-global temporaries an instruction reads or writes.
std::set<std::string> private_values(const LoopKernel& k, const Instruction& insn) {
  std::set<std::string> out;
  std::set<std::string> names = insn.read_names();
  names.insert(insn.assignee_name());
  for (auto& n : names)
    if (const Temporary* t = k.find_temporary(n); t && t->space != AddressSpace::Global) out.insert(n);
  return out;
}

struct Nest {
  std::vector<std::string> parallel;  // legal on blocks and threads, outermost first
  std::string written_last;           // the iname of the written array's last axis (l.0's first pick)
  std::vector<int> insns;             // its instructions
  std::set<std::string> hosts;        // the loops around it on the host
};

class Planner {
 public:
  // k: the kernel as written, or that kernel after the steps `prefix` (distribution)
  // rows: a nest that is one reduction along its rows' last axis sums each row across l.0 (rows on g.0 and l.1)
  explicit Planner(const LoopKernel& k, std::string prefix = "", bool rows = false)
      : written_(k), k_(k), barriers_(std::move(prefix)), rows_(rows) {}
  // tiles: a nest that is one product (two parallel loops, a sum) gets the
  // register and shared-memory tiles of the single-statement `tiles` sketch
  // one loop of each nest on blocks and threads, the others sequential in
  // each thread: a wavefront's (isl's bounds of a second skewed loop on
  // blocks took minutes to compute)
  Planner& with_one_parallel_loop() {
    one_loop_ = true;
    return *this;
  }
  // a second parallel loop whole on g.1 (one row of threads): split by 2 or 4,
  // the index-set split's nine pieces took isl's dataflow past its bound
  Planner& with_second_loop_on_blocks() {
    second_on_blocks_ = true;
    return *this;
  }
  // vector: the tiles of sgemm_vec's shape (vectors along x)
  Planner& with_tiles(bool vector = false) {
    tiles_ = true;
    vector_tiles_ = vector;
    return *this;
  }
  // tensor cores: float64 products on the FP64 tensor cores (tensor_core_tiles)
  Planner& with_tensor_cores() {
    tiles_ = true;
    tensor_cores_ = true;
    return *this;
  }

  std::optional<Sketch> plan(std::string* why) {
    std::vector<std::string> order = written_.all_inames();
    std::vector<int> all;
    for (size_t i = 0; i < written_.instructions.size(); ++i) {
      const Instruction& insn = written_.instructions[i];
      // (a barrier around a stand-in's copy, read_initial_values's or expand_array's, keeps its place)
      if (insn.kind == Instruction::GlobalBarrier && !insn.tags.count(Instruction::kAddedBarrierTag) &&
          !insn.tags.count(Instruction::kStandInCopyTag))
        return none(why, "the kernel has global barriers of its own");
      if (insn.kind == Instruction::Assign) all.push_back(int(i));
    }
    std::vector<Node> top = tree_of(written_, all, {}, order);
    bool any = children(top, {});
    if (!any) return none(why, reasons());
    std::string text = barriers_;
    for (auto& nest : nests_) {
      if (nest.parallel.empty()) continue;
      if (std::string t = tiles_ ? product_tiles(nest) : ""; !t.empty()) {
        if (size_t end = t.find('\n'); t.rfind("assume ", 0) == 0 && text.find(t.substr(0, end + 1)) != std::string::npos)
          t.erase(0, end + 1);  // (two products of one size assume it once)
        text += t;
        tiled_ = true;
        continue;
      }
      if (std::string r = rows_ ? row_reduction(nest) : ""; !r.empty()) {
        rowed_ = true;
        text += "split_iname " + r + " choice(32|64|128|256) inner_tag=l.0\n" + "split_iname " + nest.parallel.front() +
                " choice(1|2|4) outer_tag=g.0 inner_tag=l.1\n";
        continue;
      }
      std::string x = nest.parallel.back(), y;
      if (std::count(nest.parallel.begin(), nest.parallel.end(), nest.written_last)) x = nest.written_last;
      for (auto& n : nest.parallel)
        if (n != x && !one_loop_) y = n;
      text += "split_iname " + x + " choice(32|64|128|256) outer_tag=g.0 inner_tag=l.0\n";
      // (y's loop left whole inside each thread ran heat-3d 100x slower: y is always split, 1 meaning all on blocks)
      if (!y.empty() && second_on_blocks_) text += "tag_inames " + y + ":g.1\n";
      else if (!y.empty()) text += "split_iname " + y + " choice(1|2|4) outer_tag=g.1 inner_tag=l.1\n";  // (at most 256 x 4 threads)
      for (auto& z : nest.parallel)  // a third parallel loop on g.2 (a 3-d stencil's planes)
        if (z != x && z != y && !one_loop_) {
          text += "optional tag_inames " + z + ":g.2\n";
          break;
        }
      text += staged_reads(nest, size_t(&nest - nests_.data()), x, y);
    }
    Sketch s = Space::parse(text, "<auto space: nests>").sketches().front();
    s.name = "nests";
    return s;
  }

 private:
  // The tiles of a nest that is one product, c[y, x] (+)= sum(r, a[y, r] b[r, x])
  // with y and x its two parallel loops: blocks of y by x tiles, each thread
  // an ilp strip of both (register tiles), r in tiles, the factors' tiles
  // optionally in shared memory; "" for any other nest. With vector_tiles_:
  // the tiles of sgemm_vec's shape, vectors of 16 bytes along x (x's extent
  // assumed a multiple of the vector), every factor's tile in shared memory
  // (vector copies, cp.async and a second buffer each a choice).
  std::string product_tiles(const Nest& nest) const {
    std::string r, batch;
    const Instruction* one = one_reduction(nest, 2, r);
    // (a third parallel loop, outermost, a batch of products on g.2: doitgen's r)
    if (!one && (one = one_reduction(nest, 3, r))) batch = nest.parallel.front();
    if (!one) return "";
    const Instruction& insn = *one;
    std::string x = written_last_of(insn), y;
    if (!std::count(nest.parallel.begin(), nest.parallel.end(), x) || x == batch) return "";
    for (auto& n : nest.parallel)
      if (n != x && n != batch) y = n;
    if (tensor_cores_) {
      std::string t = tensor_core_tiles(nest, insn, y, x, r, batch);
      return t.empty() || batch.empty() ? t : "tag_inames " + batch + ":g.2\n" + t;
    }
    std::string batched = batch.empty() ? "" : "tag_inames " + batch + ":g.2\n";
    int64_t width = vector_tiles_ ? vector_width_along(insn) : 1;
    if (vector_tiles_ && width == 1) return "";
    std::map<std::string, std::string> sweep_of = {{y, y + "_inner_outer," + y + "_inner_inner"}, {r, r + "_inner"}};
    sweep_of[x] = width > 1 ? x + "_inner_outer_outer," + x + "_inner_outer_inner," + x + "_inner_inner" : x + "_inner_outer," + x + "_inner_inner";
    std::string fetches, buffers;
    std::set<std::string> seen;
    // (an array read at two places, syrk's A[i, k] and A[j, k], has no one
    // footprint: each read gets a tile of its own, accesses_using its loop)
    std::map<std::string, std::set<std::string>> reads_of;
    for_each_subscript(insn.rhs, [&](const Subscript& s) {
      std::string at;
      for (auto& e : s.indices) at += e.str() + ",";
      reads_of[s.name].insert(at);
    });
    for_each_subscript(insn.rhs, [&](const Subscript& s) {
      std::string at;
      for (auto& e : s.indices) at += e.str() + ",";
      if (!fetchable(s.name, nest) || !seen.insert(s.name + "[" + at).second) return;
      std::string sweep, side;  // side: y or x, the loop that tells this read from the array's other one
      bool over_r = false;
      for (auto& e : s.indices) {
        auto v = e.as<Var>();
        if (v && v->name == batch) continue;  // (one index of the batch in each block)
        if (!v || !sweep_of.count(v->name)) return;
        sweep += (sweep.empty() ? "" : ",") + sweep_of[v->name];
        over_r |= v->name == r;
        if (v->name == y || v->name == x) side = v->name;
      }
      if (!over_r) return;
      std::string temp = s.name + "_tile_" + y + "_" + x;
      // (read at two places, syrk's A[i, k] and A[j, k]: a tile of each, told apart by their loops)
      std::optional<std::string> which = accesses_using(insn, s.name, r, r + "_inner", side.empty() ? "" : side + "_inner_inner");
      if (!which) return;
      if (reads_of[s.name].size() > 1) temp += "_" + side;
      std::string line = "add_prefetch " + s.name + " sweep_inames=" + sweep + " temporary_name=" + temp +
                         " temporary_address_space=local default_tag=l.auto" + *which;
      if (width == 1) {
        fetches += "optional " + line + "\n";
        return;
      }
      // (a tile whose rows run along r is read down its columns by a warp: a vector of padding may spread those reads over the banks)
      auto last = s.indices.back().as<Var>();
      fetches += line + " vector_width=choice(1|*" + std::to_string(width) + ") async_copy=choice(false|*true)" +
                 (last->name == r ? " padding=choice(0|*" + std::to_string(width) + ")" : "") + "\n";
      buffers += "optional double_buffer " + temp + " " + r + "_outer\n";
    });
    if (width == 1) return batched + product_tile_lines(y, x, r, "32|64", "32|64|128", "8|16") + fetches;
    return "assume " + extent_of_last_axis(insn) + " mod " + std::to_string(width) + " = 0\n" + batched + product_vector_tile_lines(y, x, r, width) +
           fetches + buffers + "optional split_iname " + r + "_inner 4 inner_tag=unr outer_tag=unr\n";
  }

  // The FP64 tensor cores' tiles of a float64 product c[y, x] (+)= sum(r,
  // a b) (gemm_f64.loom's schedule: Hopper's m16n8k16, 64x64 tiles of c a
  // block of 2x2 warps, 32x32 a warp, r in tiles of 16; 0.83x cuBLAS's
  // DGEMM at 4096^3 on an H200): each factor read once, over r, copied to
  // shared memory as double2 vectors (its last axis's extent assumed even;
  // zero-filled where the tiles leave the arrays) with cp.async and a
  // second buffer, rows padded by 4 against the fragment loads' bank
  // conflicts. A batch's index (doitgen's r, on g.2) is an axis of extent 1
  // of a factor's tile; a factor read at two places (syrk's A[i, k] and
  // A[j, k]) gets a tile for each read (accesses_using). "" where c or a
  // factor is not float64.
  std::string tensor_core_tiles(const Nest& nest, const Instruction& insn, const std::string& y, const std::string& x, const std::string& r,
                                const std::string& batch) const {
    auto float64 = [&](const std::string& name) { return dtype_of(name) == types::float64; };
    if (!float64(insn.assignee_name())) return "";
    const std::map<std::string, std::pair<std::string, int>> tile_of = {  // a loop's inames in the tile and its extent there
        {y, {y + "_inner_outer," + y + "_inner_inner_outer," + y + "_inner_inner_inner", 64}},
        {x, {x + "_inner_outer," + x + "_inner_inner_outer," + x + "_inner_inner_inner", 64}},
        {r, {r + "_inner", 16}}};
    std::string text = "split_iname " + y + " 64 outer_tag=g.1\nsplit_iname " + x + " 64 outer_tag=g.0\n" + "split_iname " + y +
                       "_inner 32 outer_tag=l.1\nsplit_iname " + y + "_inner_inner 16 outer_tag=ilp\n" + "split_iname " + x +
                       "_inner 32 outer_tag=l.2\nsplit_iname " + x + "_inner_inner 8 outer_tag=ilp\n" + "split_iname " + r + " 16\n" +
                       "tensor_core " + y + "_inner_inner_inner " + x + "_inner_inner_inner " + r + "_inner shape=m16n8k16\n" +
                       // (the tile's loops directly inside one another, r's tiles around the register tile)
                       "prioritize_loops " + r + "_outer," + y + "_inner_inner_outer," + x + "_inner_inner_outer," + y + "_inner_inner_inner," + x +
                       "_inner_inner_inner," + r + "_inner\n";
    std::string assumptions;
    std::map<std::string, std::map<std::string, const Subscript*>> reads;  // array -> its reads, by their indices
    bool all_float64 = true;
    for_each_subscript(insn.rhs, [&](const Subscript& s) {
      std::string at;
      for (auto& e : s.indices) at += e.str() + ",";
      reads[s.name][at] = &s;
      all_float64 &= float64(s.name);
    });
    if (!all_float64) return "";
    std::vector<std::pair<std::string, const Subscript*>> each;  // (array, one of its reads)
    for (auto& [name, places] : reads)
      for (auto& [indices, sub] : places) each.push_back({name, sub});
    for (auto& [name, sub] : each) {
      // (read at two places, syrk's A[i, k] and A[j, k]: a tile of each, told apart by the tile's loop it uses)
      const size_t places = reads[name].size();
      if (!fetchable(name, nest)) continue;  // (read directly: the fragments' loads are guarded)
      // (a batch's index first: one value in each block, an axis of extent 1 in the tile)
      auto index = [&](size_t d) { return sub->indices[d].as<Var>(); };
      const bool batched = !batch.empty() && sub->indices.size() == 3 && index(0) && index(0)->name == batch;
      const size_t at = batched ? 1 : 0;
      auto first = sub->indices.size() == at + 2 ? index(at) : nullptr, last = sub->indices.size() == at + 2 ? index(at + 1) : nullptr;
      if (!first || !last || !tile_of.count(first->name) || !tile_of.count(last->name) || (first->name != r && last->name != r)) continue;
      const std::vector<Expr>* shape = shape_of(name);
      if (!shape || shape->empty()) continue;
      Expr extent = simplify(shape->back());
      if (auto c = constant_int(extent); c && *c % 2 != 0) continue;  // (double2 copies along the last axis)
      if (!constant_int(extent) && assumptions.find(extent.str() + " mod 2 = 0") == std::string::npos)
        assumptions += (assumptions.empty() ? "assume " : " and ") + extent.str() + " mod 2 = 0";
      std::string side = first->name != r ? first->name : last->name;
      std::string t = name + "_tc_" + y + "_" + x;
      std::optional<std::string> which = accesses_using(insn, name, r, r + "_inner", side + "_inner_inner_inner");
      if (!which) continue;
      if (places > 1) t += "_" + side;
      const std::string tr = t + "_r", tc = t + "_c";
      const int vectors = tile_of.at(last->name).second / 2;
      text += "add_prefetch " + name + " sweep_inames=" + tile_of.at(first->name).first + "," + tile_of.at(last->name).first + " temporary_name=" + t +
              " temporary_address_space=local dim_arg_names=" + (batched ? t + "_b," : "") + tr + "," + tc + " padding=4 default_tag=for fill_value=0" + *which + "\n" + "split_iname " + tc +
              " 2 inner_tag=vec\n";
      // (the 32 lanes along the rows' vectors, the 2x2 warps over the rows)
      if (vectors >= 32) {
        text += "split_iname " + tc + "_outer 32 inner_tag=l.0\nsplit_iname " + tr + " 2 inner_tag=l.1\nsplit_iname " + tr + "_outer 2 inner_tag=l.2\n";
      } else {
        text += "split_iname " + tr + " " + std::to_string(32 / vectors) + "\njoin_inames " + tr + "_inner," + tc + "_outer new_iname=" + t +
                "_lane\ntag_inames " + t + "_lane:l.0\nsplit_iname " + tr + "_outer 2 inner_tag=l.1\nsplit_iname " + tr +
                "_outer_outer 2 inner_tag=l.2\n";
      }
      text += "double_buffer " + t + " " + r + "_outer stages=choice(*2|3)\n";  // (the start: two copies, as gemm_f64.loom)
    }
    return (assumptions.empty() ? "" : assumptions + "\n") + text;
  }

  // Whether a factor's tiles may be copied to shared memory: an array
  // argument or global temporary that no instruction of the nest writes
  // (each nest is a launch of its own: another nest's writes come before).
  bool fetchable(const std::string& array, const Nest& nest) const {
    const Temporary* t = written_.find_temporary(array);
    if (!written_.find_argument(array) && !(t && t->space == AddressSpace::Global)) return false;
    return std::none_of(nest.insns.begin(), nest.insns.end(), [&](int i) { return written_.instructions[size_t(i)].assignee_name() == array; });
  }

  // The vector of 16 bytes along the last axis of insn's written array, in
  // elements (4 floats, 2 doubles), where its extent is a parameter
  // expression; 1 (none) otherwise.
  int64_t vector_width_along(const Instruction& insn) const {
    Type dtype = dtype_of(insn.assignee_name());
    if (!dtype.known() || dtype.bytes() < 4 || extent_of_last_axis(insn).empty()) return 1;
    return 16 / dtype.bytes();
  }

  // The extent of the last axis of insn's written array as text ("" where it
  // is not an expression of parameters).
  std::string extent_of_last_axis(const Instruction& insn) const {
    const std::vector<Expr>* shape = shape_of(insn.assignee_name());
    if (!shape || shape->empty() || constant_int(shape->back())) return "";
    return simplify(shape->back()).str();
  }

  // An array argument's or temporary's dtype (unknown for neither) and shape (null).
  Type dtype_of(const std::string& array) const {
    const Argument* a = written_.find_argument(array);
    const Temporary* t = written_.find_temporary(array);
    return a ? a->dtype : t ? t->dtype : Type{};
  }
  const std::vector<Expr>* shape_of(const std::string& array) const {
    const Argument* a = written_.find_argument(array);
    const Temporary* t = written_.find_temporary(array);
    return a ? &a->shape : t ? &t->shape : nullptr;
  }

  // The instruction of a nest that is one instruction over `loops` parallel
  // loops reducing over one iname (set in r); null for any other nest.
  const Instruction* one_reduction(const Nest& nest, size_t loops, std::string& r) const {
    if (nest.insns.size() != 1 || nest.parallel.size() != loops) return nullptr;
    const Instruction& insn = written_.instructions[size_t(nest.insns.front())];
    std::set<std::string> reduced;
    collect_reduction_inames(insn.rhs, reduced);
    if (reduced.size() != 1) return nullptr;
    r = *reduced.begin();
    return &insn;
  }

  std::string written_last_of(const Instruction& insn) const {
    if (auto s = insn.lhs.as<Subscript>(); s && !s->indices.empty())
      if (auto v = s->indices.back().as<Var>()) return v->name;
    return "";
  }

  // The reduction iname of a nest that is one instruction over one parallel
  // loop summing along the last axis of an array it reads (atax's rows of
  // A, once read as a reduction), or "".
  std::string row_reduction(const Nest& nest) const {
    std::string r;
    const Instruction* insn = one_reduction(nest, 1, r);
    if (!insn) return "";
    bool along = false;
    for_each_subscript(insn->rhs, [&](const Subscript& s) {
      if (!s.indices.empty())
        if (auto v = s.indices.back().as<Var>(); v && v->name == r) along = true;
    });
    return along ? r : "";
  }

  // Arrays read across l.0 with a stride (consecutive threads, x, on another
  // axis than the last: atax's A[i, j] with i on threads) may be staged
  // through shared memory, a tile at a time, read from global memory along
  // rows (optional add_prefetch over x's tile and the last axis's: y's
  // tile, or a sequential loop of the nest split into tiles; rows padded
  // against bank conflicts). Only this nest's reads are rewritten (other
  // nests do not run the sweep's loops); an array this nest reads with two
  // patterns is left alone.
  std::string staged_reads(const Nest& nest, size_t index, const std::string& x, const std::string& y) {
    std::map<std::string, std::string> along;  // array -> the loop its tiles run along, "" where it cannot be staged
    for (int i : nest.insns) {
      const Instruction& insn = written_.instructions[size_t(i)];
      if (insn.kind != Instruction::Assign || !insn.rhs.defined()) continue;
      for_each_subscript(insn.rhs, [&](const Subscript& s) {
        if (!written_.find_argument(s.name) || written_.is_written(s.name)) return;  // (prefetch reads only)
        std::string l = strided_across(s, x);
        bool tiled = l == y || (insn.within_inames.count(l) && !std::count(nest.parallel.begin(), nest.parallel.end(), l) &&
                                !nest.hosts.count(l));
        if (!tiled || (along.count(s.name) && along[s.name] != l)) l.clear();
        along[s.name] = l;
      });
    }
    std::set<std::string> splits;
    std::string lines, fetches;
    for (auto& [array, l] : along) {
      if (l.empty()) continue;
      if (l != y && splits.insert(l).second) lines += "split_iname " + l + " choice(16|32)\n";
      fetches += "optional add_prefetch " + array + " sweep_inames=" + x + "_inner," + l + "_inner temporary_name=" + array + "_tile" +
                 std::to_string(index) + " temporary_address_space=local default_tag=l.auto\n";
    }
    return lines + fetches;
  }

  std::optional<Sketch> none(std::string* why, const std::string& reason) {
    if (why) *why = reason;
    return std::nullopt;
  }

  std::string reasons() const {
    std::string out;
    for (auto& r : refusals_) out += (out.empty() ? "" : "; ") + r;
    return out.empty() ? "it has no loop" : out;
  }

  // Whether x runs on blocks and threads, alone, in the kernel with the barriers so far.
  bool parallel(const std::string& x) {
    try {
      LoopKernel t = apply_transforms(k_, parse_transform_script("split_iname " + x + " 32 outer_tag=g.0 inner_tag=l.0\n"));
      generate(t);
      return true;
    } catch (const Error& e) {
      std::string m = e.what();
      if (m.size() > 300) m = m.substr(0, 297) + "...";
      refusals_.push_back("loop '" + x + "' is not parallel: " + m);
      return false;
    }
  }

  // Whether the first instruction of nodes[from...] to touch v reads it (a
  // value from before); a temporary each nest writes before it reads (ludcmp's
  // w) passes nothing between them. A conditional write does not count.
  bool read_first(const std::string& v, const std::vector<Node>& nodes, size_t from) const {
    for (size_t c = from; c < nodes.size(); ++c) {
      std::vector<int> insns;
      instructions_of(nodes[c], insns);
      for (int i : insns) {
        const Instruction& insn = written_.instructions[size_t(i)];
        bool reads = insn.read_names().count(v) > 0, writes = insn.assignee_name() == v;
        if (reads || (writes && !insn.predicates.empty())) return true;
        if (writes) return false;
      }
    }
    return false;
  }

  // Private values that would cross the barrier between two nests (a time
  // step's coefficients, durbin's alpha, beta and z) live in global memory
  // instead, one copy for the whole grid (set_temporary_address_space ...
  // global); written by several threads at one element they would race,
  // which the legality checks refuse. False for a temporary without a dtype.
  bool to_global(const std::set<std::string>& names) {
    std::string list;
    for (auto& n : names) {
      const Temporary* t = k_.find_temporary(n);
      if (!t || !t->dtype.known()) return false;
      list += (list.empty() ? "" : ",") + n;
    }
    std::string line = "set_temporary_address_space " + list + " global\n";
    try {
      k_ = apply_transforms(k_, parse_transform_script(line));
    } catch (const Error& e) {
      refusals_.push_back(e.what());
      return false;
    }
    barriers_ += line;
    return true;
  }

  // A global barrier after instruction `after` inside the host loops; false
  // (and nothing added) where add_global_barrier refuses it.
  bool barrier(int after, const std::vector<std::string>& hosts) {
    std::string within;
    for (auto& h : hosts) within += (within.empty() ? "" : ",") + h;
    std::string line = "add_global_barrier " + written_.instructions[size_t(after)].id + (within.empty() ? "" : " within=" + within) +
                       " id=nests_barrier_" + std::to_string(count_) + "\n";
    try {
      k_ = apply_transforms(k_, parse_transform_script(line));
    } catch (const Error& e) {
      refusals_.push_back(e.what());
      return false;
    }
    ++count_;
    barriers_ += line;
    return true;
  }

  // Children of one loop (or the top level): launches of their own, apart
  // where a private value passes from one to the next. True when a parallel
  // loop was found among them.
  bool children(const std::vector<Node>& nodes, const std::vector<std::string>& hosts, bool trailing = false) {
    std::vector<std::set<std::string>> values(nodes.size());
    for (size_t c = 0; c < nodes.size(); ++c) {
      std::vector<int> insns;
      instructions_of(nodes[c], insns);
      for (int i : insns)
        for (auto& v : private_values(k_, written_.instructions[size_t(i)])) values[c].insert(v);
    }
    for (size_t c = 0; c + 1 < nodes.size(); ++c) {
      std::set<std::string> shared;  // private values that pass across the barrier
      for (size_t before = 0; before <= c; ++before)
        for (size_t after = c + 1; after < nodes.size(); ++after)
          for (auto& v : values[before])
            if (values[after].count(v) && read_first(v, nodes, c + 1)) shared.insert(v);
      if (!shared.empty() && !to_global(shared)) continue;  // (they keep the nests in one launch)
      for (auto& v : values) {
        for (auto& g : shared) v.erase(g);
      }
      std::vector<int> insns;
      instructions_of(nodes[c], insns);
      barrier(insns.back(), hosts);
    }
    if (trailing && !nodes.empty()) {
      std::vector<int> insns;
      instructions_of(nodes.back(), insns);
      barrier(insns.back(), hosts);
    }
    bool any = false;
    for (auto& n : nodes) any |= node(n, hosts);
    return any;
  }

  // The iname of the last axis of what the nest's last instruction writes.
  std::string written_last(const Node& n) const {
    std::vector<int> insns;
    instructions_of(n, insns);
    return written_last_of(written_.instructions[size_t(insns.back())]);
  }

  bool node(const Node& n, const std::vector<std::string>& hosts) {
    if (n.insn >= 0) return false;  // a statement outside every loop: one thread
    if (parallel(n.iname)) {
      Nest nest;
      nest.parallel.push_back(n.iname);
      // the loops nested alone inside it
      for (const Node* c = &n; c->children.size() == 1 && c->children[0].insn < 0;) {
        c = &c->children[0];
        if (parallel(c->iname)) nest.parallel.push_back(c->iname);
      }
      nest.written_last = written_last(n);
      instructions_of(n, nest.insns);
      nest.hosts.insert(hosts.begin(), hosts.end());
      nests_.push_back(nest);
      return true;
    }
    // sequential, holding one loop nest whose inner loop is parallel as it
    // stands (atax's y[j] += A[i, j] tmp[i] over i, then j): that loop on
    // blocks and threads, this one inside each thread, one launch
    for (const Node* c = &n; c->children.size() == 1 && c->children[0].insn < 0;) {
      c = &c->children[0];
      if (!parallel(c->iname)) continue;
      Nest nest;
      nest.parallel.push_back(c->iname);
      for (const Node* d = c; d->children.size() == 1 && d->children[0].insn < 0;) {
        d = &d->children[0];
        if (parallel(d->iname)) nest.parallel.push_back(d->iname);
      }
      nest.written_last = written_last(*c);
      instructions_of(*c, nest.insns);
      nest.hosts.insert(hosts.begin(), hosts.end());
      nests_.push_back(nest);
      return true;
    }
    // sequential: on the host around its nests, where any of them is parallel
    LoopKernel before = k_;
    std::string lines = barriers_;
    int count = count_;
    size_t nests = nests_.size();
    std::vector<std::string> inner = hosts;
    inner.push_back(n.iname);
    if (children(n.children, inner, true)) return true;
    k_ = before, barriers_ = lines, count_ = count;  // nothing parallel inside: one sequential nest
    nests_.resize(nests);
    return false;
  }

  const LoopKernel& written_;
  LoopKernel k_;
  std::string barriers_;
  int count_ = 0;
  std::vector<Nest> nests_;
  std::vector<std::string> refusals_;
  bool rows_ = false;
  bool tiles_ = false;
  bool vector_tiles_ = false;
  bool tensor_cores_ = false;
  bool one_loop_ = false;
  bool second_on_blocks_ = false;

 public:
  size_t parallel_loops() const {  // (after plan())
    size_t n = 0;
    for (auto& nest : nests_) n += nest.parallel.size();
    return n;
  }
  // (after plan()) how parallel the plan leaves the kernel's own nests
  // (not a stand-in's copies: read_initial_values's, expand_array's): the
  // loops left on the host around launches (fewer is better), then the
  // loops on blocks and threads (more is better)
  std::pair<size_t, size_t> parallelism_of_the_kernel() const {
    std::set<std::string> hosts;
    size_t parallel = 0;
    for (auto& nest : nests_)
      if (std::any_of(nest.insns.begin(), nest.insns.end(),
                      [&](int i) { return !written_.instructions[size_t(i)].tags.count(Instruction::kStandInCopyTag); })) {
        parallel += nest.parallel.size();
        hosts.insert(nest.hosts.begin(), nest.hosts.end());
      }
    return {hosts.size(), parallel};
  }
  bool tiled_ = false;  // plan() gave some nest tiles
  bool rowed_ = false;  // ... or its rows summed across threads
};

}  // namespace

namespace {

std::vector<Node> tree_of(const LoopKernel& k) {
  std::vector<int> all;
  for (size_t i = 0; i < k.instructions.size(); ++i)
    if (k.instructions[i].kind == Instruction::Assign) all.push_back(int(i));
  return tree_of(k, all, {}, k.all_inames());
}

// Loop distribution wherever distribute_loops accepts it: each loop holding
// several children is split after one of them, innermost loops first, until
// none splits. The steps are appended to `lines`.
LoopKernel distributed_as_ordered(const LoopKernel& k, std::string& lines) {
  LoopKernel cur = k;
  std::function<bool(const Node&)> split_one = [&](const Node& n) {
    if (n.insn >= 0) return false;
    for (auto& c : n.children)
      if (split_one(c)) return true;
    for (size_t c = 0; c + 1 < n.children.size(); ++c) {
      std::vector<int> insns;
      instructions_of(n.children[c], insns);
      std::string line = "distribute_loops " + n.iname + " after=id:" + cur.instructions[size_t(insns.back())].id + "\n";
      try {
        cur = apply_transforms(cur, parse_transform_script(line));
      } catch (const Error&) {
        continue;  // (refused: that split would reverse two accesses)
      }
      lines += line;
      return true;
    }
    return false;
  };
  for (size_t round = 0; round <= k.instructions.size(); ++round) {
    bool split = false;
    for (auto& n : tree_of(cur))
      if ((split = split_one(n))) break;
    if (!split) break;
  }
  return cur;
}

// Whether k passes the checks and generates (a plan's probe).
bool generates(const LoopKernel& k) {
  try {
    generate(k);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Loop distribution (distributed_as_ordered), and where a loop's children
// cannot be split as they stand, one of them moved to the loop's end first
// (reorder_instructions, where the checks accept the order) when that lets
// more loops split: symm's row i adds its terms into the rows above it
// before it stores its own row; with the store first, the stores and the
// updates become nests of their own.
LoopKernel distributed(const LoopKernel& k, std::string& lines) {
  LoopKernel cur = distributed_as_ordered(k, lines);
  for (size_t round = 0; round < k.instructions.size(); ++round) {
    std::optional<LoopKernel> better;
    std::function<void(const Node&)> try_moves = [&](const Node& n) {
      if (better || n.insn >= 0) return;
      for (size_t c = 0; !better && c + 1 < n.children.size(); ++c) {
        std::vector<int> moved, rest;
        instructions_of(n.children[c], moved);
        for (size_t o = 0; o < n.children.size(); ++o)
          if (o != c) instructions_of(n.children[o], rest);
        rest.insert(rest.end(), moved.begin(), moved.end());
        std::string order;
        for (int i : rest) order += (order.empty() ? "" : ", ") + cur.instructions[size_t(i)].id;
        std::string line = "reorder_instructions \"" + order + "\"\n";
        LoopKernel moved_kernel;
        try {
          moved_kernel = apply_transforms(cur, parse_transform_script(line));
        } catch (const Error&) {
          continue;
        }
        if (!generates(moved_kernel)) continue;  // (the order changes a value read)
        std::string splits;
        LoopKernel d = distributed_as_ordered(moved_kernel, splits);
        if (splits.empty()) continue;
        lines += line + splits;
        better = d;
      }
      for (auto& child : n.children) try_moves(child);
    };
    for (auto& n : tree_of(cur)) try_moves(n);
    if (!better) break;
    cur = *better;
  }
  return cur;
}

}  // namespace

// Where no loop is parallel (a Gauss-Seidel sweep, nussinov's table): the
// first top-level chain of loops each holding the next alone (t, i, j) gets
// its innermost loop replaced by a wavefront's time, w = j + c_i i + c_t t
// (affine_map_inames, coefficients 1, 2 or 4, smallest first), and the
// nests are planned again: w outermost, sequential on the host, the loops
// inside it parallel where every dependence goes from a smaller w. Of the
// skews that plan, the one that leaves the most loops parallel; one of them
// goes on blocks and threads.
std::optional<Sketch> wavefront(const LoopKernel& k) {
  std::vector<Node> top = tree_of(k);
  const Node* chain_top = nullptr;
  for (auto& n : top)
    if (n.insn < 0) {
      chain_top = &n;
      break;
    }
  if (!chain_top) return std::nullopt;
  std::vector<std::string> chain{chain_top->iname};
  // (the chain's last loop may hold several children: nussinov's j, its statements and the k loop)
  for (const Node* c = chain_top; c->children.size() == 1 && c->children[0].insn < 0;) {
    c = &c->children[0];
    chain.push_back(c->iname);
  }
  if (chain.size() < 2 || chain.size() > 3) return std::nullopt;
  std::string inner = chain.back(), w = inner + "_wave";
  while (k.has_iname(w) || k.find_argument(w) || k.find_temporary(w)) w += "_";
  std::vector<std::vector<int>> candidates;
  const int values[] = {1, 2, 4};
  if (chain.size() == 2)
    for (int a : values) candidates.push_back({a});
  else
    for (int a : values)
      for (int b : values) candidates.push_back({a, b});
  std::optional<Sketch> best;
  size_t best_parallel = 0;
  std::stable_sort(candidates.begin(), candidates.end(), [](auto& x, auto& y) {
    int sx = 0, sy = 0;
    for (int v : x) sx += v;
    for (int v : y) sy += v;
    return sx < sy;
  });
  for (auto& c : candidates) {
    std::string eq = w + " = " + inner;
    for (size_t l = 0; l < c.size(); ++l) eq += " + " + std::to_string(c[l]) + "*" + chain[l];
    std::string line = "affine_map_inames " + inner + " " + w + " \"" + eq + "\"\n";
    LoopKernel skewed;
    try {
      skewed = apply_transforms(k, parse_transform_script(line));
    } catch (const Error&) {
      continue;
    }
    std::string unused;
    // (the nests still record every parallel loop; only the text puts one on blocks)
    Planner planner(skewed, line);
    if (auto s = planner.with_one_parallel_loop().plan(&unused)) {
      // the skew that leaves the most loops parallel (w = 4 t + 2 i + j: t
      // and i; w = 4 t + i + j: t only), the smallest coefficients among
      // those; one of them on blocks and threads
      if (!best || planner.parallel_loops() > best_parallel) {
        best_parallel = planner.parallel_loops();
        best = s;
      }
    }
  }
  if (best) best->name = "nests, wavefront";
  return best;
}

// Whether k after `script` passes the checks and generates (a plan's
// probe, with one of its configurations, when the space is built).
bool generates(const LoopKernel& k, const std::string& script) {
  try {
    return generates(apply_transforms(k, parse_transform_script(script)));
  } catch (const Error&) {
    return false;
  }
}

// One block for the whole kernel, where its only parallelism is sums inside
// a sequential loop (trisolv's rows, durbin's steps): each sum across the
// block's threads (l.0, W of them), a statement in a loop of its own inside
// the sums' loop (durbin's updates of z and y) with that loop across the
// threads where the checks allow it (a private array it writes, durbin's
// z, then shared by the block), every other statement that writes
// memory on the first thread (run_on_first_thread; a private value on every
// thread, each its own copy), the loops in order inside the block; the
// barrier placement orders the first thread's writes before the others'
// reads. Nothing where the kernel has no sum or the checks refuse the plan.
std::optional<Sketch> one_block(const LoopKernel& r, const std::string& prefix) {
  std::set<std::string> sums, around;  // the sums' inames, and the loops around them
  for (auto& insn : r.instructions) {
    if (insn.kind != Instruction::Assign || !insn.rhs.defined()) continue;
    std::set<std::string> own;
    collect_reduction_inames(insn.rhs, own);
    // (a sum inside two sequential loops, trmm's B[i, j] over k, would be a
    // block-wide sum for each of i x j: far slower than the nests' plans)
    if (!own.empty() && insn.within_inames.size() > 1) return std::nullopt;
    sums.insert(own.begin(), own.end());
    if (!own.empty()) around.insert(insn.within_inames.begin(), insn.within_inames.end());
  }
  if (sums.empty()) return std::nullopt;
  // what writes memory outside the sums: in a loop of its own inside the
  // sums' loop (durbin's z[i] and y[i] updates), that loop across the
  // threads where the checks allow it, else on the first thread (a private
  // value each thread computes for itself, durbin's alpha and beta: on
  // every thread, no race)
  std::vector<std::pair<std::string, std::string>> spreadable;  // (instruction id, its own loop)
  std::set<std::string> shared;  // private arrays those write, shared by the block once spread (durbin's z)
  std::string others;
  for (auto& insn : r.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> own;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, own);
    const Temporary* t = r.find_temporary(insn.assignee_name());
    bool private_value = t && t->space != AddressSpace::Global && t->space != AddressSpace::Local;
    if (!own.empty()) continue;
    std::vector<std::string> loops;
    for (auto& n : insn.within_inames)
      if (!around.count(n)) loops.push_back(n);
    bool own_loop = loops.size() == 1 && !around.empty();
    if (private_value && !(own_loop && !t->shape.empty())) continue;
    if (own_loop) {
      spreadable.push_back({insn.id, loops[0]});
      if (private_value) shared.insert(t->name);
    } else {
      others += std::string(others.empty() ? "" : " or ") + "id:" + insn.id;
    }
  }
  auto script = [&](const std::string& width, bool spread) {
    std::string text, first = others;
    std::set<std::string> split;
    if (spread)
      for (auto& n : shared) text += "set_temporary_address_space " + n + " local\n";
    for (auto& n : sums) text += "split_iname " + n + " " + width + " inner_tag=l.0\n";
    for (auto& [id, loop] : spreadable) {
      const Temporary* t = r.find_temporary(r.instruction(id).assignee_name());
      if (spread && split.insert(loop).second) text += "split_iname " + loop + " " + width + " inner_tag=l.0\n";
      // (unspread, a private array stays each thread's own: every thread computes it)
      if (!spread && !(t && shared.count(t->name))) first += std::string(first.empty() ? "" : " or ") + "id:" + id;
    }
    if (!first.empty()) text += "run_on_first_thread \"" + first + "\"\n";
    return text;
  };
  bool spread = !spreadable.empty() && generates(r, script("32", true));
  if (!spread && !generates(r, script("32", false))) return std::nullopt;
  Sketch s = Space::parse(prefix + script("choice(64|128|*256|512)", spread), "<auto space: nests, one block>").sketches().front();
  s.name = "nests, one block";
  return s;
}

// One block for a whole time loop over one-dimensional sweeps (PolyBench's
// jacobi-1d: 2,000 points a sweep, 500 sweeps): each sweep's loop across the
// block's threads (l.0, W of them), the time loop inside the block, the
// barrier placement ordering each sweep's writes before the next one's
// reads. A launch per sweep costs microseconds where the sweep's work is a
// few hundred nanoseconds. Nothing where an instruction is outside the
// time loop, has more than one loop of its own inside it, or sums, or the
// checks refuse the plan; the tuner measures it against the launches.
std::optional<Sketch> one_block_time_loop(const LoopKernel& r, const std::string& prefix) {
  std::vector<Node> top = tree_of(r);
  if (top.size() != 1 || top[0].insn >= 0) return std::nullopt;
  const std::string time = top[0].iname;
  std::set<std::string> sweeps;
  for (auto& insn : r.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> own;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, own);
    if (!own.empty() || !insn.within_inames.count(time) || insn.within_inames.size() != 2) return std::nullopt;
    for (auto& n : insn.within_inames)
      if (n != time) sweeps.insert(n);
  }
  if (sweeps.empty()) return std::nullopt;
  auto script = [&](const std::string& width) {
    std::string text;
    for (auto& n : sweeps) text += "split_iname " + n + " " + width + " inner_tag=l.0\n";
    return text;
  };
  if (!generates(r, script("32"))) return std::nullopt;
  Sketch s = Space::parse(prefix + script("choice(128|256|512|*1024)"), "<auto space: nests, one block, time loop>").sketches().front();
  s.name = "nests, one block, time loop";
  return s;
}

// Where no loop is parallel and no wavefront helps (floyd-warshall: row and
// column k are read by the other rows of step k and written in it): the
// inner loops of the first chain split around its outermost loop
// (split_index_set: before, at and after row k, column k), and the pieces
// scheduled by isl (isl_rescheduled): within each step, phases of pieces
// in an order the dependences allow, each parallel.
std::optional<Sketch> index_set_split(const LoopKernel& k) {
  std::vector<Node> top = tree_of(k);
  if (top.size() != 1 || top[0].insn >= 0) return std::nullopt;
  std::vector<std::string> chain{top[0].iname};
  for (const Node* c = &top[0]; c->children.size() == 1 && c->children[0].insn < 0;) {
    c = &c->children[0];
    chain.push_back(c->iname);
  }
  if (chain.size() < 2 || chain.size() > 3) return std::nullopt;
  std::string lines;
  for (size_t l = 1; l < chain.size(); ++l) lines += "split_index_set " + chain[l] + " " + chain[0] + "\n";
  LoopKernel split;
  try {
    split = apply_transforms(k, parse_transform_script(lines));
  } catch (const Error&) {
    return std::nullopt;
  }
  auto steps = isl_rescheduled(split, false);
  if (!steps) return std::nullopt;
  std::string unused;
  Planner planner(steps->kernel, lines + steps->lines);
  auto s = planner.with_second_loop_on_blocks().plan(&unused);
  if (!s || planner.parallel_loops() == 0) return std::nullopt;
  s->name = "nests, index-set split";
  return s;
}

// The reads of each array updated in place that see only its values from
// before the kernel read a copy of it instead (read_initial_values: trmm's
// B[k, j], k > i, no longer orders row i before row k); "" where no array
// has such reads.
std::string initial_copies(const LoopKernel& k, LoopKernel& out) {
  std::string lines;
  out = k;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array || !k.is_written(a.name) || !k.is_read(a.name)) continue;
    std::string line = "read_initial_values " + a.name + "\n";
    try {
      out = apply_transforms(out, parse_transform_script(line));
      lines += line;
    } catch (const Error&) {
      // (every read of it sees a value the kernel wrote)
    }
  }
  return lines;
}

// Each array argument that the iterations of the loops around all its
// accesses use as scratch space gets a copy per iteration (expand_array:
// doitgen's sum, per r and q), over as many of those loops as allowed,
// outermost first; "" where none does.
std::string expansions(const LoopKernel& k, LoopKernel& out) {
  std::string lines;
  out = k;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array || !k.is_written(a.name)) continue;
    std::vector<std::string> common;  // the loops around every access, in domain order
    bool first = true;
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign || (insn.assignee_name() != a.name && !insn.reads(a.name))) continue;
      std::vector<std::string> mine;
      for (auto& n : inames_in_order(k, insn))
        if (first || std::count(common.begin(), common.end(), n)) mine.push_back(n);
      common = mine;
      first = false;
    }
    for (size_t n = common.size(); n > 0; --n) {
      std::string loops;
      for (size_t l = 0; l < n; ++l) loops += (l ? "," : "") + common[l];
      std::string line = "expand_array " + a.name + " " + loops + "\n";
      try {
        out = apply_transforms(out, parse_transform_script(line));
        lines += line;
        break;
      } catch (const Error&) {
        // (a read gets a value from another iteration, or an iteration leaves an element unwritten)
      }
    }
  }
  return lines;
}

// The sketches of k after the steps `prefix` (nothing, or initial_copies's);
// `whole`: with the plans that reorder the whole kernel (isl's schedule, a
// wavefront, an index-set split).
std::vector<Sketch> nests_sketches_after(const LoopKernel& k, const std::string& prefix, bool whole, std::string* why) {
  std::vector<Sketch> out;
  if (auto s = Planner(k, prefix).plan(why)) out.push_back(*s);
  // distribution as a choice: the nests of the kernel with its loops distributed
  std::string lines = prefix;
  LoopKernel d = distributed(k, lines);
  std::string unused;
  if (lines != prefix)
    if (auto s = Planner(d, lines).plan(out.empty() ? why : &unused)) {
      s->name = "nests, distributed";
      out.push_back(*s);
    }
  // accumulations read as reductions (reassociated), each row's sum across threads
  LoopKernel r = d;
  for (auto& insn : d.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::string line = "accumulation_to_reduction id:" + insn.id + "\n";
    try {
      r = apply_transforms(r, parse_transform_script(line));
      lines += line;
    } catch (const Error&) {
      // (not an accumulation, or its loop's order matters)
    }
  }
  // initializations folded into the sums that read them (2mm's tmp[i, j] =
  // 0, doitgen's sum: no pass zeroes the array, no sum reads it back)
  for (auto& insn : d.instructions) {
    if (insn.kind != Instruction::Assign || !(insn.rhs.as<IntImm>() || insn.rhs.as<FloatImm>())) continue;
    std::string line = "forward_substitute id:" + insn.id + "\n";
    try {
      r = apply_transforms(r, parse_transform_script(line));
      lines += line;
    } catch (const Error&) {
      // (a read that sees other values too, or a value left as final)
    }
  }
  // a private sum read once, in the same loops, folded into its reader
  // (symm's temp2 into its row's store): the reader is then one product
  for (auto& [name, t] : r.temporaries) {
    if (!t.shape.empty() || t.space == AddressSpace::Global || t.space == AddressSpace::Local) continue;
    std::vector<const Instruction*> writers, readers;
    for (auto& insn : r.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      if (insn.assignee_name() == name) writers.push_back(&insn);
      else if (insn.reads(name)) readers.push_back(&insn);
    }
    if (writers.size() != 1 || readers.size() != 1 || writers[0]->within_inames != readers[0]->within_inames) continue;
    std::set<std::string> summed;
    collect_reduction_inames(writers[0]->rhs, summed);
    if (summed.empty()) continue;
    std::string line = "assignment_to_subst " + name + "\nexpand_subst\n";
    try {
      r = apply_transforms(r, parse_transform_script(line));
      lines += line;
    } catch (const Error&) {
      // (its value is not the one the reader reads everywhere)
    }
  }
  Planner rows(r, lines, true);
  if (auto s = rows.plan(out.empty() ? why : &unused); s && rows.rowed_) {
    s->name = "nests, rows";
    out.push_back(*s);
  }
  // one block around the sums of a sequential loop (trisolv, durbin), where no nest sums rows or multiplies tiles
  bool rowed = rows.rowed_;
  // products among the nests in register and shared-memory tiles (gemm, 2mm, 3mm, chained products)
  Planner tiles(r, lines);
  if (auto t = tiles.with_tiles().plan(out.empty() ? why : &unused); t && tiles.tiled_) {
    t->name = "nests, tiles";
    out.push_back(*t);
  }
  // float64 products on the FP64 tensor cores (PolyBench's gemm, 2mm, 3mm)
  Planner tensor_tiles(r, lines);
  if (auto t = tensor_tiles.with_tensor_cores().plan(&unused); t && tensor_tiles.tiled_) {
    t->name = "nests, tensor cores";
    out.push_back(*t);
  }
  Planner vector_tiles(r, lines);
  if (auto t = vector_tiles.with_tiles(true).plan(&unused); t && vector_tiles.tiled_) {
    t->name = "nests, tiles + vec";
    out.push_back(*t);
  }
  if (!rowed && !tiles.tiled_ && !vector_tiles.tiled_)
    if (auto b = one_block(r, lines)) out.push_back(*b);
  if (auto b = one_block_time_loop(r, lines)) out.push_back(*b);
  if (!whole) return out;
  // one sequential step around parallel loops, from isl's scheduler (a
  // right-looking Cholesky or LU from PolyBench's left-looking text)
  if (auto steps = isl_rescheduled(k)) {
    Planner stepped(steps->kernel, steps->lines);
    if (auto s = stepped.plan(&unused); s && stepped.parallel_loops() > 0) {
      s->name = "nests, isl schedule";
      out.push_back(*s);
    }
  }
  if (out.empty()) {
    std::string reason = why ? *why : "";
    if (auto s = wavefront(k)) return {*s};
    if (auto s = index_set_split(k)) return {*s};
    if (why) *why = reason + "; nor does a wavefront (a skew of its loops) or an index-set split around its outermost loop make one parallel";
  }
  return out;
}

std::vector<Sketch> nests_sketches(const LoopKernel& k, std::string* why) {
  std::vector<Sketch> out = nests_sketches_after(k, "", true, why);
  // in-place updates reading copies of what they have not yet overwritten,
  // and work arrays with a copy per iteration: each where that makes more
  // loops of the kernel's own parallel (not only the copies')
  std::string unused;
  Planner as_written(k);
  bool planned = as_written.plan(&unused).has_value();
  auto [hosts, parallel] = as_written.parallelism_of_the_kernel();
  const std::pair<std::string, std::function<std::string(const LoopKernel&, LoopKernel&)>> variants[] = {
      {"initial copies", initial_copies}, {"expanded", expansions}};
  for (auto& [name, variant] : variants) {
    LoopKernel v;
    std::string lines = variant(k, v);
    if (lines.empty()) continue;
    Planner plain(v, lines);
    if (!plain.plan(&unused)) continue;
    auto [h, p] = plain.parallelism_of_the_kernel();
    if (p == 0 || (planned && (h > hosts || (h == hosts && p <= parallel)))) continue;
    for (auto& s : nests_sketches_after(v, lines, false, out.empty() ? why : &unused)) {
      s.name += ", " + name;
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace loom::tune
