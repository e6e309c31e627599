// Argument inference for `...`: undeclared arrays get a shape from the
// bounding box of their accesses (isl), undeclared scalars and domain
// parameters become value arguments.
#include <algorithm>

#include "frontend_internal.h"
#include "loom/isl_util.h"
#include "loom/analysis.h"

namespace loom::frontend {

namespace {

// Calls fn(subscript, inames in scope) for every access in e, where the
// inames in scope are the instruction's plus those of enclosing reductions.
class ScopedAccessWalker : public ExprVisitor {
 public:
  using Fn = std::function<void(const Subscript&, const std::vector<std::string>&)>;
  ScopedAccessWalker(std::vector<std::string> scope, Fn fn) : scope_(std::move(scope)), fn_(std::move(fn)) {}

 protected:
  void visit_subscript(const Subscript& s) override {
    fn_(s, scope_);
    ExprVisitor::visit_subscript(s);
  }
  void visit_reduce(const Reduce& r) override {
    size_t n = scope_.size();
    scope_.insert(scope_.end(), r.inames.begin(), r.inames.end());
    visit(r.body);
    scope_.resize(n);
  }

 private:
  std::vector<std::string> scope_;
  Fn fn_;
};

}  // namespace

namespace {

// A 0-d array (x: float32[]) is named without brackets, as in loopy:
// its Vars become subscripts with no index.
class ZeroDimensionalAccesses : public ExprMutator {
 public:
  explicit ZeroDimensionalAccesses(std::set<std::string> names) : names_(std::move(names)) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& e) override {
    return names_.count(v.name) ? make_subscript(v.name, {}, v.type) : e;
  }

 private:
  std::set<std::string> names_;
};

void rewrite_zero_dimensional(LoopKernel& k) {
  std::set<std::string> names;
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array && a.shape.empty()) names.insert(a.name);
  if (names.empty()) return;
  ZeroDimensionalAccesses z(names);
  for (auto& insn : k.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = z.mutate(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = z.mutate(insn.rhs);
    for (auto& p : insn.predicates) p = z.mutate(p);
  }
  for (auto& [n, rule] : k.substitutions.edit()) rule.body = z.mutate(rule.body);
}

void infer_argument_list(LoopKernel& k, bool infer_rest);

}  // namespace

void infer_arguments(LoopKernel& k, bool infer_rest) {
  infer_argument_list(k, infer_rest);
  rewrite_zero_dimensional(k);
}


namespace {

// The largest index per axis of every array `wanted` accepts, over its
// accesses in every instruction (each over the instruction's iteration
// domain), in order of first appearance; `failure` says why an array's
// indices cannot be bounded.
struct IndexMaxima {
  std::vector<std::string> order;
  std::map<std::string, std::vector<isl::pw_aff>> maxima;
  std::map<std::string, std::string> failure;
};

IndexMaxima index_maxima(const LoopKernel& k, const std::function<bool(const std::string&)>& wanted) {
  IndexMaxima r;
  auto& order = r.order;
  auto& maxima = r.maxima;
  auto& failure = r.failure;
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::vector<std::string> scope(insn.within_inames.begin(), insn.within_inames.end());
    auto on_access = [&](const Subscript& s, const std::vector<std::string>& in_scope) {
      if (!wanted(s.name) || k.substitutions.count(s.name)) return;
      if (!maxima.count(s.name)) {
        order.push_back(s.name);
        maxima[s.name].resize(s.indices.size());
      }
      auto& mx = maxima[s.name];
      if (mx.size() != s.indices.size()) {
        failure[s.name] = "it is subscripted with different numbers of indices";
        return;
      }
      if (failure.count(s.name)) return;
      isl::set dom = islu::iteration_domain(k, in_scope);
      for (size_t ax = 0; ax < s.indices.size(); ++ax) {
        isl::pw_aff m = islu::max_over(dom, s.indices[ax]);
        if (m.is_null()) {
          failure[s.name] = "index '" + s.indices[ax].str() + "' is not affine in inames and parameters";
          return;
        }
        mx[ax] = mx[ax].is_null() ? m : isl::manage(isl_pw_aff_union_max(mx[ax].release(), m.release()));
      }
    };
    // substitution-rule calls expanded: an array used only in a rule's body is still an argument
    ScopedAccessWalker w(scope, on_access);
    w.visit(insn.lhs);
    w.visit(expand_rule_calls(k, insn.rhs));
    for (auto& p : insn.predicates) w.visit(expand_rule_calls(k, p));
  }
  return r;
}

