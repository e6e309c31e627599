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
//   nests:      (several statements, or none indexed by every write: whole
//               programs) each loop nest a launch, its loops that Loom's
//               legality checks accept on blocks and threads mapped there,
//               sequential loops around parallel nests on the host
//               (tuner/nests.cpp); variants with loops distributed, with
//               accumulations read as sums across threads (rows) and with
//               products in tiles
//   map:        x over blocks of threads (l.0), y over rows of threads (l.1)
//   map + staged: as map, an array read across x with a stride (a
//               transpose) staged through shared-memory tiles
//   map + work: as map, each thread also runs an unrolled strip of y
//               (stencils, element-wise kernels with 2-D data)
//   rows alike: (several statements over one parallel loop: softmax) every
//               other loop and reduction split alike by the block's width
//               on l.0, the rows on blocks; + vec: float4 along the rows
//   columns:    (a reduction down the columns of an array read along x:
//               y = A^T x) x on l.0, each column's terms over l.1
//   rows:       a reduction across the threads of a block (l.0: warp
//               shuffles within a warp, shared memory across warps), several
//               rows per block on l.1
//   tiles:      (two parallel inames and a reduction: products) register
//               tiles per thread (ilp), a tiled reduction loop, and
//               optional shared-memory tiles of each array read
//   across blocks: (a reduction of a whole array, or of few long rows)
//               rfactor: chunks of the reduction on blocks (a row's on
//               g.0, the rows on g.1), each chunk across the threads of its
//               block, a global barrier, then the chunks' partial results
//               across the threads of one block per row; float4 loads where
//               the reduction's axis allows
//   small axes: (written axes of a small constant extent and one large one:
//               DG elements, batches of small products) the small axes
//               whole on the threads, the large one across blocks
//   tensor cores: (a product of float16/bfloat16 matrices) tensor_core
//               tiles in warp register tiles, cp.async tiles of both inputs
//               in shared memory, 2 or 3 stages; four block shapes
//   warpgroup tensor cores: (the same with both inputs K-major, c = a b^T,
//               sizes multiples of the tiles) a 64xN wgmma tile per
//               warpgroup, two warpgroups a block, swizzled tiles (128x256:
//               filled by the tensor memory accelerator, tma_copy; 128x128:
//               cp.async); with b stored [r, x] (c = a b), one 128x256 sketch
//               whose b tile is read with the transpose bit; sm_90a only
//               (other targets refuse it with the reason)
#include <algorithm>
#include <set>

