// Count: the number of points of a parametric integer set, in closed form.
//
// isl alone cannot count (Barvinok's library does; loopy without it
// multiplies each dimension's extent, which is wrong for any triangle). Loop
// domains are simpler than Barvinok's general case, so Loom sums them
// itself: the last dimension x first, over each basic set of a disjoint
// decomposition. Its lower bounds L_i (ceilings of the constraints with a
// positive coefficient, equalities giving both) and upper bounds U_j
// (floors) split the outer space into pieces where one L and one U are the
// active ones; on a piece, the summand P (a quasi-polynomial in x and the
// outer variables) sums by Faulhaber's formulas,
//   sum_{x=L}^{U} x^e = F_e(U) - F_e(L - 1),
// which hold for any integers L <= U + 1, and the piece's outer set is its
// exact (integer) projection. What is left after the last dimension is a
// piecewise quasi-polynomial in the parameters. Where a bound would need a
// floor of x itself (an existential stride on x, a summand in floor(x/d)) or
// the pieces grow past a budget, the set is kept and its points are counted
// by isl for the parameter values given to eval (exact, slower).
#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/point.h>
#include <isl/polynomial.h>
#include <isl/set.h>
#include <isl/val.h>

#include <functional>
#include <map>
#include <set>
#include <numeric>

#include "loom/error.h"
#include "loom/isl_util.h"
#include "loom/statistics.h"

