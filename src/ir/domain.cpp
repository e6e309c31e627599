// The process-wide isl context, the Domain handle, and the isl helpers of
// isl_util.h (dimension arrangement, Expr <-> isl affine expressions).
#include "loom/domain.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/options.h>
#include <isl/union_map.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>

#include "loom/error.h"
#include "loom/isl_util.h"

namespace loom {

isl_ctx* isl_context() {
  // Never freed: isl objects cached in static memory may outlive main().
  static isl_ctx* ctx = [] {
    isl_ctx* c = isl_ctx_alloc();
    isl_options_set_on_error(c, ISL_ON_ERROR_CONTINUE);
    return c;
  }();
  return ctx;
}

std::mutex& isl_launch_mutex() {
  static std::mutex m;
  return m;
}

Domain::Domain(isl_set* take) : set_(take) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  if (set_) inames_ = std::make_shared<const std::vector<std::string>>(islu::dim_names(set_, isl_dim_set));
}
Domain::Domain(const Domain& o) : set_(o.set_ ? isl_set_copy(o.set_) : nullptr), inames_(o.inames_), id_(o.id_) {}
Domain::~Domain() {
  if (set_) isl_set_free(set_);
}
isl_set* Domain::copy() const { return set_ ? isl_set_copy(set_) : nullptr; }

namespace {

// Adds "[p, q] -> " for identifiers that are neither dimensions nor bound
// by exists, unless the text already names its parameters.
std::string with_parameters(const std::string& text) {
  size_t brace = text.find('{');
  if (brace == std::string::npos || text.find("->") < brace) return text;
  std::vector<std::string> words;
  std::set<std::string> bound;
  bool in_tuple = false, in_exists = false;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' || text[j] == '\'')) ++j;
      std::string w = text.substr(i, j - i);
      if (w == "exists") in_exists = true;
      else if (in_tuple || in_exists) bound.insert(w);
      else if (!is_isl_keyword(w)) words.push_back(w);
      i = j;
      continue;
    }
    if (c == '[') in_tuple = true;
    if (c == ']') in_tuple = false;
    if (c == ':' && in_exists) in_exists = false;
    ++i;
  }
  std::vector<std::string> params;
  for (auto& w : words)
    if (!bound.count(w) && std::find(params.begin(), params.end(), w) == params.end()) params.push_back(w);
  if (params.empty()) return text;
  std::string prefix = "[";
  for (size_t i = 0; i < params.size(); ++i) prefix += (i ? ", " : "") + params[i];
  return prefix + "] -> " + text;
}

// isl reports syntax errors on stderr; read them from there.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = dup(2);
    if (file_ && saved_ >= 0) dup2(fileno(file_), 2);
  }
  std::string finish() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
    }
    std::string out;
    if (file_) {
      std::rewind(file_);
      char buf[512];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
      std::fclose(file_);
      file_ = nullptr;
    }
    return out;
  }
  ~StderrCapture() { finish(); }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// What a text isl reads as something other than one set is ("a map
// ({[i] -> [j]})", "an empty set without inames ({})"), or "" (isl's
// assertion on reading such text as a set says nothing a user could use).
std::string not_a_set(isl_ctx* ctx, const std::string& full) {
  std::string what;
  if (isl_union_map* m = isl_union_map_read_from_str(ctx, full.c_str())) {
    if (isl_union_map_is_empty(m) == isl_bool_true && full.find("->") == full.rfind("->"))
      what = "an empty set without inames";
    else if (isl_union_map_n_map(m) > 1)
      what = "a union of spaces (several tuples joined by ';')";
    else if (full.find("->", full.find('{')) != std::string::npos)
      what = "a map (it relates [...] -> [...])";
    isl_union_map_free(m);
  }
  isl_ctx_reset_error(ctx);
  return what.empty() ? "" : "the domain is " + what;
}

}  // namespace

bool is_isl_keyword(const std::string& w) {
  // (the words isl 0.25 refuses as a parameter's name; "xor", "div",
  // "domain" and "range" are names to it)
  static const char* kw[] = {"and",     "or",   "not",   "mod",   "floor",    "ceil", "min",   "max",    "exists",
                             "implies", "true", "false", "infty", "infinity", "rat",  "ceild", "floord", "nan"};
  for (auto k : kw)
    if (strcasecmp(w.c_str(), k) == 0) return true;
  return false;
}

