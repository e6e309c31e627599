// tensor_core: a product reduction's (m, n, k) inames run as one warp-level
// matrix instruction (mma.sync m16n8k16 on sm_80 and later: float16 or
// bfloat16 operands, float32 accumulation; float64 on the FP64 tensor cores,
// what cuBLAS's DGEMM runs: m8n8k4 from sm_80, m16n8k4/k8/k16 on sm_90).
// The user splits the product down
// to a 16 x 8 x 16 tile and names its three inames; this tags them mma.m,
// mma.n and mma.k. The warp is then one logical thread of the kernel: it
// runs the tile's loops, its accumulator is private to it (one value per
// (m, n), as ILP gives), and code generation spreads the tile over the
// warp's 32 lanes in the instruction's fragment layout
// (codegen/warp_matrices.cpp) and issues the instruction on CUDA; the CPU
// target and the interpreter run the same lane code with plain arithmetic
// (products of 16-bit values are exact in float32; float64 sums may round
// differently from the instruction's fused steps in the last bits).
//
// Checked here: the shape, each iname's extent (exactly the shape's, from
// 0), that one instruction sums float32(x) * float32(y) over k with x over
// (m, k) and y over (k, n) (or a sum of such products, syr2k's: one matrix
// instruction each, into the one accumulator), and that every instruction inside m or n is
// inside both (each of the tile's elements belongs to one lane). Whether the
// architecture has the instruction is the target model's to say, when code
// is generated for it.
#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::ReductionsOver;
using transforms::refuse;

namespace {

// sum(k, x * y) -> sum(k, round_tf32(x) * round_tf32(y)) for the sums over k
// (trunc_tf32 for the warpgroup: it reads float32 tiles and drops the low bits)
class RoundToTf32 : public ExprMutator {
 public:
  RoundToTf32(std::string k, std::string function) : k_(std::move(k)), function_(std::move(function)) {}
  int rewritten = 0;

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr e = ExprMutator::mutate_reduce(r, self);
    auto red = e.as<Reduce>();
    auto mul = red->body.as<Binary>();
    if (std::find(red->inames.begin(), red->inames.end(), k_) == red->inames.end() || !mul || mul->op != BinOp::Mul) return e;
    ++rewritten;
    auto rounded = [&](const Expr& f) {  // (a factor the kernel already rounds stays as it is)
      auto c = f.as<Call>();
      return c && c->name == function_ ? f : make_call(function_, {f});
    };
    Expr body = make_binary(BinOp::Mul, rounded(mul->a), rounded(mul->b), mul->type);
    return make_reduce(red->op, red->inames, body, red->type);
  }

 private:
  std::string k_, function_;
};

// The products x * y summed over k in typed (the kernel as given, types
// inferred), each with its instruction.
std::vector<std::pair<const Instruction*, const Binary*>> products_over(const LoopKernel& typed, const std::string& kk) {
  std::vector<std::pair<const Instruction*, const Binary*>> found;
  for (auto& insn : typed.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    ReductionsOver sums({kk});
    sums.visit(insn.rhs);
    for (auto* r : sums.found)
      for (auto& term : summed_terms(r->body))  // (a sum of products: each)
        if (auto mul = term.as<Binary>(); mul && mul->op == BinOp::Mul) found.push_back({&insn, mul});
  }
  return found;
}

// Whether typed already sums round_tf32(x) * round_tf32(y) (or trunc_tf32)
// over k: TF32 written out.
bool sums_tf32(const LoopKernel& typed, const std::string& kk) {
  for (auto [insn, mul] : products_over(typed, kk)) {
    auto call = mul->a.as<Call>();
    if (call && (call->name == "round_tf32" || call->name == "trunc_tf32")) return true;
  }
  return false;
}

// Whether typed sums a float64 product over k: the FP64 tensor cores' m8n8k4.
bool sums_float64(const LoopKernel& typed, const std::string& kk) {
  for (auto [insn, mul] : products_over(typed, kk))
    if ((mul->type.known() ? mul->type : promote(mul->a.type(), mul->b.type())) == types::float64) return true;
  return false;
}

}  // namespace

// N of a warpgroup shape m64nNk16 (or m64nNk8, TF32's), 0 for another shape
int warpgroup_shape_n(const std::string& shape) {
  if (shape.size() < 7 || shape.rfind("m64n", 0) != 0) return 0;
  size_t kpos = shape.rfind('k');
  if (kpos == std::string::npos || (shape.substr(kpos) != "k16" && shape.substr(kpos) != "k8")) return 0;
  std::string digits = shape.substr(4, kpos - 4);
  if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), ::isdigit) || digits[0] == '0') return 0;
  int n = std::stoi(digits);
  return n % 8 == 0 && n <= 256 ? n : 0;
}