namespace loom {

struct Count::Poly {
  isl_pw_qpolynomial* p = nullptr;
  isl_set* s = nullptr;
  explicit Poly(isl_pw_qpolynomial* take) : p(take) {}
  explicit Poly(isl_set* take) : s(take) {}
  ~Poly() {
    isl_pw_qpolynomial_free(p);
    isl_set_free(s);
  }
  Poly(const Poly&) = delete;
  Poly& operator=(const Poly&) = delete;
};

namespace {

// Faulhaber's polynomials F_e(m) = sum_{x=1}^{m} x^e as rational
// coefficients of m^0 .. m^(e+1) (from the Bernoulli numbers B_j with B_1 = +1/2).
struct Rational {
  int64_t num = 0, den = 1;
};
Rational reduce(int64_t n, int64_t d) {
  if (d < 0) n = -n, d = -d;
  int64_t g = std::gcd(n < 0 ? -n : n, d);
  if (g == 0) g = 1;
  return {n / g, d / g};
}
Rational add(Rational a, Rational b) { return reduce(a.num * b.den + b.num * a.den, a.den * b.den); }
Rational mul(Rational a, Rational b) { return reduce(a.num * b.num, a.den * b.den); }

constexpr int kMaxDegree = 12;  // (a summand's degree is at most the number of dimensions summed)

int64_t binomial(int n, int k) {
  int64_t r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

const std::vector<std::vector<Rational>>& faulhaber() {
  static const std::vector<std::vector<Rational>> table = [] {
    std::vector<Rational> B(kMaxDegree + 2);
    B[0] = {1, 1};
    for (int m = 1; m <= kMaxDegree + 1; ++m) {  // sum_{j<=m} C(m+1, j) B_j = 0 (B_1 = -1/2 here)
      Rational s{0, 1};
      for (int j = 0; j < m; ++j) s = add(s, mul({binomial(m + 1, j), 1}, B[size_t(j)]));
      B[size_t(m)] = mul(s, {-1, m + 1});
    }
    B[1] = {1, 2};
    std::vector<std::vector<Rational>> t;
    for (int e = 0; e <= kMaxDegree; ++e) {
      std::vector<Rational> c(size_t(e + 2));
      for (int j = 0; j <= e; ++j) c[size_t(e + 1 - j)] = mul(mul({binomial(e + 1, j), 1}, B[size_t(j)]), {1, e + 1});
      t.push_back(c);
    }
    return t;
  }();
  return table;
}

isl_qpolynomial* rational_on(isl_space* domain, Rational r) {
  isl_ctx* ctx = isl_space_get_ctx(domain);
  isl_val* v = isl_val_div(isl_val_int_from_si(ctx, r.num), isl_val_int_from_si(ctx, r.den));
  return isl_qpolynomial_val_on_domain(domain, v);
}

// F_e(m) for a quasi-polynomial m (taken).
isl_qpolynomial* faulhaber_at(int e, isl_qpolynomial* m) {
  const auto& c = faulhaber()[size_t(e)];
  isl_space* sp = isl_qpolynomial_get_domain_space(m);
  isl_qpolynomial* r = isl_qpolynomial_zero_on_domain(isl_space_copy(sp));
  for (size_t k = 0; k < c.size(); ++k) {
    if (c[k].num == 0) continue;
    isl_qpolynomial* term = isl_qpolynomial_pow(isl_qpolynomial_copy(m), unsigned(k));
    term = isl_qpolynomial_mul(rational_on(isl_space_copy(sp), c[k]), term);
    r = isl_qpolynomial_add(r, term);
  }
  isl_space_free(sp);
  isl_qpolynomial_free(m);
  return r;
}

struct Piece {
  isl_basic_set* dom;
  isl_qpolynomial* qp;
};

void free_pieces(std::vector<Piece>& ps) {
  for (auto& p : ps) {
    isl_basic_set_free(p.dom);
    isl_qpolynomial_free(p.qp);
  }
  ps.clear();
}

// For each div of b's local space, the set dimensions it reads, directly or
// through other divs (every dimension where isl cannot say).
std::vector<std::set<int>> div_dimensions(isl_basic_set* b) {
  isl_size n = isl_basic_set_dim(b, isl_dim_set), nd = isl_basic_set_dim(b, isl_dim_div);
  std::vector<std::set<int>> dims(size_t(nd < 0 ? 0 : nd));
  std::vector<std::vector<int>> uses(dims.size());  // the divs each div reads
  for (int i = 0; i < nd; ++i) {
    isl_aff* d = isl_basic_set_get_div(b, i);
    for (int x = 0; x < n; ++x)
      if (!d || isl_aff_involves_dims(d, isl_dim_in, unsigned(x), 1) == isl_bool_true) dims[size_t(i)].insert(x);
    for (int j = 0; d && j < nd; ++j)
      if (j != i && isl_aff_involves_dims(d, isl_dim_div, unsigned(j), 1) == isl_bool_true) uses[size_t(i)].push_back(j);
    isl_aff_free(d);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < dims.size(); ++i)
      for (int j : uses[i]) {
        size_t before = dims[i].size();
        dims[i].insert(dims[size_t(j)].begin(), dims[size_t(j)].end());
        changed = changed || dims[i].size() != before;
      }
  }
  return dims;
}

// Whether any div of the local space of `b` depends on set dimension pos.
bool divs_involve(isl_basic_set* b, int pos) {
  for (auto& d : div_dimensions(b))
    if (d.count(pos)) return true;
  return false;
}

// The coefficients of qp (kept) as a polynomial in set dimension pos:
// coefficient e is the sum of the terms with x^e, x removed. False when a
// term's div involves x.
bool coefficients_in(isl_qpolynomial* qp, int pos, std::vector<isl_qpolynomial*>* out) {
  struct Data {
    int pos;
    isl_space* space;
    std::vector<isl_qpolynomial*>* out;
    bool ok = true;
  } data{pos, isl_qpolynomial_get_domain_space(qp), out};
  isl_stat st = isl_qpolynomial_foreach_term(
      qp,
      [](isl_term* t, void* user) -> isl_stat {
        auto* d = static_cast<Data*>(user);
        isl_space* sp = d->space;
        int e = int(isl_term_get_exp(t, isl_dim_set, unsigned(d->pos)));
        isl_qpolynomial* m = isl_qpolynomial_val_on_domain(isl_space_copy(sp), isl_term_get_coefficient_val(t));
        for (isl_dim_type type : {isl_dim_param, isl_dim_set}) {
          isl_size n = isl_term_dim(t, type);
          for (int i = 0; i < n; ++i) {
            if (type == isl_dim_set && i == d->pos) continue;
            isl_size x = isl_term_get_exp(t, type, unsigned(i));
            if (x > 0)
              m = isl_qpolynomial_mul(
                  m, isl_qpolynomial_pow(isl_qpolynomial_var_on_domain(isl_space_copy(sp), type, unsigned(i)), unsigned(x)));
          }
        }
        isl_size nd = isl_term_dim(t, isl_dim_div);
        for (int i = 0; i < nd; ++i) {
          isl_size x = isl_term_get_exp(t, isl_dim_div, unsigned(i));
          if (x <= 0) continue;
          isl_aff* div = isl_term_get_div(t, unsigned(i));
          if (!div || isl_aff_involves_dims(div, isl_dim_in, unsigned(d->pos), 1) != isl_bool_false) {
            isl_aff_free(div);
            d->ok = false;
            break;
          }
          // (isl_term_get_div gives the argument of the floor)
          m = isl_qpolynomial_mul(m, isl_qpolynomial_pow(isl_qpolynomial_from_aff(isl_aff_floor(div)), unsigned(x)));
        }
        isl_term_free(t);
        if (!d->ok || e > kMaxDegree || !m) {
          isl_qpolynomial_free(m);
          d->ok = false;
          return isl_stat_error;
        }
        if (d->out->size() <= size_t(e)) d->out->resize(size_t(e) + 1, nullptr);
        auto& slot = (*d->out)[size_t(e)];
        slot = slot ? isl_qpolynomial_add(slot, m) : m;
        return isl_stat_ok;
      },
      &data);
  isl_space_free(data.space);
  return st == isl_stat_ok && data.ok;
}

// The lower and upper bounds of set dimension pos in b (affs on b's space).
bool bounds_of(isl_basic_set* b, int pos, std::vector<isl_aff*>* lower, std::vector<isl_aff*>* upper) {
  struct Data {
    int pos;
    std::vector<isl_aff*>*lo, *up;
  } data{pos, lower, upper};
  isl_stat st = isl_basic_set_foreach_constraint(
      b,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto* d = static_cast<Data*>(user);
        isl_val* v = isl_constraint_get_coefficient_val(c, isl_dim_set, d->pos);
        int sign = isl_val_sgn(v);
        isl_val_free(v);
        if (sign != 0) {
          bool eq = isl_constraint_is_equality(c) == isl_bool_true;
          isl_aff* bound = isl_constraint_get_bound(c, isl_dim_set, d->pos);
          if (eq) {
            d->lo->push_back(isl_aff_ceil(isl_aff_copy(bound)));
            d->up->push_back(isl_aff_floor(bound));
          } else if (sign > 0) {
            d->lo->push_back(isl_aff_ceil(bound));
          } else {
            d->up->push_back(isl_aff_floor(bound));
          }
        }
        isl_constraint_free(c);
        return isl_stat_ok;
      },
      &data);
  return st == isl_stat_ok && !lower->empty() && !upper->empty();
}

void free_affs(std::vector<isl_aff*>& v) {
  for (auto* a : v) isl_aff_free(a);
  v.clear();
}

constexpr size_t kMaxPieces = 48;
constexpr size_t kMaxWork = 96;

// Sums qp over the last set dimension of b (both taken); appends the pieces
// (one dimension fewer) to out. False when this needs what the closed form
// cannot express.
bool sum_last(isl_basic_set* b, isl_qpolynomial* qp, std::vector<Piece>* out) {
  isl_size dims = isl_basic_set_dim(b, isl_dim_set);
  int pos = int(dims) - 1;
  b = isl_basic_set_detect_equalities(b);
  std::vector<isl_aff*> lower, upper;
  std::vector<isl_qpolynomial*> coeff;
  bool ok = b && !divs_involve(b, pos) && bounds_of(b, pos, &lower, &upper) && coefficients_in(qp, pos, &coeff);
  isl_qpolynomial_free(qp);
  for (size_t i = 0; ok && i < lower.size(); ++i)
    for (size_t j = 0; ok && j < upper.size(); ++j) {
      // the piece where L_i is the largest lower bound (the first of equal ones) and U_j the smallest upper one
      isl_basic_set* piece = isl_basic_set_copy(b);
      for (size_t k = 0; k < lower.size(); ++k) {
        if (k == i) continue;
        isl_aff* other = isl_aff_copy(lower[k]);
        if (k < i) other = isl_aff_add_constant_si(other, 1);
        piece = isl_basic_set_intersect(piece, isl_aff_ge_basic_set(isl_aff_copy(lower[i]), other));
      }
      for (size_t k = 0; k < upper.size(); ++k) {
        if (k == j) continue;
        isl_aff* other = isl_aff_copy(upper[k]);
        if (k < j) other = isl_aff_add_constant_si(other, -1);
        piece = isl_basic_set_intersect(piece, isl_aff_ge_basic_set(other, isl_aff_copy(upper[j])));
      }
      piece = isl_basic_set_intersect(piece, isl_aff_ge_basic_set(isl_aff_copy(upper[j]), isl_aff_copy(lower[i])));
      isl_bool empty = isl_basic_set_is_empty(piece);
      if (empty != isl_bool_false) {
        isl_basic_set_free(piece);
        ok = empty == isl_bool_true;
        continue;
      }
      // sum_e c_e (F_e(U) - F_e(L - 1))
      isl_qpolynomial* u = isl_qpolynomial_from_aff(isl_aff_copy(upper[j]));
      isl_qpolynomial* l1 = isl_qpolynomial_from_aff(isl_aff_add_constant_si(isl_aff_copy(lower[i]), -1));
      isl_space* sp = isl_qpolynomial_get_domain_space(u);
      isl_qpolynomial* sum = isl_qpolynomial_zero_on_domain(sp);
      for (size_t e = 0; e < coeff.size(); ++e) {
        if (!coeff[e]) continue;
        isl_qpolynomial* f = isl_qpolynomial_sub(faulhaber_at(int(e), isl_qpolynomial_copy(u)),
                                                 faulhaber_at(int(e), isl_qpolynomial_copy(l1)));
        sum = isl_qpolynomial_add(sum, isl_qpolynomial_mul(isl_qpolynomial_copy(coeff[e]), f));
      }
      isl_qpolynomial_free(u);
      isl_qpolynomial_free(l1);
      sum = isl_qpolynomial_drop_dims(sum, isl_dim_in, unsigned(pos), 1);
      piece = isl_basic_set_project_out(piece, isl_dim_set, unsigned(pos), 1);
      if (!sum || !piece || out->size() >= kMaxPieces) {
        isl_qpolynomial_free(sum);
        isl_basic_set_free(piece);
        ok = false;
        continue;
      }
      out->push_back({piece, sum});
    }
  free_affs(lower);
  free_affs(upper);
  for (auto* c : coeff) isl_qpolynomial_free(c);
  isl_basic_set_free(b);
  return ok;
}

// The set dimensions each dimension is coupled with through one constraint
// (a floor in a constraint couples the dimensions it reads): the components
// of a box-like tiling are counted apart and multiplied, which keeps the
// pieces of each sum few.
std::vector<std::vector<int>> independent_groups(isl_basic_set* b) {
  isl_size n = isl_basic_set_dim(b, isl_dim_set), nd = isl_basic_set_dim(b, isl_dim_div);
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> root = [&](int x) { return parent[size_t(x)] == x ? x : parent[size_t(x)] = root(parent[size_t(x)]); };
  std::vector<std::set<int>> div_dims = div_dimensions(b);
  struct Data {
    int n, nd;
    std::vector<std::set<int>>* div_dims;
    std::function<int(int)>* root;
    std::vector<int>* parent;
  } data{int(n), int(nd), &div_dims, &root, &parent};
  isl_basic_set_foreach_constraint(
      b,
      [](isl_constraint* c, void* user) -> isl_stat {
        auto* d = static_cast<Data*>(user);
        std::vector<int> dims;
        for (int x = 0; x < d->n; ++x)
          if (isl_constraint_involves_dims(c, isl_dim_set, unsigned(x), 1) == isl_bool_true) dims.push_back(x);
        for (int i = 0; i < d->nd; ++i)
          if (isl_constraint_involves_dims(c, isl_dim_div, unsigned(i), 1) == isl_bool_true)
            dims.insert(dims.end(), (*d->div_dims)[size_t(i)].begin(), (*d->div_dims)[size_t(i)].end());
        for (size_t j = 1; j < dims.size(); ++j) (*d->parent)[size_t((*d->root)(dims[j]))] = (*d->root)(dims[0]);
        isl_constraint_free(c);
        return isl_stat_ok;
      },
      &data);
  std::map<int, std::vector<int>> groups;
  for (int x = 0; x < n; ++x) groups[root(x)].push_back(x);
  std::vector<std::vector<int>> r;
  for (auto& [_, g] : groups) r.push_back(g);
  return r;
}

isl_pw_qpolynomial* closed_form_count(isl_set* s);

// s (kept) as a product of independent parts, each counted on its own; null
// when it is not one (or a part has no closed form).
isl_pw_qpolynomial* product_count(isl_set* s) {
  isl_set* c = isl_set_coalesce(isl_set_copy(s));
  isl_size dims = isl_set_dim(c, isl_dim_set);
  if (isl_set_n_basic_set(c) != 1 || dims < 2) {
    isl_set_free(c);
    return nullptr;
  }
  std::vector<std::vector<int>> groups;
  isl_set_foreach_basic_set(
      c,
      [](isl_basic_set* b, void* user) -> isl_stat {
        *static_cast<std::vector<std::vector<int>>*>(user) = independent_groups(b);
        isl_basic_set_free(b);
        return isl_stat_ok;
      },
      &groups);
  if (groups.size() < 2) {
    isl_set_free(c);
    return nullptr;
  }
  isl_pw_qpolynomial* r = nullptr;
  for (auto& g : groups) {
    isl_set* part = isl_set_copy(c);
    for (int x = dims - 1; x >= 0; --x)
      if (std::find(g.begin(), g.end(), x) == g.end()) part = isl_set_project_out(part, isl_dim_set, unsigned(x), 1);
    isl_pw_qpolynomial* n = closed_form_count(part);
    isl_set_free(part);
    if (!n) {
      isl_pw_qpolynomial_free(r);
      isl_set_free(c);
      return nullptr;
    }
    r = r ? isl_pw_qpolynomial_mul(r, n) : n;
  }
  isl_set_free(c);
  return r ? isl_pw_qpolynomial_coalesce(r) : nullptr;
}

// The number of points of s (kept) in closed form; null where the closed
// form does not apply.
isl_pw_qpolynomial* closed_form_count(isl_set* s) {
  if (isl_pw_qpolynomial* p = product_count(s)) return p;
  isl_set* d = isl_set_make_disjoint(isl_set_copy(s));
  std::vector<Piece> pieces;
  isl_set_foreach_basic_set(
      d,
      [](isl_basic_set* b, void* user) -> isl_stat {
        isl_space* sp = isl_basic_set_get_space(b);
        static_cast<std::vector<Piece>*>(user)->push_back({b, isl_qpolynomial_one_on_domain(sp)});
        return isl_stat_ok;
      },
      &pieces);
  isl_size dims = isl_set_dim(d, isl_dim_set);
  isl_space* param_space = isl_space_params(isl_set_get_space(d));
  isl_set_free(d);
  bool ok = dims >= 0;
  size_t work = 0;  // pieces summed: past kMaxWork the set is counted by enumeration instead (isl's sets grow costly)
  for (int level = 0; ok && level < dims; ++level) {
    std::vector<Piece> next;
    for (auto& p : pieces) {
      if (ok) ok = ++work <= kMaxWork && sum_last(p.dom, p.qp, &next);
      else {
        isl_basic_set_free(p.dom);
        isl_qpolynomial_free(p.qp);
      }
    }
    pieces.clear();
    pieces.swap(next);
    if (!ok) free_pieces(pieces);
  }
  if (!ok) {
    isl_space_free(param_space);
    return nullptr;
  }
  isl_pw_qpolynomial* r = isl_pw_qpolynomial_from_qpolynomial(isl_qpolynomial_zero_on_domain(isl_space_set_from_params(param_space)));
  for (auto& p : pieces)
    r = isl_pw_qpolynomial_add(r, isl_pw_qpolynomial_alloc(isl_set_from_basic_set(p.dom), p.qp));
  pieces.clear();
  return r ? isl_pw_qpolynomial_coalesce(r) : nullptr;
}

std::string take_string(char* s) {
  std::string r = s ? s : "";
  free(s);
  return r;
}

}  // namespace

