// Atomic updates ({atomic}, loopy's AtomicUpdate): the form they must have
// and the value they add. An atomic instruction is x[I] = x[I] + e (or
// e + x[I]) on a global array argument of a type the targets update
// atomically (float32, float64, int32, uint32, int64, uint64); each target
// emits one atomic add of e (CUDA atomicAdd, LLVM atomicrmw), the reference
// interpreter a plain update (it runs threads one after another).
#include <algorithm>

#include "loom/preprocess.h"

namespace loom {

const Instruction* atomic_instruction(const LoopKernel& k, const std::string& id) {
  // (asked for every statement: kernels without atomics answer without comparing ids)
  if (std::none_of(k.instructions.begin(), k.instructions.end(), [](const Instruction& i) { return i.atomic; })) return nullptr;
  for (auto& i : k.instructions)
    if (i.id == id && i.atomic) return &i;
  return nullptr;
}

Expr atomic_increment(const Instruction& insn) {
  auto b = insn.rhs.as<Binary>();
  if (!insn.atomic || !b || b->op != BinOp::Add) return Expr();
  if (b->a.same_as(insn.lhs)) return b->b;
  if (b->b.same_as(insn.lhs)) return b->a;
  return Expr();
}

void check_atomic_updates(const LoopKernel& k) {
  for (auto& insn : k.instructions) {
    if (!insn.atomic) continue;
    std::string pre = "kernel '" + k.name + "': atomic instruction '" + insn.id + "' ";
    auto s = insn.lhs.as<Subscript>();
    const Argument* a = s ? k.find_argument(s->name) : nullptr;
    if (!a || a->kind != Argument::Array)
      throw KernelError(pre + "must update an element of a global array argument (x[i] = x[i] + value), not '" + insn.lhs.str() + "'");
    if (!atomic_increment(insn).defined())
      throw KernelError(pre + "must have the form " + s->name + "[...] = " + s->name + "[...] + value (an atomic add), not '" +
                        insn.lhs.str() + " = " + insn.rhs.str() + "'");
    Type t = a->dtype;
    bool supported = t.lanes == 1 && (t.kind == ScalarKind::Float32 || t.kind == ScalarKind::Float64 || t.kind == ScalarKind::Int32 ||
                                      t.kind == ScalarKind::UInt32 || t.kind == ScalarKind::Int64 || t.kind == ScalarKind::UInt64);
    if (!supported)
      throw KernelError(pre + "updates '" + s->name + "' of type " + t.name() +
                        ": atomic adds take float32, float64, int32, uint32, int64 or uint64");
  }
}

}  // namespace loom
