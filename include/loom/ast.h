// Loom's codegen AST: the loop nest every target prints or lowers. Small and
// target-neutral: blocks, for loops, ifs, assignments and barriers, with
// Exprs for bounds, conditions and values (all typed).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loom/expr.h"
#include "loom/kernel.h"

namespace loom {

struct Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;

// One warp-level matrix multiply-accumulate (tensor_core, lowered by
// codegen/warp_matrices.cpp for CUDA): every lane's four accumulator
// elements (`accumulator` with the element number `element` free, 0..3)
// plus, over the tile's k, A(m, k) * B(k, n), where `a` and `b` are the
// operands in the tile's loop variables (16-bit values) and `a_valid` /
// `b_valid` (null: always) where an operand element exists; elsewhere it is 0.
// Where a wgmma operand's tile lies in shared memory: its first element
// (rows 0, k 0) and the byte distances of its K-major core matrices.
struct SharedDescriptor {
  Expr start;  // the operand at its tile's first element
  int64_t lbo = 0, sbo = 0;  // along k, along the rows
  int swizzle = 0;           // 128: the 128-byte swizzle mode (a swizzle_array temporary)
  bool mn_major = false;     // the operand's rows contiguous (the instruction's transpose bit), else its k
};

struct WarpMatrix {
  std::string instruction;  // "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  int m = 16, n = 8, k = 16;  // (k = 8: TF32, a and b round_tf32 calls)
  Type input;
  bool tf32 = false;
  // wgmma (m = 64): a warpgroup's 128 lanes, operands read from shared
  // memory through descriptors, asynchronously (the printer fences and waits)
  bool warpgroup = false;
  SharedDescriptor a_desc, b_desc;
  std::string m_var, n_var, k_var, lane, element;
  Expr a, b, a_valid, b_valid, accumulator;
  std::vector<Expr> uniform;  // guards of the whole warp (printed around the instruction)
};

struct Stmt {
  enum Kind { Block, For, If, Assign, Barrier };
  Kind kind = Block;
  std::vector<StmtPtr> children;  // Block: statements; For: {body}; If: {then} or {then, else}
  std::string var;                // For: the loop variable (an iname)
  Expr init, cond;                // For: first value and continuation test; If: condition
  int64_t step = 1;               // For
  // For over a `vec` iname: the lanes (a constant trip count, no guards
  // inside) and, once codegen/vectorize.cpp has proven them contiguous and
  // aligned, the accesses of the body's assignments that move as one
  // vector (subscripts as they appear in the body, the loop variable free).
  // A target without vector types runs the loop as it is.
  int64_t vector_lanes = 0;
  std::vector<Expr> vector_accesses;
  Expr lhs, rhs;                  // Assign
  std::string insn_id;            // Assign: the instruction it came from; If: the one whose predicates it tests
  // Assign: how it runs. A target handles each in one place: a computation
  // (lhs = rhs), an asynchronous copy global -> local (cp.async where the
  // target has it; a plain copy elsewhere), or a warp reduction (rhs a
  // warp_reduce call; every lane of the group takes part).
  enum class Op : uint8_t { Compute, AsyncCopy, WarpReduce };
  Op op = Op::Compute;
  // Block: a warp matrix instruction that a target with tensor cores runs
  // instead of the children (the same computation lane by lane, which other
  // targets run and analyses read).
  std::shared_ptr<const WarpMatrix> matrix;
};

StmtPtr make_block(std::vector<StmtPtr> stmts);
StmtPtr make_for(std::string var, Expr init, Expr cond, int64_t step, StmtPtr body);
StmtPtr make_if(Expr cond, StmtPtr then_branch, StmtPtr else_branch = nullptr);
// An instruction's predicates around its statement (insn_id: the instruction).
StmtPtr make_predicated(Expr cond, StmtPtr then_branch, std::string insn_id);
StmtPtr make_assign(std::string insn_id, Expr lhs, Expr rhs, Stmt::Op op = Stmt::Op::Compute);
// The op of an instruction's assignment: its async_copy, a warp reduction, or a computation.
Stmt::Op assignment_op(const Instruction& insn);
StmtPtr make_barrier();

// s with each child replaced by f(child); s itself when no child changed
// (passes that rewrite a few nodes share the rest of the tree).
StmtPtr map_children(const StmtPtr& s, const std::function<StmtPtr(const StmtPtr&)>& f);

// s with variables replaced by expressions (simplified): an unrolled copy.
StmtPtr substitute_stmt(const StmtPtr& s, const std::map<std::string, Expr>& values);

std::string to_string(const StmtPtr& s, int indent = 0);  // pseudo-code for debugging and tests

// An assignment whose value is a warp reduction (a WarpReduce node; the CUDA
// target prints loom_warp_<op>(v, width, mask), butterfly shuffles).
bool is_collective(const Stmt& s);
// In a vec loop whose vector accesses hold v[...] of a guarded copy
// (guarded_copy, loom/expr.h), the lanes agree on its condition
// (codegen/vectorize.cpp checks it), so the targets load the vector under the
// first lane's condition.
const Select* guarded_vector_load(const Stmt& vector_loop, const Expr& rhs);
// Whether s holds a barrier or a collective: all threads of a block (or
// warp) must reach it together.
bool has_sync(const StmtPtr& s);
// Whether s holds a barrier (collectives aside).
bool has_barrier(const StmtPtr& s);

}  // namespace loom