Count Count::points(isl_set* set, isl_set* params) {
  Count c;
  isl_set* s = isl_set_copy(set);
  if (params) {
    s = isl_set_intersect_params(s, isl_set_copy(params));
    c.valid_ = std::make_shared<Poly>(isl_set_copy(params));
  }
  if (isl_pw_qpolynomial* p = closed_form_count(s)) {
    c.polys_.push_back({1, std::make_shared<Poly>(p)});
    isl_set_free(s);
  } else {
    c.enumerated_.push_back({1, nullptr, std::make_shared<Poly>(s)});
  }
  return c;
}

Count Count::from_pw_aff(isl_pw_aff* take) {
  Count c;
  c.polys_.push_back({1, std::make_shared<Poly>(islu::check(isl_pw_qpolynomial_from_pw_aff(take), "grid size as a count"))});
  return c;
}

Count Count::constant(int64_t v) {
  Count c;
  c.constant_ = v;
  return c;
}

bool Count::is_zero() const {
  if (constant_ != 0 || !enumerated_.empty()) return false;
  for (auto& [f, p] : polys_)
    if (f != 0 && isl_pw_qpolynomial_is_zero(p->p) != isl_bool_true) return false;
  return true;
}

Count Count::operator+(const Count& o) const {
  Count r = *this;
  r.constant_ += o.constant_;
  for (auto& term : o.polys_) {
    // small pieces are added by isl (one polynomial prints best); large ones stay apart
    auto small = [](const std::pair<int64_t, std::shared_ptr<const Poly>>& t) { return isl_pw_qpolynomial_n_piece(t.second->p) <= 4; };
    if (!r.polys_.empty() && small(r.polys_.back()) && small(term)) {
      auto scaled = [](const std::pair<int64_t, std::shared_ptr<const Poly>>& t) {
        return isl_pw_qpolynomial_scale_val(isl_pw_qpolynomial_copy(t.second->p), isl_val_int_from_si(isl_context(), t.first));
      };
      r.polys_.back() = {1, std::make_shared<Poly>(isl_pw_qpolynomial_coalesce(isl_pw_qpolynomial_add(scaled(r.polys_.back()), scaled(term))))};
    } else {
      r.polys_.push_back(term);
    }
  }
  r.enumerated_.insert(r.enumerated_.end(), o.enumerated_.begin(), o.enumerated_.end());
  if (!r.valid_) r.valid_ = o.valid_;
  return r;
}

