// Iname transformations: split_iname and tag_inames (more of loopy's family
// in later issues). Each validates its input and rewrites domains,
// instructions, substitution rules, tags and loop priorities together.
#include <isl/constraint.h>

#include <sstream>

#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

namespace {

[[noreturn]] void refuse(const LoopKernel& k, const std::string& what, const std::string& why) {
  throw TransformError(what + " on kernel '" + k.name + "': " + why);
}

std::string unique_iname(const LoopKernel& k, const std::string& base) {
  std::string n = base;
  for (int i = 0; k.has_iname(n) || k.find_argument(n) || k.find_temporary(n); ++i) n = base + "_" + std::to_string(i);
  return n;
}

// Replaces dimension `pos` of `type` by (outer, inner) with
// old = factor*outer + inner and 0 <= inner < factor.
isl_set* split_dim(isl_set* s, isl_dim_type type, int pos, int64_t factor, const std::string& outer,
                   const std::string& inner) {
  isl_ctx* ctx = isl_set_get_ctx(s);
  s = isl_set_insert_dims(s, type, unsigned(pos) + 1, 2);
  s = isl_set_set_dim_id(s, type, unsigned(pos) + 1, isl_id_alloc(ctx, outer.c_str(), nullptr));
  s = isl_set_set_dim_id(s, type, unsigned(pos) + 2, isl_id_alloc(ctx, inner.c_str(), nullptr));
  isl_local_space* ls = isl_local_space_from_space(isl_set_get_space(s));
  // old - factor*outer - inner = 0
  isl_constraint* eq = isl_equality_alloc(isl_local_space_copy(ls));
  eq = isl_constraint_set_coefficient_si(eq, type, pos, 1);
  eq = isl_constraint_set_coefficient_si(eq, type, pos + 1, int(-factor));
  eq = isl_constraint_set_coefficient_si(eq, type, pos + 2, -1);
  s = isl_set_add_constraint(s, eq);
  // inner >= 0
  isl_constraint* lo = isl_inequality_alloc(isl_local_space_copy(ls));
  lo = isl_constraint_set_coefficient_si(lo, type, pos + 2, 1);
  s = isl_set_add_constraint(s, lo);
  // factor - 1 - inner >= 0
  isl_constraint* hi = isl_inequality_alloc(ls);
  hi = isl_constraint_set_coefficient_si(hi, type, pos + 2, -1);
  hi = isl_constraint_set_constant_si(hi, int(factor - 1));
  s = isl_set_add_constraint(s, hi);
  return islu::check(isl_set_project_out(s, type, unsigned(pos), 1), "split_iname");
}

// Substitutes the split iname in expressions; reductions over it reduce over
// both new inames.
class SplitRewriter : public ExprMutator {
 public:
  SplitRewriter(std::string iname, Expr repl, std::string outer, std::string inner)
      : iname_(std::move(iname)), repl_(std::move(repl)), outer_(std::move(outer)), inner_(std::move(inner)) {}

 protected:
  Expr mutate_var(const Var& v, const Expr& self) override { return v.name == iname_ ? repl_ : self; }
  Expr mutate_reduce(const Reduce& r, const Expr& self) override {
    Expr body = mutate(r.body);
    std::vector<std::string> names;
    bool changed = body.get() != r.body.get();
    for (auto& n : r.inames) {
      if (n == iname_) {
        names.push_back(outer_);
        names.push_back(inner_);
        changed = true;
      } else {
        names.push_back(n);
      }
    }
    return changed ? make_reduce(r.op, names, body, r.type) : self;
  }

 private:
  std::string iname_;
  Expr repl_;
  std::string outer_, inner_;
};

}  // namespace

