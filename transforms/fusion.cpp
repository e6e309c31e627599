// fuse_kernels (loopy's): one kernel that runs the instructions of several,
// in order. Inames of one name are one iname: the domains that share inames
// are intersected, after a check that they agree on the shared inames (each
// kernel's projection onto them is the same set); arguments of one name are
// one argument and must be declared alike; temporaries and instruction ids
// that would collide are renamed in the later kernel (with `suffixes`, every
// temporary whose name another kernel uses gets its kernel's suffix first,
// as loopy does); assumptions are conjoined. `data_flow` entries
// (var, from, to) make every instruction of kernel `to` that reads var
// depend on every writer of var in kernel `from`. Everything else about
// order is what the dependence analysis finds, as for any kernel.
#include <isl/set.h>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

namespace {

[[noreturn]] void fusion_error(const std::string& why) { throw TransformError("fuse_kernels: " + why); }

// s with the parameters of both s and `with` (isl compares and intersects sets of one space)
isl::set aligned(const isl::set& s, const isl::set& with) { return isl::manage(isl_set_align_params(s.copy(), isl_set_get_space(with.get()))); }

bool same_argument(const Argument& a, const Argument& b) {
  return a.str() == b.str() && a.kind == b.kind && a.vector_axis == b.vector_axis;
}

bool used_name(const LoopKernel& k, const std::string& n) {
  if (k.find_argument(n) || k.find_temporary(n) || k.has_iname(n) || k.substitutions.count(n)) return true;
  auto params = k.parameters();
  return std::find(params.begin(), params.end(), n) != params.end();
}

std::string fresh(const LoopKernel& a, const LoopKernel& b, const std::string& base) {
  for (int i = 0;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!used_name(a, n) && !used_name(b, n)) return n;
  }
}

// b's instruction ids renamed where a has them (references within b follow)
LoopKernel unique_ids(const LoopKernel& a, LoopKernel b, std::map<std::string, std::string>& renamed) {
  std::set<std::string> taken;
  for (auto& i : a.instructions) taken.insert(i.id);
  for (auto& i : b.instructions) taken.insert(i.id);
  for (auto& i : b.instructions) {
    if (!std::any_of(a.instructions.begin(), a.instructions.end(), [&](const Instruction& x) { return x.id == i.id; })) continue;
    std::string n;
    for (int s = 0; n.empty() || taken.count(n); ++s) n = i.id + "_" + std::to_string(s);
    taken.insert(n);
    renamed[i.id] = n;
  }
  auto follow = [&](std::set<std::string>& ids) {
    std::set<std::string> out;
    for (auto& id : ids) out.insert(renamed.count(id) ? renamed[id] : id);
    ids = out;
  };
  for (auto& i : b.instructions.edit()) {
    if (renamed.count(i.id)) i.id = renamed[i.id];
    if (renamed.count(i.origin_of)) i.origin_of = renamed[i.origin_of];
    follow(i.depends_on);
    follow(i.no_sync_with);
  }
  return b;
}

// a's domains with b's: one that shares inames with one of a's is intersected with it
std::vector<Domain> fused_domains(const LoopKernel& a, const LoopKernel& b) {
  std::vector<Domain> out(a.domains.begin(), a.domains.end());
  for (auto& db : b.domains) {
    isl::set sb = islu::to_isl(db);
    auto names_b = islu::dim_names(sb.get(), isl_dim_set);
    int at = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      auto names_a = islu::dim_names(islu::to_isl(out[i]).get(), isl_dim_set);
      bool shares = std::any_of(names_b.begin(), names_b.end(), [&](auto& n) { return std::count(names_a.begin(), names_a.end(), n) > 0; });
      if (!shares) continue;
      if (at >= 0) fusion_error("a domain of kernel '" + b.name + "' shares inames with two domains of '" + a.name + "': " + db.str());
      at = int(i);
    }
    if (at < 0) {
      out.push_back(db);
      continue;
    }
    isl::set sa = islu::to_isl(out[size_t(at)]);
    auto names_a = islu::dim_names(sa.get(), isl_dim_set);
    std::vector<std::string> shared;
    for (auto& n : names_a)
      if (std::count(names_b.begin(), names_b.end(), n)) shared.push_back(n);
    isl::set pa = islu::arrange_dims(sa, shared), pb = islu::arrange_dims(sb, shared);
    isl::set pa_al = aligned(pa, pb);
    isl::set pb_al = aligned(pb, pa_al);
    if (!pa_al.is_equal(pb_al)) {
      std::string list;
      for (auto& n : shared) list += (list.empty() ? "" : ", ") + n;
      fusion_error("kernels '" + a.name + "' and '" + b.name + "' do not agree on the domain of inames " + list + " (" + islu::from_isl(pa).str() + " vs " + islu::from_isl(pb).str() + ")");
    }
    std::vector<std::string> all = names_a;
    for (auto& n : names_b)
      if (!std::count(all.begin(), all.end(), n)) all.push_back(n);
    isl::set xa = islu::arrange_dims(sa, all), xb = islu::arrange_dims(sb, all);
    xa = aligned(xa, xb);
    xb = aligned(xb, xa);
    out[size_t(at)] = islu::from_isl(xa.intersect(xb));
  }
  return out;
}

