// affine_map_inames (loopy's name and arguments): new inames defined by
// affine equations in the old ones, which they replace — a skew, a
// wavefront's time (w = 4 t + 2 i + j for a Gauss-Seidel sweep), a
// reversal. The domains of the old inames, of the inames the equations name
// and of the inames whose bounds use an old one are merged into one set,
// mapped through the equations by isl, and the new inames come first in it:
// without loop priorities their loops are the outermost, which is what a
// wavefront needs (every instance of one w depends only on smaller w, so
// the loops inside w may run in parallel).
//
// The equations must define a bijection between the old and the new inames
// on the domain, and each old iname must come back as an affine expression
// with integer coefficients of the new inames (and the others): that is what
// replaces it in the instructions' expressions, predicates and origins. The
// transformation changes only the order the loops run in; whether that order
// is legal is the legality check's business (check_reorderings compares the
// dataflow with the kernel as written through the origins), as for any
// change of loop order.
#include <isl/aff.h>
#include <isl/map.h>
#include <isl/set.h>

#include <algorithm>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The equations "w = j + i, v = i" as isl constraints joined by "and".
std::string constraints_of(const std::string& equations) {
  std::string out, part;
  auto flush = [&] {
    size_t b = part.find_first_not_of(" \t\n"), e = part.find_last_not_of(" \t\n");
    if (b != std::string::npos) out += (out.empty() ? "" : " and ") + part.substr(b, e - b + 1);
    part.clear();
  };
  for (char c : equations) {
    if (c == ',') flush();
    else part += c;
  }
  flush();
  return out;
}

// The single affine piece of pa without integer divisions, or null.
bool plain_affine(isl_pw_aff* pa) {
  if (isl_pw_aff_n_piece(pa) != 1) return false;
  bool plain = true;
  isl_pw_aff_foreach_piece(
      pa,
      [](isl_set* set, isl_aff* aff, void* user) {
        if (isl_aff_dim(aff, isl_dim_div) != 0) *static_cast<bool*>(user) = false;
        isl_set_free(set);
        isl_aff_free(aff);
        return isl_stat_ok;
      },
      &plain);
  return plain;
}

}  // namespace

