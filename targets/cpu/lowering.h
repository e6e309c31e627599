// Internal to the cpu target: Loom's AST to an LLVM module (lowering.cpp).
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

#include "loom/codegen.h"

namespace loom::cpu {

// The module defines `name` as void(void** args, int64 first_block, int64 end_block).
std::unique_ptr<llvm::Module> lower_to_llvm(const GeneratedKernel& g, llvm::LLVMContext& ctx, const std::string& name);

}  // namespace loom::cpu
