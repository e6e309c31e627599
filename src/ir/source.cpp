// Source line tables and the tokenizer.
#include "source.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace loom::frontend {

Source::Source(std::string text, std::string name) : text_(std::move(text)), name_(std::move(name)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  // Control characters (a NUL inside a name would be cut short by isl and
  // C strings downstream) are refused where they are, before anything reads them.
  for (size_t i = 0; i < text_.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text_[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      fail(i, std::string("control character ") + hex + " in the input");
    }
  }
}

SourceLoc Source::loc(size_t offset) const {
  size_t lo = 0, hi = line_starts_.size();
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (line_starts_[mid] <= offset) lo = mid;
    else hi = mid;
  }
  return SourceLoc{name_, int(lo) + 1, int(offset - line_starts_[lo]) + 1};
}

std::string Source::line_text(int line) const {
  if (line < 1 || size_t(line) > line_starts_.size()) return "";
  size_t b = line_starts_[line - 1];
  size_t e = text_.find('\n', b);
  return text_.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

void Source::fail(size_t offset, const std::string& msg) const {
  SourceLoc l = loc(offset);
  // a long line is shown as a window around the column (the message stays readable)
  constexpr size_t kBefore = 60, kAfter = 40;
  std::string text = line_text(l.line);
  size_t col = l.column > 0 ? size_t(l.column - 1) : 0;
  size_t from = col > kBefore ? col - kBefore : 0;
  std::string shown = text.substr(std::min(from, text.size()), kBefore + kAfter);
  std::string pre = from > 0 ? "..." : "";
  std::string post = from + shown.size() < text.size() ? "..." : "";
  std::string caret(pre.size() + col - from, ' ');
  throw ParseError(l, msg + "\n    " + pre + shown + post + "\n    " + caret + "^");
}

std::vector<Token> tokenize(const Source& src, size_t begin, size_t end) {
  static const char* kPunct3[] = {"..."};
  static const char* kPunct2[] = {"//", "**", "<=", ">=", "==", "!=", ":=", "<>", "<<", ">>"};
  const std::string& s = src.text();
  std::vector<Token> out;
  size_t i = begin;
  while (i < end) {
    char c = s[i];
    if (c == '#') {  // comment to end of line
      while (i < end && s[i] != '\n') ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) || (c == '\\' && i + 1 < end && s[i + 1] == '\n')) {
      ++i;
      continue;
    }
    size_t start = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < end && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      out.push_back({Tok::Ident, s.substr(start, i - start), start});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < end && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      bool is_float = false;
      while (i < end && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (i < end && s[i] == '.' && !(i + 1 < end && s[i + 1] == '.')) {
        is_float = true;
        ++i;
        while (i < end && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      }
      if (i < end && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < end && (s[j] == '+' || s[j] == '-')) ++j;
        if (j < end && std::isdigit(static_cast<unsigned char>(s[j]))) {
          is_float = true;
          i = j;
          while (i < end && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        }
      }
      if (i < end && (s[i] == 'f' || s[i] == 'F') && is_float) ++i;  // 1.5f: float32 literal
      if (i < end && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_'))
        src.fail(i, "unexpected character '" + std::string(1, s[i]) + "' in number");
      out.push_back({is_float ? Tok::Float : Tok::Int, s.substr(start, i - start), start});
      continue;
    }
    bool matched = false;
    for (const char* p : kPunct3) {
      size_t n = std::strlen(p);
      if (i + n <= end && s.compare(i, n, p) == 0) {
        out.push_back({Tok::Punct, p, start});
        i += n;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    for (const char* p : kPunct2) {
      if (i + 2 <= end && s.compare(i, 2, p) == 0) {
        out.push_back({Tok::Punct, p, start});
        i += 2;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::strchr("+-*/%<>=()[],:{}&|^~!.;", c)) {
      out.push_back({Tok::Punct, std::string(1, c), start});
      ++i;
      continue;
    }
    src.fail(i, "unexpected character '" + std::string(1, c) + "'");
  }
  out.push_back({Tok::End, "", end});
  return out;
}

}  // namespace loom::frontend