LoopKernel affine_map_inames(const LoopKernel& k, const std::vector<std::string>& old_inames, const std::vector<std::string>& new_inames,
                             const std::string& equations) {
  const std::string what = "affine_map_inames('" + join(old_inames) + "', '" + join(new_inames) + "')";
  if (old_inames.empty() || old_inames.size() != new_inames.size())
    refuse(k, what, "give as many new inames as old ones (" + std::to_string(old_inames.size()) + " old, " + std::to_string(new_inames.size()) + " new)");
  for (auto& o : old_inames) {
    if (!k.has_iname(o)) refuse(k, what, "no iname '" + o + "'");
    if (k.tag_of(o).kind != InameTag::Seq) refuse(k, what, "iname '" + o + "' is tagged '" + k.tag_of(o).str() + "'; map it before tagging");
    if (k.slabs->count(o)) refuse(k, what, "iname '" + o + "' has slabs");
  }
  for (auto& n : new_inames)
    if (transforms::unique_name(k, n) != n) refuse(k, what, "the name '" + n + "' is taken");
  std::set<std::string> old(old_inames.begin(), old_inames.end());
  for (auto& insn : k.instructions) {
    std::set<std::string> reduced;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    for (auto& o : old_inames)
      if (reduced.count(o)) refuse(k, what, "iname '" + o + "' is reduced over in '" + insn.id + "'; map the loops of a sum before it is one");
  }

  // ---- the domains to merge: the old inames' and those of the other
  // inames the equations name; a domain whose bounds use an old iname (an
  // inner loop's) keeps its own set, its bounds rewritten (merged, its empty
  // ranges would empty the outer loops' points) ----
  std::string constraints = constraints_of(equations);
  if (constraints.empty()) refuse(k, what, "no equations given");
  auto mentioned = [&](const std::string& n) {  // a whole-word mention in the equations
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = constraints.find(n); at != std::string::npos; at = constraints.find(n, at + 1))
      if ((at == 0 || !word(constraints[at - 1])) && (at + n.size() == constraints.size() || !word(constraints[at + n.size()]))) return true;
    return false;
  };
  // an instruction in an old iname runs in every other iname the equations
  // name: otherwise its iterations of the new ones would be those of all the
  // others' values (jacobi-2d's first sweep in t_w = t + j2, which only the
  // second sweep runs in: it ran more iterations than it had)
  for (auto& insn : k.instructions) {
    bool in_old = std::any_of(old_inames.begin(), old_inames.end(), [&](auto& o) { return insn.within_inames.count(o) > 0; });
    if (!in_old) continue;
    for (auto& n : k.all_inames())
      if (!old.count(n) && mentioned(n) && !insn.within_inames.count(n))
        refuse(k, what, "instruction '" + insn.id + "' runs in '" + join(old_inames) + "' but not in '" + n +
                            "', which the equations name: its iterations could not be told apart");
  }
  std::set<int> doms, dependent;
  for (auto& n : k.all_inames())
    if (old.count(n) || mentioned(n)) doms.insert(k.domain_of(n));
  for (size_t d = 0; d < k.domains.size(); ++d) {
    std::vector<std::string> params = k.domains[d].params();
    for (auto& o : old_inames)
      if (!doms.count(int(d)) && std::count(params.begin(), params.end(), o)) dependent.insert(int(d));
  }
  std::vector<std::string> dims;  // the merged set's dimensions, in domain order
  for (int d : doms)
    for (auto& n : k.domains[size_t(d)].inames()) dims.push_back(n);
  isl::set merged;
  for (int d : doms) {
    isl::set s = islu::arrange_dims(islu::to_isl(k.domains[size_t(d)]), dims);
    if (merged.is_null()) {
      merged = s;
      continue;
    }
    isl_set* a = isl_set_align_params(merged.release(), isl_set_get_space(s.get()));
    isl_set* b = isl_set_align_params(s.release(), isl_set_get_space(a));
    merged = isl::manage(islu::check(isl_set_intersect(a, b), "affine_map_inames"));
  }

  // ---- the map from the old dimensions to the new ones ----
  auto renamed = [&](const std::vector<std::string>& names) {  // each old iname replaced by its new one
    std::vector<std::string> out;
    for (auto& n : names) {
      auto it = std::find(old_inames.begin(), old_inames.end(), n);
      out.push_back(it == old_inames.end() ? n : new_inames[size_t(it - old_inames.begin())]);
    }
    return out;
  };
  // s (over dimensions `over`) mapped through the equations: null when isl
  // cannot read them; *bijective says whether the map is one-to-one on s
  auto map_of = [&](const isl::set& s, const std::vector<std::string>& over) -> isl_map* {
    std::string params = join(islu::dim_names(s.get(), isl_dim_param));
    std::string text = "[" + params + "] -> { [" + join(over) + "] -> [" + join(renamed(over)) + "] : " + constraints + " }";
    isl_map* map = isl_map_read_from_str(isl_context(), text.c_str());
    if (!map) {
      isl_ctx_reset_error(isl_context());
      refuse(k, what, "the equations '" + equations + "' are not affine equations in the inames and parameters (isl reads: " + text + ")");
    }
    return isl_map_intersect_domain(map, isl_set_align_params(s.copy(), isl_map_get_space(map)));
  };
  auto image_of = [&](isl_map* map, const std::vector<std::string>& names) {
    isl_set* image = isl_map_range(map);
    for (size_t m = 0; m < names.size(); ++m) image = isl_set_set_dim_name(image, isl_dim_set, unsigned(m), names[m].c_str());
    return isl::manage(image);
  };
  std::vector<std::string> mapped = renamed(dims);
  isl_map* map = map_of(merged, dims);
  isl_bool function = isl_map_is_single_valued(map), injective = isl_map_is_injective(map);
  if (function != isl_bool_true || injective != isl_bool_true) {
    isl_map_free(map);
    refuse(k, what, "the equations '" + equations + "' do not map each point of the domain to exactly one point and back");
  }
  isl::set image = image_of(isl_map_copy(map), mapped);
  isl_pw_multi_aff* back = isl_pw_multi_aff_from_map(isl_map_reverse(map));
  std::map<std::string, Expr> old_of;  // old iname -> its expression in the new ones
  for (size_t p = 0; p < dims.size(); ++p) {
    if (!old.count(dims[p])) continue;
    isl_pw_aff* pa = isl_pw_multi_aff_get_pw_aff(back, int(p));
    if (!plain_affine(pa)) {
      isl_pw_aff_free(pa);
      isl_pw_multi_aff_free(back);
      refuse(k, what, "the equations do not give '" + dims[p] + "' as an affine expression with integer coefficients of the new inames");
    }
    // (the new dimensions as parameters: the expression names them)
    isl_size np = isl_pw_aff_dim(pa, isl_dim_param);
    pa = isl_pw_aff_move_dims(pa, isl_dim_param, unsigned(np), isl_dim_in, 0, unsigned(mapped.size()));
    for (size_t m = 0; m < mapped.size(); ++m)
      pa = isl_pw_aff_set_dim_id(pa, isl_dim_param, unsigned(np) + unsigned(m), isl_id_alloc(isl_context(), mapped[m].c_str(), nullptr));
    isl_set* context = isl_set_universe(isl_space_params(isl_pw_aff_get_space(pa)));
    old_of[dims[p]] = islu::expr_from_pw_aff(isl::manage(pa), isl::manage(context), k.options.index_dtype);
  }
  isl_pw_multi_aff_free(back);

  // ---- the kernel: one domain, new inames first; the inner loops' bounds rewritten ----
  std::vector<std::string> order = new_inames;
  for (auto& n : mapped)
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  LoopKernel r = k;
  auto& domains = r.domains.edit();
  for (int d : dependent) {
    // its own dimensions, then the merged ones (as parameters again after the map)
    std::vector<std::string> own = k.domains[size_t(d)].inames(), over = own;
    for (auto& n : dims) over.push_back(n);
    isl::set s = islu::arrange_dims(islu::to_isl(k.domains[size_t(d)]), over);
    std::vector<std::string> outer = renamed(dims);
    isl_set* m = islu::dims_to_params(image_of(map_of(s, over), renamed(over)), outer).release();
    for (int p = isl_set_dim(m, isl_dim_param) - 1; p >= 0; --p)  // (a parameter its bounds do not use would nest it inside that loop)
      if (std::count(outer.begin(), outer.end(), isl_set_get_dim_name(m, isl_dim_param, unsigned(p))) &&
          isl_set_involves_dims(m, isl_dim_param, unsigned(p), 1) == isl_bool_false)
        m = isl_set_project_out(m, isl_dim_param, unsigned(p), 1);
    domains[size_t(d)] = islu::from_isl(islu::arrange_dims(isl::manage(m), own));
  }
  int first = *doms.begin();
  for (auto it = doms.rbegin(); it != doms.rend(); ++it) domains.erase(domains.begin() + *it);
  domains.insert(domains.begin() + first, islu::from_isl(islu::arrange_dims(image, order)));
  // (reductions over an old iname were refused above: a plain substitution)
  auto sub = [&](const Expr& e) { return substitute(e, old_of); };
  for (auto& insn : r.instructions.edit()) {
    if (insn.lhs.defined()) insn.lhs = sub(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = sub(insn.rhs);
    for (auto& p : insn.predicates) p = sub(p);
    transforms::update_origin(insn, sub);
    for (size_t i = 0; i < old_inames.size(); ++i)
      if (insn.within_inames.erase(old_inames[i])) insn.within_inames.insert(new_inames[i]);
  }
  transforms::rewrite_rule_bodies(r, old, sub);
  for (auto& prio : r.loop_priority.edit())
    for (auto& n : prio)
      if (auto it = std::find(old_inames.begin(), old_inames.end(), n); it != old_inames.end()) n = new_inames[size_t(it - old_inames.begin())];
  return r;
}

void register_affine_map_transforms(TransformRegistry& reg) {
  reg.add({"affine_map_inames",
           "New inames defined by affine equations in old ones, which they replace (loopy's affine_map_inames): a skew or a wavefront "
           "('j', 'w', 'w = 4*t + 2*i + j'). The new inames' loops go outermost; the check refuses an order the kernel's dependences forbid.",
           {TransformParam{"old_inames", TransformParam::String, true, "the inames replaced ('j' or 'i, j')"}.of(TransformParam::Type::Inames),
            TransformParam{"new_inames", TransformParam::String, true, "their replacements, as many"}.of(TransformParam::Type::Names),
            TransformParam{"equations", TransformParam::String, true,
                           "affine equations between them and other inames or parameters ('w = 4*t + 2*i + j'; several separated by ',')"}
                .of(TransformParam::Type::Text)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return affine_map_inames(k, name_list(a.str("old_inames")), name_list(a.str("new_inames")), a.str("equations"));
           }});
}

}  // namespace loom
