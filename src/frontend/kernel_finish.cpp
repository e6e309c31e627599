// The last steps of building a kernel from text or JSON: the inames each
// instruction runs within (loopy's rule) and the check that every name an
// instruction uses is declared. Both front ends (kernel_parser.cpp, json.cpp)
// call them, so a kernel means the same whichever way it was written.
#include <algorithm>
#include <iterator>
#include <optional>
#include <fnmatch.h>
#include <isl/set.h>

#include "frontend_internal.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom::frontend {

namespace {

// The inames a substitution rule's body uses free (not its params), for each call in e.
void for_each_rule_call(const LoopKernel& kernel, const Expr& e, std::set<std::string>& used) {
  struct V : ExprVisitor {
    const LoopKernel* k;
    std::set<std::string>* used;
    int depth = 0;
    void visit_call(const Call& c) override {
      ExprVisitor::visit_call(c);
      auto it = k->substitutions.find(c.name);
      if (it == k->substitutions.end() || depth > 32) return;
      std::set<std::string> in_body;
      collect_free_vars(it->second.body, in_body);
      for (auto& p : it->second.params) in_body.erase(p);
      used->insert(in_body.begin(), in_body.end());
      ++depth;
      visit(it->second.body);
      --depth;
    }
  } v;
  v.k = &kernel;
  v.used = &used;
  v.visit(e);
}

}  // namespace

// Unique ids: instructions without one get insn_N; dependency globs (dep=upd*) expand.
void assign_ids(LoopKernel& kernel) {
  std::set<std::string> used;
  for (auto& insn : kernel.instructions) {
    if (insn.id.empty()) continue;
    if (!used.insert(insn.id).second)
      throw ParseError(insn.loc, "instruction id '" + insn.id + "' is used twice");
  }
  int k = 0;
  for (auto& insn : kernel.instructions.edit()) {
    if (!insn.id.empty()) continue;
    std::string id;
    do {
      id = "insn_" + std::to_string(k++);
    } while (used.count(id));
    used.insert(id);
    insn.id = id;
  }
  // expand dependency globs (dep=upd*) against all ids
  for (auto& insn : kernel.instructions.edit()) {
    std::set<std::string> deps;
    for (auto& d : insn.depends_on) {
      if (d.find_first_of("*?[") == std::string::npos) {
        if (!used.count(d)) throw ParseError(insn.loc, "dep=: no instruction with id '" + d + "'");
        deps.insert(d);
        continue;
      }
      for (auto& other : kernel.instructions)
        if (other.id != insn.id && fnmatch(d.c_str(), other.id.c_str(), 0) == 0) deps.insert(other.id);
    }
    insn.depends_on = deps;
  }
}
// Inames an instruction runs within: those its expressions use outside of
// reductions over them (loopy's rule), or exactly the ones given by inames=.
void infer_within_inames(const LoopKernel& kernel, Instruction& insn, const std::set<std::string>& inames) {
  if (insn.kind != Instruction::Assign) return;
  std::set<std::string> used;
  collect_free_vars(insn.lhs, used);
  collect_free_vars(insn.rhs, used);
  for (auto& p : insn.predicates) collect_free_vars(p, used);
  // Substitution-rule calls: the inames the rule body uses free (not its params)
  for_each_rule_call(kernel, insn.rhs, used);
  std::set<std::string> found;
  for (auto& u : used)
    if (inames.count(u)) found.insert(u);
  if (insn.inames_given) {
    for (auto& f : found)
      if (!insn.within_inames.count(f))
        throw ParseError(insn.loc, "instruction '" + insn.id + "' uses iname '" + f + "' but inames= does not list it");
    return;
  }
  insn.within_inames.insert(found.begin(), found.end());  // (with those of enclosing `for` blocks)
  add_domain_parents(kernel, insn, inames);
}

