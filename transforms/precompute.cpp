// precompute (loopy's name and arguments): the values of a substitution rule
// that the uses inside the sweep inames need are computed once into a
// temporary, by a new instruction over new inames (one per storage axis), and
// the uses read the temporary. Where the temporary lives decides what it buys:
// local memory shares values between a block's threads (a stencil's halo,
// a tile of a product), private memory keeps a thread's values in registers.
// The compute instruction runs only where a box point is used by some
// iteration (the footprint's hull, from isl), so a rule body is never
// evaluated where the untransformed kernel would not evaluate it.
#include "common.h"
#include "footprint.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

// The rules an expression calls (f(...), or a bare f for a rule without parameters).
class RuleCallFinder : public ExprVisitor {
 public:
  RuleCallFinder(const LoopKernel& k, std::set<std::string>& out) : k_(k), out_(out) {}

 protected:
  void visit_call(const Call& n) override {
    if (k_.substitutions.count(n.name)) out_.insert(n.name);
    ExprVisitor::visit_call(n);
  }
  void visit_var(const Var& n) override {
    if (k_.substitutions.count(n.name)) out_.insert(n.name);
  }

 private:
  const LoopKernel& k_;
  std::set<std::string>& out_;
};

// Appends Var(iname) arguments to the calls of the rules in `extra`.
class RuleCallWidener : public ExprMutator {
 public:
  explicit RuleCallWidener(const std::map<std::string, std::vector<std::string>>& extra) : extra_(extra) {}

 protected:
  Expr mutate_call(const Call& n, const Expr& self) override {
    Expr e = ExprMutator::mutate_call(n, self);
    auto it = extra_.find(n.name);
    if (it == extra_.end()) return e;
    std::vector<Expr> args = e.as<Call>()->args;
    for (auto& v : it->second) args.push_back(make_var(v));
    return make_call(n.name, args, n.type);
  }
  Expr mutate_var(const Var& n, const Expr& self) override {
    auto it = extra_.find(n.name);
    if (it == extra_.end()) return self;
    std::vector<Expr> args;
    for (auto& v : it->second) args.push_back(make_var(v));
    return make_call(n.name, args, n.type);
  }

 private:
  const std::map<std::string, std::vector<std::string>>& extra_;
};

// The inames rule `name` uses outside its parameters, directly or through
// the rules it calls.
std::set<std::string> inames_of_rule(const LoopKernel& k, const std::string& name, std::map<std::string, std::set<std::string>>& memo) {
  auto it = memo.find(name);
  if (it != memo.end()) return it->second;
  memo[name] = {};  // rules do not recurse; this only stops a cycle
  const SubstitutionRule& rule = k.substitutions.at(name);
  std::set<std::string> vars, calls, used;
  collect_free_vars(rule.body, vars);
  RuleCallFinder(k, calls).visit(rule.body);
  for (auto& c : calls)
    for (auto& v : inames_of_rule(k, c, memo)) vars.insert(v);
  for (auto& v : vars)
    if (k.has_iname(v) && std::find(rule.params.begin(), rule.params.end(), v) == rule.params.end()) used.insert(v);
  return memo[name] = used;
}

// loopy's reading of a rule that uses a sweep iname directly (E := a[i]):
// the iname is an argument of the rule, passed at every call. The rule and
// the rules it reaches that use sweep inames get them as extra parameters,
// so the sweep inames become storage axes like the other arguments.
LoopKernel sweep_inames_as_rule_parameters(const LoopKernel& k, const std::string& rule_name, const std::vector<std::string>& sweep) {
  std::set<std::string> sweep_set(sweep.begin(), sweep.end());
  std::map<std::string, std::set<std::string>> memo;
  std::map<std::string, std::vector<std::string>> extra;
  std::vector<std::string> todo{rule_name};
  std::set<std::string> seen;
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    std::set<std::string> used;
    for (auto& v : inames_of_rule(k, n, memo))
      if (sweep_set.count(v)) used.insert(v);
    if (used.empty()) continue;
    extra[n] = {used.begin(), used.end()};
    std::set<std::string> calls;
    RuleCallFinder(k, calls).visit(k.substitutions.at(n).body);
    todo.insert(todo.end(), calls.begin(), calls.end());
  }
  if (extra.empty()) return k;
  LoopKernel r = k;
  for (auto& insn : r.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = RuleCallWidener(extra).mutate(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = RuleCallWidener(extra).mutate(insn.rhs);
    for (auto& p : insn.predicates) p = RuleCallWidener(extra).mutate(p);
  }
  for (auto& [n, rule] : r.substitutions.edit()) {
    rule.body = RuleCallWidener(extra).mutate(rule.body);
    auto it = extra.find(n);
    if (it != extra.end()) rule.params.insert(rule.params.end(), it->second.begin(), it->second.end());
  }
  return r;
}

}  // namespace

