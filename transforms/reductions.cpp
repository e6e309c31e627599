// Reduction transformations: split_reduction_inward/outward (nest a
// multi-iname reduction) and make_reduction_inames_unique (each reduction
// gets its own inames, so they can be scheduled and tagged separately).
#include <algorithm>

#include "loom/isl_util.h"
#include "loom/match.h"
#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {


std::vector<std::string> names_of(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : spec + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

class ReductionSplitter : public ExprMutator {
 public:
  ReductionSplitter(std::set<std::string> names, bool inward) : names_(std::move(names)), inward_(inward) {}
  int splits = 0;

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr body = mutate(r.body);
    std::vector<std::string> chosen, rest;
    for (auto& n : r.inames) (names_.count(n) ? chosen : rest).push_back(n);
    if (chosen.empty() || rest.empty()) return body.get() == r.body.get() ? self : make_reduce(r.op, r.inames, body, r.type);
    ++splits;
    auto& inner = inward_ ? chosen : rest;
    auto& outer = inward_ ? rest : chosen;
    return make_reduce(r.op, outer, make_reduce(r.op, inner, body, r.type), r.type);
  }

 private:
  std::set<std::string> names_;
  bool inward_;
};

LoopKernel split_reduction(const LoopKernel& k, const std::string& inames, const std::string& within, bool inward) {
  const std::string what = std::string(inward ? "split_reduction_inward" : "split_reduction_outward") + "('" + inames + "')";
  auto names = names_of(inames);
  if (names.empty()) refuse(k, what, "no inames given");
  for (auto& n : names)
    if (!k.has_iname(n)) refuse(k, what, "no iname '" + n + "'");
  InstructionMatch m = InstructionMatch::parse(within.empty() ? "*" : within);
  LoopKernel r = k;
  ReductionSplitter sp(std::set<std::string>(names.begin(), names.end()), inward);
  for (auto& insn : r.instructions.edit())
    if (m(insn) && insn.rhs.defined()) insn.rhs = sp.mutate(insn.rhs);
  if (sp.splits == 0) refuse(k, what, "no reduction over these and other inames together");
  return r;
}

// Collects the reductions' inames, in order of appearance.
struct ReductionInames : ExprVisitor {
  std::vector<std::vector<std::string>> seen;
  void visit_reduce(const Reduce& r) override {
    seen.push_back(r.inames);
    ExprVisitor::visit_reduce(r);
  }
};

class ReductionRenamer : public ExprMutator {
 public:
  // the k-th reduction visited renames by renames[k]
  std::vector<std::map<std::string, std::string>> renames;
  size_t index = 0;

 protected:
  Expr mutate_reduce(const Reduce& r, const Expr&) override {
    const auto& rn = renames.at(index++);
    std::map<std::string, Expr> sub;
    std::vector<std::string> names = r.inames;
    for (auto& n : names)
      if (auto it = rn.find(n); it != rn.end()) {
        sub[n] = make_var(it->second);
        n = it->second;
      }
    Expr body = substitute(r.body, sub);
    return make_reduce(r.op, names, mutate(body), r.type);
  }
};

}  // namespace

LoopKernel split_reduction_inward(const LoopKernel& k, const std::string& inames, const std::string& within) {
  return split_reduction(k, inames, within, true);
}
LoopKernel split_reduction_outward(const LoopKernel& k, const std::string& inames, const std::string& within) {
  return split_reduction(k, inames, within, false);
}

LoopKernel make_reduction_inames_unique(const LoopKernel& k) {
  LoopKernel r = k;
  std::set<std::string> used;
  for (auto& insn : r.instructions.edit()) {
    if (!insn.rhs.defined()) continue;
    ReductionInames ri;
    ri.visit(insn.rhs);
    ReductionRenamer rn;
    bool any = false;
    for (auto& names : ri.seen) {
      std::map<std::string, std::string> m;
      for (auto& n : names) {
        if (!used.insert(n).second) {
          // a second reduction over n: a copy of n's range under a new name
          std::string nw = n + "_r";
          for (int i = 0; r.has_iname(nw) || r.find_argument(nw) || r.find_temporary(nw); ++i) nw = n + "_r" + std::to_string(i);
          isl::set d = islu::arrange_dims(islu::to_isl(r.domains[size_t(r.domain_of(n))]), {n});
          isl_set* s = d.release();
          s = isl_set_set_dim_id(s, isl_dim_set, 0, isl_id_alloc(isl_set_get_ctx(s), nw.c_str(), nullptr));
          r.domains.edit().push_back(Domain(s));
          if (k.tag_of(n).kind != InameTag::Seq) r.iname_tags.edit()[nw] = k.tag_of(n);
          used.insert(nw);
          m[n] = nw;
          any = true;
        }
      }
      rn.renames.push_back(m);
    }
    if (any) insn.rhs = rn.mutate(insn.rhs);
  }
  return r;
}

void register_reduction_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"split_reduction_inward", "sum((i, j), e) -> sum(i, sum(j, e)) for the given (inner) inames.",
           {TransformParam{"inames", TransformParam::String, true, "comma-separated inames"}.of(TransformParam::Type::Inames), TransformParam{"within", TransformParam::String, false, "match expression"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return split_reduction_inward(k, a.str("inames"), a.str_or("within", ""));
           }});
  reg.add({"split_reduction_outward", "sum((i, j), e) -> sum(i, sum(j, e)) for the given (outer) inames.",
           {TransformParam{"inames", TransformParam::String, true, "comma-separated inames"}.of(TransformParam::Type::Inames), TransformParam{"within", TransformParam::String, false, "match expression"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return split_reduction_outward(k, a.str("inames"), a.str_or("within", ""));
           }});
  reg.add({"make_reduction_inames_unique", "Give every reduction its own inames.", {},
           [](const LoopKernel& k, const TransformArgs&) { return make_reduction_inames_unique(k); }});
}

}  // namespace loom