Count Count::operator*(int64_t f) const {
  Count r = *this;
  r.constant_ *= f;
  for (auto& t : r.polys_) t.first *= f;
  for (auto& e : r.enumerated_) e.factor *= f;
  return r;
}

Count Count::times(const Count& closed) const {
  if (!closed.closed_form()) throw Error("Count::times: the factor is not in closed form");
  // (sum f_i P_i + c + E)(sum g_j Q_j + d)
  Count r = *this * closed.constant_;
  r.enumerated_.clear();
  for (auto& [f, p] : polys_)
    for (auto& [g, q] : closed.polys_)
      r.polys_.push_back({f * g, std::make_shared<Poly>(isl_pw_qpolynomial_mul(isl_pw_qpolynomial_copy(p->p), isl_pw_qpolynomial_copy(q->p)))});
  for (auto& [g, q] : closed.polys_) r.polys_.push_back({constant_ * g, q});
  auto factor = std::make_shared<const Count>(closed);
  for (auto& e : enumerated_) {
    auto t = e.times ? std::make_shared<const Count>(e.times->times(closed)) : factor;
    r.enumerated_.push_back({e.factor, t, e.set});
  }
  if (!r.valid_) r.valid_ = closed.valid_;
  return r;
}

namespace {

// A point of `space`'s parameters at the given values; ArgumentError naming a missing one.
isl_point* parameter_point(isl_space* ps, const std::map<std::string, int64_t>& params) {
  isl_point* pt = isl_point_zero(isl_space_copy(ps));
  isl_size n = isl_space_dim(ps, isl_dim_param);
  for (int i = 0; i < n; ++i) {
    std::string name = isl_space_get_dim_name(ps, isl_dim_param, unsigned(i));
    auto it = params.find(name);
    if (it == params.end()) {
      isl_point_free(pt);
      isl_space_free(ps);
      throw ArgumentError("the count depends on parameter '" + name + "': give it a value");
    }
    pt = isl_point_set_coordinate_val(pt, isl_dim_param, i, isl_val_int_from_si(isl_space_get_ctx(ps), it->second));
  }
  isl_space_free(ps);
  return pt;
}

int64_t to_int(isl_val* v) {
  if (!v || isl_val_is_int(v) != isl_bool_true) {
    std::string text = v ? take_string(isl_val_to_str(v)) : "null";
    isl_val_free(v);
    throw Error("a count is not an integer (" + text + "; an internal error of the closed form)");
  }
  int64_t r = isl_val_get_num_si(v);
  isl_val_free(v);
  return r;
}

int64_t eval_poly(isl_pw_qpolynomial* p, const std::map<std::string, int64_t>& params) {
  isl_point* pt = parameter_point(isl_pw_qpolynomial_get_domain_space(p), params);
  return to_int(isl_pw_qpolynomial_eval(isl_pw_qpolynomial_copy(p), pt));
}

}  // namespace

