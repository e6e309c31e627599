// tensor_core: a product reduction's (m, n, k) inames run as one warp-level
// matrix instruction (mma.sync m16n8k16 on sm_80 and later: float16 or
// bfloat16 operands, float32 accumulation). The user splits the product down
// to a 16 x 8 x 16 tile and names its three inames; this tags them mma.m,
// mma.n and mma.k. The warp is then one logical thread of the kernel: it
// runs the tile's loops, its accumulator is private to it (one value per
// (m, n), as ILP gives), and code generation spreads the tile over the
// warp's 32 lanes in the instruction's fragment layout
// (codegen/warp_matrices.cpp) and issues the instruction on CUDA; the CPU
// target and the interpreter run the same lane code with plain arithmetic
// (products of 16-bit values are exact in float32).
//
// Checked here: the shape, each iname's extent (exactly the shape's, from
// 0), that one instruction sums float32(x) * float32(y) over k with x over
// (m, k) and y over (k, n), and that every instruction inside m or n is
// inside both (each of the tile's elements belongs to one lane). Whether the
// architecture has the instruction is the target model's to say, when code
// is generated for it.
#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

class SumsOver : public ExprVisitor {
 public:
  explicit SumsOver(std::string k) : k_(std::move(k)) {}
  std::vector<const Reduce*> found;

 protected:
  void visit_reduce(const Reduce& r) override {
    if (std::find(r.inames.begin(), r.inames.end(), k_) != r.inames.end()) found.push_back(&r);
    ExprVisitor::visit_reduce(r);
  }

 private:
  std::string k_;
};

}  // namespace

LoopKernel tensor_core(const LoopKernel& k, const std::string& m, const std::string& n, const std::string& kk, const std::string& shape) {
  const std::string what = "tensor_core(" + m + ", " + n + ", " + kk + ", " + shape + ")";
  if (shape != "m16n8k16") refuse(k, what, "unknown shape '" + shape + "' (known: m16n8k16)");
  const int64_t extent[3] = {16, 8, 16};
  const std::string names[3] = {m, n, kk};
  for (int d = 0; d < 3; ++d) {
    const std::string& x = names[d];
    if (!k.has_iname(x)) refuse(k, what, "no iname '" + x + "'");
    for (int e = 0; e < d; ++e)
      if (names[e] == x) refuse(k, what, "iname '" + x + "' is named twice");
    if (k.tag_of(x).kind != InameTag::Seq) refuse(k, what, "iname '" + x + "' is tagged " + k.tag_of(x).str() + "; the instruction's inames must be untagged");
    auto r = islu::constant_range(k, x);
    if (!r || r->first != 0 || r->second != extent[d] - 1)
      refuse(k, what, "iname '" + x + "' must run over 0.." + std::to_string(extent[d] - 1) + " (the " + "mnk"[d] + " of " + shape +
                          "), but " + (r ? "runs over " + std::to_string(r->first) + ".." + std::to_string(r->second) : "its range depends on the parameters") +
                          "; split it to that size first");
  }
  int products = 0;
  LoopKernel typed = infer_types(expand_substitutions(k));  // (the operands' types decide)
  for (auto& insn : typed.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    bool in_m = insn.within_inames.count(m) > 0, in_n = insn.within_inames.count(n) > 0;
    if (in_m != in_n)
      refuse(k, what, "instruction '" + insn.id + "' runs within '" + (in_m ? m : n) + "' but not within '" + (in_m ? n : m) +
                          "': each element of the tile belongs to one lane, so everything inside one of them must be inside both");
    if (insn.within_inames.count(kk)) refuse(k, what, "instruction '" + insn.id + "' runs within '" + kk + "', which must be a reduction's iname");
    SumsOver sums(kk);
    sums.visit(insn.rhs);
    if (sums.found.empty()) continue;
    if (!in_m) refuse(k, what, "instruction '" + insn.id + "' sums over '" + kk + "' but does not run within '" + m + "' and '" + n + "'");
    for (auto* r : sums.found) {
      if (r->op != ReduceOp::Sum) refuse(k, what, "instruction '" + insn.id + "' reduces over '" + kk + "' with another operation than sum");
      std::string why;
      if (!matrix_product(r->body, m, n, why)) refuse(k, what, "instruction '" + insn.id + "': " + why);
      if (r->type.known() && !(r->type == types::float32)) refuse(k, what, "instruction '" + insn.id + "' sums in " + r->type.name() + "; the instruction accumulates in float32");
      ++products;
    }
  }
  if (products != 1)
    refuse(k, what, products == 0 ? "no instruction sums over '" + kk + "'" : "several sums run over '" + kk + "'; the instruction computes one");
  LoopKernel r = k;
  auto& tags = r.iname_tags.edit();
  tags[m] = InameTag{InameTag::MatrixM, 0};
  tags[n] = InameTag{InameTag::MatrixN, 0};
  tags[kk] = InameTag{InameTag::MatrixK, 0};
  return r;
}

void register_tensor_core_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"tensor_core",
           "Run a product's 16x8x16 tile on the tensor cores (mma.sync, float16/bfloat16 operands, float32 accumulation): tags its "
           "m, n and k inames mma.m, mma.n, mma.k; the warp becomes one logical thread and its 32 lanes share the tile.",
           {P{"m", P::String, true, "the tile's row iname (extent 16)"}.of(P::Type::Iname),
            P{"n", P::String, true, "the tile's column iname (extent 8)"}.of(P::Type::Iname),
            P{"k", P::String, true, "the sum's iname of the tile (extent 16)"}.of(P::Type::Iname),
            P{"shape", P::String, false, "the instruction's shape"}.one_of({"m16n8k16"}).otherwise("m16n8k16")},
           [](const LoopKernel& k, const TransformArgs& a) { return tensor_core(k, a.str("m"), a.str("n"), a.str("k"), a.str("shape")); }});
}

}  // namespace loom