#include "loom/expr.h"
#include "loom/isl_util.h"
#include "loom/tuner.h"
#include "sketches.h"

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
  // substitution-rule calls whose arguments are inames alone: rule -> inames
  std::map<std::string, std::vector<std::string>> rule_calls;
  void visit_call(const Call& c) override {
    if (k.substitutions->count(c.name)) {
      std::vector<std::string> args;
      for (auto& a : c.args)
        if (auto v = a.as<Var>()) args.push_back(v->name);
      if (args.size() == c.args.size()) rule_calls[c.name] = args;
    }
    ExprVisitor::visit_call(c);
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

// A tensor-core schedule of c[y, x] = sum(r, a[y, r] * b[r, x]) (16-bit a
// and b, rows contiguous): bi x bj tiles of c per block of wi x wj warps
// (l.1, l.2; l.0 the lanes), each warp a register tile of 16x8 mma.sync
// tiles (ilp), r in tiles of bk copied 8 values (16 bytes) at a time, every
// one of the 32 lanes fetching, rows padded by 8 (conflict-free ldmatrix),
// multi-buffered with `stages` copies. `whole`: sizes are multiples of the
// tiles (no guards); else the fetched tiles are zero-filled where they leave
// the matrices (rows of 8 values: the contiguous sizes multiples of 8).
std::string tensor_core_script(const std::string& y, const std::string& x, const std::string& r, const std::string& a, const std::string& b,
                               const std::string& ny, const std::string& nx, const std::string& nr, int bi, int bj, int wi, int wj, int bk,
                               bool whole) {
  auto S = [](int v) { return std::to_string(v); };
  std::string t;
  if (whole)
    t += "assume " + ny + " mod " + S(bi) + " = 0 and " + nx + " mod " + S(bj) + " = 0 and " + nr + " mod " + S(bk) + " = 0 and " + ny + " >= " + S(bi) +
         " and " + nx + " >= " + S(bj) + " and " + nr + " >= " + S(bk) + "\n";
  else
    t += "assume " + nx + " mod 8 = 0 and " + nr + " mod 8 = 0\n";
  std::string fill = whole ? "" : " fill_value=0";
  t += "split_iname " + y + " " + S(bi) + " outer_tag=g.1\nsplit_iname " + x + " " + S(bj) + " outer_tag=g.0\n";
  t += "split_iname " + y + "_inner " + S(bi / wi) + " outer_tag=l.1\nsplit_iname " + y + "_inner_inner 16 outer_tag=ilp\n";
  t += "split_iname " + x + "_inner " + S(bj / wj) + " outer_tag=l.2\nsplit_iname " + x + "_inner_inner 8 outer_tag=ilp\n";
  t += "split_iname " + r + " " + S(bk) + "\nsplit_iname " + r + "_inner 16 outer_tag=unr\n";
  t += "tensor_core " + y + "_inner_inner_inner " + x + "_inner_inner_inner " + r + "_inner_inner\n";
  // a's tile: bi rows of bk / 8 vectors; 32 lanes take 32 / (bk / 8) rows of them
  t += "add_prefetch " + a + " " + y + "_inner_outer," + y + "_inner_inner_outer," + y + "_inner_inner_inner," + r + "_inner_outer," + r +
       "_inner_inner dim_arg_names=tc_ar,tc_ak padding=8 default_tag=for" + fill + "\n";
  t += "split_iname tc_ak 8 inner_tag=vec\nsplit_iname tc_ar " + S(32 / (bk / 8)) + "\njoin_inames tc_ar_inner,tc_ak_outer new_iname=tc_ax\n";
  t += "tag_inames tc_ax:l.0\nsplit_iname tc_ar_outer " + S(wi) + " inner_tag=l.1\nsplit_iname tc_ar_outer_outer " + S(wj) + " inner_tag=l.2\n";
  // b's tile: bk rows of bj / 8 vectors
  t += "add_prefetch " + b + " " + r + "_inner_outer," + r + "_inner_inner," + x + "_inner_outer," + x + "_inner_inner_outer," + x +
       "_inner_inner_inner dim_arg_names=tc_bk,tc_bc padding=8 default_tag=for" + fill + "\n";
  if (bj / 8 >= 32)
    t += "split_iname tc_bc 8 inner_tag=vec\nsplit_iname tc_bc_outer 32 inner_tag=l.0\nsplit_iname tc_bk " + S(wi) +
         " inner_tag=l.1\nsplit_iname tc_bk_outer " + S(wj) + " inner_tag=l.2\n";
  else
    t += "split_iname tc_bc 8 inner_tag=vec\nsplit_iname tc_bk " + S(32 / (bj / 8)) + "\njoin_inames tc_bk_inner,tc_bc_outer new_iname=tc_bx\n"
         "tag_inames tc_bx:l.0\nsplit_iname tc_bk_outer " + S(wi) + " inner_tag=l.1\nsplit_iname tc_bk_outer_outer " + S(wj) + " inner_tag=l.2\n";
  t += "double_buffer " + a + "_fetch " + r + "_outer stages=choice(2|3)\ndouble_buffer " + b + "_fetch " + r + "_outer stages=choice(2|3)\n";
  return t;
}

// c[y, x] = sum(r, a[y, r] * b[x, r]) with both operands K-major: 128 x n
// tiles of c per block, one 64 x n wgmma tile per warpgroup (two), r in
// tiles of 64 (rows of 128 bytes, swizzled), copied 16 bytes at a time by 8
// lanes per row; `pipeline` gives the copies and how far ahead they fill
// (ahead < stages - 1: the wgmma group overlaps the next iteration).
// `bytes`: the operands' element size, 2 (bf16, fp16) or 4 (TF32, the
// kernel's trunc_tf32 factors): a 128-byte row is 128 / bytes k values, the
// instruction's k 32 / bytes, and a 16-byte copy 16 / bytes elements.
std::string warpgroup_script(const std::string& y, const std::string& x, const std::string& r, const std::string& a, const std::string& b,
                             const std::string& ny, const std::string& nx, const std::string& nr, int n, const std::string& pipeline,
                             int bytes = 2, int warpgroups = 2) {
  auto S = [](int v) { return std::to_string(v); };
  const int row = 128 / bytes, kk = 32 / bytes, piece = 16 / bytes, rows = 64 * warpgroups;
  const bool two = warpgroups == 2;
  const std::string yi = two ? y + "_inner_inner" : y + "_inner", ys = two ? y + "_inner_outer," + y + "_inner_inner" : y + "_inner";
  std::string t = "assume " + ny + " mod " + S(rows) + " = 0 and " + nx + " mod " + S(n) + " = 0 and " + nr + " mod " + S(row) + " = 0 and " +
                  ny + " >= " + S(rows) + " and " + nx + " >= " + S(n) + " and " + nr + " >= " + S(row) + "\n";
  t += "split_iname " + y + " " + S(rows) + " outer_tag=g.1\nsplit_iname " + x + " " + S(n) + " outer_tag=g.0\n";
  if (two) t += "split_iname " + y + "_inner 64 outer_tag=l.1\n";
  t += "split_iname " + r + " " + S(row) + "\nsplit_iname " + r + "_inner " + S(kk) + " outer_tag=unr\n";
  t += "tensor_core " + yi + " " + x + "_inner " + r + "_inner_inner shape=m64n" + S(n) + "k" + S(kk) + (bytes == 4 ? " tf32=true" : "") + "\n";
  t += "add_prefetch " + a + " " + ys + "," + r + "_inner_outer," + r + "_inner_inner dim_arg_names=wg_ar,wg_ak padding=0 default_tag=for\nswizzle_array " +
       a + "_fetch\n";
  t += "split_iname wg_ak " + S(piece) + " inner_tag=vec\nsplit_iname wg_ar 16\njoin_inames wg_ar_inner,wg_ak_outer new_iname=wg_ax\n"
       "tag_inames wg_ax:l.0\n";
  if (two) t += "split_iname wg_ar_outer 2 inner_tag=l.1\n";
  t += "add_prefetch " + b + " " + x + "_inner," + r + "_inner_outer," + r + "_inner_inner dim_arg_names=wg_bn,wg_bk padding=0 default_tag=for\n"
       "swizzle_array " + b + "_fetch\n";
  t += "split_iname wg_bk " + S(piece) + " inner_tag=vec\nsplit_iname wg_bn 16\njoin_inames wg_bn_inner,wg_bk_outer new_iname=wg_bx\n"
       "tag_inames wg_bx:l.0\n";
  if (two) t += "split_iname wg_bn_outer 2 inner_tag=l.1\n";
  t += "double_buffer " + a + "_fetch " + r + "_outer " + pipeline + "\ndouble_buffer " + b + "_fetch " + r + "_outer " + pipeline + "\n";
  t += "group_blocks choice(1|8)\n";  // (rows of tiles in groups: b's tiles shared in L2; 9-18% at 8192^3 on an H100)
  return t;
}

// The block's results of warpgroup_script (rows x n of the 16-bit array c)
// staged through a shared tile, padded by 8 columns (the 8 rows of a warp's
// pairs in different banks), and written back 16 bytes a lane along c's rows
// (examples/gemm_bf16_wgmma_tma_bias_relu.loom, gemm_bf16_wgmma_tma_skinny):
// a lane's own results are two adjacent columns, 4 bytes.
std::string staged_write_back(const std::string& y, const std::string& x, const std::string& c, int n, int warpgroups) {
  auto S = [](int v) { return std::to_string(v); };
  const int per_row = n / 8;  // (lanes along a row: 16 bytes each)
  const bool two = warpgroups == 2;
  std::string t = "buffer_array " + c + " " + (two ? y + "_inner_outer," + y + "_inner_inner" : y + "_inner") + "," + x +
                  "_inner temporary_scope=local default_tag=for\n";
  t += "split_iname " + c + "_store_dim_1 8 inner_tag=vec\nsplit_iname " + c + "_store_dim_0 " + S(128 / per_row) + "\n";
  t += "join_inames " + c + "_store_dim_0_inner," + c + "_store_dim_1_outer new_iname=wb_x\ntag_inames wb_x:l.0\n";
  if (two) t += "split_iname " + c + "_store_dim_0_outer 2 inner_tag=l.1\n";
  t += "pad_array_axis " + c + "_buf 1 8\n";
  return t;
}

// c[y, x] = sum(r, a[y, r] * b[r, x]) with b stored [r, x] (torch.matmul's
// layout): warpgroup_script's a, and b's tile read with wgmma's transpose bit
// (stored [x / 64, r, x mod 64], swizzled); both tiles from the copy engine
// (examples/gemm_bf16_wgmma_nn_tma.loom), 4 copies filled 1 ahead.
std::string warpgroup_nn_script(const std::string& y, const std::string& x, const std::string& r, const std::string& a, const std::string& b,
                                const std::string& ny, const std::string& nx, const std::string& nr) {
  std::string k_major = warpgroup_script(y, x, r, a, b, ny, nx, nr, 256, "stages=4 ahead=1");
  std::string t = k_major.substr(0, k_major.find("add_prefetch " + b + " "));  // (the assumptions, the tiles of c and a's fetch)
  t += "add_prefetch " + b + " " + r + "_inner_outer," + r + "_inner_inner," + x + "_inner dim_arg_names=wg_bk,wg_bn padding=0 default_tag=for\n"
       "split_array_axis " + b + "_fetch 1 64\ntag_array_axes " + b + "_fetch N1,N2,N0\nswizzle_array " + b + "_fetch\n"
       "split_iname wg_bn 8 inner_tag=vec\nsplit_iname wg_bn_outer 8\nsplit_iname wg_bk 16\njoin_inames wg_bk_inner,wg_bn_outer_inner new_iname=wg_bx\n"
       "tag_inames wg_bx:l.0\nsplit_iname wg_bk_outer 2 inner_tag=l.1\n";
  t += "double_buffer " + a + "_fetch " + r + "_outer stages=4 ahead=1\ndouble_buffer " + b + "_fetch " + r + "_outer stages=4 ahead=1\n";
  t += "tma_copy " + a + "_fetch," + b + "_fetch\ngroup_blocks choice(1|8)\n";
  return t;
}

// A sketch from its script with choice points, named.
Sketch sketch_of(const std::string& name, const std::string& text) {
  Sketch sk = Space::parse(text, "<auto space: " + name + ">").sketches().front();
  sk.name = name;
  return sk;
}

// The across-blocks sketches of a reduction over r (rfactor): chunks of r on
// g.0 (rows x, if any, on g.1), each chunk across the threads of its block,
// then the chunks' partial results across the threads of one block a row;
// the same with float4 loads (vec: r indexes an axis of size `extent`, a
// multiple of 4 at the timed sizes or none are given).
void across_blocks(std::vector<Sketch>& out, const std::string& r, const std::string& x, const std::string& extent, bool vec) {
  std::string rows = x.empty() ? "" : "tag_inames " + x + ":g.1\n";
  auto body = [&](const std::string& c) {  // c: the iname to cut into chunks
    // (a thread's loads of its chunk unrolled, so several are in flight: one
    // at a time left these sums at half the copy rate, H200)
    return "split_iname " + c + " choice(2048|8192|32768)\nrfactor " + c + "_outer\n" + "split_iname " + c +
           "_inner choice(128|256|512) inner_tag=l.0\ntag_inames " + c + "_outer:g.0\n" + rows + "split_iname " + c +
           "_outer_r choice(32|256) inner_tag=l.0\n" + "optional split_iname " + c + "_inner_outer choice(2|4|8) inner_tag=unr\n";
  };
  out.push_back(sketch_of("across blocks", body(r)));
  if (vec) out.push_back(sketch_of("across blocks + vec", "assume " + extent + " mod 4 = 0\nsplit_iname " + r + " 4 inner_tag=vec\n" + body(r + "_outer")));
}

// The picks of sketch s that give its choice points these values, in order.
std::vector<int> picks_of(const Sketch& s, const std::vector<std::string>& values) {
  if (values.size() != s.choices.size()) throw Error("auto_space: internal: " + s.name + " has " + std::to_string(s.choices.size()) + " choice points");
  std::vector<int> picks;
  for (size_t p = 0; p < values.size(); ++p) {
    auto& vs = s.choices[p].values;
    auto it = std::find(vs.begin(), vs.end(), values[p]);
    if (it == vs.end()) throw Error("auto_space: internal: no value '" + values[p] + "' at " + s.choices[p].name);
    picks.push_back(int(it - vs.begin()));
  }
  return picks;
}

// The rows + vec sketch's start at the timed sizes, the rule a hand
// schedule of row sums follows: enough threads along a row that each does
// at least 4 vector loads (at most 256 threads), about 256 threads a block
// (the other rows on l.1, at least 2), one row a thread, and a thread's
// loads unrolled by 2 where it has 8 or more (long rows: two in flight).
// 24 trials of evolution had not found this region for long rows.
// (length: the row's timed length, -1 when not given: no start)
void rows_vec_start(Sketch& s, int64_t length) {
  if (length < 4) return;
  int64_t vectors = length / 4, threads = 4;
  while (threads < 256 && 2 * threads * 4 <= vectors) threads *= 2;
  int64_t rows = std::clamp<int64_t>(256 / threads, 2, 128);
  bool unroll = vectors / threads >= 8;
  // (the unroll's factor is a choice point of its own, unused when the step is left out)
  s.starts.push_back(picks_of(s, {std::to_string(threads), std::to_string(rows), "1", unroll ? "yes" : "", "2"}));
}

}  // namespace

