// Temporaries per iteration (loopy's names): privatize_temporaries_with_inames
// gives a temporary one copy per iteration of an iname (a new leading axis
// indexed by the iname), so iterations that must not share it do not;
// unprivatize_temporaries_with_inames takes such an axis away again where
// every access uses the slot of its own iteration; rename_temporary renames.
#include <cctype>
#include <functional>

#include "common.h"
#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/schedule.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

void map_accesses(LoopKernel& r, const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn) {
  for (auto& insn : r.instructions.edit())
    if (insn.kind == Instruction::Assign) transforms::map_temporary_accesses(insn, t, fn);
}

bool accesses(const Instruction& insn, const std::string& t) {
  return insn.kind == Instruction::Assign && (insn.assignee_name() == t || insn.reads(t));
}

// The temporaries a transformation applies to: only_var_names, or those written within one of `inames`.
std::vector<std::string> chosen_temporaries(const LoopKernel& k, const std::string& what, const std::vector<std::string>& inames,
                                            const std::string& only_var_names) {
  std::vector<std::string> r;
  if (!only_var_names.empty()) {
    for (auto& n : name_list(only_var_names)) {
      if (!k.find_temporary(n)) refuse(k, what, "no temporary '" + n + "'");
      r.push_back(n);
    }
    return r;
  }
  for (auto& [n, t] : k.temporaries)
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::Assign && insn.assignee_name() == n &&
          std::any_of(inames.begin(), inames.end(), [&](auto& i) { return insn.within_inames.count(i) != 0; })) {
        r.push_back(n);
        break;
      }
  return r;
}

}  // namespace

LoopKernel privatize_temporaries_with_inames(const LoopKernel& k, const std::string& privatizing_inames, const std::string& only_var_names) {
  const std::string what = "privatize_temporaries_with_inames('" + privatizing_inames + "')";
  std::vector<std::string> inames = name_list(privatizing_inames);
  if (inames.empty()) refuse(k, what, "give the privatizing inames");
  std::map<std::string, std::pair<int64_t, int64_t>> range;
  for (auto& i : inames)
    if (!k.has_iname(i)) refuse(k, what, "no iname '" + i + "'");
  std::vector<std::string> temps = chosen_temporaries(k, what, inames, only_var_names);
  if (temps.empty()) refuse(k, what, "no temporary is written within these inames");
  LoopKernel r = k;
  for (auto& t : temps) {
    std::vector<std::string> axes;  // the inames every access of t runs within
    for (auto& i : inames) {
      bool all_within = true, any_write = false;
      for (auto& insn : k.instructions) {
        if (!accesses(insn, t)) continue;
        all_within &= insn.within_inames.count(i) != 0;
        any_write |= insn.assignee_name() == t && insn.within_inames.count(i);
      }
      if (!any_write) continue;
      if (!all_within)
        refuse(k, what, "temporary '" + t + "' is accessed outside iname '" + i + "', so its value crosses iterations of '" + i +
                            "' and one copy per iteration would change the result");
      if (!range.count(i)) {
        auto rg = islu::constant_range(k, i);
        if (!rg) refuse(k, what, "iname '" + i + "' has a range that depends on the parameters; split it and privatize with the inner iname");
        range[i] = *rg;
      }
      axes.push_back(i);
    }
    if (axes.empty()) continue;
    Temporary& tv = r.temporaries.edit().at(t);
    std::vector<Expr> shape;
    for (auto& a : axes) shape.push_back(make_int(range[a].second - range[a].first + 1));
    shape.insert(shape.end(), tv.shape.begin(), tv.shape.end());
    tv.shape = shape;
    // copies per iteration for one thread each, as asked: an auto temporary now
    // indexed by a local iname would otherwise become local by loopy's rule
    if (tv.space == AddressSpace::Auto) tv.space = AddressSpace::Private;
    map_accesses(r, t, [&](std::vector<Expr> idx, Type type) {
      std::vector<Expr> lead;
      for (auto& a : axes) lead.push_back(range[a].first == 0 ? make_var(a) : make_var(a) - make_int(range[a].first));
      lead.insert(lead.end(), idx.begin(), idx.end());
      return make_subscript(t, lead, type);
    });
  }
  return r;
}

