// Parameter transformations: assume (constraints on the parameters, used by
// codegen and the bounds checks) and fix_parameters (a parameter becomes a
// constant everywhere: domains, instructions, shapes, assumptions).
#include <isl/set.h>
#include <isl/val.h>

#include <algorithm>

#include "loom/isl_util.h"
#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

isl_set* fix_param(isl_set* s, const std::string& name, int64_t v) {
  int pos = isl_set_find_dim_by_name(s, isl_dim_param, name.c_str());
  if (pos < 0) return s;
  s = isl_set_fix_val(s, isl_dim_param, unsigned(pos), isl_val_int_from_si(isl_set_get_ctx(s), long(v)));
  return isl_set_project_out(s, isl_dim_param, unsigned(pos), 1);
}
}  // namespace

LoopKernel assume(const LoopKernel& k, const std::string& constraints) {
  const std::string what = "assume('" + constraints + "')";
  std::string text = constraints;
  auto b = text.find_first_not_of(" \t\n");
  if (b == std::string::npos) refuse(k, what, "no constraints given");
  if (text[b] != '{' && text[b] != '[') text = "{ : " + text + " }";
  Domain a;
  try {
    a = Domain::parse(text);
  } catch (const std::exception& e) {
    refuse(k, what, e.what());
  }
  if (!a.inames().empty()) refuse(k, what, "assumptions constrain parameters only");
  auto params = k.parameters();
  for (auto& p : a.params())
    if (std::find(params.begin(), params.end(), p) == params.end())
      refuse(k, what, "'" + p + "' is not a parameter of the kernel");
  LoopKernel r = k;
  isl::set s = islu::to_isl(a);
  if (k.assumptions.defined()) s = s.intersect(islu::to_isl(k.assumptions));
  if (s.is_empty()) refuse(k, what, "the assumptions contradict each other");
  r.assumptions = islu::from_isl(s);
  // the reference order of reorderings holds under the same assumptions
  if (r.original) r.original = std::make_shared<const LoopKernel>(assume(*r.original, constraints));
  return r;
}

LoopKernel fix_parameters(const LoopKernel& k, const std::map<std::string, int64_t>& values) {
  LoopKernel r = k;
  std::map<std::string, Expr> repl;
  auto params = k.parameters();
  for (auto& [name, v] : values) {
    const std::string what = "fix_parameters(" + name + "=" + std::to_string(v) + ")";
    if (std::find(params.begin(), params.end(), name) == params.end()) refuse(k, what, "'" + name + "' is not a parameter");
    repl[name] = make_int(v);
    for (auto& d : r.domains.edit()) d = Domain(fix_param(d.copy(), name, v));
    if (r.assumptions.defined()) {
      r.assumptions = Domain(fix_param(r.assumptions.copy(), name, v));
      if (islu::to_isl(r.assumptions).is_empty()) refuse(k, what, "the value contradicts the kernel's assumptions");
    }
  }
  for (auto& insn : r.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = substitute(insn.lhs, repl);
    if (insn.rhs.defined()) insn.rhs = substitute(insn.rhs, repl);
    for (auto& p : insn.predicates) p = substitute(p, repl);
  }
  std::set<std::string> fixed;
  for (auto& [n, v] : repl) fixed.insert(n);
  transforms::rewrite_rule_bodies(r, fixed, [&](const Expr& e) { return substitute(e, repl); });
  std::vector<Argument> args;
  for (auto& a : r.arguments.edit()) {
    if (a.kind == Argument::Value && values.count(a.name)) continue;  // no longer an argument
    for (size_t d = 0; d < a.shape.size(); ++d) {
      Expr& s = a.shape[d];
      s = simplify(substitute(s, repl));
      if (auto c = s.as<IntImm>(); c && c->value < 0)
        refuse(k, "fix_parameters", "array '" + a.name + "' would have the negative extent " + std::to_string(c->value) +
                                        " in dimension " + std::to_string(d));
    }
    for (auto& s : a.strides) s = simplify(substitute(s, repl));
    if (a.offset.defined()) a.offset = simplify(substitute(a.offset, repl));
    args.push_back(a);
  }
  r.arguments = args;
  for (auto& [n, t] : r.temporaries.edit())
    for (auto& s : t.shape) s = simplify(substitute(s, repl));
  // the reference order of reorderings: the kernel as written, with the same values
  if (r.original) r.original = std::make_shared<const LoopKernel>(fix_parameters(*r.original, values));
  return r;
}

