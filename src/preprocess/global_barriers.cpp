// split_global_barriers: a kernel with global barriers (`... gbarrier`,
// loopy's) or global temporaries runs as several launches in order. The
// instructions between two global barriers (in the order of the kernel's
// instruction list, where transformations insert what they add beside the
// instructions it serves) form one launch; each launch is an ordinary kernel,
// generated, checked and scheduled on its own, so every block of one launch
// has finished before the next starts: that is what lets one array's
// reduction use the whole GPU (blocks reduce into a global temporary, the next
// launch reduces those). Global temporaries become array arguments of every
// launch; the runtimes allocate them for each call.
//
// A global barrier may stand inside loops, as in loopy. A hardware-parallel
// loop around it is distributed: each launch runs all its iterations, so the
// barrier waits for every iteration (loopy's rotate_v2). A sequential loop
// around it runs on the host (a time loop, the k loop of an LU
// factorization): each iteration runs the launches inside it in order, the
// iname being a scalar argument of each, its bounds read from its domain.
#include <isl/set.h>

#include <algorithm>
#include <functional>
#include <set>

#include "loom/isl_util.h"
#include "loom/preprocess.h"

namespace loom {

namespace {

bool needs_launches(const LoopKernel& k) {
  for (auto& insn : k.instructions)
    if (insn.kind == Instruction::GlobalBarrier) return true;
  for (auto& [n, t] : k.temporaries)
    if (t.space == AddressSpace::Global) return true;
  return false;
}

// The inames an instruction runs in or reduces over.
class InamesUsed : public ExprVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit_reduce(const Reduce& n) override {
    names.insert(n.inames.begin(), n.inames.end());
    ExprVisitor::visit_reduce(n);
  }
  void visit_var(const Var& v) override { names.insert(v.name); }
};

// The loops around global barriers that run on the host: the sequential
// ones (hardware-parallel loops are distributed over the barrier), outermost
// first: a loop around more instructions encloses one around fewer, then
// the domains' order. `given`: the host loops to use instead (the kernel as
// written takes its transformed kernel's, so both split alike).
std::vector<std::string> host_loops_of(const LoopKernel& k, const std::set<std::string>* given) {
  std::set<std::string> host;
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::GlobalBarrier) continue;
    if (!insn.predicates.empty())
      throw KernelError("kernel '" + k.name + "': global barrier '" + insn.id + "' has a condition; it ends a launch for every block");
    for (auto& n : insn.within_inames) {
      InameTag tag = k.tag_of(n);
      if (given ? !given->count(n) : tag.is_hardware()) continue;
      if (tag.kind != InameTag::Seq)
        throw KernelError("kernel '" + k.name + "': global barrier '" + insn.id + "' stands inside loop '" + n + "', tagged " + tag.str() +
                          "; a sequential loop around a global barrier runs on the host, one iteration after another, and "
                          "cannot be unrolled or vectorized (a hardware-parallel one is distributed over the barrier)");
      host.insert(n);
    }
  }
  if (given)
    for (auto& n : *given)
      if (!k.has_iname(n))
        throw KernelError("kernel '" + k.name + "' runs loop '" + n + "' on the host around launches, but the kernel as written has no loop '" + n +
                          "'; a loop around a global barrier cannot be renamed or split");
  std::map<std::string, size_t> around;  // host loop -> instructions inside it
  for (auto& insn : k.instructions)
    for (auto& n : insn.within_inames)
      if (host.count(n)) ++around[n];
  std::vector<std::string> order;
  for (auto& n : k.all_inames())
    if (host.count(n)) order.push_back(n);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) { return around[a] > around[b]; });
  return order;
}

// One launch's worth of instructions: consecutive in the instruction list,
// with no global barrier between them, in the same host loops.
struct Section {
  std::vector<std::string> host;  // its host loops, outermost first
  std::vector<size_t> insns;      // instruction indices (no global barriers)
};