// An array's shape from its largest indices: one past each, in the parameters.
std::vector<Expr> extents(const LoopKernel& k, const std::vector<isl::pw_aff>& maxima, const isl::set& context) {
  std::vector<Expr> shape;
  for (auto& m : maxima) {
    // an access whose domain is empty for every parameter value has no maximum:
    // the array is never touched, so its extent is 0
    if (isl_pw_aff_n_piece(m.get()) == 0) {
      shape.push_back(make_int(0, k.options.index_dtype));
      continue;
    }
    isl_pw_aff* ext = isl_pw_aff_add_constant_val(m.copy(), isl_val_one(isl_context()));
    shape.push_back(islu::expr_from_pw_aff(isl::manage(ext), context, k.options.index_dtype));
  }
  return shape;
}

void infer_argument_list(LoopKernel& k, bool infer_rest) {
  if (!infer_rest) {
    // parameters are integers: declared or not, each is an argument
    for (auto& p : k.parameters())
      if (!k.find_argument(p)) k.arguments.edit().push_back(Argument{Argument::Value, p, k.options.index_dtype, {}, {}, false, true});
    return;
  }
  std::set<std::string> declared;
  for (auto& a : k.arguments) declared.insert(a.name);
  for (auto& [n, t] : k.temporaries) declared.insert(n);
  std::vector<std::string> inames = k.all_inames();
  auto is_iname = [&](const std::string& n) { return std::find(inames.begin(), inames.end(), n) != inames.end(); };

  // arrays, in order of first appearance, with the max index per axis
  IndexMaxima im = index_maxima(k, [&](const std::string& n) { return !declared.count(n); });
  auto& order = im.order;
  auto& maxima = im.maxima;
  auto& failure = im.failure;
  isl::set context = islu::assumptions_of(k);
  for (auto& name : order) {
    if (failure.count(name))
      throw KernelError("kernel '" + k.name + "': cannot infer the shape of array '" + name + "': " + failure[name] +
                        "; declare it, e.g. " + name + ": float32[n]");
    Argument a;
    a.name = name;
    a.kind = Argument::Array;
    a.dtype = types::float32;
    a.dtype_inferred = a.shape_inferred = true;
    a.shape = extents(k, maxima[name], context);
    for (auto& extent : a.shape) {
      std::set<std::string> vars;
      collect_free_vars(extent, vars);
      for (auto& v : vars)
        if (k.find_temporary(v))
          throw KernelError("kernel '" + k.name + "': cannot infer the shape of array '" + name + "': its extent would be '" +
                            extent.str() + "', and '" + v + "' is a value the kernel computes; declare it with the parameter that sizes it, e.g. " +
                            name + ": float32[nnz]");
    }
    k.arguments.edit().push_back(std::move(a));
    declared.insert(name);
  }

  // scalars assigned but not declared: 0-d output arrays (loopy's rule for `...`)
  for (auto& insn : k.instructions) {
    auto v = insn.kind == Instruction::Assign ? insn.lhs.as<Var>() : nullptr;
    if (!v || declared.count(v->name) || is_iname(v->name)) continue;
    Argument a;
    a.name = v->name;
    a.kind = Argument::Array;
    // float32 as for other open arrays, but the index output of argmax/argmin is an integer
    auto red = insn.rhs.as<Reduce>();
    bool index = red && is_arg_reduction(red->op) && !is_arg_value_reduction(red->op);
    a.dtype = index ? k.options.index_dtype : types::float32;
    a.dtype_inferred = a.shape_inferred = true;
    k.arguments.edit().push_back(std::move(a));
    declared.insert(v->name);
  }

  // scalars used but not declared
  std::vector<std::string> scalars;
  auto params = k.parameters();
  for (auto& insn : k.instructions) {
    std::set<std::string> vars;
    collect_free_vars(insn.lhs, vars);
    if (insn.rhs.defined()) collect_free_vars(expand_rule_calls(k, insn.rhs), vars);
    for (auto& p : insn.predicates) collect_free_vars(expand_rule_calls(k, p), vars);
    for (auto& v : vars) {
      if (declared.count(v) || is_iname(v) || std::find(params.begin(), params.end(), v) != params.end()) continue;
      if (insn.lhs.as<Var>() && insn.lhs.as<Var>()->name == v) continue;  // an undeclared temporary: reported later
      if (std::find(scalars.begin(), scalars.end(), v) == scalars.end()) scalars.push_back(v);
    }
  }
  for (auto& v : scalars) {
    k.arguments.edit().push_back(Argument{Argument::Value, v, types::float32, {}, {}, false, true});
    declared.insert(v);
  }
  for (auto& p : k.parameters()) {
    if (declared.count(p)) continue;
    k.arguments.edit().push_back(Argument{Argument::Value, p, k.options.index_dtype, {}, {}, false, true});
    declared.insert(p);
  }
}

}  // namespace

