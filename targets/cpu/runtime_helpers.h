// Internal to the cpu target: the runtime helpers (libcalls) that LLVM may
// emit for a kernel, defined by Loom so the JIT never depends on the host's
// libgcc (runtime_helpers.cpp says which and why).
#pragma once
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/Mangling.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace loom::cpu {

// IR definitions of the helpers whose ABI passes half/bfloat values.
std::unique_ptr<llvm::Module> runtime_helper_module(llvm::LLVMContext& ctx);

// The C++-defined helpers and the bit functions the IR helpers call, as absolute symbols.
llvm::Error define_runtime_symbols(llvm::orc::JITDylib& lib, llvm::orc::MangleAndInterner& mangle);

// Every libcall name Loom defines (for tests and `loom show --target cpu`).
std::vector<std::string> runtime_helper_names();

}  // namespace loom::cpu