// The sections of k in order, and each instruction's section (-1 for the
// barriers). Refuses a host loop whose instructions are not consecutive.
std::vector<Section> sections_of(const LoopKernel& k, const std::vector<std::string>& host, std::vector<int>& section_of) {
  std::vector<Section> out;
  std::vector<std::string> open;  // the host loops open at this point of the list
  std::set<std::string> closed;
  std::map<std::string, std::string> last_in;  // host loop -> the last instruction seen inside it
  bool fresh = true;                            // the next instruction starts a section
  section_of.assign(k.instructions.size(), -1);
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    std::vector<std::string> path;
    for (auto& h : host)
      if (insn.within_inames.count(h)) path.push_back(h);
    size_t common = 0;
    while (common < open.size() && common < path.size() && open[common] == path[common]) ++common;
    if (common != open.size() || common != path.size()) fresh = true;
    while (open.size() > common) {
      closed.insert(open.back());
      open.pop_back();
    }
    for (size_t p = common; p < path.size(); ++p) {
      if (closed.count(path[p]))
        throw KernelError("kernel '" + k.name + "': loop '" + path[p] + "' runs on the host around global barriers, so its instructions must be " +
                          "consecutive in the instruction list; '" + insn.id + "' comes after instructions outside it (after '" + last_in[path[p]] +
                          "'). Move '" + insn.id + "' next to the loop's other instructions");
      open.push_back(path[p]);
    }
    for (auto& h : path) last_in[h] = insn.id;
    if (insn.kind == Instruction::GlobalBarrier) {
      fresh = true;
      continue;
    }
    if (fresh) out.push_back({path, {}});
    fresh = false;
    out.back().insns.push_back(i);
    section_of[i] = int(out.size()) - 1;
  }
  return out;
}

