// read_affine_domain: the common form of a domain read without isl's parser.
// Nearly every domain a user or a transformation writes is one conjunction of
// affine comparisons over named inames, "{[i, j]: 0 <= i < n and 0 <= j <= i}".
// isl reads such text through its piecewise-affine machinery (every side of a
// comparison becomes a piecewise expression, every comparison a set, and the
// sets are intersected), which made reading a kernel's domain a third of the
// cost of generating a small kernel. This reader accepts exactly that form
// (integer coefficients, + and -, chains of <, <=, >, >=, =, joined by "and")
// and builds the set through isl's constraint API, taking the steps isl's
// reader takes after its parsing (one normalized set per comparison,
// intersected chain by chain), so the result is written as isl's is; anything else (or,
// exists, floor, mod, min, max, parentheses, a named space, big numbers,
// isl's own [params] -> prefix) is left to isl's parser by returning null, so
// the set is always the one isl would read. Parameters are the identifiers
// that are not set dimensions, in order of first appearance, as
// Domain::parse's prefix names them for isl.
#include <isl/constraint.h>
#include <isl/id.h>
#include <isl/local_space.h>
#include <isl/set.h>
#include <isl/space.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loom/domain.h"

namespace loom {

namespace {

// c + sum(coefficient * variable), variables numbered as they first appear.
struct Linear {
  int64_t constant = 0;
  std::map<int, int64_t> terms;
};

// Coefficients stay far below int64's range, so sums of a few of them never
// overflow; bigger numbers are isl's to read (it uses arbitrary precision).
constexpr int64_t kMaxMagnitude = int64_t(1) << 40;

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}

  // False where the text is outside the accepted form.
  bool read() {
    if (!punct('{') || !punct('[')) return false;
    if (!peek(']')) {
      do {
        std::string name;
        if (!identifier(name) || is_keyword(name)) return false;
        for (auto& d : dims_)
          if (d == name) return false;  // isl's error to report
        dims_.push_back(name);
      } while (punct(','));
    }
    if (!punct(']') || dims_.empty()) return false;
    if (punct(':')) {
      do {
        if (!chain()) return false;
      } while (keyword("and"));
    }
    if (!punct('}')) return false;
    skip_space();
    return pos_ == s_.size();
  }

  // The basic set of what read() accepted, as a set; null on isl's failure.
  isl_set* build(isl_ctx* ctx) const {
    std::vector<int> param_of(variables_.size(), -1), dim_of(variables_.size(), -1);
    std::vector<std::string> params;
    for (size_t v = 0; v < variables_.size(); ++v) {
      int d = dim_index(variables_[v]);
      if (d >= 0) {
        dim_of[v] = d;
      } else {
        param_of[v] = int(params.size());
        params.push_back(variables_[v]);
      }
    }
    isl_space* space = isl_space_set_alloc(ctx, unsigned(params.size()), unsigned(dims_.size()));
    for (size_t p = 0; p < params.size(); ++p)
      space = isl_space_set_dim_id(space, isl_dim_param, unsigned(p), isl_id_alloc(ctx, params[p].c_str(), nullptr));
    for (size_t d = 0; d < dims_.size(); ++d)
      space = isl_space_set_dim_id(space, isl_dim_set, unsigned(d), isl_id_alloc(ctx, dims_[d].c_str(), nullptr));
    // Intersected in the order and grouping isl's reader uses (each chain
    // on its own universe, then the chains one by one): isl simplifies as it
    // intersects, and the same steps give the same constraints, so the set
    // prints, and later transformations write their sets, as if isl had read it.
    isl_local_space* ls = isl_local_space_from_space(isl_space_copy(space));
    isl_set* result = nullptr;
    for (const auto& chain : chains_) {
      isl_set* set = isl_set_universe(isl_space_copy(space));
      for (const auto& [c, is_equality] : chain) {
        isl_constraint* k = is_equality ? isl_constraint_alloc_equality(isl_local_space_copy(ls))
                                        : isl_constraint_alloc_inequality(isl_local_space_copy(ls));
        k = isl_constraint_set_constant_si(k, int(c.constant));
        for (const auto& [v, coefficient] : c.terms) {
          if (coefficient == 0) continue;
          if (dim_of[v] >= 0) k = isl_constraint_set_coefficient_si(k, isl_dim_set, dim_of[v], int(coefficient));
          else k = isl_constraint_set_coefficient_si(k, isl_dim_param, param_of[v], int(coefficient));
        }
        isl_basic_set* one = isl_basic_set_add_constraint(isl_basic_set_universe(isl_space_copy(space)), k);
        set = isl_set_intersect(set, isl_set_from_basic_set(one));
      }
      result = result ? isl_set_intersect(result, set) : set;
    }
    isl_local_space_free(ls);
    if (!result) return isl_set_universe(space);
    isl_space_free(space);
    return result;
  }