// An iname whose domain depends on another iname ([i] -> {[j]: ...}) only
// has values inside that iname's loop, so the instruction runs within both
// (loopy's domain-based propagation, to a fixed point).
bool add_domain_parents(const LoopKernel& kernel, Instruction& insn, const std::set<std::string>& inames) {
  bool any = false;
  for (bool grew = true; grew;) {
    grew = false;
    for (const std::string& n : std::set<std::string>(insn.within_inames)) {
      int d = kernel.domain_of(n);
      if (d < 0) continue;
      for (const std::string& p : kernel.domains[d].params())
        if (inames.count(p) && insn.within_inames.insert(p).second) grew = any = true;
    }
  }
  return any;
}

// loopy's propagation from writers: an instruction that reads a variable
// runs within the inames that every writer of it runs within implicitly
// (not reducing over them, not naming them in the written subscript): a
// scalar temporary set inside loops i and j is read inside them too.
// Every writer counts, the reader itself included (loopy's
// guess_iname_deps_based_on_var_use): `c[i, j1] = 2 * c[i, j1]` followed by
// `c[i, j2] = c[i, j2] + a[i, k]` must not put the scaling inside the
// accumulation's k loop (it would scale c n times); its own implicit inames
// (none) keep the intersection empty.
// To a fixed point, with the domain parents, as loopy does.
void propagate_inames_from_writers(LoopKernel& kernel, const std::set<std::string>& inames) {
  auto implicit = [&](const Instruction& w) {
    std::set<std::string> r = w.within_inames;
    std::set<std::string> named;
    if (w.lhs.as<Subscript>()) collect_free_vars(w.lhs, named);
    for (auto& n : named) r.erase(n);
    return r;
  };
  // the writers of each name (an index: looking them up per read would be quadratic)
  std::map<std::string, std::vector<size_t>> writers;
  for (size_t i = 0; i < kernel.instructions.size(); ++i)
    if (kernel.instructions[i].kind == Instruction::Assign) writers[kernel.instructions[i].assignee_name()].push_back(i);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& insn : kernel.instructions.edit()) {
      if (insn.kind != Instruction::Assign || insn.inames_given) continue;
      std::set<std::string> add;
      for (auto& v : insn.read_names()) {
        auto ws = writers.find(v);
        if (ws == writers.end()) continue;
        std::optional<std::set<std::string>> common;  // over the writers of v
        for (size_t wi_index : ws->second) {
          const Instruction& w = kernel.instructions[wi_index];
          std::set<std::string> wi = implicit(w);
          if (!common) {
            common = wi;
            continue;
          }
          std::set<std::string> both;
          std::set_intersection(common->begin(), common->end(), wi.begin(), wi.end(), std::inserter(both, both.end()));
          common = both;
        }
        if (common) add.insert(common->begin(), common->end());
      }
      // (an iname the reader reduces over is its reduction's loop, not one around it:
      // `for j <> t = a[i, j] end; out[i] = sum(j, t)`)
      std::set<std::string> reduced;
      collect_reduction_inames(insn.rhs, reduced);
      for (auto& n : add)
        if (!reduced.count(n) && insn.within_inames.insert(n).second) changed = true;
      if (add_domain_parents(kernel, insn, inames)) changed = true;
    }
  }
}

namespace {
// Every call of a substitution rule passes as many arguments as the rule has parameters.
template <class Fail>
void check_rule_calls(const LoopKernel& kernel, const Expr& e, Fail fail) {
  struct V : ExprVisitor {
    const LoopKernel* k;
    std::string bad;
    void visit_call(const Call& c) override {
      ExprVisitor::visit_call(c);
      auto it = k->substitutions.find(c.name);
      if (bad.empty() && it != k->substitutions.end() && it->second.params.size() != c.args.size())
        bad = "substitution rule '" + c.name + "' takes " + std::to_string(it->second.params.size()) + " argument(s), called with " +
              std::to_string(c.args.size());
    }
  } v;
  v.k = &kernel;
  if (e.defined()) v.visit(e);
  if (!v.bad.empty()) fail(v.bad);
}
}  // namespace

