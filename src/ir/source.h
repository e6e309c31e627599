// Source text with a line table, and the tokenizer shared by the kernel
// language parsers. Tokens keep their byte offset so any error can name its
// line and column in the original file.
#pragma once
#include <string>
#include <vector>

#include "loom/error.h"

namespace loom::frontend {

class Source {
 public:
  Source(std::string text, std::string name);
  const std::string& text() const { return text_; }
  const std::string& name() const { return name_; }
  SourceLoc loc(size_t offset) const;
  std::string line_text(int line) const;
  // ParseError with the offending line and a caret under the column.
  [[noreturn]] void fail(size_t offset, const std::string& msg) const;

 private:
  std::string text_, name_;
  std::vector<size_t> line_starts_;
};

enum class Tok { Ident, Int, Float, Punct, End };

struct Token {
  Tok kind;
  std::string text;
  size_t offset;
};

// Tokenizes text[begin, end). Punctuation is greedy: "//", "**", "<=", ":=", "<>".
std::vector<Token> tokenize(const Source& src, size_t begin, size_t end);

}  // namespace loom::frontend