// The i-th launch of a kernel: its sections' instructions, the host loops'
// inames as scalar arguments, and only what those instructions use.
LoopKernel launch_of(const LoopKernel& k, const Section& sec, const std::map<std::string, int>& section_of_id, int s,
                     const std::set<std::string>& host, const std::vector<Argument>& globals, const std::string& name) {
  LoopKernel sk = k;
  sk.name = name;
  sk.original = nullptr;
  sk.instructions.edit().clear();
  for (size_t i : sec.insns) {
    Instruction insn = k.instructions[i];
    for (auto it = insn.depends_on.begin(); it != insn.depends_on.end();) {
      auto other = section_of_id.find(*it);
      bool here = other == section_of_id.end() || other->second == s;  // (an id that names no instruction: check_kernel's to report)
      it = here ? std::next(it) : insn.depends_on.erase(it);  // earlier launches have finished
    }
    for (auto& h : host) insn.within_inames.erase(h);
    sk.instructions.edit().push_back(std::move(insn));
  }
  // another launch's inames keep no tag here (a block axis no instruction of this launch uses would widen its grid)
  InamesUsed used;
  for (auto& insn : sk.instructions) {
    used.names.insert(insn.within_inames.begin(), insn.within_inames.end());
    if (insn.rhs.defined()) used.visit(insn.rhs);
    if (insn.lhs.defined()) used.visit(insn.lhs);
    for (auto& p : insn.predicates) used.visit(p);
  }
  auto& tags = sk.iname_tags.edit();
  for (auto it = tags.begin(); it != tags.end();) it = used.names.count(it->first) && !host.count(it->first) ? std::next(it) : tags.erase(it);
  // nor domains: another launch's loops may be bounded by values only it
  // computes (a data-dependent bound is checked against its writers); a
  // domain stays when it defines an iname this launch uses, or one that
  // such a domain is bounded by. A host loop's iname is a parameter here.
  std::set<std::string> needed;
  for (auto& n : used.names)
    if (k.has_iname(n) && !host.count(n)) needed.insert(n);
  auto defines_needed = [&](const Domain& d) {
    auto names = d.inames();
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return needed.count(n) > 0; });
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (auto& d : k.domains)
      if (defines_needed(d))
        for (auto& q : d.params())
          if (k.has_iname(q) && !host.count(q)) grew |= needed.insert(q).second;
  }
  auto& domains = sk.domains.edit();
  domains.clear();
  for (auto& d : k.domains) {
    if (!d.inames().empty() && !defines_needed(d)) continue;
    std::vector<std::string> moved;
    for (auto& n : d.inames())
      if (host.count(n)) moved.push_back(n);
    if (moved.empty()) {
      domains.push_back(d);
      continue;
    }
    isl::set rest = islu::dims_to_params(isl::manage(d.copy()), moved);
    domains.push_back(Domain(rest.release()));
  }
  auto& priorities = sk.loop_priority.edit();
  for (auto& order : priorities)
    order.erase(std::remove_if(order.begin(), order.end(), [&](const std::string& n) { return !needed.count(n); }), order.end());
  priorities.erase(std::remove_if(priorities.begin(), priorities.end(), [](const auto& order) { return order.size() < 2; }), priorities.end());
  auto& slabs = sk.slabs.edit();
  for (auto it = slabs.begin(); it != slabs.end();) it = needed.count(it->first) ? std::next(it) : slabs.erase(it);
  // (a launch declares the temporaries its instructions use: another launch's
  // shared tile would cost this one its shared memory, and occupancy)
  std::set<std::string> named;
  for (auto& insn : sk.instructions) {
    for (auto& n : insn.read_names()) named.insert(n);
    named.insert(insn.assignee_name());
  }
  auto& temporaries = sk.temporaries.edit();
  for (auto it = temporaries.begin(); it != temporaries.end();)
    it = it->second.space == AddressSpace::Global || !named.count(it->first) ? temporaries.erase(it) : std::next(it);
  // the host loops' values are those of their domains: assumed here (the
  // bounds proof of a loop whose bounds use them needs them)
  if (!sec.host.empty()) {
    isl::set values = islu::dims_to_params(islu::iteration_domain(k, sec.host), sec.host);
    // (their hull: a host loop with holes runs its hole values too, as empty launches)
    isl_set* assumed = isl_set_from_basic_set(isl_set_polyhedral_hull(isl_set_params(values.release())));
    if (k.assumptions.defined()) assumed = isl_set_intersect_params(assumed, islu::to_isl(k.assumptions).release());
    sk.assumptions = Domain(assumed);
  }
  for (auto& h : sec.host)
    if (!sk.find_argument(h)) {
      Argument a;
      a.kind = Argument::Value;
      a.name = h;
      a.dtype = k.options.index_dtype;
      a.dtype_inferred = true;
      sk.arguments.edit().push_back(a);
    }
  for (auto& g : globals) sk.arguments.edit().push_back(g);
  return sk;
}

// Where a host loop's domain is empty (tsteps = 0) the loop must not run:
// its bounds, simplified where the domain has points, usually cross there by
// themselves (0 .. tsteps - 1); where they do not (a wavefront's 3 .. 3 n +
// 4 tsteps - 10 at tsteps = 0), they become [0, -1] there. (Inside outer host
// loops, only their iterations count.)
void bound_where_empty(const LoopKernel& k, const std::vector<std::string>& path, const isl::pw_aff& lo, const isl::pw_aff& hi,
                       const isl::set& params, HostStep& loop) {
  isl::set anywhere = isl::manage(isl_set_universe(isl_set_get_space(params.get())));
  if (path.size() > 1) {
    std::vector<std::string> outer(path.begin(), path.end() - 1);
    isl_set* o = islu::dims_to_params(islu::iteration_domain(k, outer), outer).release();
    o = isl_set_align_params(isl_set_params(o), isl_set_get_space(anywhere.get()));
    anywhere = isl::manage(isl_set_intersect_params(anywhere.release(), o));
  }
  isl::set none = anywhere.subtract(params);
  isl::set runs = islu::condition_set(make_binary(BinOp::Le, loop.lower, loop.upper), anywhere.space());
  if (!runs.is_null() && runs.intersect(none).is_empty()) return;
  auto constant_on_none = [&](int v) {
    return isl_pw_aff_alloc(none.copy(), isl_aff_val_on_domain(isl_local_space_from_space(isl_set_get_space(none.get())),
                                                                 isl_val_int_from_si(isl_context(), v)));
  };
  loop.lower = islu::expr_from_pw_aff(isl::manage(isl_pw_aff_union_add(lo.copy(), constant_on_none(0))), anywhere, k.options.index_dtype);
  loop.upper = islu::expr_from_pw_aff(isl::manage(isl_pw_aff_union_add(hi.copy(), constant_on_none(-1))), anywhere, k.options.index_dtype);
}