LoopKernel unprivatize_temporaries_with_inames(const LoopKernel& k, const std::string& privatizing_inames, const std::string& only_var_names) {
  const std::string what = "unprivatize_temporaries_with_inames('" + privatizing_inames + "')";
  std::vector<std::string> inames = name_list(privatizing_inames);
  if (inames.empty()) refuse(k, what, "give the inames");
  for (auto& i : inames)
    if (!k.has_iname(i)) refuse(k, what, "no iname '" + i + "'");
  std::vector<std::string> temps = chosen_temporaries(k, what, inames, only_var_names);
  LoopKernel r = k;
  int changed = 0;
  for (auto& t : temps) {
    const Temporary& tv = k.temporaries.at(t);
    for (auto& i : inames) {
      // the axis indexed by i + c with one c in every access, every access within i
      std::optional<size_t> axis;
      std::optional<Expr> form;
      bool ok = true;
      for (auto& insn : k.instructions) {
        if (!accesses(insn, t)) continue;
        ok &= insn.within_inames.count(i) != 0;
        auto check = [&](const Expr& e) {
          if (auto s = e.as<Subscript>(); s && s->name == t) {
            std::optional<size_t> found;
            for (size_t d = 0; d < s->indices.size(); ++d) {
              auto f = affine_form(s->indices[d]);
              if (f && f->coef.size() == 1 && f->coef.count(i) && f->coef.at(i) == 1) found = d;
            }
            if (!found || (axis && *axis != *found) || (form && !form->same_as(s->indices[*found]))) ok = false;
            if (found) {
              axis = found;
              form = s->indices[*found];
            }
          } else if (auto v = e.as<Var>(); v && v->name == t) {
            ok = false;
          }
        };
        check(insn.lhs);
        for_each_subscript(insn.rhs, [&](const Subscript& s) {
          if (s.name == t) check(make_subscript(s.name, s.indices));
        });
        for (auto& p : insn.predicates)
          for_each_subscript(p, [&](const Subscript& s) {
            if (s.name == t) check(make_subscript(s.name, s.indices));
          });
      }
      if (!ok || !axis) continue;
      if (tv.space == AddressSpace::Local && k.tag_of(i).kind == InameTag::Local)
        refuse(k, what, "temporary '" + t + "' is local and '" + i + "' runs on the block's threads: one copy for all of them would be a race");
      Temporary& rt = r.temporaries.edit().at(t);
      rt.shape.erase(rt.shape.begin() + long(*axis));
      size_t ax = *axis;
      map_accesses(r, t, [&](std::vector<Expr> idx, Type type) {
        idx.erase(idx.begin() + long(ax));
        return idx.empty() ? make_var(t, type) : make_subscript(t, idx, type);
      });
      ++changed;
      break;
    }
  }
  if (changed == 0) refuse(k, what, "no temporary has an axis indexed by these inames in every access");
  return r;
}

namespace {

// k with old_name renamed to new_name in the instructions `renamed` (all, when
// null) and in its substitution rules (when all are).
LoopKernel renamed_temporary(const LoopKernel& k, const std::string& old_name, const std::string& new_name,
                             const std::set<std::string>* renamed) {
  LoopKernel r = k;
  Temporary t = r.temporaries.at(old_name);
  t.name = new_name;
  r.temporaries.edit()[new_name] = t;
  bool scalar = t.shape.empty();
  auto rename = [&](std::vector<Expr> idx, Type type) { return scalar ? make_var(new_name, type) : make_subscript(new_name, idx, type); };
  bool left = false;  // (an access of the old name stays)
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind != Instruction::Assign) continue;
    if (!renamed || renamed->count(insn.id)) transforms::map_temporary_accesses(insn, old_name, rename);
    else left |= accesses(insn, old_name);
  }
  if (!renamed)
    for (auto& [n, rule] : r.substitutions.edit()) rule.body = transforms::map_temporary_accesses(rule.body, old_name, rename);
  if (!left) r.temporaries.edit().erase(old_name);
  return r;
}

}  // namespace

