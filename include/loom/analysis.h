// Analyses of a kernel that the front ends, the transformations, the
// preprocess passes and the scheduler all ask, so none of them reaches into
// another's stage: substitution-rule expansion, type inference, and the
// exact (isl) questions about which instances of two accesses touch one
// element on different blocks or threads (src/analysis/).
#pragma once
#include <isl/cpp.h>

#include <set>
#include <string>
#include <vector>

#include "loom/kernel.h"

namespace loom {

LoopKernel expand_substitutions(const LoopKernel& k);
// e with every substitution-rule call of k replaced by the rule's body.
Expr expand_rule_calls(const LoopKernel& k, const Expr& e);
LoopKernel infer_types(const LoopKernel& k);

// Whether instances of a (access sa) and b (access sb) that touch one element
// of a global array run on different blocks, or on different threads of one
// block (exact, isl); unknown: an index isl cannot analyse (both true then).
struct GlobalConflict {
  bool across_blocks = false, across_threads = false, unknown = false;
  std::string witness;  // parameters and both iterations, for messages
};
GlobalConflict global_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb);

// Within one block (local memory, or a global array the kernel writes): the
// instances of a (through sa) and b (through sb) that touch one element on
// different threads, or on any threads when same_thread_too (an async copy's
// own thread must wait for it too), sorted by the iterations of the loops
// enclosing both (`common`, outermost first): in the same iteration, with
// a's instance in an earlier one, or with b's in an earlier one. An index isl
// cannot analyse gives all three.
struct BlockConflict {
  bool same_iteration = false, a_earlier = false, b_earlier = false;
};
BlockConflict block_conflict(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb,
                             const std::vector<std::string>& common, bool same_thread_too);

// The pairs of instances, a's with its inames prefixed "src:" and b's with
// "dst:", that touch one element through sa and sb (the kernel's assumptions
// applied); a null set when an index is not affine.
isl::set element_pairs(const LoopKernel& k, const Instruction& a, const Subscript& sa, const Instruction& b, const Subscript& sb);
// Whether index expressions a and b are the same affine function of x and of
// inames in `fixed` (or parameters): then one value means one iteration of x,
// for instances that agree on `fixed` (acc[4 * i + x]); decided without isl.
bool index_tells_iterations_apart(const LoopKernel& k, const Expr& a, const Expr& b, const std::string& x,
                                  const std::set<std::string>& fixed);
// Whether two iterations of loop x of instruction w, in one instance of the
// loops `outer` around x, on one block (and one thread where w writes a
// private value), write one element: "" when every iteration writes elements
// of its own, "scalar" when no index of w's left-hand side mentions x (every
// iteration rewrites the same elements), else a witness or the reason isl
// could not tell. A double-buffered slot (x + 1) % 2 repeats every other
// iteration: overwritten.
std::string overwritten_across_iterations(const LoopKernel& k, const Instruction& w, const std::string& x,
                                          const std::set<std::string>& outer);
// A point of such a set with the two instances' inames told apart:
// "i (first) = 3, i (second) = 5".
std::string pair_witness(const isl::set& pairs);

// The inames an instruction runs within, in domain order.
std::vector<std::string> inames_in_order(const LoopKernel& k, const Instruction& insn);

// The names whose value may differ between the lanes of one row of a
// block's x axis (a warp reduction's group): the x-axis thread inames, the
// inames whose bounds depend on one, and the private temporaries computed
// from one (src/analysis/lane_uniformity.cpp).
std::set<std::string> lane_varying_names(const LoopKernel& k);

}  // namespace loom

namespace loom {

// The two operands of a warp matrix instruction's product (tensor_core,
// codegen/warp_matrices.cpp): the summand `float32(x) * float32(y)` of a
// sum over the k iname, with x over (m, k) and y over (k, n), both float16
// or both bfloat16, the product in float32 (the instruction multiplies
// exactly and accumulates in float32). a is the factor that mentions m, b the
// one that mentions n, each without its cast; `why` says what else was found.
// TF32 (m16n8k8, m64nNk8): both factors round_tf32(x), or both trunc_tf32(x)
// (the warpgroup's own rounding), with x float32 (tensor_core tf32=true
// writes them so); a and b are then the calls.
struct MatrixProduct {
  Expr a, b;
  Type input;  // float16, bfloat16, float32 for TF32, or float64 (m8n8k4: float64 accumulation)
  bool tf32 = false;
  bool tf32_truncated = false;  // TF32 by trunc_tf32 (toward zero, wgmma's), not round_tf32
};
std::optional<MatrixProduct> matrix_product(const Expr& summand, const std::string& m, const std::string& n, std::string& why);
// The terms of a sum written with `+` (the leaves of its tree of additions,
// in order): e itself where it adds nothing.
std::vector<Expr> summed_terms(const Expr& e);
// The operand of an assignment's right-hand side that reads its left-hand
// side at the top of an accumulation (x = x + f, f + x, x - f, x * f,
// f * x), or null: what accumulation_to_reduction sums over a loop and the
// reorder check folds into one instance per sum.
const Expr* accumulated_operand(const Instruction& insn);

// A summand that adds such products (syr2k's A[j, k] * B[i, k] + B[j, k] *
// A[i, k]): each, all of one input type; one instruction each, into the
// same accumulator (the sum of the products' sums, reassociated).
std::optional<std::vector<MatrixProduct>> matrix_products(const Expr& summand, const std::string& m, const std::string& n, std::string& why);

}  // namespace loom