// A host loop's first and last value, in the parameters and the outer host
// loops' inames; refused unless its domain is an interval (no stride).
void host_loop_bounds(const LoopKernel& k, const std::vector<std::string>& path, HostStep& loop) {
  isl::set dom = islu::dims_to_params(islu::iteration_domain(k, path), std::vector<std::string>(path.begin(), path.end() - 1));
  isl::set params = dom.params();
  isl::pw_aff lo = isl::manage(isl_set_dim_min(dom.copy(), 0)), hi = isl::manage(isl_set_dim_max(dom.copy(), 0));
  loop.lower = islu::expr_from_pw_aff(lo, params, k.options.index_dtype);
  loop.upper = islu::expr_from_pw_aff(hi, params, k.options.index_dtype);
  Expr t = make_var(loop.iname);
  isl::set box = islu::condition_set(make_binary(BinOp::And, make_binary(BinOp::Le, loop.lower, t), make_binary(BinOp::Le, t, loop.upper)), dom.space());
  // A value in a hole (a wavefront's time, affine_map_inames) runs launches
  // that do nothing where every instruction inside lies in loops of the
  // launch whose domains are empty there: the host values where the
  // domains of its launch loops have points lie in the host loop's domain
  // (an empty grid is not launched). An instruction in the host loops alone
  // would run there.
  bool holes_empty = std::all_of(k.instructions.begin(), k.instructions.end(), [&](const Instruction& insn) {
    if (insn.kind != Instruction::Assign || !insn.within_inames.count(loop.iname)) return true;
    std::vector<std::string> over = path;
    for (auto& n : insn.within_inames)
      if (std::find(path.begin(), path.end(), n) == path.end()) over.push_back(n);
    if (over.size() == path.size()) return false;
    isl_set* s = nullptr;
    for (auto& d : k.domains) {
      auto names = d.inames();
      if (!std::any_of(names.begin(), names.end(), [&](auto& n) { return std::find(over.begin() + long(path.size()), over.end(), n) != over.end(); }))
        continue;
      isl_set* x = islu::arrange_dims(islu::to_isl(d), over).release();
      if (s) {
        s = isl_set_align_params(s, isl_set_get_space(x));
        x = isl_set_align_params(x, isl_set_get_space(s));
        s = isl_set_intersect(s, x);
      } else {
        s = x;
      }
    }
    isl::set values = islu::dims_to_params(islu::arrange_dims(isl::manage(s), path), std::vector<std::string>(path.begin(), path.end() - 1));
    isl_set* a = isl_set_align_params(values.release(), isl_set_get_space(dom.get()));
    isl_set* b = isl_set_align_params(dom.copy(), isl_set_get_space(a));
    isl_bool inside = isl_set_is_subset(a, b);
    isl_set_free(a);
    isl_set_free(b);
    return inside == isl_bool_true;
  });
  if (holes_empty) return bound_where_empty(k, path, lo, hi, params, loop);
  if (box.is_null() || !box.intersect_params(params).is_equal(dom))
    throw KernelError("kernel '" + k.name + "': loop '" + loop.iname + "' runs on the host around global barriers, and its domain" +
                      " is not an interval from " + loop.lower.str() + " to " + loop.upper.str() +
                      " (a stride or a hole); split it, or give it a domain of consecutive values");
  bound_where_empty(k, path, lo, hi, params, loop);
}

