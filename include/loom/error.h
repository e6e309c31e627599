// Errors Loom raises at its boundaries. Each names what failed and why, so a
// caller (C++, Python, CLI) can show it as it is. Source locations are 1-based.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace loom {

struct SourceLoc {
  std::string file;  // "<instructions>" etc. when not from a file
  int line = 0;      // 0: unknown
  int column = 0;
  std::string str() const;  // "file:line:col"
};

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad kernel text: names line and column, says what was expected.
struct ParseError : Error {
  SourceLoc loc;
  ParseError(SourceLoc l, const std::string& msg);
};

// A transformation refused its input (names the kernel, the iname or array, the reason).
// A JSON document Loom cannot read: path is the JSON pointer of the value at
// fault ("/kernel/instructions/3/expression"); what() names file and path.
struct JsonError : Error {
  std::string path;
  JsonError(const std::string& file, std::string p, const std::string& msg)
      : Error(file + ": " + (p.empty() ? std::string("/") : p) + ": " + msg), path(std::move(p)) {}
};

struct TransformError : Error {
  using Error::Error;
};

// The kernel is ill-formed or cannot be compiled as written (type errors,
// unknown names, unsupported constructs), found during preprocessing/codegen.
struct KernelError : Error {
  using Error::Error;
};

// NVRTC, the CUDA driver, or a missing GPU.
struct CudaError : Error {
  using Error::Error;
};

// Wrong arguments at call time (missing array, dtype or shape mismatch).
struct ArgumentError : Error {
  using Error::Error;
};

// "; did you mean 'split_iname'?" when one of `known` is within two edits of
// `name` (the closest), else "" (for error messages about unknown names).
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known);

}  // namespace loom
