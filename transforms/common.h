// Internal to transforms/: what every transformation file needs: the one way
// to refuse (TransformError naming the transformation, the kernel and the
// reason), fresh names, and comma-separated name lists.
#pragma once
#include <string>
#include <vector>

#include "loom/kernel.h"

namespace loom::transforms {

[[noreturn]] void refuse(const LoopKernel& k, const std::string& what, const std::string& why);

// base, or base_0, base_1, ...: a name no iname, argument or temporary of k has.
std::string unique_name(const LoopKernel& k, const std::string& base);

// base, or base_0, base_1, ...: an id no instruction of k has.
std::string unique_instruction_id(const LoopKernel& k, const std::string& base);

// "i, j k" -> {"i", "j", "k"}
std::vector<std::string> name_list(const std::string& spec);

}  // namespace loom::transforms