// The host steps of sections [begin, end) inside `depth` host loops (each
// section is a launch of the same index: a section starts at an instruction).
std::vector<HostStep> steps_of(const LoopKernel& k, const std::vector<Section>& secs, size_t begin, size_t end, size_t depth) {
  std::vector<HostStep> out;
  for (size_t s = begin; s < end;) {
    if (secs[s].host.size() == depth) {
      out.push_back(HostStep::launch_step(s));
      ++s;
      continue;
    }
    size_t e = s;
    while (e < end && secs[e].host.size() > depth && secs[e].host[depth] == secs[s].host[depth]) ++e;
    HostStep loop{HostStep::Loop, 0, secs[s].host[depth], Expr(), Expr(), {}};
    host_loop_bounds(k, std::vector<std::string>(secs[s].host.begin(), secs[s].host.begin() + long(depth) + 1), loop);
    loop.body = steps_of(k, secs, s, e, depth + 1);
    out.push_back(std::move(loop));
    s = e;
  }
  return out;
}

// launch_sections: each launch's first instruction (its index); host_given: as host_loops_of.
LaunchProgram split(const LoopKernel& given, std::vector<int>* launch_sections, const std::set<std::string>* host_given) {
  // rules expanded first: what an instruction reads, and in which inames, shows only then
  LoopKernel k = expand_substitutions(given);
  std::vector<std::string> host_order = host_loops_of(k, host_given);
  std::set<std::string> host(host_order.begin(), host_order.end());
  std::vector<int> section_of;
  std::vector<Section> secs = sections_of(k, host_order, section_of);
  std::map<std::string, int> section_of_id;  // (a global barrier's: -1)
  for (size_t i = 0; i < k.instructions.size(); ++i) section_of_id[k.instructions[i].id] = section_of[i];
  // a dependency on a later launch cannot hold
  for (size_t i = 0; i < k.instructions.size(); ++i)
    for (auto& dep : k.instructions[i].depends_on) {
      auto it = section_of_id.find(dep);
      if (section_of[i] >= 0 && it != section_of_id.end() && it->second > section_of[i])
        throw KernelError("kernel '" + k.name + "': instruction '" + k.instructions[i].id + "' depends on '" + dep +
                          "', which comes after a global barrier that '" + k.instructions[i].id + "' precedes");
    }
  // private and local values do not outlive a launch (the kernel as written,
  // split as its transformed kernel is, is only the reference of the
  // launches' checks: what lives in global memory there may be private here)
  for (auto& [name, t] : k.temporaries) {
    if (t.space == AddressSpace::Global || host_given) continue;
    int writer = -1;
    std::set<int> writing;
    for (size_t i = 0; i < k.instructions.size(); ++i)
      if (k.instructions[i].kind == Instruction::Assign && k.instructions[i].assignee_name() == name) writing.insert(section_of[i]);
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      const Instruction& insn = k.instructions[i];
      if (insn.kind != Instruction::Assign) continue;
      if (insn.assignee_name() == name) writer = std::max(writer, section_of[i]);
      bool reads = insn.read_names().count(name) > 0;
      bool stale = writer >= 0 && writer < section_of[i];             // the last write before it is in an earlier launch
      bool carried = !writing.empty() && !writing.count(section_of[i]);  // only other launches write it (a host loop's next iteration)
      if (reads && (stale || carried))
        throw KernelError("kernel '" + k.name + "': temporary '" + name + "' (" + to_string(t.space == AddressSpace::Auto ? AddressSpace::Private : t.space) +
                          ") is written in one launch and read in another by '" + insn.id +
                          "' (a global barrier between them); a value that crosses launches lives in global memory (declare it 'global', "
                          "or save_and_reload_temporaries)");
    }
  }
  LaunchProgram program;
  for (auto& [name, t] : k.temporaries) {
    if (t.space != AddressSpace::Global) continue;
    if (!t.dtype.known()) throw KernelError("kernel '" + k.name + "': global temporary '" + name + "' needs a dtype");
    Argument a;
    a.name = name;
    a.dtype = t.dtype;
    a.shape = t.shape;
    a.stand_in = t.stand_in;
    if (a.shape.empty()) {
      // a global scalar: an array of one element, read and written as name[0]
      a.shape.push_back(make_int(1));
      std::map<std::string, Expr> element{{name, make_subscript(name, {make_int(0)}, t.dtype)}};
      for (auto& insn : k.instructions.edit()) {
        if (insn.lhs.defined()) insn.lhs = substitute(insn.lhs, element);
        if (insn.rhs.defined()) insn.rhs = substitute(insn.rhs, element);
        for (auto& p : insn.predicates) p = substitute(p, element);
      }
    }
    program.global_temporaries.push_back(a);
  }
  // a launch a section (a global barrier first, last or after another makes
  // none of its own: one that does nothing would still cost a launch); a
  // kernel of no instructions keeps its one
  for (size_t s = 0; s < secs.size(); ++s) {
    std::string name = s == 0 ? k.name : k.name + "_" + std::to_string(s);
    program.launches.push_back(launch_of(k, secs[s], section_of_id, int(s), host, program.global_temporaries, name));
    if (launch_sections) launch_sections->push_back(int(secs[s].insns.front()));
  }
  if (program.launches.empty()) {
    program.launches.push_back(launch_of(k, Section{}, section_of_id, -1, host, program.global_temporaries, k.name));
    if (launch_sections) launch_sections->push_back(0);
    program.steps.push_back(HostStep::launch_step(0));
    return program;
  }
  program.steps = steps_of(k, secs, 0, secs.size(), 0);
  return program;
}

