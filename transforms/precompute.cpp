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

LoopKernel precompute(const LoopKernel& k, const std::string& subst_use, const std::string& sweep_inames, const PrecomputeOptions& o) {
  const std::string what = "precompute('" + subst_use + "', '" + sweep_inames + "')";
  // loopy also takes a use pattern "f(i, j)": the rule's name is what selects here
  std::string rule_name = subst_use.substr(0, subst_use.find('('));
  while (!rule_name.empty() && rule_name.back() == ' ') rule_name.pop_back();
  auto it = k.substitutions.find(rule_name);
  if (it == k.substitutions.end()) refuse(k, what, "no substitution rule '" + rule_name + "'");
  const SubstitutionRule& rule = it->second;

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

  // inames the rule's body uses besides its parameters: the compute runs within them
  std::set<std::string> body_inames;
  {
    std::set<std::string> vars;
    collect_free_vars(rule.body, vars);
    for (auto& v : vars)
      if (k.has_iname(v) && std::find(rule.params.begin(), rule.params.end(), v) == rule.params.end()) body_inames.insert(v);
  }
  for (auto& s : rq.sweep)
    if (body_inames.count(s))
      refuse(k, what, "the body of rule '" + rule_name + "' uses sweep iname '" + s + "' directly, so its values are not a function of the storage axes");

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
  Temporary t{temp, dtype, {}, space};
  for (int64_t e : fp.extent) t.shape.push_back(make_int(e));
  r.temporaries[temp] = t;

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
  transforms::rewrite_uses(r, rq, fp, temp);
  transforms::order_outer_before_sweep(r, rq, fp);
  r.instructions.insert(r.instructions.begin() + long(fp.uses[0].insn), compute);
  return transforms::tag_storage_loops(r, k, rq, fp, loops, o.default_tag.empty() ? "l.auto" : o.default_tag);
}

void register_precompute_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"precompute",
           "Compute the values of a substitution rule that the sweep inames' uses need into a temporary, and read them from there.",
           {{"subst_use", P::String, true, "the substitution rule (its name, or a use such as 'f(i)')"},
            {"sweep_inames", P::String, true, "inames whose uses the temporary covers ('i_inner')"},
            {"storage_axes", P::String, false, "rule parameters that become the temporary's axes (default: all, in order)"},
            {"temporary_name", P::String, false, "name of the temporary (default <rule>_0)"},
            {"precompute_inames", P::String, false, "names of the compute inames, one per storage axis"},
            {"precompute_outer_inames", P::String, false, "inames around the compute (default: those the footprint depends on)"},
            {"default_tag", P::String, false, "tag of the compute inames: l.auto (default: onto the block's local axes when local), for, unr, l.N"},
            {"temporary_address_space", P::String, false, "auto (default: local when a sweep iname is local), local or private"},
            {"compute_insn_id", P::String, false, "id of the compute instruction"},
            {"dtype", P::String, false, "dtype of the temporary (default: inferred)"},
            {"fetch_bounding_box", P::String, false, "accepted for loopy's scripts: the bounding box is always computed"}},
           [](const LoopKernel& k, const TransformArgs& a) {
             PrecomputeOptions o;
             o.storage_axes = a.str_or("storage_axes", "");
             o.temporary_name = a.str_or("temporary_name", "");
             o.precompute_inames = a.str_or("precompute_inames", "");
             if (a.has("precompute_outer_inames")) o.precompute_outer_inames = a.str("precompute_outer_inames");
             o.default_tag = a.str_or("default_tag", "l.auto");
             o.temporary_address_space = a.str_or("temporary_address_space", "auto");
             o.compute_insn_id = a.str_or("compute_insn_id", "");
             o.dtype = a.str_or("dtype", "");
             return precompute(k, a.str("subst_use"), a.str("sweep_inames"), o);
           }});
}

}  // namespace loom
