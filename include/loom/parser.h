// The kernel language front end: kernel text (loopy's syntax for domains,
// instructions, arguments and substitution rules) to a LoopKernel, and the
// line format of transformation scripts. Every error is a ParseError naming
// file, line and column and what was expected.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loom/expr_text.h"
#include "loom/kernel.h"
#include "loom/script.h"

namespace loom {

// What a kernel file holds: the kernel as written, the transformations its
// `transforms:` section lists (not yet applied), and parameter values for
// `loom run` (`defaults:` section).
struct KernelFile {
  LoopKernel kernel;
  std::vector<TransformStep> transforms;
  std::map<std::string, int64_t> defaults;
};

KernelFile parse_kernel_file(const std::string& path);
KernelFile parse_kernel_text(const std::string& text, const std::string& filename = "<kernel>");

// loopy's make_kernel: domains in isl syntax, instruction lines, argument
// declarations ("a: float32[n, m]", "n: int32", "..." to infer the rest).
LoopKernel make_kernel(const std::vector<std::string>& domains, const std::string& instructions,
                       const std::vector<std::string>& arguments = {"..."}, const std::string& name = "loom_kernel");

std::vector<TransformStep> parse_transform_script(const std::string& text, const std::string& filename = "<transforms>");
std::string read_text_file(const std::string& path);

}  // namespace loom