LoopKernel set_index_dtype(const LoopKernel& k, const std::string& dtype) {
  const std::string what = "set_index_dtype('" + dtype + "')";
  auto t = Type::parse(dtype);
  if (!t || (*t != types::int32 && *t != types::int64)) refuse(k, what, "the index dtype is int32 or int64");
  LoopKernel r = k;
  Type old = k.options.index_dtype;
  r.options.index_dtype = *t;
  // the parameters' value arguments are of the index type
  std::vector<std::string> params = k.parameters();
  for (auto& a : r.arguments.edit())
    if (a.kind == Argument::Value && a.dtype == old && std::find(params.begin(), params.end(), a.name) != params.end()) a.dtype = *t;
  if (r.original) r.original = std::make_shared<const LoopKernel>(set_index_dtype(*r.original, dtype));
  return r;
}

LoopKernel do_not_specialize(const LoopKernel& k, const std::string& params) {
  const std::string what = "do_not_specialize('" + params + "')";
  std::vector<std::string> names = transforms::name_list(params);
  if (names.empty()) refuse(k, what, "name at least one parameter");
  std::vector<std::string> known = k.parameters();
  LoopKernel r = k;
  for (auto& n : names) {
    if (std::find(known.begin(), known.end(), n) == known.end()) refuse(k, what, "'" + n + "' is not a parameter of the kernel");
    r.options.do_not_specialize.insert(n);
  }
  return r;
}

LoopKernel trust_unproven_accesses(const LoopKernel& k, bool trust) {
  LoopKernel r = k;
  r.options.trust_unproven_accesses = trust;
  return r;
}

void register_parameter_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"assume", "Add constraints on the parameters ('n >= 1 and n mod 16 = 0').",
           {TransformParam{"constraints", TransformParam::Text, true, "isl constraints on parameters"}.of(TransformParam::Type::Constraints)},
           [](const LoopKernel& k, const TransformArgs& a) { return assume(k, a.str("constraints")); },
           /*changes_interface=*/true});
  reg.add({"set_index_dtype",
           "The integer type of inames, parameters and index arithmetic: int32 (default) or int64 (arrays of more than 2^31 - 1 "
           "elements; loopy's index_dtype).",
           {TransformParam{"dtype", TransformParam::String, true, "int32 or int64"}.one_of({"int32", "int64"})},
           [](const LoopKernel& k, const TransformArgs& a) { return set_index_dtype(k, a.str("dtype")); }});
  reg.add({"do_not_specialize",
           "Parameters ('n, m') that calls keep general: the Python runtime makes no variant assuming them multiples of 16 "
           "(Triton's do_not_specialize), for schedules whose general code is the faster one.",
           {TransformParam{"params", TransformParam::TagMap, true, "comma-separated parameters"}.of(TransformParam::Type::Names)},
           [](const LoopKernel& k, const TransformArgs& a) { return do_not_specialize(k, a.str("params")); }});
  reg.add({"trust_unproven_accesses",
           "Run the accesses Loom cannot prove in bounds (a[idx[i]], loops bounded by values read from memory) without the "
           "run-time check the CPU and CUDA targets otherwise make (Triton's debug=False): for kernels whose data the caller vouches for.",
           {P{"trust", P::String, false, "true (default): no checks; false: checked again"}.of(P::Type::Bool).otherwise("true")},
           [](const LoopKernel& k, const TransformArgs& a) { return trust_unproven_accesses(k, a.flag("trust", true)); }});
  reg.add({"fix_parameters", "Give parameters constant values: 'n=128, m=64'.",
           {TransformParam{"values", TransformParam::KeywordMap, true, "name=value pairs"}.of(TransformParam::Type::KeywordMap)},
           [](const LoopKernel& k, const TransformArgs& a) {
             std::map<std::string, int64_t> v;
             std::string s = a.str("values");
             size_t pos = 0;
             while (pos < s.size()) {
               size_t end = s.find(',', pos);
               std::string item = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
               pos = end == std::string::npos ? s.size() : end + 1;
               auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
               if (b == std::string::npos) continue;
               item = item.substr(b, e - b + 1);
               auto eq = item.find_first_of("=:");
               try {
                 if (eq == std::string::npos) throw 0;
                 v[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
               } catch (...) {
                 throw TransformError("fix_parameters on kernel '" + k.name + "': expected name=integer, got '" + item + "'");
               }
             }
             return fix_parameters(k, v);
           },
           /*changes_interface=*/true});
}

}  // namespace loom
