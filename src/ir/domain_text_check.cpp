// check_domain_text: what isl's parser cannot survive, found before isl sees
// the text. A division or modulo by a constant zero (`1//0`, `n mod (2-2)`,
// `floord(i, 0)`) makes GMP raise SIGFPE inside isl, and deep nesting would
// recurse in isl's parser without bound; both are refused here with the
// line and column. The operand of a division is evaluated as a linear form
// over the identifiers (so `(n - n)` is zero too); what is not linear is left
// to isl, which rejects non-constant divisors itself.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/domain.h"

namespace loom {

namespace {

constexpr int kMaxDomainNesting = 64;

struct Tok {
  enum Kind { Num, Ident, Punct, End } kind;
  std::string text;
  size_t offset;
};

std::vector<Tok> tokenize_domain(const std::string& s) {
  std::vector<Tok> r;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (std::isdigit(c)) {
      size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      r.push_back({Tok::Num, s.substr(i, j - i), i});
      i = j;
    } else if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '\'')) ++j;
      r.push_back({Tok::Ident, s.substr(i, j - i), i});
      i = j;
    } else if (s.compare(i, 2, "//") == 0) {
      r.push_back({Tok::Punct, "//", i});
      i += 2;
    } else {
      r.push_back({Tok::Punct, std::string(1, char(c)), i});
      ++i;
    }
  }
  r.push_back({Tok::End, "", s.size()});
  return r;
}

// c + sum(coeff[x] * x), or nothing where the value is not linear.
struct Linear {
  long double c = 0;
  std::map<std::string, long double> coeff;
  bool is_zero() const {
    if (c != 0) return false;
    for (auto& [n, v] : coeff)
      if (v != 0) return false;
    return true;
  }
  bool is_constant() const {
    for (auto& [n, v] : coeff)
      if (v != 0) return false;
    return true;
  }
};
using Value = std::optional<Linear>;

class Checker {
 public:
  explicit Checker(const std::string& text) : text_(text), toks_(tokenize_domain(text)) {}

  void run() {
    check_nesting();
    // a constant beyond 64 bits: isl computes with it exactly, but every
    // bound, shape and index Loom derives from it would be cut to 64 bits
    for (auto& t : toks_)
      if (t.kind == Tok::Num && (t.text.size() > 19 || (t.text.size() == 19 && t.text > "4611686018427387904")))
        fail(t.offset, "the constant " + t.text + " is beyond Loom's index range (at most 2^62 = 4611686018427387904)");
    // every operator whose right operand is a divisor
    for (size_t i = 0; i + 1 < toks_.size(); ++i) {
      const Tok& t = toks_[i];
      bool div = (t.kind == Tok::Punct && (t.text == "/" || t.text == "//" || t.text == "%")) || (t.kind == Tok::Ident && t.text == "mod");
      if (div) {
        pos_ = i + 1;
        Value v = factor();
        if (v && v->is_zero()) fail(t.offset, "division by zero ('" + t.text + "' by a value that is always 0)");
      }
      if (t.kind == Tok::Ident && (t.text == "floord" || t.text == "ceild") && toks_[i + 1].text == "(") {
        // the divisor is the second argument: skip the first at depth 0
        size_t j = i + 2;
        int depth = 0;
        for (; toks_[j].kind != Tok::End; ++j) {
          if (toks_[j].text == "(") ++depth;
          if (toks_[j].text == ")") {
            if (depth == 0) break;
            --depth;
          }
          if (toks_[j].text == "," && depth == 0) break;
        }
        if (toks_[j].text != ",") continue;
        pos_ = j + 1;
        Value v = expr();
        if (v && v->is_zero()) fail(t.offset, "division by zero (" + t.text + " by a value that is always 0)");
      }
    }
  }