std::vector<TransformStep> parse_transform_lines(const Source& src, size_t begin, size_t end) {
  const std::string& s = src.text();
  std::vector<TransformStep> out;
  size_t i = begin;
  while (i < end) {
    size_t eol = std::min(s.find('\n', i), end);
    // words of this line: bare words or "quoted strings"
    std::vector<std::pair<std::string, size_t>> words;
    size_t j = i;
    while (j < eol) {
      if (std::isspace(static_cast<unsigned char>(s[j]))) {
        ++j;
        continue;
      }
      if (s[j] == '#') break;
      size_t start = j;
      std::string w;
      if (s[j] == '"' || s[j] == '\'') {
        char q = s[j++];
        while (j < eol && s[j] != q) w += s[j++];
        if (j >= eol) src.fail(start, "unterminated string");
        ++j;
      } else {
        while (j < eol && !std::isspace(static_cast<unsigned char>(s[j]))) {
          if (s[j] == '=' && j + 1 < eol && (s[j + 1] == '"' || s[j + 1] == '\'')) {  // key="quoted value"
            w += s[j++];
            char q = s[j++];
            while (j < eol && s[j] != q) w += s[j++];
            if (j >= eol) src.fail(start, "unterminated string");
            ++j;
            break;
          }
          w += s[j++];
        }
      }
      words.push_back({w, start});
    }
    if (!words.empty()) {
      TransformStep step;
      step.name = words[0].first;
      step.loc = src.loc(words[0].second);
      for (size_t w = 1; w < words.size(); ++w) {
        const std::string& word = words[w].first;
        auto eq = word.find('=');
        // key=value where key is an identifier ("n>=1" is a word of a constraint, not a keyword)
        bool ident = eq != std::string::npos && eq > 0 && (std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_');
        for (size_t c = 0; ident && c < eq; ++c) ident = std::isalnum(static_cast<unsigned char>(word[c])) || word[c] == '_';
        if (ident) {
          std::string key = word.substr(0, eq);
          if (step.keyword.count(key)) src.fail(words[w].second, "argument '" + key + "' given twice");
          step.keyword[key] = word.substr(eq + 1);
        } else {
          if (!step.keyword.empty()) src.fail(words[w].second, "positional argument after keyword arguments");
          step.positional.push_back(word);
        }
      }
      out.push_back(std::move(step));
    }
    i = eol + 1;
  }
  return out;
}

void size_temporaries_by_accesses(LoopKernel& k, const std::set<std::string>& names) {
  if (names.empty()) return;
  IndexMaxima im = index_maxima(k, [&](const std::string& n) { return names.count(n) > 0; });
  isl::set context = islu::assumptions_of(k);
  for (auto& name : names) {
    if (im.failure.count(name))
      throw KernelError("kernel '" + k.name + "': cannot infer the shape of temporary '" + name + "': " + im.failure[name] +
                        "; declare it in the 'temporaries:' section, e.g. " + name + ": float32[16]");
    k.temporaries.edit()[name].shape = extents(k, im.maxima[name], context);
  }
}

}  // namespace loom::frontend

namespace loom {
std::vector<TransformStep> parse_transform_script(const std::string& text, const std::string& filename) {
  frontend::Source src(text, filename);
  return frontend::parse_transform_lines(src, 0, text.size());
}
}  // namespace loom