LoopKernel split_iname(const LoopKernel& k, const std::string& iname, int64_t inner_length, const SplitOptions& o) {
  const std::string what = "split_iname('" + iname + "', " + std::to_string(inner_length) + ")";
  if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
  if (inner_length < 1) refuse(k, what, "the inner length must be at least 1");
  if (inner_length > (int64_t(1) << 30)) refuse(k, what, "the inner length is too large");
  if (k.tag_of(iname).kind != InameTag::Seq)
    refuse(k, what, "iname '" + iname + "' is tagged '" + k.tag_of(iname).str() + "'; split it before tagging");
  std::string outer = o.outer_iname.empty() ? unique_iname(k, iname + "_outer") : o.outer_iname;
  std::string inner = o.inner_iname.empty() ? unique_iname(k, iname + "_inner") : o.inner_iname;
  for (auto& n : {outer, inner})
    if (k.has_iname(n) || k.find_argument(n) || k.find_temporary(n) || k.substitutions.count(n))
      refuse(k, what, "the name '" + n + "' is already used");
  if (outer == inner) refuse(k, what, "outer and inner inames must differ");

  LoopKernel r = k;
  for (auto& d : r.domains) {
    int pos;
    isl_dim_type type;
    if ((pos = islu::find_dim(d.get(), isl_dim_set, iname)) >= 0) type = isl_dim_set;
    else if ((pos = islu::find_dim(d.get(), isl_dim_param, iname)) >= 0) type = isl_dim_param;
    else continue;
    d = Domain(split_dim(d.copy(), type, pos, inner_length, outer, inner));
  }

  Expr repl = make_binary(BinOp::Add, make_binary(BinOp::Mul, make_int(inner_length), make_var(outer)), make_var(inner));
  SplitRewriter rw(iname, repl, outer, inner);
  for (auto& insn : r.instructions) {
    if (insn.lhs.defined()) insn.lhs = rw.mutate(insn.lhs);
    if (insn.rhs.defined()) insn.rhs = rw.mutate(insn.rhs);
    for (auto& p : insn.predicates) p = rw.mutate(p);
    if (insn.within_inames.erase(iname)) {
      insn.within_inames.insert(outer);
      insn.within_inames.insert(inner);
    }
  }
  for (auto& [n, rule] : r.substitutions) rule.body = rw.mutate(rule.body);
  for (auto& prio : r.loop_priority) {
    auto it = std::find(prio.begin(), prio.end(), iname);
    if (it != prio.end()) {
      *it = inner;
      prio.insert(it, outer);
    }
  }
  if (o.outer_tag && o.outer_tag->kind != InameTag::Seq) r.iname_tags[outer] = *o.outer_tag;
  if (o.inner_tag && o.inner_tag->kind != InameTag::Seq) r.iname_tags[inner] = *o.inner_tag;
  return r;
}

LoopKernel tag_inames(const LoopKernel& k, const std::map<std::string, std::string>& tags) {
  LoopKernel r = k;
  for (auto& [iname, tag_text] : tags) {
    const std::string what = "tag_inames('" + iname + ":" + tag_text + "')";
    if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
    auto tag = InameTag::parse(tag_text);
    if (!tag) refuse(k, what, "unknown tag '" + tag_text + "' (use g.0-2, l.0-2, unr, for)");
    InameTag old = r.tag_of(iname);
    if (old.is_hardware() && tag->is_hardware() && !(old == *tag))
      refuse(k, what, "iname '" + iname + "' is already tagged '" + old.str() + "'");
    if (tag->kind == InameTag::Seq) r.iname_tags.erase(iname);
    else r.iname_tags[iname] = *tag;
  }
  return r;
}

LoopKernel tag_inames(const LoopKernel& k, const std::string& spec) {
  std::map<std::string, std::string> tags;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto b = item.find_first_not_of(" \t\n");
    if (b == std::string::npos) continue;
    auto e = item.find_last_not_of(" \t\n");
    item = item.substr(b, e - b + 1);
    auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw TransformError("tag_inames on kernel '" + k.name + "': expected 'iname:tag', got '" + item + "'");
    tags[item.substr(0, colon)] = item.substr(colon + 1);
  }
  if (tags.empty()) throw TransformError("tag_inames on kernel '" + k.name + "': no 'iname:tag' pairs given");
  return tag_inames(k, tags);
}

void register_iname_transforms(TransformRegistry& reg) {
  reg.add({"split_iname",
           "Split iname into an outer and an inner iname of inner_length iterations; a partial last tile is guarded.",
           {{"iname", TransformParam::String, true, "the iname to split"},
            {"inner_length", TransformParam::Int, true, "iterations of the inner iname"},
            {"outer_tag", TransformParam::Tag, false, "tag of the outer iname"},
            {"inner_tag", TransformParam::Tag, false, "tag of the inner iname"},
            {"outer_iname", TransformParam::String, false, "name of the outer iname"},
            {"inner_iname", TransformParam::String, false, "name of the inner iname"}},
           [](const LoopKernel& k, const TransformArgs& a) {
             SplitOptions o;
             o.outer_tag = a.tag("outer_tag");
             o.inner_tag = a.tag("inner_tag");
             if (a.has("outer_iname")) o.outer_iname = a.str("outer_iname");
             if (a.has("inner_iname")) o.inner_iname = a.str("inner_iname");
             return split_iname(k, a.str("iname"), a.integer("inner_length"), o);
           }});
  reg.add({"tag_inames",
           "Tag inames: 'i:g.0, j:l.0' (g.N: block axis, l.N: thread axis, unr: unrolled, for: sequential).",
           {{"tags", TransformParam::TagMap, true, "comma-separated iname:tag pairs"}},
           [](const LoopKernel& k, const TransformArgs& a) { return tag_inames(k, a.str("tags")); }});
}

}  // namespace loom
