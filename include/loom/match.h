// Instruction match expressions, as in loopy: `id:x*`, `tag:hot`,
// `writes:a`, `reads:b`, `iname:i` (runs within i), a bare glob (an id),
// `*` (everything), combined with `and`, `or`, `not` and parentheses.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "loom/kernel.h"

namespace loom {

class InstructionMatch {
 public:
  // Throws Error naming the column on a malformed expression.
  static InstructionMatch parse(const std::string& text);
  bool operator()(const Instruction& insn) const;
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// Ids of the instructions of k that match, in kernel order.
std::vector<std::string> find_instructions(const LoopKernel& k, const std::string& match);

}  // namespace loom