// Every loop an instruction runs in (or reduces over) has both ends in the
// instruction's iteration set: {[i, j]: 0 <= i < n} read by a sum over j, or
// i bounded only by an iname nothing runs in, sent isl's shape inference and
// AST generation into "unbounded optimum" (found by the mutation fuzzer).
void check_bounded_inames(const LoopKernel& kernel) {
  for (auto& insn : kernel.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> used = insn.iteration_inames();
    // (before argument inference, whose shapes would ask isl about the iname twice)
    std::set<std::string> reduced;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    for (auto& n : reduced)
      if (insn.within_inames.count(n))
        throw ParseError(insn.loc, "instruction '" + insn.id + "' reduces over '" + n + "', but the instruction already runs within '" + n +
                                       "' (its left-hand side or its inames use it)");
    std::vector<std::string> names;
    for (auto& n : kernel.all_inames())
      if (used.count(n)) names.push_back(n);
    if (names.empty()) continue;
    isl::set dom;
    try {
      dom = islu::iteration_domain(kernel, names);
    } catch (const Error&) {
      continue;  // (an iname no domain defines: check_names says so)
    }
    if (dom.is_null() || isl_set_plain_is_empty(dom.get()) == isl_bool_true) continue;
    for (size_t i = 0; i < names.size(); ++i) {
      int pos = isl_set_find_dim_by_name(dom.get(), isl_dim_set, names[i].c_str());
      if (pos < 0) continue;
      std::string missing = islu::missing_bound(dom.get(), unsigned(pos));
      if (!missing.empty())
        throw ParseError(insn.loc, "instruction '" + insn.id + "' runs over iname '" + names[i] + "', which has no " + missing +
                                       " bound in its domain " + kernel.domains[size_t(kernel.domain_of(names[i]))].str() +
                                       "; every loop needs both ends");
    }
  }
}

// Every variable must be an iname, parameter, argument or temporary, and
// every array access must name an array argument or temporary.
void check_names(const LoopKernel& kernel) {
  for (auto& [n, r] : kernel.substitutions)
    check_rule_calls(kernel, r.body, [&](const std::string& why) { throw KernelError("kernel '" + kernel.name + "': " + why + " in the body of rule '" + n + "'"); });
  std::set<std::string> known;
  for (auto& n : kernel.all_inames()) known.insert(n);
  for (auto& n : kernel.parameters()) known.insert(n);
  for (auto& a : kernel.arguments) known.insert(a.name);
  for (auto& [n, t] : kernel.temporaries) known.insert(n);
  for (auto& [n, r] : kernel.substitutions)  // a rule without parameters is used as a name (assignment_to_subst of a scalar)
    if (r.params.empty()) known.insert(n);
  // an array's size is known before the kernel runs: parameters only
  for (auto& a : kernel.arguments) {
    std::set<std::string> vars;
    for (auto& e : a.shape) collect_free_vars(e, vars);
    for (auto& e : a.strides) collect_free_vars(e, vars);
    if (a.offset.defined()) collect_free_vars(a.offset, vars);
    for (auto& v : vars)
      if (kernel.find_temporary(v))
        throw KernelError("kernel '" + kernel.name + "': array '" + a.name + "' is sized by '" + v +
                          "', a temporary the kernel computes; shapes, strides and offsets take parameters");
  }
  for (auto& insn : kernel.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> vars;
    collect_free_vars(insn.lhs, vars);
    collect_free_vars(insn.rhs, vars);
    for (auto& pr : insn.predicates) collect_free_vars(pr, vars);
    for (auto& v : vars) {
      if (known.count(v)) continue;
      if (kernel.find_argument(v)) continue;
      throw ParseError(insn.loc, "unknown name '" + v + "' in instruction '" + insn.id +
                                     "' (not an iname, parameter, argument or temporary; declare it or add '...' to the arguments)");
    }
    auto check_sub = [&](const Subscript& s) {
      const Argument* a = kernel.find_argument(s.name);
      const Temporary* t = kernel.find_temporary(s.name);
      if (!a && !t) {
        std::vector<std::string> names;
        for (auto& arg : kernel.arguments)
          if (arg.kind == Argument::Array) names.push_back(arg.name);
        for (auto& [n, tmp] : kernel.temporaries) names.push_back(n);
        throw ParseError(insn.loc, "unknown array '" + s.name + "' in instruction '" + insn.id + "'" + did_you_mean(s.name, names));
      }
      size_t rank = a ? a->shape.size() : t->shape.size();
      if (a && a->kind == Argument::Value)
        throw ParseError(insn.loc, "'" + s.name + "' is a value argument and cannot be subscripted");
      if (rank != s.indices.size())
        throw ParseError(insn.loc, "'" + s.name + "' has " + std::to_string(rank) + " dimension(s) but is subscripted with " +
                                       std::to_string(s.indices.size()) + " in instruction '" + insn.id + "'");
    };
    for_each_subscript(insn.lhs, check_sub);
    for_each_subscript(insn.rhs, check_sub);
    check_rule_calls(kernel, insn.rhs, [&](const std::string& why) { throw ParseError(insn.loc, why + " in instruction '" + insn.id + "'"); });
    for (auto& pr : insn.predicates)
      check_rule_calls(kernel, pr, [&](const std::string& why) { throw ParseError(insn.loc, why + " in instruction '" + insn.id + "'"); });
    if (auto v = insn.lhs.as<Var>()) {
      const Argument* a = kernel.find_argument(v->name);
      if (a) throw ParseError(insn.loc, "cannot assign to argument '" + v->name + "' (only arrays and temporaries are written)");
      if (kernel.has_iname(v->name)) throw ParseError(insn.loc, "cannot assign to iname '" + v->name + "'");
    }
  }
}

}  // namespace loom::frontend

