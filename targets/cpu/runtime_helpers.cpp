// The runtime helpers that LLVM's x86-64 backend may call instead of
// emitting an instruction, defined by Loom so that JIT-compiled kernels run
// on any x86-64 host. Which helpers a kernel needs depends on the target CPU:
// without F16C, float16 conversions become __extendhfsf2/__truncsfhf2; without
// AVX512-BF16, float->bfloat16 becomes __truncsfbf2, which Debian 12's libgcc
// does not have. Resolving them from the process would make the result depend
// on the host's libgcc, so every one is defined here (bit-exact with the
// interpreter's conversions in src/ir/half.cpp) and put into the JIT's main
// library ahead of the process's symbols.
//
// Helpers whose ABI passes half/bfloat values in vector registers are small
// LLVM IR wrappers compiled by the same backend (so caller and callee agree on
// the ABI whatever the CPU), around C++ functions that take and return bits.
#include "runtime_helpers.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>

#include "loom/error.h"
#include "loom/half.h"

namespace loom::cpu {

namespace {

// ---- bit-level conversions with an integer ABI ----
extern "C" uint16_t loom_rt_f32_to_f16_bits(float f) { return float_to_half_bits(f); }
extern "C" float loom_rt_f16_bits_to_f32(uint16_t h) { return half_bits_to_float(h); }
extern "C" uint16_t loom_rt_f32_to_bf16_bits(float f) { return float_to_bfloat16_bits(f); }
// float64 -> 16-bit through float32, as the interpreter and the lowering's casts do
extern "C" uint16_t loom_rt_f64_to_f16_bits(double d) { return float_to_half_bits(float(d)); }
extern "C" uint16_t loom_rt_f64_to_bf16_bits(double d) { return float_to_bfloat16_bits(float(d)); }

// ---- 128-bit integer arithmetic (compiled by g++ from libgcc.a into Loom itself) ----
extern "C" __int128 loom_rt_divti3(__int128 a, __int128 b) { return a / b; }
extern "C" __int128 loom_rt_modti3(__int128 a, __int128 b) { return a % b; }
extern "C" unsigned __int128 loom_rt_udivti3(unsigned __int128 a, unsigned __int128 b) { return a / b; }
extern "C" unsigned __int128 loom_rt_umodti3(unsigned __int128 a, unsigned __int128 b) { return a % b; }
extern "C" __int128 loom_rt_multi3(__int128 a, __int128 b) {
  return __int128((unsigned __int128)a * (unsigned __int128)b);  // wraps, as LLVM's mul does
}

struct Direct {
  const char* name;
  void* address;
};

// Helpers whose standard ABI is plain integers and floats: the C++ function itself.
const Direct kDirect[] = {
    {"__gnu_f2h_ieee", (void*)&loom_rt_f32_to_f16_bits},  // older names of the f16 conversions (i16 ABI)
    {"__gnu_h2f_ieee", (void*)&loom_rt_f16_bits_to_f32},
    {"__divti3", (void*)&loom_rt_divti3},
    {"__modti3", (void*)&loom_rt_modti3},
    {"__udivti3", (void*)&loom_rt_udivti3},
    {"__umodti3", (void*)&loom_rt_umodti3},
    {"__multi3", (void*)&loom_rt_multi3},
};

// Bit functions the IR wrappers call.
const Direct kBits[] = {
    {"loom_rt_f32_to_f16_bits", (void*)&loom_rt_f32_to_f16_bits},
    {"loom_rt_f16_bits_to_f32", (void*)&loom_rt_f16_bits_to_f32},
    {"loom_rt_f32_to_bf16_bits", (void*)&loom_rt_f32_to_bf16_bits},
    {"loom_rt_f64_to_f16_bits", (void*)&loom_rt_f64_to_f16_bits},
    {"loom_rt_f64_to_bf16_bits", (void*)&loom_rt_f64_to_bf16_bits},
};

enum class T { Half, BFloat, Float, Double };

struct Wrapper {
  const char* name;  // the libcall
  T arg, ret;
  const char* bits;  // the bit function it forwards to
};

const Wrapper kWrappers[] = {
    {"__extendhfsf2", T::Half, T::Float, "loom_rt_f16_bits_to_f32"},
    {"__truncsfhf2", T::Float, T::Half, "loom_rt_f32_to_f16_bits"},
    {"__truncdfhf2", T::Double, T::Half, "loom_rt_f64_to_f16_bits"},
    {"__truncsfbf2", T::Float, T::BFloat, "loom_rt_f32_to_bf16_bits"},
    {"__truncdfbf2", T::Double, T::BFloat, "loom_rt_f64_to_bf16_bits"},
};

llvm::Type* llvm_type(llvm::IRBuilder<>& b, T t) {
  switch (t) {
    case T::Half: return b.getHalfTy();
    case T::BFloat: return b.getBFloatTy();
    case T::Float: return b.getFloatTy();
    case T::Double: return b.getDoubleTy();
  }
  return nullptr;
}

bool is_16bit(T t) { return t == T::Half || t == T::BFloat; }

}  // namespace

std::vector<std::string> runtime_helper_names() {
  std::vector<std::string> r;
  for (auto& d : kDirect) r.push_back(d.name);
  for (auto& w : kWrappers) r.push_back(w.name);
  return r;
}

std::unique_ptr<llvm::Module> runtime_helper_module(llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>("loom_runtime_helpers", ctx);
  llvm::IRBuilder<> b(ctx);
  for (auto& w : kWrappers) {
    // wrapper(x) = bits_fn(x as bits) as the result type; the bit function's own
    // argument and result are integers or floats, whose ABI no CPU feature changes
    llvm::Type* at = llvm_type(b, w.arg);
    llvm::Type* rt = llvm_type(b, w.ret);
    llvm::Type* bits_at = is_16bit(w.arg) ? b.getInt16Ty() : at;
    llvm::Type* bits_rt = is_16bit(w.ret) ? b.getInt16Ty() : rt;
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(rt, {at}, false), llvm::Function::ExternalLinkage, w.name, m.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::Value* x = fn->getArg(0);
    if (is_16bit(w.arg)) x = b.CreateBitCast(x, bits_at);
    auto callee = m->getOrInsertFunction(w.bits, llvm::FunctionType::get(bits_rt, {bits_at}, false));
    llvm::Value* r = b.CreateCall(callee, {x});
    if (is_16bit(w.ret)) r = b.CreateBitCast(r, rt);
    b.CreateRet(r);
  }
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*m, &os)) throw Error("cpu target: invalid runtime helper module: " + os.str());
  return m;
}

llvm::Error define_runtime_symbols(llvm::orc::JITDylib& lib, llvm::orc::MangleAndInterner& mangle) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const Direct& d) {
    symbols[mangle(d.name)] = {llvm::orc::ExecutorAddr::fromPtr(d.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  for (auto& d : kDirect) add(d);
  for (auto& d : kBits) add(d);
  return lib.define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

}  // namespace loom::cpu