LoopKernel tensor_core(const LoopKernel& k, const std::string& m, const std::string& n, const std::string& kk, const std::string& shape_given,
                       bool tf32) {
  LoopKernel typed = infer_types(expand_substitutions(k));  // (the operands' types decide)
  if (!tf32 && k.has_iname(kk)) tf32 = sums_tf32(typed, kk);
  const bool f64 = !tf32 && k.has_iname(kk) && sums_float64(typed, kk);
  const std::string shape = shape_given.empty() ? (tf32 ? "m16n8k8" : f64 ? "m8n8k4" : "m16n8k16") : shape_given;
  const std::string what = "tensor_core(" + m + ", " + n + ", " + kk + ", " + shape + (tf32 ? ", tf32" : "") + ")";
  const int warpgroup_n = warpgroup_shape_n(shape);
  // float64: m8n8k4 (sm_80 and later) and Hopper's m16n8k4, m16n8k8, m16n8k16 (sm_90)
  static const std::map<std::string, std::pair<int64_t, int64_t>> f64_shapes = {{"m8n8k4", {8, 4}}, {"m16n8k4", {16, 4}}, {"m16n8k8", {16, 8}},
                                                                                 {"m16n8k16", {16, 16}}};
  if (f64 && !f64_shapes.count(shape))
    refuse(k, what, "the sum over '" + kk + "' multiplies float64 values, which the FP64 tensor cores run as m8n8k4 (the default; sm_80 and later) "
                    "or m16n8k4, m16n8k8, m16n8k16 (sm_90)");
  if (!f64 && (shape == "m8n8k4" || shape == "m16n8k4"))
    refuse(k, what, shape + " multiplies float64 values, and the sum over '" + kk + "' does not");
  if (!f64 && shape != "m16n8k16" && shape != "m16n8k8" && !warpgroup_n)
    refuse(k, what, "unknown shape '" + shape + "' (known: m16n8k16, m16n8k8 with tf32=true, m8n8k4 and m16n8k4/k8/k16 for float64, m64nNk16 with N = 8, "
                    "16, ..., 256, m64nNk8 with tf32=true)");
  const bool k8 = shape.compare(shape.size() - 2, 2, "k8") == 0;  // (m16n8k8, m64nNk8: the known shapes ending so)
  if (!f64 && tf32 != k8)
    refuse(k, what, tf32 ? std::string("TF32 runs as m16n8k8 (a warp) or m64nNk8 (a warpgroup)")
                         : shape + " is a TF32 shape: pass tf32=true to run float32 operands as TF32");
  int64_t extent[3] = {warpgroup_n ? 64 : 16, warpgroup_n ? warpgroup_n : 8, tf32 ? 8 : 16};
  if (f64) extent[0] = f64_shapes.at(shape).first, extent[2] = f64_shapes.at(shape).second;
  const std::string names[3] = {m, n, kk};
  for (int d = 0; d < 3; ++d) {
    const std::string& x = names[d];
    if (!k.has_iname(x)) refuse(k, what, "no iname '" + x + "'");
    for (int e = 0; e < d; ++e)
      if (names[e] == x) refuse(k, what, "iname '" + x + "' is named twice");
    if (k.tag_of(x).kind != InameTag::Seq) refuse(k, what, "iname '" + x + "' is tagged " + k.tag_of(x).str() + "; the instruction's inames must be untagged");
    auto r = islu::constant_range(k, x);
    if (!r || r->first != 0 || r->second != extent[d] - 1)
      refuse(k, what, "iname '" + x + "' must run over 0.." + std::to_string(extent[d] - 1) + " (the " + std::string(1, "mnk"[d]) + " of " + shape +
                          "), but " + (r ? "runs over " + std::to_string(r->first) + ".." + std::to_string(r->second) : "its range depends on the parameters") +
                          "; split it to that size first");
  }
  // TF32 is never silent: the sum's factors become round_tf32(x) * round_tf32(y)
  // in the kernel itself (trunc_tf32 on a warpgroup: wgmma reads the float32
  // tiles in shared memory and drops their 13 low mantissa bits)
  LoopKernel source = k;
  if (tf32) {
    const std::string rounding = warpgroup_n ? "trunc_tf32" : "round_tf32";
    const std::string other = warpgroup_n ? "round_tf32" : "trunc_tf32";
    for (auto [insn, mul] : products_over(typed, kk))
      for (const Expr* f : {&mul->a, &mul->b}) {
        auto call = f->as<Call>();
        if (call && call->name == other)
          refuse(k, what, "instruction '" + insn->id + "' rounds its factors with " + other + ", but " +
                              (warpgroup_n ? "the warpgroup (wgmma) reads float32 tiles and drops their low bits: trunc_tf32; round_tf32 runs as m16n8k8"
                                           : "mma.sync rounds to nearest as it loads its fragments: round_tf32; trunc_tf32 runs as m64nNk8"));
      }
    int rewritten = 0;
    for (auto& insn : source.instructions.edit()) {
      if (insn.kind != Instruction::Assign) continue;
      RoundToTf32 round(kk, rounding);
      insn.rhs = round.mutate(insn.rhs);
      rewritten += round.rewritten;
    }
    if (rewritten != 1)
      refuse(k, what, rewritten == 0 ? "no instruction sums a product x * y over '" + kk + "' (written out, not through a substitution rule)"
                                     : "several sums run over '" + kk + "'; the instruction computes one");
    typed = infer_types(expand_substitutions(source));
  }
  int products = 0;
  for (auto& insn : typed.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    bool in_m = insn.within_inames.count(m) > 0, in_n = insn.within_inames.count(n) > 0;
    if (in_m != in_n)
      refuse(k, what, "instruction '" + insn.id + "' runs within '" + (in_m ? m : n) + "' but not within '" + (in_m ? n : m) +
                          "': each element of the tile belongs to one lane, so everything inside one of them must be inside both");
    if (insn.within_inames.count(kk)) refuse(k, what, "instruction '" + insn.id + "' runs within '" + kk + "', which must be a reduction's iname");
    ReductionsOver sums({kk});
    sums.visit(insn.rhs);
    if (sums.found.empty()) continue;
    if (!in_m) refuse(k, what, "instruction '" + insn.id + "' sums over '" + kk + "' but does not run within '" + m + "' and '" + n + "'");
    for (auto* r : sums.found) {
      if (r->op != ReduceOp::Sum) refuse(k, what, "instruction '" + insn.id + "' reduces over '" + kk + "' with another operation than sum");
      std::string why;
      if (!matrix_products(r->body, m, n, why)) refuse(k, what, "instruction '" + insn.id + "': " + why);
      const Type accumulates = f64 ? types::float64 : types::float32;
      if (r->type.known() && !(r->type == accumulates))
        refuse(k, what, "instruction '" + insn.id + "' sums in " + r->type.name() + "; the instruction accumulates in " + accumulates.name());
      ++products;
    }
  }
  if (products != 1)
    refuse(k, what, products == 0 ? "no instruction sums over '" + kk + "'" : "several sums run over '" + kk + "'; the instruction computes one");
  LoopKernel r = source;
  auto& tags = r.iname_tags.edit();
  tags[m] = InameTag{InameTag::MatrixM, 0};
  tags[n] = InameTag{InameTag::MatrixN, 0};
  tags[kk] = InameTag{InameTag::MatrixK, 0};
  return r;
}