Domain Domain::interval(const std::string& iname, int64_t extent) {
  isl_ctx* ctx = isl_context();
  isl_space* sp = isl_space_set_dim_id(isl_space_set_alloc(ctx, 0, 1), isl_dim_set, 0, isl_id_alloc(ctx, iname.c_str(), nullptr));
  isl_set* s = isl_set_lower_bound_si(isl_set_universe(sp), isl_dim_set, 0, 0);
  return Domain(islu::check(isl_set_upper_bound_val(s, isl_dim_set, 0, isl_val_int_from_si(ctx, long(extent) - 1)), "Domain::interval"));
}

Domain Domain::parse(const std::string& text) {
  if (isl_set* s = read_affine_domain(isl_context(), text)) return Domain(s);
  return parse_with_isl(text);
}

Domain Domain::parse_with_isl(const std::string& text) {
  check_domain_text(text);
  isl_ctx* ctx = isl_context();
  std::string full = with_parameters(text);
  size_t shift = full.size() - text.size();  // the prefix sits on the first line
  isl_ctx_reset_error(ctx);
  // isl prints syntax errors on stderr: a failed read is repeated with
  // stderr captured to get the message (the usual, successful read pays nothing)
  if (isl_set* s = isl_set_read_from_str(ctx, full.c_str())) return Domain(s);
  StderrCapture capture;
  isl_set_free(isl_set_read_from_str(ctx, full.c_str()));
  std::string log = capture.finish();
  int line = 1, col = 1;
  std::string msg = "invalid isl set";
  if (std::sscanf(log.c_str(), "syntax error (%d, %d)", &line, &col) == 2) {
    if (line == 1) col -= int(shift);
    auto nl = log.find('\n');
    std::string detail = nl == std::string::npos ? "" : log.substr(nl + 1);
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    for (auto& ch : detail)
      if (ch == '\n') ch = ';';
    msg = "isl syntax error" + (detail.empty() ? std::string() : ": " + detail);
  } else {
    const char* m = isl_ctx_last_error_msg(ctx);
    std::string isl_msg = m ? m : "";
    if (std::string what = not_a_set(ctx, full); !what.empty())
      msg = what + "; a domain is a set of named inames, like {[i, j]: 0 <= i < n and 0 <= j <= i}";
    else if (!isl_msg.empty())  // isl gave no position: say what a domain looks like
      msg = "isl: " + isl_msg + " (a domain looks like {[i, j]: 0 <= i < n and 0 <= j <= i})";
  }
  throw DomainSyntaxError(msg, line, col < 1 ? 1 : col);
}

std::vector<std::string> Domain::inames() const { return inames_ ? *inames_ : std::vector<std::string>{}; }
std::vector<std::string> Domain::params() const { return islu::dim_names(set_, isl_dim_param); }
bool Domain::has_iname(const std::string& n) const { return inames_ && std::find(inames_->begin(), inames_->end(), n) != inames_->end(); }
bool Domain::has_param(const std::string& n) const { return islu::find_dim(set_, isl_dim_param, n) >= 0; }
std::string Domain::str() const {
  if (!set_) return "<none>";
  char* s = isl_set_to_str(set_);
  std::string r = s ? s : "";
  free(s);
  return r;
}