int64_t Count::eval(const std::map<std::string, int64_t>& params) const {
  if (valid_) {
    isl_point* pt = parameter_point(isl_set_get_space(valid_->s), params);
    isl_set* at = isl_set_from_point(pt);
    isl_bool in = isl_set_is_subset(at, valid_->s);
    isl_set_free(at);
    if (in == isl_bool_false) {
      std::string values;
      for (auto& [n, v] : params) values += (values.empty() ? "" : ", ") + n + " = " + std::to_string(v);
      throw ArgumentError("the parameter values (" + values + ") lie outside the kernel's assumptions " +
                          take_string(isl_set_to_str(valid_->s)));
    }
  }
  int64_t total = constant_;
  for (auto& [f, p] : polys_)
    if (f != 0) total += f * eval_poly(p->p, params);
  for (auto& e : enumerated_) {
    isl_set* s = isl_set_copy(e.set->s);
    isl_size n = isl_set_dim(s, isl_dim_param);
    for (int i = n - 1; i >= 0; --i) {
      std::string name = isl_set_get_dim_name(s, isl_dim_param, unsigned(i));
      auto it = params.find(name);
      if (it == params.end()) {
        isl_set_free(s);
        throw ArgumentError("the count depends on parameter '" + name + "': give it a value");
      }
      s = isl_set_fix_si(s, isl_dim_param, unsigned(i), it->second);
    }
    int64_t points = to_int(isl_set_count_val(s));
    isl_set_free(s);
    total += e.factor * points * (e.times ? e.times->eval(params) : 1);
  }
  return total;
}