// The host loops around each launch, outermost first.
std::vector<std::vector<std::string>> host_paths(const std::vector<HostStep>& steps, size_t launches) {
  std::vector<std::vector<std::string>> out(launches);
  std::vector<std::string> path;
  std::function<void(const std::vector<HostStep>&)> walk = [&](const std::vector<HostStep>& ss) {
    for (auto& s : ss) {
      if (s.kind == HostStep::Launch) {
        out[s.launch] = path;
        continue;
      }
      path.push_back(s.iname);
      walk(s.body);
      path.pop_back();
    }
  };
  walk(steps);
  return out;
}

void collect_host_loops(const std::vector<HostStep>& steps, std::set<std::string>& out) {
  for (auto& s : steps)
    if (s.kind == HostStep::Loop) {
      out.insert(s.iname);
      collect_host_loops(s.body, out);
    }
}

}  // namespace

std::set<std::string> LaunchProgram::host_loops() const {
  std::set<std::string> out;
  collect_host_loops(steps, out);
  return out;
}

bool LaunchProgram::has_host_loops() const {
  return std::any_of(steps.begin(), steps.end(), [](const HostStep& s) { return s.kind == HostStep::Loop; });
}

std::string host_steps_text(const std::vector<HostStep>& steps) {
  std::string out;
  for (auto& s : steps) {
    out += out.empty() ? "" : "; ";
    if (s.kind == HostStep::Launch) out += "launch " + std::to_string(s.launch + 1);
    else out += "for " + s.iname + " in [" + s.lower.str() + ", " + s.upper.str() + "] { " + host_steps_text(s.body) + " }";
  }
  return out;
}

void for_each_launch(const std::vector<HostStep>& steps, const std::map<std::string, int64_t>& params,
                     const std::function<void(size_t, const std::map<std::string, int64_t>&)>& launch) {
  for (auto& s : steps) {
    if (s.kind == HostStep::Launch) {
      launch(s.launch, params);
      continue;
    }
    std::map<std::string, int64_t> inner = params;
    int64_t lo = eval_int(s.lower, params), hi = eval_int(s.upper, params);
    for (int64_t v = lo; v <= hi; ++v) {
      inner[s.iname] = v;
      for_each_launch(s.body, inner, launch);
    }
  }
}