namespace islu {

void fail(const char* what) {
  const char* msg = isl_ctx_last_error_msg(isl_context());
  throw Error(std::string("isl: ") + what + (msg ? std::string(": ") + msg : ""));
}

isl::set to_isl(const Domain& d) { return isl::manage(d.copy()); }
Domain from_isl(isl::set s) { return Domain(s.release()); }

std::vector<std::string> dim_names(isl_space* sp, isl_dim_type type) {
  std::vector<std::string> r;
  isl_size n = isl_space_dim(sp, type);
  for (isl_size i = 0; i < n; ++i) {
    const char* name = isl_space_get_dim_name(sp, type, i);
    r.push_back(name ? name : "");
  }
  return r;
}

std::vector<std::string> dim_names(isl_set* s, isl_dim_type type) {
  if (!s) return {};
  isl_space* sp = isl_set_get_space(s);
  auto r = dim_names(sp, type);
  isl_space_free(sp);
  return r;
}

int find_dim(isl_set* s, isl_dim_type type, const std::string& name) {
  if (!s) return -1;
  return isl_set_find_dim_by_name(s, type, name.c_str());
}

isl::set arrange_dims(isl::set s, const std::vector<std::string>& dims) {
  isl_set* r = s.release();
  // 1. project out dimensions that are not wanted, a run of neighbours per
  // call (every isl operation simplifies the whole set again: one call per
  // dimension was most of the cost of iteration_domain)
  auto unwanted = [&](int i) {
    const char* n = isl_set_get_dim_name(r, isl_dim_set, unsigned(i));
    return !n || std::find(dims.begin(), dims.end(), n) == dims.end();
  };
  for (int i = isl_set_dim(r, isl_dim_set) - 1; i >= 0;) {
    if (!unwanted(i)) {
      --i;
      continue;
    }
    int first = i;
    while (first > 0 && unwanted(first - 1)) --first;
    r = isl_set_project_out(r, isl_dim_set, unsigned(first), unsigned(i - first + 1));
    i = first - 1;
  }
  // already in the order asked for (the common case): no moves
  if (r && dim_names(r, isl_dim_set) == dims) return isl::manage(r);
  // 2. all remaining dimensions become parameters
  isl_size nparam = isl_set_dim(r, isl_dim_param);
  isl_size nset = isl_set_dim(r, isl_dim_set);
  r = isl_set_move_dims(r, isl_dim_param, nparam, isl_dim_set, 0, nset);
  // 3. make sure every wanted name is a parameter
  for (auto& d : dims) {
    if (isl_set_find_dim_by_name(r, isl_dim_param, d.c_str()) < 0) {
      isl_size np = isl_set_dim(r, isl_dim_param);
      r = isl_set_add_dims(r, isl_dim_param, 1);
      r = isl_set_set_dim_id(r, isl_dim_param, np, isl_id_alloc(isl_context(), d.c_str(), nullptr));
    }
  }
  // 4. move them back, in order
  for (size_t k = 0; k < dims.size(); ++k) {
    int pos = isl_set_find_dim_by_name(r, isl_dim_param, dims[k].c_str());
    r = isl_set_move_dims(r, isl_dim_set, unsigned(k), isl_dim_param, unsigned(pos), 1);
  }
  return isl::manage(check(r, "arrange_dims"));
}

std::string witness(const isl::set& s) {
  isl_point* pt = isl_set_sample_point(s.copy());
  if (!pt) return "";
  std::string out;
  for (isl_dim_type t : {isl_dim_param, isl_dim_set}) {
    isl_size n = isl_set_dim(s.get(), t);
    for (isl_size i = 0; i < n; ++i) {
      isl_val* v = isl_point_get_coordinate_val(pt, t, int(i));
      const char* name = isl_set_get_dim_name(s.get(), t, unsigned(i));
      out += (out.empty() ? "" : ", ") + std::string(name ? name : "?") + " = " + std::to_string(isl_val_get_num_si(v));
      isl_val_free(v);
    }
  }
  isl_point_free(pt);
  return out;
}

isl::set dims_to_params(isl::set s, const std::vector<std::string>& names) {
  isl_set* r = s.release();
  for (auto& n : names) {
    int pos = isl_set_find_dim_by_name(r, isl_dim_set, n.c_str());
    if (pos < 0) continue;
    isl_size np = isl_set_dim(r, isl_dim_param);
    r = isl_set_move_dims(r, isl_dim_param, np, isl_dim_set, unsigned(pos), 1);
  }
  return isl::manage(check(r, "dims_to_params"));
}

namespace {

isl_pw_aff* affine(const Expr& e, isl_space* space);

isl_pw_aff* constant(isl_space* space, int64_t v) {
  isl_local_space* ls = isl_local_space_from_space(isl_space_copy(space));
  isl_aff* a = isl_aff_val_on_domain(ls, isl_val_int_from_si(isl_space_get_ctx(space), v));
  return isl_pw_aff_from_aff(a);
}

bool constant_value(isl_pw_aff* p, int64_t& v) {
  if (!p || !isl_pw_aff_is_cst(p) || isl_pw_aff_n_piece(p) != 1) return false;
  isl_aff* a = nullptr;
  isl_pw_aff_foreach_piece(
      p, [](isl_set* s, isl_aff* aff, void* user) -> isl_stat {
        isl_set_free(s);
        *static_cast<isl_aff**>(user) = aff;
        return isl_stat_ok;
      },
      &a);
  if (!a) return false;
  isl_val* c = isl_aff_get_constant_val(a);
  bool ok = isl_val_is_int(c);
  if (ok) v = isl_val_get_num_si(c);
  isl_val_free(c);
  isl_aff_free(a);
  return ok;
}

isl_pw_aff* affine(const Expr& e, isl_space* space) {
  switch (e.kind()) {
    case ExprKind::Int: return constant(space, e.as<IntImm>()->value);
    case ExprKind::Var: {
      const std::string& n = e.as<Var>()->name;
      for (isl_dim_type t : {isl_dim_set, isl_dim_param}) {
        int pos = isl_space_find_dim_by_name(space, t, n.c_str());
        if (pos < 0) continue;
        isl_local_space* ls = isl_local_space_from_space(isl_space_copy(space));
        return isl_pw_aff_from_aff(isl_aff_var_on_domain(ls, t, unsigned(pos)));
      }
      return nullptr;
    }
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      if (u->op != UnOp::Neg) return nullptr;
      isl_pw_aff* a = affine(u->a, space);
      return a ? isl_pw_aff_neg(a) : nullptr;
    }
    case ExprKind::Cast: return e.type().is_int() ? affine(e.as<Cast>()->value, space) : nullptr;
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      isl_pw_aff* x = affine(b->a, space);
      if (!x) return nullptr;
      isl_pw_aff* y = affine(b->b, space);
      if (!y) {
        isl_pw_aff_free(x);
        return nullptr;
      }
      int64_t cx, cy;
      switch (b->op) {
        case BinOp::Add: return isl_pw_aff_add(x, y);
        case BinOp::Sub: return isl_pw_aff_sub(x, y);
        case BinOp::Mul:
          if (constant_value(x, cx) || constant_value(y, cy)) return isl_pw_aff_mul(x, y);
          break;
        case BinOp::FloorDiv:
          if (constant_value(y, cy) && cy > 0) return isl_pw_aff_floor(isl_pw_aff_div(x, y));
          break;
        case BinOp::Mod:
          if (constant_value(y, cy) && cy > 0) {
            isl_pw_aff_free(y);
            return isl_pw_aff_mod_val(x, isl_val_int_from_si(isl_space_get_ctx(space), cy));
          }
          break;
        case BinOp::TruncDiv:  // only produced for non-negative operands
          if (constant_value(y, cy) && cy > 0) return isl_pw_aff_floor(isl_pw_aff_div(x, y));
          break;
        default: break;
      }
      isl_pw_aff_free(x);
      isl_pw_aff_free(y);
      return nullptr;
    }
    case ExprKind::Call: {
      auto c = e.as<Call>();
      if ((c->name == "min" || c->name == "max") && c->args.size() == 2) {
        isl_pw_aff* x = affine(c->args[0], space);
        isl_pw_aff* y = x ? affine(c->args[1], space) : nullptr;
        if (!y) {
          isl_pw_aff_free(x);
          return nullptr;
        }
        return c->name == "min" ? isl_pw_aff_min(x, y) : isl_pw_aff_max(x, y);
      }
      return nullptr;
    }
    default: return nullptr;
  }
}

}  // namespace