LoopKernel fuse_two(const LoopKernel& a, LoopKernel b, std::map<std::string, std::string>& renamed_ids) {
  // temporaries of b whose names a uses: renamed
  std::vector<std::string> clash;
  for (auto& [n, t] : b.temporaries)
    if (used_name(a, n)) clash.push_back(n);
  for (auto& n : clash) b = rename_temporary(b, n, fresh(a, b, n));
  b = unique_ids(a, b, renamed_ids);
  if (!(a.options.index_dtype == b.options.index_dtype))
    fusion_error("kernels '" + a.name + "' and '" + b.name + "' index with " + a.options.index_dtype.name() + " and " + b.options.index_dtype.name());
  LoopKernel r = a;
  r.name = a.name + "_and_" + b.name;
  r.original = nullptr;  // (the fused kernel is a kernel as written)
  r.domains.edit() = fused_domains(a, b);
  for (auto& arg : b.arguments) {
    const Argument* have = a.find_argument(arg.name);
    if (have && !same_argument(*have, arg))
      fusion_error("argument '" + arg.name + "' is declared differently by '" + a.name + "' (" + have->str() + ") and '" + b.name + "' (" + arg.str() + ")");
    if (!have) {
      if (a.find_temporary(arg.name)) fusion_error("'" + arg.name + "' is an argument of '" + b.name + "' and a temporary of '" + a.name + "'");
      r.arguments.edit().push_back(arg);
    }
  }
  for (auto& [n, t] : b.temporaries) r.temporaries.edit()[n] = t;
  for (auto& [n, rule] : b.substitutions) {
    auto have = a.substitutions.find(n);
    if (have != a.substitutions.end() && (have->second.params != rule.params || have->second.body.str() != rule.body.str()))
      fusion_error("substitution rule '" + n + "' is defined differently by '" + a.name + "' and '" + b.name + "'");
    r.substitutions.edit()[n] = rule;
  }
  for (auto& [n, tag] : b.iname_tags) {
    auto have = a.iname_tags.find(n);
    if (have != a.iname_tags.end() && !(have->second == tag))
      fusion_error("iname '" + n + "' is tagged " + have->second.str() + " in '" + a.name + "' and " + tag.str() + " in '" + b.name + "'");
    r.iname_tags.edit()[n] = tag;
  }
  for (auto& p : b.loop_priority) r.loop_priority.edit().push_back(p);
  for (auto& [n, s] : b.slabs) r.slabs.edit()[n] = s;
  auto& insns = r.instructions.edit();
  insns.insert(insns.end(), b.instructions.begin(), b.instructions.end());
  if (b.assumptions.defined()) {
    if (!a.assumptions.defined()) {
      r.assumptions = b.assumptions;
    } else {
      isl::set x = islu::to_isl(a.assumptions), y = islu::to_isl(b.assumptions);
      x = aligned(x, y);
      y = aligned(y, x);
      r.assumptions = islu::from_isl(x.intersect(y));
    }
  }
  r.options.do_not_specialize.insert(b.options.do_not_specialize.begin(), b.options.do_not_specialize.end());
  r.options.trust_unproven_accesses = a.options.trust_unproven_accesses && b.options.trust_unproven_accesses;
  r.options.block_group = a.options.block_group == b.options.block_group ? a.options.block_group : 1;  // (order only)
  return r;
}

}  // namespace

LoopKernel fuse_kernels(const std::vector<LoopKernel>& given, const std::vector<std::string>& suffixes, const std::vector<DataFlow>& data_flow) {
  if (given.empty()) fusion_error("no kernels given");
  if (!suffixes.empty() && suffixes.size() != given.size())
    fusion_error(std::to_string(suffixes.size()) + " suffixes for " + std::to_string(given.size()) + " kernels (one each)");
  std::vector<LoopKernel> ks = given;
  if (!suffixes.empty()) {
    // a temporary whose name another kernel uses takes its kernel's suffix
    for (size_t i = 0; i < ks.size(); ++i) {
      std::vector<std::string> clash;
      for (auto& [n, t] : ks[i].temporaries)
        for (size_t j = 0; j < given.size(); ++j)
          if (j != i && used_name(given[j], n)) {
            clash.push_back(n);
            break;
          }
      for (auto& n : clash) ks[i] = rename_temporary(ks[i], n, n + suffixes[i]);
    }
  }
  std::vector<std::vector<std::string>> ids(ks.size());
  LoopKernel r = ks[0];
  for (auto& insn : r.instructions) ids[0].push_back(insn.id);
  for (size_t i = 1; i < ks.size(); ++i) {
    std::map<std::string, std::string> renamed;
    r = fuse_two(r, ks[i], renamed);
    for (auto& insn : ks[i].instructions) ids[i].push_back(renamed.count(insn.id) ? renamed[insn.id] : insn.id);
  }
  for (auto& f : data_flow) {
    if (f.from < 0 || f.to < 0 || size_t(f.from) >= ks.size() || size_t(f.to) >= ks.size())
      fusion_error("data_flow (" + f.var + ", " + std::to_string(f.from) + ", " + std::to_string(f.to) + ") names a kernel beyond the " +
                   std::to_string(ks.size()) + " given");
    std::set<std::string> writers;
    for (auto& id : ids[size_t(f.from)])
      if (r.instruction(id).assignee_name() == f.var) writers.insert(id);
    if (writers.empty()) fusion_error("data_flow: kernel " + std::to_string(f.from) + " does not write '" + f.var + "'");
    for (auto& insn : r.instructions.edit())
      if (std::count(ids[size_t(f.to)].begin(), ids[size_t(f.to)].end(), insn.id) && insn.reads(f.var))
        insn.depends_on.insert(writers.begin(), writers.end());
  }
  return r;
}

}  // namespace loom
