// Helpers between Loom values and isl: turning Domains into isl::set and
// back, arranging a set's dimensions by name, converting affine Exprs to
// isl_pw_aff and isl AST expressions / pw_affs back to Exprs. Included only by
// .cpp files (isl/cpp.h is large).
#pragma once
#include <isl/cpp.h>

#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "loom/domain.h"
#include "loom/expr.h"

namespace loom::islu {

// Throws loom::Error with isl's last message when p is null.
template <class T>
T* check(T* p, const char* what);
[[noreturn]] void fail(const char* what);

isl::set to_isl(const Domain& d);
Domain from_isl(isl::set s);

std::vector<std::string> dim_names(isl_set* s, isl_dim_type type);
std::vector<std::string> dim_names(isl_space* s, isl_dim_type type);
int find_dim(isl_set* s, isl_dim_type type, const std::string& name);

// The set with exactly `dims` as set dimensions, in that order: set
// dimensions of s not listed are projected out, listed names that are
// parameters of s become dimensions, listed names s does not mention become
// unconstrained dimensions. Remaining parameters stay parameters.
isl::set arrange_dims(isl::set s, const std::vector<std::string>& dims);

// "n = 5, i = 4": a point of s (parameters, then set dimensions); "" when s is empty.
std::string witness(const isl::set& s);

// Turns the named set dimensions into parameters (hardware inames in codegen).
isl::set dims_to_params(isl::set s, const std::vector<std::string>& names);

// Expr over the set dimensions and parameters of `space` (a set space) to an
// isl_pw_aff on that space. Returns a null pw_aff when e is not affine
// (non-constant products, array accesses, floats, calls).
isl::pw_aff pw_aff_from_expr(const Expr& e, const isl::space& space);

// An affine condition (comparisons joined by and/or/not) as an isl set over
// `space`; a null set when it is not affine.
isl::set condition_set(const Expr& c, const isl::space& space);

// isl AST expression to Expr. `rename` maps isl identifiers (loop iterators)
// to Loom names; other identifiers keep their name. Integer types: index_type.
Expr expr_from_ast(isl_ast_expr* e, const std::map<std::string, std::string>& rename, Type index_type);

// A parameter-only pw_aff as an Expr, simplified under `context`.
Expr expr_from_pw_aff(isl::pw_aff pa, const isl::set& context, Type index_type);

template <class T>
T* check(T* p, const char* what) {
  if (!p) fail(what);
  return p;
}

}  // namespace loom::islu

namespace loom {
class LoopKernel;
struct AffineConstraint;
namespace islu {

// The iteration set of `inames` (set dimensions in that order): the
// intersection of the domains defining them and of the domains those depend
// on (inames used as parameters), with other inames projected out.
isl::set iteration_domain(const LoopKernel& k, const std::vector<std::string>& inames);

// The box 0 <= dims[d] < shape[d] in the kernel's parameters, named `tuple`
// (an array's elements, or a copy's loops); null where a shape is not
// affine in the parameters. `text`: what isl was given, for messages.
isl::set shape_box(const LoopKernel& k, const std::vector<Expr>& shape, const std::vector<std::string>& dims, const std::string& tuple = "",
                   std::string* text = nullptr);

// The kernel's assumptions as a parameter set (the universe when it has none).
isl::set assumptions_of(const LoopKernel& k);

// Whether c >= 0 at every point of the iteration set of `inames` (within
// `assumptions`, which may be null): one emptiness question to isl, with no
// projection and no subset test. A parameter of c that the set does not name
// is free (the answer covers its every value); nullopt when c names an iname
// outside the set, or isl cannot tell.
std::optional<bool> holds_on_iteration_domain(const LoopKernel& k, const std::vector<std::string>& inames, const AffineConstraint& c,
                                               const isl::set& assumptions);

// d as two independent domains: the inames coupled to `inames` through d's
// constraints (directly or through other inames), and the rest, each in d's
// order; nullopt when there is no rest or d is not one basic set without
// existentials (no split is proven then).
std::optional<std::pair<Domain, Domain>> separate_coupled(const Domain& d, const std::vector<std::string>& inames);

// The bounds set dimension `pos` of s lacks: "" when it has both (in terms of
// parameters or other dimensions), else "lower", "upper" or "lower or upper".
std::string missing_bound(isl_set* s, unsigned pos);

// The smallest and largest value of an iname over all parameter values;
// nullopt when either is unbounded (the range depends on the parameters).
std::optional<std::pair<int64_t, int64_t>> constant_range(const LoopKernel& k, const std::string& iname);

// Whether an iname can take two different values (for some parameter
// values): false only when its range is one value (or none).
bool takes_two_values(const LoopKernel& k, const std::string& iname);

// The maximum of `index` over `domain`, as a function of the parameters;
// null when index is not affine in the domain's dimensions and parameters.
isl::pw_aff max_over(const isl::set& domain, const Expr& index);
isl::pw_aff min_over(const isl::set& domain, const Expr& index);

}  // namespace islu
}  // namespace loom