isl::set condition_set(const Expr& c, const isl::space& space) {
  if (auto u = c.as<Unary>(); u && u->op == UnOp::Not) {
    isl::set s = condition_set(u->a, space);
    if (s.is_null()) return isl::set();  // (copying a null isl object throws)
    return isl::manage(isl_set_complement(s.release()));
  }
  if (auto cast = c.as<Cast>(); cast && cast->type.is_bool()) return condition_set(cast->value, space);
  auto b = c.as<Binary>();
  if (!b) return isl::set();  // (not {}: that would pick one of isl's implicit conversions)
  if (is_logical(b->op)) {
    isl::set x = condition_set(b->a, space), y = condition_set(b->b, space);
    if (x.is_null() || y.is_null()) return isl::set();
    return b->op == BinOp::And ? x.intersect(y) : isl::manage(isl_set_union(x.release(), y.release()));
  }
  if (!is_comparison(b->op)) return isl::set();
  isl::pw_aff x = islu::pw_aff_from_expr(b->a, space), y = islu::pw_aff_from_expr(b->b, space);
  if (x.is_null() || y.is_null()) return isl::set();
  isl_pw_aff *p = x.release(), *q = y.release();
  switch (b->op) {
    case BinOp::Lt: return isl::manage(isl_pw_aff_lt_set(p, q));
    case BinOp::Le: return isl::manage(isl_pw_aff_le_set(p, q));
    case BinOp::Gt: return isl::manage(isl_pw_aff_gt_set(p, q));
    case BinOp::Ge: return isl::manage(isl_pw_aff_ge_set(p, q));
    case BinOp::Eq: return isl::manage(isl_pw_aff_eq_set(p, q));
    default: return isl::manage(isl_pw_aff_ne_set(p, q));
  }
}


isl::pw_aff pw_aff_from_expr(const Expr& e, const isl::space& space) {
  isl_pw_aff* r = affine(e, space.get());
  return r ? isl::manage(r) : isl::pw_aff();
}

