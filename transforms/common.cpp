// Helpers shared by the transformation files (common.h).
#include "common.h"

#include "loom/error.h"

namespace loom::transforms {

void refuse(const LoopKernel& k, const std::string& what, const std::string& why) {
  throw TransformError(what + " on kernel '" + k.name + "': " + why);
}

std::string unique_name(const LoopKernel& k, const std::string& base) {
  std::string n = base;
  for (int i = 0; k.has_iname(n) || k.find_argument(n) || k.find_temporary(n) || k.substitutions.count(n); ++i) {
    // bounded: a name that always looks taken (a character isl cuts it at) must not loop forever
    if (i == 10000) refuse(k, "a fresh name", "no free name of the form '" + base + "_N'");
    n = base + "_" + std::to_string(i);
  }
  return n;
}

std::string unique_instruction_id(const LoopKernel& k, const std::string& base) {
  auto taken = [&](const std::string& id) {
    for (auto& insn : k.instructions)
      if (insn.id == id) return true;
    return false;
  };
  std::string n = base;
  for (int i = 0; taken(n); ++i) n = base + "_" + std::to_string(i);
  return n;
}

std::vector<std::string> name_list(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : spec + ",") {
    if (c == ',' || c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

}  // namespace loom::transforms