namespace {

// Whether an iname other than a host loop's runs in instructions of two
// launches (a hardware loop distributed around a barrier, loopy's
// rotate_v2): such a program is not the sequential program its kernel text
// reads as, so it is checked launch by launch only.
bool shares_loops_across_launches(const LoopKernel& k, const std::set<std::string>& host) {
  std::map<std::string, int> launch_of;
  int launch = 0;
  for (auto& insn : k.instructions) {
    if (insn.kind == Instruction::GlobalBarrier) {
      ++launch;
      continue;
    }
    for (auto& n : insn.within_inames) {
      if (host.count(n)) continue;
      auto [it, fresh] = launch_of.insert({n, launch});
      if (!fresh && it->second != launch) return true;
    }
  }
  return false;
}

}  // namespace

LaunchProgram split_global_barriers(const LoopKernel& k) {
  if (!needs_launches(k)) {
    LaunchProgram one;
    one.launches.push_back(k);
    one.steps.push_back(HostStep::launch_step(0));
    return one;
  }
  std::vector<int> sections;
  LaunchProgram program = split(k, &sections, nullptr);
  if (k.original) {
    // each launch answers to the same launch of the kernel as written (split
    // with the same host loops): the one of its section, not counting the
    // barriers rfactor added (both halves of a factored reduction answer to
    // the launch it was in), in the same host loops
    std::set<std::string> host;
    collect_host_loops(program.steps, host);
    // launches of their own (a wavefront's host loop) are checked as one program
    auto as_a_whole = [&] {
      if (shares_loops_across_launches(k, host)) return false;
      for (auto& l : program.launches) l.original = nullptr;
      program.checked_as_a_whole = true;
      return true;
    };
    LaunchProgram written;
    if (needs_launches(*k.original)) {
      try {
        written = split(*k.original, nullptr, &host);
      } catch (const KernelError&) {
        if (as_a_whole()) return program;
        throw;
      }
    } else {
      written.launches.push_back(*k.original);
      written.steps.push_back(HostStep::launch_step(0));
      if (!host.empty()) {
        if (as_a_whole()) return program;
        throw KernelError("kernel '" + k.name + "' runs loops on the host around global barriers, but the kernel as written has no global barrier");
      }
    }
    std::vector<std::vector<std::string>> paths = host_paths(program.steps, program.launches.size());
    std::vector<std::vector<std::string>> written_paths = host_paths(written.steps, written.launches.size());
    // the barriers transformations added (rfactor's, read_initial_values's) before each launch's first instruction (every
    // section is a launch: a section starts at an instruction)
    std::vector<int> added_before;
    for (int first : sections) {
      int added = 0;
      for (int i = 0; i < first; ++i)
        added += k.instructions[size_t(i)].kind == Instruction::GlobalBarrier && k.instructions[size_t(i)].tags.count(Instruction::kAddedBarrierTag);
      added_before.push_back(added);
    }
    std::set<int> answered;
    bool paired = true;
    for (size_t l = 0; l < program.launches.size() && paired; ++l) {
      int w = int(l) - added_before[l];  // its launch of the kernel as written
      paired = w >= 0 && size_t(w) < written.launches.size() && paths[l] == written_paths[size_t(w)];
      if (!paired) break;
      answered.insert(w);
      program.launches[l].original = std::make_shared<const LoopKernel>(written.launches[size_t(w)]);
    }
    if ((!paired || answered.size() != written.launches.size()) && as_a_whole()) return program;
    if (!paired || answered.size() != written.launches.size())
      throw KernelError("kernel '" + k.name + "' runs as " + host_steps_text(program.steps) + ", but as written it ran as " +
                        host_steps_text(written.steps) + "; transformations may not add or remove global barriers (rfactor's own excepted)");
  }
  return program;
}

}  // namespace loom