std::string product_tile_lines(const std::string& y, const std::string& x, const std::string& r, const std::string& y_blocks,
                               const std::string& x_blocks, const std::string& r_tiles) {
  return "split_iname " + y + " choice(" + y_blocks + ") outer_tag=g.1\n" + "split_iname " + x + " choice(" + x_blocks + ") outer_tag=g.0\n" +
         "split_iname " + y + "_inner choice(2|4|8) outer_tag=l.1 inner_tag=ilp\n" + "split_iname " + x +
         "_inner choice(16|32) outer_tag=ilp inner_tag=l.0\n" + "split_iname " + r + " choice(" + r_tiles + ")\n" + "prioritize_loops " + r +
         "_outer," + r + "_inner," + y + "_inner_inner," + x + "_inner_outer\n";
}

std::string product_vector_tile_lines(const std::string& y, const std::string& x, const std::string& r, int64_t width) {
  // (the start, '*': sgemm_vec's 64x128 tiles on 8x16 threads, 8 rows by 2 vectors a thread)
  return "split_iname " + y + " choice(64|128) outer_tag=g.1\n" + "split_iname " + x + " choice(64|*128) outer_tag=g.0\n" + "split_iname " + y +
         "_inner choice(8|16) outer_tag=ilp inner_tag=l.1\n" + "split_iname " + x + "_inner " + std::to_string(width) + " inner_tag=vec\n" +
         "split_iname " + x + "_inner_outer choice(8|*16) outer_tag=ilp inner_tag=l.0\n" + "split_iname " + r + " choice(16|32)\n" +
         "prioritize_loops " + r + "_outer," + r + "_inner," + y + "_inner_outer," + x + "_inner_outer_outer," + x + "_inner_inner\n";
}

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
    } else {  // a private value (a product's sum before its epilogue) runs in the loops it is inside of
      for (auto& n : insn.within_inames)
        if (inames.count(n)) mine.insert(n);
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
  std::string r;  // the innermost reduction iname (the last one declared)
  for (auto& n : k.all_inames())
    if (reduction.count(n)) r = n;
  // the timed size of the axis an iname indexes alone (-1: none given)
  auto timed = [&](const std::string& iname) -> int64_t {
    auto e = reads.extent.find(iname);
    auto s = e == reads.extent.end() ? sizes.end() : sizes.find(e->second);
    return s == sizes.end() ? -1 : s->second;
  };
  // a vector axis: its size parameter is a multiple of 4 at the timed sizes (or none are given)
  auto vector_axis = [&](const std::string& iname) { return reads.extent.count(iname) && (timed(iname) < 0 || timed(iname) % 4 == 0); };
  if ((!parallel || parallel->empty()) && !r.empty() && k.instructions.size() == 1) {
    // a whole array reduced to one value: only across blocks
    std::vector<Sketch> whole;
    across_blocks(whole, r, "", reads.extent.count(r) ? reads.extent[r] : "", vector_axis(r));
    return Space(whole);
  }
  // whole programs (several nests, time loops): parallelism from dependences
  size_t statements = size_t(std::count_if(k.instructions.begin(), k.instructions.end(), [](auto& i) { return i.kind == Instruction::Assign; }));
  std::string why_not;
  std::vector<Sketch> nests = nests_sketches(k, &why_not);
  if (!parallel || parallel->empty()) {
    if (!nests.empty()) return Space(nests);
    throw Error("auto_space: kernel '" + k.name + "' has no loop that indexes what every instruction writes, and no loop of it runs in parallel (" +
                why_not + "); write a space (choice(...)) for it");
  }
  // every loop carries a dependence and no reduction can be split across
  // threads: every sketch below would be refused, trial after trial
  if (nests.empty() && reduction.empty())
    throw Error("auto_space: kernel '" + k.name + "': no loop of it runs in parallel (" + why_not + "); write a space (choice(...)) for it");
  // a wavefront or an index-set split: nothing runs in parallel as written, so no sketch below would
  if (nests.size() == 1 && (nests[0].name == "nests, wavefront" || nests[0].name == "nests, index-set split")) return Space(nests);
  if (statements == 1) nests.clear();  // (one nest: the sketches below map it, with more choices)
  if (!parallel->count(x)) x = *parallel->begin();
  if (y == x || !parallel->count(y)) y.clear();
  if (y.empty())
    for (auto& n : *parallel)
      if (n != x) {
        y = n;
        break;
      }

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
  std::vector<Sketch> sketches;
  auto add = [&](const std::string& name, const std::string& text) { sketches.push_back(sketch_of(name, text)); };
  sketches.insert(sketches.end(), nests.begin(), nests.end());

  // map
  std::string map = "split_iname " + x + " choice(32|64|128|256|512) outer_tag=g.0 inner_tag=l.0\n";
  if (!y.empty()) map += "split_iname " + y + " choice(1|2|4|8) outer_tag=g.1 inner_tag=l.1\n";
  add("map", map);
  // map + staged: an array read across x's threads with a stride (a[i, j]
  // written out[j, i]: a transpose) goes through shared memory in square
  // tiles, read along its rows and written along x (add_prefetch pads the
  // rows against bank conflicts); each thread takes several rows of y
  if (!y.empty()) {
    std::string staged;
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::Assign && insn.rhs.defined())
        for_each_subscript(insn.rhs, [&](const Subscript& s) {
          if (!k.find_argument(s.name) || staged.find(" " + s.name + " ") != std::string::npos) return;
          if (strided_across(s, x) == y)
            staged += "add_prefetch " + s.name + " sweep_inames=" + x + "_inner," + y + "_inner_outer," + y +
                      "_inner_inner temporary_address_space=local default_tag=l.auto\n";
        });
    if (!staged.empty())
      add("map + staged", "split_iname " + x + " choice(32|64) outer_tag=g.0 inner_tag=l.0\nsplit_iname " + y +
                              " choice(32|64) outer_tag=g.1\nsplit_iname " + y + "_inner choice(4|8|16) outer_tag=unr inner_tag=l.1\n" + staged);
  }
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
  // rows alike: a row reduced and then used by several statements (softmax:
  // a max, a sum of exponentials, the division; layer norm; covariance's
  // means), the one parallel loop over rows on blocks and every other loop
  // of the row split alike by the block's width on l.0, so each statement's
  // threads are the same (a reduction across them, then every thread uses
  // its result). Splitting only one of them would leave the others' writes
  // on every thread of the axis (refused as a write race).
  if (statements > 1 && parallel->size() == 1) {
    std::set<std::string> row;  // every other loop and reduction of the statements
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      for (auto& n : insn.within_inames)
        if (!parallel->count(n)) row.insert(n);
      collect_reduction_inames(insn.rhs, row);
    }
    const std::string& rows_iname = *parallel->begin();
    // (each statement runs along one loop of the row: two nested ones would both be on l.0)
    for (auto& insn : k.instructions) {
      std::set<std::string> mine;
      for (auto& n : insn.within_inames)
        if (row.count(n)) mine.insert(n);
      collect_reduction_inames(insn.rhs, mine);
      if (mine.size() > 1) row.clear();
    }
    if (!row.empty() && row.size() <= 4)
      for (int width : {32, 64, 128, 256, 512, 1024}) {
        std::string t;
        for (auto& n : row) t += "split_iname " + n + " " + std::to_string(width) + " inner_tag=l.0\n";
        std::string rows_per_block = width >= 512 ? "1" : width >= 256 ? "1|2" : "1|2|4";
        t += "split_iname " + rows_iname + " choice(" + rows_per_block + ") outer_tag=g.0 inner_tag=l.1\n";
        add("rows alike " + std::to_string(width), t);
      }
    // the same with float4 along the row (each thread four neighbours at once),
    // where every loop of the row runs along one size that is a multiple of 4
    std::set<std::string> extents;
    bool vectors = !row.empty() && row.size() <= 4;
    for (auto& n : row) {
      vectors &= vector_axis(n);
      if (reads.extent.count(n)) extents.insert(reads.extent[n]);
    }
    if (vectors && extents.size() == 1)
      for (int width : {32, 64, 128, 256}) {
        std::string t = "assume " + *extents.begin() + " mod 4 = 0\n";
        for (auto& n : row) t += "split_iname " + n + " 4 inner_tag=vec\nsplit_iname " + n + "_outer " + std::to_string(width) + " inner_tag=l.0\n";
        std::string rows_per_block = width >= 256 ? "1|2" : "1|2|4";
        t += "split_iname " + rows_iname + " choice(" + rows_per_block + ") outer_tag=g.0 inner_tag=l.1\n";
        add("rows alike " + std::to_string(width) + " + vec", t);
      }
  }
  // rows: the reduction across threads
  if (!r.empty())
    add("rows", "split_iname " + r + " choice(32|64|128|256|512) inner_tag=l.0\n" + "split_iname " + x +
                    " choice(1|2|4|8|16) outer_tag=g.0 inner_tag=l.1\n");
  // columns: a reduction down the columns of an array read along x (y = A^T x:
  // a[i, j] summed over i into y[j]), x on l.0 (coalesced) and the
  // reduction's terms split over l.1, summed across it (a column per thread
  // would leave 16384 columns as 16384 threads)
  if (!r.empty() && y.empty()) {  // (a product's columns are its tiles' business)
    bool down_columns = false;
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::Assign && insn.rhs.defined())
        for_each_subscript(insn.rhs, [&](const Subscript& s) {
          if (s.indices.size() < 2) return;
          auto last = s.indices.back().as<Var>();
          bool across = false;
          for (size_t d = 0; d + 1 < s.indices.size(); ++d) across |= mentions_var(s.indices[d], r);
          down_columns |= last && last->name == x && across;
        });
    if (down_columns)
      add("columns", "split_iname " + x + " choice(32|64) outer_tag=g.0 inner_tag=l.0\n" + "split_iname " + r +
                         " choice(4|8|16) inner_tag=l.1\n" + "optional split_iname " + r + "_outer choice(2|4) inner_tag=unr\n");
  }
  // rows with vector loads: float4 along the reduction, threads across it,
  // rows per block on l.1 and two rows per thread (ilp)
  if (!r.empty() && vector_axis(r))
    add("rows + vec", "assume " + reads.extent[r] + " mod 4 = 0\nsplit_iname " + r + " 4 inner_tag=vec\n" + "split_iname " + r +
                          "_outer choice(4|8|16|32|64|128|256) inner_tag=l.0\n" + "split_iname " + x +
                          " choice(2|4|8|16|32|64|128) outer_tag=g.0\n" + "split_iname " + x + "_inner choice(1|2) outer_tag=l.1 inner_tag=ilp\n" +
                          // (long rows: a thread's sequential part unrolled, its loads in flight together)
                          "optional split_iname " + r + "_outer_outer choice(2|4) inner_tag=unr\n");
  if (!sketches.empty() && sketches.back().name == "rows + vec") rows_vec_start(sketches.back(), timed(r));
  // few long rows (at the timed sizes, fewer than 1024 of at least 16384
  // values): each row's chunks on blocks too
  if (!r.empty() && y.empty() && k.instructions.size() == 1 && timed(x) >= 0 && timed(x) < 1024 && timed(r) >= 16384)
    across_blocks(sketches, r, x, reads.extent[r], vector_axis(r));
  // tiles: products (two parallel inames and a reduction)
  if (!r.empty() && !y.empty()) {
    std::string t = product_tile_lines(y, x, r, "32|64|128", "32|64|128", "8|16|32");
    t += prefetches({{y, {y + "_inner_outer", y + "_inner_inner"}}, {x, {x + "_inner_outer", x + "_inner_inner"}}, {r, {r + "_inner"}}}, true);
    add("tiles", t);
    // the same with float4 along x (the hand-written sgemm_vec's shape): tiles of
    // each input in shared memory, each optionally double-buffered across r's tiles
    if (vector_axis(x)) {
      std::string v = "assume " + reads.extent[x] + " mod 4 = 0\n" + product_vector_tile_lines(y, x, r, 4);
      // (each tile fetched with float4 copies or not, with cp.async or not)
      std::string fetches = prefetches({{y, {y + "_inner_outer", y + "_inner_inner"}},
                                        {x, {x + "_inner_outer_outer", x + "_inner_outer_inner", x + "_inner_inner"}},
                                        {r, {r + "_inner"}}},
                                       false);
      for (size_t at = 0; (at = fetches.find(" default_tag=l.auto\n", at)) != std::string::npos; at += 1)
        fetches.replace(at, 20, " default_tag=l.auto vector_width=choice(1|*4) async_copy=choice(false|*true)\n");
      // a tile whose rows run along the reduction (a[i, k]) is read down its
      // columns by a warp (one k, many rows): rows padded by one float4 may
      // spread those reads over the banks, as sgemm_vec's a tile does
      for (auto& [array, axes] : reads.arrays) {
        size_t at = fetches.find("add_prefetch " + array + " ");
        if (at == std::string::npos || axes.empty() || axes.back().size() != 1 || !axes.back().count(r)) continue;
        fetches.insert(fetches.find('\n', at), " padding=choice(0|*4)");
      }
      v += fetches;
      for (auto& [array, axes] : reads.arrays)
        if (k.find_argument(array) && v.find("add_prefetch " + array + " ") != std::string::npos)
          v += "optional double_buffer " + array + "_fetch " + r + "_outer\n";
      v += "optional split_iname " + r + "_inner 4 inner_tag=unr outer_tag=unr\n";  // the k tile unrolled whole
      add("tiles + vec", v);
    }
  }
  // small axes: written axes of a small constant extent (a DG element's
  // nodes, a batch of 16x16 products) go whole onto the threads (x on l.0,
  // a second on l.1), and the one large axis (elements, products) is split
  // across blocks: with one small axis its in-block part runs on l.1 with
  // several elements per thread (ilp), with two it runs on l.2. Inputs read
  // only through the block's inames and constant reductions may be staged
  // in shared memory; constant reductions may be unrolled; x may be read
  // and written as float2/float4 where its extent allows.
  {
    std::vector<std::string> small, large;
    std::map<std::string, int64_t> extent;
    for (auto& n : k.all_inames()) {
      if (!parallel->count(n) && !reduction.count(n)) continue;
      auto range = islu::constant_range(k, n);
      if (range && range->first == 0 && range->second < 32) extent[n] = range->second + 1;
      if (!parallel->count(n)) continue;
      (extent.count(n) ? small : large).push_back(n);
    }
    std::stable_partition(small.begin(), small.end(), [&](const std::string& n) { return n == x; });  // x first
    if (large.size() == 1 && (small.size() == 1 || small.size() == 2) && small.front() == x) {
      const std::string& z = large.front();
      std::vector<int64_t> widths;  // vector widths that divide x's extent
      for (int64_t w : {2, 4})
        if (extent[x] % w == 0) widths.push_back(w);
      for (bool vec : {false, true}) {
        if (vec && widths.empty()) continue;
        std::string t, xt = x;
        if (vec) {
          std::string w;
          for (auto v : widths) w += (w.empty() ? "" : "|") + std::to_string(v);
          t += "split_iname " + x + " choice(" + w + ") inner_tag=vec\n";
          xt = x + "_outer";
        }
        t += "tag_inames " + xt + ":l.0\n";
        std::map<std::string, std::vector<std::string>> tile = {{x, vec ? std::vector<std::string>{x + "_outer", x + "_inner"} : std::vector<std::string>{x}}};
        if (small.size() == 2) {
          t += "tag_inames " + small[1] + ":l.1\n" + "split_iname " + z + " choice(1|2|4|8) outer_tag=g.0 inner_tag=l.2\n";
          tile[small[1]] = {small[1]};
          tile[z] = {z + "_inner"};
        } else {
          t += "split_iname " + z + " choice(32|64|128|256) outer_tag=g.0\n" + "split_iname " + z + "_inner choice(4|8|16|32|64) outer_tag=ilp inner_tag=l.1\n";
          tile[z] = {z + "_inner_outer", z + "_inner_inner"};
        }
        std::string unroll;
        for (auto& n : reduction)
          if (extent.count(n)) {
            tile[n] = {n};
            unroll += "optional tag_inames " + n + ":unr\n";
          }
        // with vectors, each staged tile may be fetched as float2/float4
        // along its last axis (where that axis's extent allows) into rows
        // padded by one vector (bank conflicts of column reads)
        std::string fetches = prefetches(tile, true);
        if (vec)
          for (auto& [array, axes] : reads.arrays) {
            std::string head = "add_prefetch " + array + " ";
            size_t at = fetches.find(head), end = at == std::string::npos ? at : fetches.find('\n', at);
            if (at == std::string::npos || axes.empty() || axes.back().size() != 1 || !extent.count(*axes.back().begin())) continue;
            std::string w = "1";
            for (int64_t v : {2, 4})
              if (extent[*axes.back().begin()] % v == 0) w += "|" + std::to_string(v);
            if (w != "1") fetches.insert(end, " vector_width=choice(" + w + ") padding=choice(0|4) async_copy=choice(false|true)");
          }
        // a rule read through the tile's inames (DG's Dr(i, j) := D[i, j])
        // may be computed into shared memory once per block; with vectors,
        // stored with x's argument last, so a thread's lanes read one vector
        for (auto& [rule, args] : reads.rule_calls) {
          std::string sweep, x_param;
          const SubstitutionRule& sr = k.substitutions->at(rule);
          bool tiled = sr.params.size() == args.size();
          for (size_t a = 0; tiled && a < args.size(); ++a) {
            if (!tile.count(args[a])) tiled = false;
            else
              for (auto& m : tile[args[a]]) sweep += (sweep.empty() ? "" : ",") + m;
            if (args[a] == x) x_param = sr.params[a];
          }
          if (!tiled || sweep.empty()) continue;
          std::string storage;
          if (vec && !x_param.empty() && x_param != sr.params.back()) {
            for (auto& p : sr.params)
              if (p != x_param) storage += p + ",";
            storage = " storage_axes=" + storage + x_param;
          }
          fetches += "optional precompute " + rule + " " + sweep + storage + " temporary_address_space=local default_tag=l.auto\n";
        }
        t += fetches + unroll;
        add(vec ? "small axes + vec" : "small axes", t);
      }
    }
  }
  // tensor cores: c[y, x] = sum(r, a[y, r] * b[r, x]) with 16-bit a and b
  // (each read array indexed by the product's two inames in that order)
  if (!r.empty() && !y.empty()) {
    std::string a, b, bt;  // (bt: b stored [x, r], K-major)
    auto single = [](const std::set<std::string>& axis, const std::string& n) { return axis.size() == 1 && axis.count(n); };
    // float32 operands only where the kernel itself sums trunc_tf32 factors
    // (TF32 as the warpgroup computes it; the tuner never changes what a kernel computes)
    struct Truncates : ExprVisitor {
      bool found = false;
      void visit_call(const Call& c) override {
        found |= c.name == "trunc_tf32";
        ExprVisitor::visit_call(c);
      }
    } truncates;
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::Assign) truncates.visit(insn.rhs);
    const bool truncated = truncates.found;
    int bytes = 2;
    for (auto& [array, axes] : reads.arrays) {
      const Argument* arg = k.find_argument(array);
      bool tf32 = arg && truncated && arg->dtype == types::float32;
      if (!arg || axes.size() != 2 || !(arg->dtype.kind == ScalarKind::BFloat16 || arg->dtype.kind == ScalarKind::Float16 || tf32)) continue;
      if (tf32) bytes = 4;
      if (single(axes[0], y) && single(axes[1], r)) a = array;
      if (single(axes[0], r) && single(axes[1], x)) b = array;
      if (single(axes[0], x) && single(axes[1], r)) bt = array;
    }
    bool sized = reads.extent.count(y) && reads.extent.count(x) && reads.extent.count(r);
    // a size the timed parameters make a multiple of `of` (any, where they are not given)
    auto multiple = [&](const std::string& p, int64_t of) {
      auto it = sizes.find(p);
      return it == sizes.end() || (it->second % of == 0 && it->second >= of);
    };
    // the one array written, c[y, x] in 16 bits: its write-back may be staged
    std::string written16;
    std::set<std::string> written;
    for (auto& insn : k.instructions) {
      auto s = insn.kind == Instruction::Assign ? insn.lhs.as<Subscript>() : nullptr;
      const Argument* arg = s ? k.find_argument(s->name) : nullptr;
      if (!arg) continue;
      written.insert(s->name);
      auto v0 = s->indices.size() == 2 ? s->indices[0].as<Var>() : nullptr, v1 = s->indices.size() == 2 ? s->indices[1].as<Var>() : nullptr;
      if (v0 && v1 && v0->name == y && v1->name == x && arg->dtype.bytes() == 2 && arg->plain_layout()) written16 = s->name;
    }
    if (written.size() != 1) written16.clear();
    if (!a.empty() && !bt.empty() && bt != a && sized) {
      const std::string &ny = reads.extent[y], &nx = reads.extent[x], &nr = reads.extent[r];
      const int row = 128 / bytes;
      const std::string kt = std::to_string(row) + (bytes == 4 ? ", TF32" : "");
      const std::string copies = "tma_copy " + a + "_fetch," + bt + "_fetch\n";
      if (multiple(ny, 128) && multiple(nr, row)) {
        if (multiple(nx, 256))  // (tiles from the copy engine: examples/gemm_bf16_wgmma_tma.loom, 0.9 of cuBLAS on an H200; gemm_tf32_wgmma_tma)
          add("warpgroup tensor cores 128x256x" + kt + ", copy engine tiles, 4 copies 1 ahead",
              warpgroup_script(y, x, r, a, bt, ny, nx, nr, 256, "stages=4 ahead=1", bytes) + copies);
        if (multiple(nx, 256) && !written16.empty())  // (three copies leave room for the 64 KB tile)
          add("warpgroup tensor cores 128x256x" + kt + ", copy engine tiles, 3 copies 1 ahead, write-back staged",
              warpgroup_script(y, x, r, a, bt, ny, nx, nr, 256, "stages=3 ahead=1", bytes) + copies + staged_write_back(y, x, written16, 256, 2));
        if (multiple(nx, 128))
          add("warpgroup tensor cores 128x128x" + kt, warpgroup_script(y, x, r, a, bt, ny, nx, nr, 128, "stages=choice(2|3)", bytes));
      }
      // (one warpgroup a block, 67 KB of shared memory: three blocks an SM, one's loads under another's write-back; short reductions)
      if (!written16.empty() && multiple(ny, 64) && multiple(nx, 128) && multiple(nr, row))
        add("warpgroup tensor cores 64x128x" + kt + ", copy engine tiles, 2 copies 1 ahead, write-back staged",
            warpgroup_script(y, x, r, a, bt, ny, nx, nr, 128, "stages=2 ahead=1", bytes, 1) + copies + staged_write_back(y, x, written16, 128, 1));
    }
    if (!a.empty() && !b.empty() && sized && bytes == 2) {  // (TF32 tiles are K-major only, and mma.sync rounds to nearest)
      const std::string &ny = reads.extent[y], &nx = reads.extent[x], &nr = reads.extent[r];
      if (multiple(ny, 128) && multiple(nx, 256) && multiple(nr, 64))  // (sm_90a: 0.9 of cuBLAS on an H200)
        add("warpgroup tensor cores 128x256x64, b transposed, copy engine tiles", warpgroup_nn_script(y, x, r, a, b, ny, nx, nr));
      struct Shape { int bi, bj, wi, wj, bk; };
      for (Shape sh : {Shape{128, 128, 2, 4, 64}, Shape{128, 128, 2, 2, 32}, Shape{128, 256, 2, 4, 64}, Shape{64, 64, 2, 2, 32}}) {
        std::string name = "tensor cores " + std::to_string(sh.bi) + "x" + std::to_string(sh.bj) + "x" + std::to_string(sh.bk) + ", " +
                           std::to_string(sh.wi * sh.wj) + " warps";
        if (multiple(ny, sh.bi) && multiple(nx, sh.bj) && multiple(nr, sh.bk))
          add(name, tensor_core_script(y, x, r, a, b, ny, nx, nr, sh.bi, sh.bj, sh.wi, sh.wj, sh.bk, true));
        else if (multiple(nx, 8) && multiple(nr, 8))
          add(name + ", partial tiles", tensor_core_script(y, x, r, a, b, ny, nx, nr, sh.bi, sh.bj, sh.wi, sh.wj, sh.bk, false));
      }
    }
  }
  return Space(sketches);
}

}  // namespace loom::tune