std::vector<std::string> Count::parameters() const {
  std::vector<std::string> names;
  auto add = [&](isl_space* sp) {
    isl_size n = isl_space_dim(sp, isl_dim_param);
    for (int i = 0; i < n; ++i) {
      std::string p = isl_space_get_dim_name(sp, isl_dim_param, unsigned(i));
      if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
    }
    isl_space_free(sp);
  };
  for (auto& [f, p] : polys_) add(isl_pw_qpolynomial_get_domain_space(p->p));
  for (auto& e : enumerated_) add(isl_set_get_space(e.set->s));
  std::sort(names.begin(), names.end());
  return names;
}

std::string Count::str() const {
  std::string text;
  auto join = [&](const std::string& part) { text += (text.empty() ? "" : " + ") + part; };
  for (auto& [f, poly] : polys_) {
    if (f == 0) continue;
    isl_pw_qpolynomial* p = isl_pw_qpolynomial_copy(poly->p);
    // (simplified by the assumptions where that is cheap: isl's gist of many pieces is not)
    if (valid_ && isl_pw_qpolynomial_n_piece(p) <= 4) p = isl_pw_qpolynomial_gist_params(p, isl_set_copy(valid_->s));
    join((f != 1 ? std::to_string(f) + " * " : "") + take_string(isl_pw_qpolynomial_to_str(p)));
    isl_pw_qpolynomial_free(p);
  }
  for (auto& e : enumerated_) {
    std::string t = e.factor != 1 ? std::to_string(e.factor) + " * " : "";
    if (e.times) t += "(" + e.times->str() + ") * ";
    join(t + "card " + take_string(isl_set_to_str(e.set->s)));
  }
  if (constant_ != 0 || text.empty()) join(std::to_string(constant_));
  return text;
}

}  // namespace loom
