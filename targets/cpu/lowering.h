// Internal to the cpu target: Loom's AST to an LLVM module (lowering.cpp).
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

#include "loom/codegen.h"

namespace loom::cpu {

// Accesses through subscripts check_bounds could not prove (i*i, idx[i]) are
// checked at run time: args[number of arguments] points at an int64 record
// (BoundsRecord) whose extents the caller fills with each array argument's
// storage elements; a failing access writes its id and index there, and is
// redirected to scratch memory, so memory outside an array is never touched.
struct BoundsRecord {
  enum : int { kFailed = 0, kAccess = 1, kIndex = 2, kExtents = 4 };  // extents[i] for argument i
};

// The module defines `name` as void(void** args, int64 first_block, int64 end_block).
std::unique_ptr<llvm::Module> lower_to_llvm(const GeneratedKernel& g, llvm::LLVMContext& ctx, const std::string& name,
                                            std::vector<CheckedAccess>* checked = nullptr);

}  // namespace loom::cpu