LoopKernel rename_temporary(const LoopKernel& k, const std::string& old_name, const std::string& new_name, const std::string& within) {
  const std::string what = "rename_temporary('" + old_name + "', '" + new_name + "')";
  if (!k.find_temporary(old_name)) refuse(k, what, "no temporary '" + old_name + "'");
  if (new_name.empty()) refuse(k, what, "give the new name");
  if (k.name_taken(new_name))
    refuse(k, what, "the name '" + new_name + "' is already taken");
  for (char c : new_name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) refuse(k, what, "'" + new_name + "' is not a name");
  if (std::isdigit(static_cast<unsigned char>(new_name[0]))) refuse(k, what, "'" + new_name + "' is not a name");
  if (within.empty()) return renamed_temporary(k, old_name, new_name, nullptr);

  // A web of its own: only the accesses of the matching instructions, where
  // isl proves on the kernel as written that no value flows between them and
  // the others (each read gets its value from the same write after the
  // renaming). The step is applied to the kernel as written too (it reads
  // the same values in the same order), so the reorder check compares both
  // temporaries there.
  for (auto& [n, rule] : k.substitutions) {
    bool reads = false;
    if (rule.body.defined()) transforms::map_temporary_accesses(rule.body, old_name, [&](auto, Type) { return reads = true, make_int(0); });
    if (reads)
      refuse(k, what, "substitution rule '" + n + "' accesses '" + old_name + "': rename every access (no within), or expand the rule first");
  }
  const LoopKernel& as_written = k.original ? *k.original : k;
  if (!as_written.find_temporary(old_name)) refuse(k, what, "the kernel as written has no temporary '" + old_name + "', where the renaming is proven");
  if (as_written.name_taken(new_name)) refuse(k, what, "the name '" + new_name + "' is taken in the kernel as written");
  std::set<std::string> chosen, chosen_as_written;  // (an instruction of the kernel as written: its id, or what it came from)
  for (auto& id : find_instructions(k, within)) {
    const Instruction& insn = k.instruction(id);
    if (!accesses(insn, old_name)) continue;
    chosen.insert(id);
    chosen_as_written.insert(insn.origin_of.empty() ? id : insn.origin_of);
  }
  if (chosen.empty()) refuse(k, what, "no instruction matching '" + within + "' accesses '" + old_name + "'");
  for (auto& insn : k.instructions) {
    std::string from = insn.origin_of.empty() ? insn.id : insn.origin_of;
    if (accesses(insn, old_name) && !chosen.count(insn.id) && chosen_as_written.count(from))
      refuse(k, what, "instruction '" + insn.id + "' comes from '" + from + "' as another that matches does: match all of them or none");
  }
  auto in_as_written = [&](const std::string& id) {
    for (auto& insn : as_written.instructions)
      if (insn.id == id) return accesses(insn, old_name);
    return false;
  };
  for (auto& id : chosen_as_written)
    if (!in_as_written(id))
      refuse(k, what, "instruction '" + id + "' does not access '" + old_name + "' in the kernel as written, where the renaming is proven");
  LoopKernel as_written_renamed = renamed_temporary(as_written, old_name, new_name, &chosen_as_written);
  std::optional<std::string> problem = renaming_problem(as_written, as_written_renamed, old_name, new_name);
  if (!problem) refuse(k, what, "isl cannot follow the accesses of '" + old_name + "' (an index that is not affine, or beyond its work bound)");
  if (!problem->empty()) refuse(k, what, *problem);
  LoopKernel r = renamed_temporary(k, old_name, new_name, &chosen);
  if (k.original) r.original = std::make_shared<const LoopKernel>(as_written_renamed);
  return r;
}

void register_privatize_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"privatize_temporaries_with_inames",
           "Give temporaries written within the inames one copy per iteration (a new leading axis per iname).",
           {TransformParam{"privatizing_inames", TransformParam::String, true, "inames ('i_inner, j')"}.of(TransformParam::Type::Inames),
            TransformParam{"only_var_names", TransformParam::String, false, "only these temporaries (default: all written within the inames)"}.of(TransformParam::Type::Temporaries)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return privatize_temporaries_with_inames(k, a.str("privatizing_inames"), a.str_or("only_var_names", ""));
           }});
  reg.add({"unprivatize_temporaries_with_inames",
           "Remove a temporary's axis that every access indexes with the iname itself (one copy shared by all iterations).",
           {TransformParam{"privatizing_inames", TransformParam::String, true, "inames"}.of(TransformParam::Type::Inames), TransformParam{"only_var_names", TransformParam::String, false, "only these temporaries"}.of(TransformParam::Type::Temporaries)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return unprivatize_temporaries_with_inames(k, a.str("privatizing_inames"), a.str_or("only_var_names", ""));
           }});
  reg.add({"rename_temporary",
           "Rename a temporary; with within, only its accesses in those instructions (a web of its own: no value may flow between "
           "them and the others).",
           {TransformParam{"old_name", TransformParam::String, true, "the temporary"}.of(TransformParam::Type::Temporary),
            TransformParam{"new_name", TransformParam::String, true, "its new name"}.of(TransformParam::Type::Name),
            TransformParam{"within", TransformParam::String, false, "only in the instructions matching this"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return rename_temporary(k, a.str("old_name"), a.str("new_name"), a.str_or("within", ""));
           }});
}

}  // namespace loom