  // isl's constraint setters take an int.
  bool fits_int() const {
    for (const auto& chain : chains_)
      for (const auto& [c, eq] : chain) {
        if (c.constant > INT32_MAX || c.constant < -INT32_MAX) return false;
        for (const auto& [v, k] : c.terms)
          if (k > INT32_MAX || k < -INT32_MAX) return false;
      }
    return true;
  }

 private:
  static bool is_keyword(const std::string& w) { return is_isl_keyword(w); }
  int dim_index(const std::string& name) const {
    for (size_t d = 0; d < dims_.size(); ++d)
      if (dims_[d] == name) return int(d);
    return -1;
  }
  int variable(const std::string& name) {
    for (size_t v = 0; v < variables_.size(); ++v)
      if (variables_[v] == name) return int(v);
    variables_.push_back(name);
    return int(variables_.size() - 1);
  }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool punct(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool identifier(std::string& out) {
    skip_space();
    size_t j = pos_;
    if (j >= s_.size() || !(std::isalpha(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) return false;
    while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) ++j;
    if (j < s_.size() && s_[j] == '\'') return false;  // primed names: isl's
    out = s_.substr(pos_, j - pos_);
    pos_ = j;
    return true;
  }
  bool keyword(const char* word) {
    size_t save = pos_;
    std::string w;
    if (identifier(w) && w == word) return true;
    pos_ = save;
    return false;
  }
  bool number(int64_t& out) {
    skip_space();
    size_t j = pos_;
    int64_t v = 0;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
      v = v * 10 + (s_[j] - '0');
      if (v > kMaxMagnitude) return false;
      ++j;
    }
    if (j == pos_) return false;
    pos_ = j;
    out = v;
    return true;
  }

  // term: number | identifier | number '*'? identifier
  bool term(Linear& into, int64_t sign) {
    int64_t k = 1;
    bool has_number = number(k);
    std::string name;
    size_t save = pos_;
    bool star = has_number && punct('*');
    if (identifier(name) && !is_keyword(name)) {
      int64_t& slot = into.terms[variable(name)];
      slot += sign * k;
      if (slot > kMaxMagnitude || slot < -kMaxMagnitude) return false;
      return true;
    }
    pos_ = save;  // (a keyword after a number: "0 and ...")
    if (star || !has_number) return false;
    into.constant += sign * k;
    return into.constant <= kMaxMagnitude && into.constant >= -kMaxMagnitude;
  }
  // affine: '-'? term (('+' | '-') term)*
  bool affine(Linear& out) {
    int64_t sign = punct('-') ? -1 : 1;
    if (!term(out, sign)) return false;
    for (;;) {
      if (punct('+')) sign = 1;
      else if (peek('-')) {
        ++pos_;
        sign = -1;
      } else return true;
      if (!term(out, sign)) return false;
    }
  }
  enum class Op { Lt, Le, Gt, Ge, Eq, None };
  Op comparison() {
    skip_space();
    if (pos_ >= s_.size()) return Op::None;
    char c = s_[pos_];
    bool eq_follows = pos_ + 1 < s_.size() && s_[pos_ + 1] == '=';
    if (c == '<') {
      pos_ += eq_follows ? 2 : 1;
      return eq_follows ? Op::Le : Op::Lt;
    }
    if (c == '>') {
      pos_ += eq_follows ? 2 : 1;
      return eq_follows ? Op::Ge : Op::Gt;
    }
    if (c == '=' && !eq_follows) {
      ++pos_;
      return Op::Eq;
    }
    return Op::None;
  }
  // chain: affine (op affine)+, each adjacent pair one constraint.
  bool chain() {
    chains_.emplace_back();
    Linear left;
    if (!affine(left)) return false;
    int comparisons = 0;
    for (Op op; (op = comparison()) != Op::None; ++comparisons) {
      Linear right;
      if (!affine(right)) return false;
      // low <= high  is  high - low >= 0;  low < high  is  high - low - 1 >= 0
      bool flip = op == Op::Gt || op == Op::Ge;
      const Linear& low = flip ? right : left;
      const Linear& high = flip ? left : right;
      Linear c = high;
      c.constant -= low.constant;
      for (const auto& [v, k] : low.terms) c.terms[v] -= k;
      if (op == Op::Lt || op == Op::Gt) c.constant -= 1;
      chains_.back().push_back({c, op == Op::Eq});
      left = std::move(right);
    }
    return comparisons > 0;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::vector<std::string> dims_;
  std::vector<std::string> variables_;  // dims and parameters, by first appearance
  // each chain's constraints (constraint, is equality), as written
  std::vector<std::vector<std::pair<Linear, bool>>> chains_;
};

}  // namespace

isl_set* read_affine_domain(isl_ctx* ctx, const std::string& text) {
  Reader r(text);
  if (!r.read() || !r.fits_int()) return nullptr;
  return r.build(ctx);
}

}  // namespace loom
