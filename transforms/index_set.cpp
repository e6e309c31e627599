// split_index_set (Pluto's index-set splitting): the instructions that run
// in an iname are each replaced by three pieces, running where the iname is
// below, at and above an affine expression of the loops around it and the
// parameters (floyd-warshall's i around k: the rows before row k, row k,
// the rows after). Each piece runs in its own copy of the iname, its domain
// the iname's narrowed by its condition (the piece at the point is a loop of
// one iteration), so each may be scheduled on its own: isl's scheduler
// then orders the pieces of one step of floyd-warshall in five parallel
// phases, where no loop of the statement as written is parallel. The pieces
// do the original instruction's instances (origin_of, origin_part): the
// legality check compares the dataflow of the whole program through them,
// as for any reordering.
#include <isl/set.h>

#include <algorithm>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

LoopKernel split_index_set(const LoopKernel& k, const std::string& iname, const std::string& at, const std::string& within) {
  const std::string what = "split_index_set('" + iname + "', '" + at + "')";
  if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
  if (k.tag_of(iname).kind != InameTag::Seq) refuse(k, what, "iname '" + iname + "' is tagged '" + k.tag_of(iname).str() + "'; split it before tagging");
  if (k.slabs->count(iname)) refuse(k, what, "iname '" + iname + "' has slabs");
  const Domain& dom = k.domains[size_t(k.domain_of(iname))];
  if (dom.inames().size() != 1)
    refuse(k, what, "iname '" + iname + "' shares its domain with other inames; only an iname with a domain of its own is split");
  for (auto& d : k.domains)
    if (d.has_param(iname)) refuse(k, what, "the bounds of '" + d.inames().front() + "' use '" + iname + "'");
  InstructionMatch m = transforms::parse_match(k, what, within.empty() ? "*" : within);
  std::vector<size_t> split;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    std::set<std::string> reduced;
    if (insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    if (reduced.count(iname)) refuse(k, what, "iname '" + iname + "' is reduced over in '" + insn.id + "'");
    if (m(insn) && insn.within_inames.count(iname)) split.push_back(i);
  }
  if (split.empty()) refuse(k, what, "no instruction matching '" + m.text() + "' runs in '" + iname + "'");

  // the pieces' domains: the iname's, narrowed (the point's expression names
  // only parameters and loops around every instruction split)
  struct Piece {
    std::string suffix, relation;
  };
  const std::vector<Piece> pieces = {{"lt", "<"}, {"eq", "="}, {"gt", ">"}};
  std::set<std::string> around;
  for (size_t n = 0; n < split.size(); ++n) {
    std::set<std::string> loops = k.instructions[split[n]].within_inames;
    loops.erase(iname);
    if (n == 0) around = loops;
    else {
      std::set<std::string> both;
      for (auto& l : around)
        if (loops.count(l)) both.insert(l);
      around = both;
    }
  }
  std::string params;
  for (auto& p : k.parameters()) params += (params.empty() ? "" : ", ") + p;
  for (auto& l : around) params += (params.empty() ? "" : ", ") + l;
  LoopKernel r = k;
  auto& domains = r.domains.edit();
  size_t place = size_t(k.domain_of(iname)) + 1;
  std::vector<std::string> around_list(around.begin(), around.end());
  // {[v] : v RELATION at} over the parameters and the loops around
  auto relation_set = [&](const std::string& v, const std::string& relation) {
    std::string text = "[" + params + "] -> { [" + v + "] : " + v + " " + relation + " " + at + " }";
    isl_set* set = isl_set_read_from_str(isl_context(), text.c_str());
    if (!set) {
      isl_ctx_reset_error(isl_context());
      refuse(k, what, "'" + at + "' is not an affine expression of the parameters and the loops around every instruction split (isl reads: " +
                          text + ")");
    }
    return set;
  };
  Expr point;
  {
    // the point as an expression, and inside the iname's range wherever the split instructions run
    isl_set* eq = relation_set(iname, "=");
    isl_pw_aff* pa = isl_set_dim_max(isl_set_copy(eq), 0);
    isl_set* context = isl_set_universe(isl_space_params(isl_pw_aff_get_space(pa)));
    point = islu::expr_from_pw_aff(isl::manage(pa), isl::manage(context), k.options.index_dtype);
    std::vector<std::string> with = around_list;
    with.push_back(iname);
    isl_set* runs = islu::arrange_dims(islu::iteration_domain(k, around_list), with).release();  // (iname unconstrained)
    isl_set* at_point = islu::arrange_dims(islu::dims_to_params(isl::manage(eq), {}), with).release();
    isl_set* allowed = islu::iteration_domain(k, with).release();
    at_point = isl_set_align_params(at_point, isl_set_get_space(runs));
    runs = isl_set_align_params(runs, isl_set_get_space(at_point));
    isl_set* lands = isl_set_intersect(runs, at_point);
    lands = isl_set_intersect_params(lands, isl_set_align_params(islu::assumptions_of(k).release(), isl_set_get_space(lands)));
    allowed = isl_set_align_params(allowed, isl_set_get_space(lands));
    lands = isl_set_align_params(lands, isl_set_get_space(allowed));
    isl_bool inside = isl_set_is_subset(lands, allowed);
    isl_set_free(lands);
    isl_set_free(allowed);
    if (inside != isl_bool_true) refuse(k, what, "the point '" + at + "' is not always in the range of '" + iname + "' where the instructions run");
  }
  // each instruction's pieces get copies of their own (they may be scheduled apart)
  std::vector<std::vector<std::string>> copies_of(split.size());
  for (size_t n = 0; n < split.size(); ++n)
    for (auto& piece : pieces) {
      if (piece.relation == "=") {
        copies_of[n].push_back("");
        continue;
      }
      std::string copy = transforms::unique_name(r, iname + "_" + piece.suffix);
      copies_of[n].push_back(copy);
      isl_set* cond = relation_set(copy, piece.relation);
      isl_set* s = isl_set_set_dim_id(islu::to_isl(dom).release(), isl_dim_set, 0, isl_id_alloc(isl_context(), copy.c_str(), nullptr));
      s = isl_set_align_params(s, isl_set_get_space(cond));
      cond = isl_set_align_params(cond, isl_set_get_space(s));
      s = isl_set_intersect(s, cond);
      for (int q = isl_set_dim(s, isl_dim_param) - 1; q >= 0; --q)  // (loops the point does not name stay out of its bounds)
        if (around.count(isl_set_get_dim_name(s, isl_dim_param, unsigned(q))) &&
            isl_set_involves_dims(s, isl_dim_param, unsigned(q), 1) == isl_bool_false)
          s = isl_set_project_out(s, isl_dim_param, unsigned(q), 1);
      domains.insert(domains.begin() + long(place++), Domain(s));
    }

  // the pieces of each instruction, in its place; what depended on it depends on all of them
  std::map<std::string, std::vector<std::string>> ids_of;
  std::vector<Instruction> out;
  size_t next = 0;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    if (next >= split.size() || split[next] != i) {
      out.push_back(insn);
      continue;
    }
    const std::vector<std::string>& copies = copies_of[next];  // (the point's piece: "", the iname replaced by the point)
    ++next;
    for (size_t p = 0; p < pieces.size(); ++p) {
      Instruction c = insn;
      c.id = transforms::unique_instruction_id(r, insn.id + "_" + pieces[p].suffix);
      for (auto& o : out)  // (ids given to earlier pieces are taken too)
        while (o.id == c.id) c.id += "_";
      std::map<std::string, Expr> to_copy{{iname, copies[p].empty() ? point : make_var(copies[p])}};
      auto sub = [&](const Expr& e) { return substitute(e, to_copy); };
      if (c.lhs.defined()) c.lhs = sub(c.lhs);
      if (c.rhs.defined()) c.rhs = sub(c.rhs);
      for (auto& pr : c.predicates) pr = sub(pr);
      transforms::update_origin(c, sub);
      c.within_inames.erase(iname);
      if (!copies[p].empty()) c.within_inames.insert(copies[p]);
      if (c.origin_of.empty()) c.origin_of = insn.id;
      c.origin_part = true;
      ids_of[insn.id].push_back(c.id);
      out.push_back(c);
    }
  }
  for (auto& insn : out) {
    std::set<std::string> deps;
    for (auto& d : insn.depends_on) {
      auto it = ids_of.find(d);
      if (it == ids_of.end()) deps.insert(d);
      else deps.insert(it->second.begin(), it->second.end());
    }
    deps.erase(insn.id);
    insn.depends_on = deps;
  }
  r.instructions.edit() = out;
  return r;
}

void register_index_set_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"split_index_set",
           "Index-set splitting (Pluto's): each instruction running in an iname becomes three pieces, where it is below, at and above an "
           "affine expression of the loops around it ('i', 'k'), each in its own copy of the iname, to be scheduled apart.",
           {P{"iname", P::String, true, "the iname split"}.of(P::Type::Iname),
            P{"at", P::String, true, "the point: an affine expression of the parameters and the loops around ('k')"}.of(P::Type::Text),
            P{"within", P::String, false, "match expression of the instructions split (default: all that run in the iname)"}.of(P::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return split_index_set(k, a.str("iname"), a.str("at"), a.str_or("within", "")); }});
}

}  // namespace loom