Expr expr_from_ast(isl_ast_expr* e, const std::map<std::string, std::string>& rename, Type it) {
  switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
      isl_val* v = isl_ast_expr_get_val(e);
      // (isl_val_get_num_si keeps the low bits of a larger value: refuse it instead)
      bool fits = isl_val_cmp_si(v, INT64_MAX) <= 0 && isl_val_cmp_si(v, INT64_MIN) >= 0;
      int64_t x = fits ? isl_val_get_num_si(v) : 0;
      char* text = fits ? nullptr : isl_val_to_str(v);
      std::string shown = text ? text : "";
      free(text);
      isl_val_free(v);
      if (!fits) throw KernelError("the value " + shown + " (a bound or extent computed from the domains) is beyond 64-bit integers");
      return make_int(x, it);
    }
    case isl_ast_expr_id: {
      isl_id* id = isl_ast_expr_get_id(e);
      std::string n = isl_id_get_name(id);
      isl_id_free(id);
      auto r = rename.find(n);
      return make_var(r == rename.end() ? n : r->second, it);
    }
    case isl_ast_expr_op: break;
    default: fail("unexpected AST expression");
  }
  int n = isl_ast_expr_get_op_n_arg(e);
  std::vector<Expr> a;
  for (int i = 0; i < n; ++i) {
    isl_ast_expr* arg = isl_ast_expr_get_op_arg(e, i);
    a.push_back(expr_from_ast(arg, rename, it));
    isl_ast_expr_free(arg);
  }
  auto bin = [&](BinOp op, Type t) {
    Expr r = make_binary(op, a[0], a[1], t);
    for (size_t i = 2; i < a.size(); ++i) r = make_binary(op, r, a[i], t);
    return r;
  };
  // isl writes "true" as the integer 1: a condition must be a boolean
  auto cond = [&](const Expr& x) {
    return x.type().is_bool() ? x : make_binary(BinOp::Ne, x, make_int(0, x.type()), types::boolean);
  };
  isl_ast_expr_op_type optype = isl_ast_expr_get_op_type(e);
  if (optype == isl_ast_expr_op_and || optype == isl_ast_expr_op_and_then || optype == isl_ast_expr_op_or ||
      optype == isl_ast_expr_op_or_else)
    for (auto& x : a) x = cond(x);
  if (optype == isl_ast_expr_op_cond || optype == isl_ast_expr_op_select) a[0] = cond(a[0]);
  auto fold_call = [&](const char* name) {
    Expr r = a[0];
    for (size_t i = 1; i < a.size(); ++i) r = make_call(name, {r, a[i]}, it);
    return r;
  };
  switch (isl_ast_expr_get_op_type(e)) {
    case isl_ast_expr_op_and: case isl_ast_expr_op_and_then: return bin(BinOp::And, types::boolean);
    case isl_ast_expr_op_or: case isl_ast_expr_op_or_else: return bin(BinOp::Or, types::boolean);
    case isl_ast_expr_op_max: return fold_call("max");
    case isl_ast_expr_op_min: return fold_call("min");
    case isl_ast_expr_op_minus: return make_unary(UnOp::Neg, a[0], it);
    case isl_ast_expr_op_add: return bin(BinOp::Add, it);
    case isl_ast_expr_op_sub: return bin(BinOp::Sub, it);
    case isl_ast_expr_op_mul: return bin(BinOp::Mul, it);
    case isl_ast_expr_op_div: return bin(BinOp::TruncDiv, it);  // exact division
    case isl_ast_expr_op_fdiv_q: return bin(BinOp::FloorDiv, it);
    case isl_ast_expr_op_pdiv_q: return bin(BinOp::TruncDiv, it);
    case isl_ast_expr_op_pdiv_r: return bin(BinOp::TruncRem, it);
    case isl_ast_expr_op_zdiv_r: return bin(BinOp::TruncRem, it);
    case isl_ast_expr_op_cond: case isl_ast_expr_op_select: return make_select(a[0], a[1], a[2], it);
    case isl_ast_expr_op_eq: return bin(BinOp::Eq, types::boolean);
    case isl_ast_expr_op_le: return bin(BinOp::Le, types::boolean);
    case isl_ast_expr_op_lt: return bin(BinOp::Lt, types::boolean);
    case isl_ast_expr_op_ge: return bin(BinOp::Ge, types::boolean);
    case isl_ast_expr_op_gt: return bin(BinOp::Gt, types::boolean);
    default: fail("unsupported isl AST operation");
  }
}

Expr expr_from_pw_aff(isl::pw_aff pa, const isl::set& context, Type it) {
  isl_ast_build* b = isl_ast_build_from_context(context.copy());
  isl_ast_expr* e = check(isl_ast_build_expr_from_pw_aff(b, pa.release()), "expr_from_pw_aff");
  Expr r = expr_from_ast(e, {}, it);
  isl_ast_expr_free(e);
  isl_ast_build_free(b);
  return r;
}

}  // namespace islu
}  // namespace loom