LoopKernel precompute(const LoopKernel& k_in, const std::string& subst_use, const std::string& sweep_inames, const PrecomputeOptions& o) {
  const std::string what = "precompute('" + subst_use + "', '" + sweep_inames + "')";
  // loopy also takes a use pattern "f(i, j)": the rule's name is what selects here
  std::string rule_name = subst_use.substr(0, subst_use.find('('));
  while (!rule_name.empty() && rule_name.back() == ' ') rule_name.pop_back();
  if (!k_in.substitutions.count(rule_name)) refuse(k_in, what, "no substitution rule '" + rule_name + "'");
  const LoopKernel k = sweep_inames_as_rule_parameters(k_in, rule_name, name_list(sweep_inames));
  const SubstitutionRule& rule = k.substitutions.at(rule_name);

  transforms::FootprintRequest rq;
  rq.what = what;
  rq.name = rule_name;
  rq.rule = true;
  rq.sweep = name_list(sweep_inames);
  if (rq.sweep.empty()) refuse(k, what, "give the sweep inames");
  if (o.storage_axes.empty()) {
    for (size_t p = 0; p < rule.params.size(); ++p) rq.storage_axes.push_back(p);
  } else {
    for (auto& n : name_list(o.storage_axes)) {
      auto p = std::find(rule.params.begin(), rule.params.end(), n);
      if (p == rule.params.end()) refuse(k, what, "storage axis '" + n + "' is not a parameter of rule '" + rule_name + "'");
      rq.storage_axes.push_back(size_t(p - rule.params.begin()));
    }
  }
  AddressSpace space = AddressSpace::Private;
  if (o.temporary_address_space == "auto" || o.temporary_address_space.empty()) {
    // values shared between threads go where the threads can share them
    for (auto& s : rq.sweep)
      if (k.has_iname(s) && k.tag_of(s).kind == InameTag::Local) space = AddressSpace::Local;
  } else if (o.temporary_address_space == "local" || o.temporary_address_space == "shared") {
    space = AddressSpace::Local;
  } else if (o.temporary_address_space != "private") {
    refuse(k, what, "temporary_address_space '" + o.temporary_address_space + "' is not private, local or auto");
  }
  rq.local = space == AddressSpace::Local;
  rq.outer_inames = o.precompute_outer_inames;

  // inames the rule's body uses besides its parameters (directly or through
  // the rules it calls): the compute runs within them. The sweep inames among
  // them became parameters above.
  std::map<std::string, std::set<std::string>> memo;
  std::set<std::string> body_inames = inames_of_rule(k, rule_name, memo);

  transforms::Footprint fp = transforms::find_footprint(k, rq);
  if (!o.precompute_outer_inames) fp.outer.insert(body_inames.begin(), body_inames.end());
  for (auto& b : body_inames)
    if (!fp.outer.count(b)) refuse(k, what, "the body of rule '" + rule_name + "' uses iname '" + b + "', which is not among the outer inames");

  LoopKernel r = k;
  std::string temp = transforms::unique_name(k, o.temporary_name.empty() ? rule_name + "_0" : o.temporary_name);
  if (!o.temporary_name.empty() && temp != o.temporary_name) refuse(k, what, "temporary_name '" + o.temporary_name + "' is already taken");
  transforms::StorageLoops loops = transforms::add_storage_loops(r, k, rq, fp, rule_name, o.precompute_inames);
  Type dtype = types::unknown;
  if (!o.dtype.empty()) {
    auto t = Type::parse(o.dtype);
    if (!t) refuse(k, what, "unknown dtype '" + o.dtype + "'");
    dtype = *t;
  }
  Temporary t{temp, dtype, {}, space, {}, {}};
  for (int64_t e : fp.extent) t.shape.push_back(make_int(e));
  r.temporaries.edit()[temp] = t;

  // ---- the compute instruction: the rule's body at base + storage index ----
  std::map<std::string, Expr> bind;
  size_t fixed = 0;
  for (size_t p = 0; p < rule.params.size(); ++p) {
    auto a = std::find(rq.storage_axes.begin(), rq.storage_axes.end(), p);
    bind[rule.params[p]] = a != rq.storage_axes.end() ? loops.source[size_t(a - rq.storage_axes.begin())] : fp.fixed[fixed++];
  }
  Instruction compute;
  compute.id = o.compute_insn_id.empty() ? transforms::unique_instruction_id(r, "compute_" + rule_name) : o.compute_insn_id;
  for (auto& insn : r.instructions)
    if (insn.id == compute.id) refuse(k, what, "compute_insn_id '" + compute.id + "' is already taken");
  compute.lhs = rq.storage_axes.empty() ? make_var(temp) : make_subscript(temp, loops.index);
  compute.rhs = substitute(rule.body, bind);
  compute.within_inames = fp.outer;
  compute.within_inames.insert(loops.inames.begin(), loops.inames.end());
  compute.inames_given = true;
  compute.loc = k.instructions[fp.uses[0].insn].loc;
  compute.predicates = transforms::footprint_conditions(k, rq, fp, loops);
  transforms::drop_proven_predicates(r, compute);
  transforms::rewrite_uses(r, rq, fp, temp, compute.id);
  transforms::order_outer_before_sweep(r, rq, fp);
  r.instructions.edit().insert(r.instructions.edit().begin() + long(fp.uses[0].insn), compute);
  return transforms::tag_storage_loops(r, k, rq, fp, loops, o.default_tag.empty() ? "l.auto" : o.default_tag, compute.id);
}