namespace loom::frontend {

namespace {

// The inames an expression uses: variables and the reductions' inames.
struct InameUses : ExprVisitor {
  const LoopKernel& k;
  std::set<std::string>& out;
  InameUses(const LoopKernel& kernel, std::set<std::string>& o) : k(kernel), out(o) {}
  void visit_var(const Var& v) override {
    if (k.has_iname(v.name)) out.insert(v.name);
  }
  void visit_reduce(const Reduce& r) override {
    out.insert(r.inames.begin(), r.inames.end());
    ExprVisitor::visit_reduce(r);
  }
};

}  // namespace

void record_original(LoopKernel& k) {
  // rules expanded, so the inames of the reductions inside them count too
  std::optional<LoopKernel> expanded;
  if (!k.substitutions.empty()) {
    try {
      expanded = expand_substitutions(k);
    } catch (const Error&) {
      // a broken rule is reported where the kernel is compiled
    }
  }
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    Instruction& insn = k.instructions.edit()[i];
    std::set<std::string> used = insn.within_inames;
    const LoopKernel& source = expanded ? *expanded : k;
    if (i < source.instructions.size() && source.instructions[i].id == insn.id) {
      const Instruction& e = source.instructions[i];
      InameUses u(k, used);
      if (e.lhs.defined()) u.visit(e.lhs);
      if (e.rhs.defined()) u.visit(e.rhs);
      for (auto& p : e.predicates) u.visit(p);
    }
    std::map<std::string, Expr> origin;
    for (auto& n : used) origin[n] = make_var(n, k.options.index_dtype);
    insn.origin = origin;
    insn.origin_of.clear();
  }
  k.original.reset();
  k.original = std::make_shared<const LoopKernel>(k);
}

void infer_written_dtypes(LoopKernel& k) {
  bool open = false;
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array && a.dtype_inferred && k.is_written(a.name)) open = true;
  if (!open) return;
  try {
    LoopKernel typed = add_dtypes(k, {});
    std::map<std::string, Type> found;
    for (auto& a : typed.arguments) found[a.name] = a.dtype;
    for (auto& a : k.arguments.edit())
      if (a.kind == Argument::Array && a.dtype_inferred) a.dtype = found[a.name];
  } catch (const Error&) {
    // a kernel whose types do not work out: preprocessing says why, at the instruction
  }
}

}  // namespace loom::frontend