 private:
  [[noreturn]] void fail(size_t offset, const std::string& msg) const {
    int line = 1, col = 1;
    for (size_t k = 0; k < offset && k < text_.size(); ++k) {
      if (text_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw DomainSyntaxError(msg, line, col);
  }

  void check_nesting() const {
    int depth = 0;
    for (auto& t : toks_) {
      if (t.kind != Tok::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        if (++depth > kMaxDomainNesting)
          fail(t.offset, "domain nested more than " + std::to_string(kMaxDomainNesting) + " levels deep");
      } else if (t.text == ")" || t.text == "]" || t.text == "}") {
        --depth;
      }
    }
  }

  const Tok& peek() const { return toks_[pos_]; }
  bool accept(const char* p) {
    if (peek().kind == Tok::Punct && peek().text == p) {
      ++pos_;
      return true;
    }
    return false;
  }

  // expr := term (('+' | '-') term)*
  Value expr() {
    Value v = term();
    for (;;) {
      bool plus = accept("+");
      if (!plus && !accept("-")) return v;
      Value w = term();
      if (!v || !w) {
        v.reset();
        continue;
      }
      long double s = plus ? 1 : -1;
      v->c += s * w->c;
      for (auto& [n, x] : w->coeff) v->coeff[n] += s * x;
    }
  }

  // term := factor (('*' | '/' | '//' | '%' | 'mod') factor)*
  Value term() {
    Value v = factor();
    for (;;) {
      const Tok& t = peek();
      bool mul = t.kind == Tok::Punct && t.text == "*";
      bool div = (t.kind == Tok::Punct && (t.text == "/" || t.text == "//" || t.text == "%")) || (t.kind == Tok::Ident && t.text == "mod");
      if (!mul && !div) return v;
      std::string op = t.text;
      ++pos_;
      Value w = factor();
      if (!v || !w) {
        v.reset();
      } else if (mul && (v->is_constant() || w->is_constant())) {
        if (!v->is_constant()) std::swap(v, w);  // v constant
        Linear r = *w;
        r.c *= v->c;
        for (auto& [n, x] : r.coeff) x *= v->c;
        v = r;
      } else if (div && v->is_constant() && w->is_constant() && w->c != 0) {
        long double a = v->c, b = w->c;
        long double q = op == "/" ? a / b : floorl(a / b);
        v = Linear{op == "%" || op == "mod" ? a - b * floorl(a / b) : q, {}};
      } else {
        v.reset();  // not linear, or a division by zero that run() reports at its own operator
      }
    }
  }

  // factor := ('-' | '+') factor | number | identifier | '(' expr ')'
  Value factor() {
    if (accept("-")) {
      Value v = factor();
      if (v) {
        v->c = -v->c;
        for (auto& [n, x] : v->coeff) x = -x;
      }
      return v;
    }
    if (accept("+")) return factor();
    const Tok& t = peek();
    if (t.kind == Tok::Num) {
      ++pos_;
      errno = 0;
      long double value = std::strtold(t.text.c_str(), nullptr);
      if (errno == ERANGE) return std::nullopt;  // beyond long double: left to isl, whose integers are exact
      return Linear{value, {}};
    }
    if (t.kind == Tok::Ident) {
      ++pos_;
      if (peek().text == "(") {  // a function (floor, min, ...): its value is not followed
        skip_group();
        return std::nullopt;
      }
      Linear v;
      v.coeff[t.text] = 1;
      return v;
    }
    if (accept("(")) {
      Value v = expr();
      if (!accept(")")) return std::nullopt;
      return v;
    }
    return std::nullopt;
  }

  void skip_group() {
    int depth = 0;
    for (; peek().kind != Tok::End; ++pos_) {
      if (peek().text == "(") ++depth;
      if (peek().text == ")" && --depth == 0) {
        ++pos_;
        return;
      }
    }
  }

  const std::string& text_;
  std::vector<Tok> toks_;
  size_t pos_ = 0;
};

}  // namespace

void check_domain_text(const std::string& text) { Checker(text).run(); }

}  // namespace loom