void register_precompute_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"precompute",
           "Compute the values of a substitution rule that the sweep inames' uses need into a temporary, and read them from there.",
           {TransformParam{"subst_use", TransformParam::String, true, "the substitution rule (its name, or a use such as 'f(i)')"}.of(TransformParam::Type::Text),
            TransformParam{"sweep_inames", TransformParam::String, true, "inames whose uses the temporary covers ('i_inner')"}.of(TransformParam::Type::Inames),
            TransformParam{"storage_axes", TransformParam::String, false, "rule parameters that become the temporary's axes (default: all, in order)"}.of(TransformParam::Type::Names),
            TransformParam{"temporary_name", TransformParam::String, false, "name of the temporary (default <rule>_0)"}.of(TransformParam::Type::Name),
            TransformParam{"precompute_inames", TransformParam::String, false, "names of the compute inames, one per storage axis"}.of(TransformParam::Type::Names),
            TransformParam{"precompute_outer_inames", TransformParam::String, false, "inames around the compute (default: those the footprint depends on)"}.of(TransformParam::Type::Inames),
            TransformParam{"default_tag", TransformParam::String, false, "tag of the compute inames: l.auto (default: onto the block's local axes when local), for, unr, l.N"}.of(TransformParam::Type::FetchTag).otherwise("l.auto"),
            TransformParam{"temporary_address_space", TransformParam::String, false, "auto (default: local when a sweep iname is local), local or private"}.one_of({"auto", "local", "shared", "private"}).otherwise("auto").searched(TransformParam::Search::Choices),
            TransformParam{"compute_insn_id", TransformParam::String, false, "id of the compute instruction"}.of(TransformParam::Type::Name),
            TransformParam{"dtype", TransformParam::String, false, "dtype of the temporary (default: inferred)"}.of(TransformParam::Type::Dtype),
            TransformParam{"fetch_bounding_box", TransformParam::String, false, "accepted for loopy's scripts: the bounding box is always computed"}.of(TransformParam::Type::Bool)},
           [](const LoopKernel& k, const TransformArgs& a) {
             PrecomputeOptions o;
             o.storage_axes = a.str_or("storage_axes", "");
             o.temporary_name = a.str_or("temporary_name", "");
             o.precompute_inames = a.str_or("precompute_inames", "");
             if (a.has("precompute_outer_inames")) o.precompute_outer_inames = a.str("precompute_outer_inames");
             o.default_tag = a.str("default_tag");
             o.temporary_address_space = a.str("temporary_address_space");
             o.compute_insn_id = a.str_or("compute_insn_id", "");
             o.dtype = a.str_or("dtype", "");
             return precompute(k, a.str("subst_use"), a.str("sweep_inames"), o);
           }});
}

}  // namespace loom