namespace {
std::vector<std::string> shapes() {
  std::vector<std::string> r = {"", "m16n8k16", "m16n8k8", "m8n8k4", "m16n8k4"};
  for (int n = 8; n <= 256; n += 8) r.push_back("m64n" + std::to_string(n) + "k16");
  for (int n = 8; n <= 256; n += 8) r.push_back("m64n" + std::to_string(n) + "k8");
  return r;
}
}  // namespace

void register_tensor_core_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"tensor_core",
           "Run a product's 16x8x16 tile on the tensor cores (mma.sync, float16/bfloat16 operands, float32 accumulation; 8x8x4 "
           "for float64 operands and accumulation, m8n8k4, or m16n8k4/k8/k16 on sm_90), or a 64xNx16 tile on a warpgroup (wgmma, sm_90a): tags its m, n and k inames mma.m, mma.n, mma.k; the warp (warpgroup) "
           "becomes one logical thread and its 32 (128) lanes share the tile.",
           {P{"m", P::String, true, "the tile's row iname (extent 16; 8 for float64's m8n8k4)"}.of(P::Type::Iname),
            P{"n", P::String, true, "the tile's column iname (extent 8)"}.of(P::Type::Iname),
            P{"k", P::String, true, "the sum's iname of the tile (extent 16; 8 for TF32; the shape's for float64)"}.of(P::Type::Iname),
            P{"shape", P::String, false, "the instruction's shape (default: m16n8k16, m16n8k8 with tf32, m8n8k4 for float64 (m16n8k4, m16n8k8, m16n8k16 on sm_90); m64nNk16: wgmma on sm_90a, a warpgroup of 4 warps, operands in shared memory; m64nNk8: the same with tf32)"}.one_of(shapes()).otherwise(""),
            P{"tf32", P::String, false, "run float32 operands as TF32 (10-bit mantissa): the sum's factors become round_tf32(x) * round_tf32(y) (trunc_tf32 on a warpgroup, m64nNk8)"}.of(P::Type::Bool).otherwise("false")},
           [](const LoopKernel& k, const TransformArgs& a) {
             return tensor_core(k, a.str("m"), a.str("n"), a.str("k"), a.has("shape") ? a.str("shape") : "", a.flag("tf32", false));
           }});
}

}  // namespace loom
