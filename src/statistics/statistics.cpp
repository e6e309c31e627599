// op_map, mem_access_map, synchronization_map: loopy's kernel statistics on
// the preprocessed kernel (as written, or as generated: StatisticsOptions::
// as_generated and the GeneratedKernel overloads). Each instruction's events per run (its
// operations by dtype and kind, its accesses by array and direction) are
// multiplied by the number of times it runs at the key's granularity: the
// points of its inames' domain (Count), without the thread inames for
// work-group and sub-group counts, times the sub-groups of a block for the
// latter; count_redundant_work multiplies by the thread and block axes the
// instruction does not use. Barriers are counted per work-item over the
// loops around them; every launch is one kernel_launch.
#include <isl/aff.h>
#include <isl/polynomial.h>
#include <isl/set.h>

#include <functional>
#include <sstream>

#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/preprocess.h"
#include "loom/schedule.h"
#include "loom/statistics.h"

namespace loom {

const char* to_string(CountGranularity g) {
  switch (g) {
    case CountGranularity::WorkItem: return "workitem";
    case CountGranularity::SubGroup: return "subgroup";
    case CountGranularity::WorkGroup: return "workgroup";
  }
  return "?";
}

namespace {

std::string strides_text(const std::map<int, Expr>& s) {
  std::string t = "{";
  for (auto& [axis, e] : s) t += (t.size() > 1 ? ", " : "") + std::to_string(axis) + ": " + (e ? e.str() : "None");
  return t + "}";
}

// Adds n to the count of key (starting it at n).
template <class Key>
void accumulate(CountMap<Key>& m, const Key& key, const Count& n) {
  auto it = m.find(key);
  if (it == m.end()) m.emplace(key, n);
  else it->second = it->second + n;
}

}  // namespace

bool OpKey::operator<(const OpKey& o) const {
  return std::make_tuple(dtype.name(), name, int(granularity), kernel) <
         std::make_tuple(o.dtype.name(), o.name, int(o.granularity), o.kernel);
}
std::string OpKey::str() const {
  return "Op(" + dtype.name() + ", " + name + ", " + to_string(granularity) + ", \"" + kernel + "\")";
}

bool MemAccessKey::operator<(const MemAccessKey& o) const {
  return std::make_tuple(mtype, dtype.name(), strides_text(lid_strides), strides_text(gid_strides), direction, variable,
                         int(granularity), kernel) <
         std::make_tuple(o.mtype, o.dtype.name(), strides_text(o.lid_strides), strides_text(o.gid_strides), o.direction,
                         o.variable, int(o.granularity), o.kernel);
}
std::string MemAccessKey::str() const {
  return "MemAccess(" + mtype + ", " + dtype.name() + ", " + strides_text(lid_strides) + ", " + strides_text(gid_strides) +
         ", " + direction + ", " + variable + ", " + to_string(granularity) + ", '" + kernel + "')";
}
std::string SyncKey::str() const { return "Sync(" + kind + ", " + kernel + ")"; }

namespace {

// Sums and products that fold constants (strides read best as 1 or 128 or n).
Expr plus(const Expr& a, const Expr& b, int sign) {
  auto ca = constant_int(a), cb = constant_int(b);
  if (ca && cb) return make_int(*ca + sign * *cb);
  if (cb && *cb == 0) return a;
  if (ca && *ca == 0) return sign > 0 ? b : make_int(-1) * b;
  return sign > 0 ? a + b : a - b;
}
Expr times(const Expr& a, const Expr& b) {
  auto ca = constant_int(a), cb = constant_int(b);
  if (ca && cb) return make_int(*ca * *cb);
  if ((ca && *ca == 0) || (cb && *cb == 0)) return make_int(0);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return a * b;
}

// The coefficient of variable v in e where e is affine in v (other
// variables and parameters may multiply it); nullopt where it is not.
std::optional<Expr> coefficient(const Expr& e, const std::string& v) {
  if (!mentions_var(e, v)) return make_int(0);
  switch (e.kind()) {
    case ExprKind::Var: return make_int(1);
    case ExprKind::Cast: return coefficient(e.as<Cast>()->value, v);
    case ExprKind::Unary: {
      auto u = e.as<Unary>();
      if (u->op != UnOp::Neg) return std::nullopt;
      auto c = coefficient(u->a, v);
      if (!c) return std::nullopt;
      return plus(make_int(0), *c, -1);
    }
    case ExprKind::Binary: {
      auto b = e.as<Binary>();
      switch (b->op) {
        case BinOp::Add:
        case BinOp::Sub: {
          auto ca = coefficient(b->a, v), cb = coefficient(b->b, v);
          if (!ca || !cb) return std::nullopt;
          return plus(*ca, *cb, b->op == BinOp::Add ? 1 : -1);
        }
        case BinOp::Mul: {
          bool ma = mentions_var(b->a, v), mb = mentions_var(b->b, v);
          if (ma && mb) return std::nullopt;
          auto c = coefficient(ma ? b->a : b->b, v);
          if (!c) return std::nullopt;
          return times(*c, ma ? b->b : b->a);
        }
        case BinOp::FloorDiv:
        case BinOp::TruncDiv:  // (loopy's stride collector ignores the denominator)
          return coefficient(b->a, v);
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

// One launch as the statistics see it: the preprocessed kernel (barriers
// placed) and its linearization.
struct Launch {
  LoopKernel kernel;
  Linearization linearization;
};

struct Counter {
  const LoopKernel& k;
  const StatisticsOptions& options;
  std::string kernel_name;
  isl::set assumptions;
  std::map<std::pair<std::string, int>, Count> runs_memo;

  isl_space* params = nullptr;  // every parameter of the kernel: counts share it, so isl can add and multiply them

  Counter(const Launch& l, const StatisticsOptions& o, std::string name)
      : k(l.kernel), options(o), kernel_name(std::move(name)) {
    auto names = k.parameters();
    params = isl_space_params_alloc(isl_context(), unsigned(names.size()));
    for (size_t i = 0; i < names.size(); ++i) params = isl_space_set_dim_name(params, isl_dim_param, unsigned(i), names[i].c_str());
    assumptions = aligned(islu::assumptions_of(k));
  }
  ~Counter() { isl_space_free(params); }
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  isl::set aligned(const isl::set& s) const { return isl::manage(isl_set_align_params(s.copy(), isl_space_copy(params))); }

  bool selected(const Instruction& insn, const std::set<std::string>& matched) const {
    if (options.within.empty()) return true;
    return matched.count(insn.id) || (!insn.origin_of.empty() && matched.count(insn.origin_of));
  }
  std::set<std::string> matched_ids() const {
    if (options.within.empty()) return {};
    auto ids = find_instructions(k, options.within);
    return {ids.begin(), ids.end()};
  }

  // The points of the inames' domain where the affine conditions hold
  // (others, reading memory, are taken to hold: the count is an upper bound there).
  Count points_of(const std::vector<std::string>& inames, const std::vector<Expr>& conditions = {}) {
    std::vector<std::string> ordered;
    for (auto& n : k.all_inames())
      if (std::find(inames.begin(), inames.end(), n) != inames.end()) ordered.push_back(n);
    isl::set s = islu::iteration_domain(k, ordered);
    for (auto& c : conditions) {
      bool inside = true;  // (a condition on a thread iname left out of a per-group count does not restrict it)
      std::set<std::string> vars;
      collect_free_vars(c, vars);
      for (auto& v : vars)
        if (k.has_iname(v) && std::find(ordered.begin(), ordered.end(), v) == ordered.end()) inside = false;
      if (!inside) continue;
      isl::set cs = islu::condition_set(c, s.space());
      if (!cs.is_null()) s = s.intersect(cs);
    }
    return Count::points(aligned(s).get(), assumptions.get());
  }

  // Threads along local axis `axis`: the largest range of its inames (a
  // constant, as a block's shape is).
  int64_t threads_along(int axis) {
    int64_t extent = 1;
    for (auto& n : k.all_inames()) {
      InameTag t = k.tag_of(n);
      if (t.kind != InameTag::Local || t.axis != axis) continue;
      auto r = islu::constant_range(k, n);
      if (!r)
        throw KernelError("kernel '" + k.name + "': the extent of local axis l." + std::to_string(axis) + " (iname '" + n +
                          "') depends on the parameters, so the sub-groups of a work-group cannot be counted (as in loopy); "
                          "count per work-item (granularity workitem) or split the iname with a constant inner length");
      extent = std::max(extent, r->second - r->first + 1);
    }
    return extent;
  }
  int64_t threads_per_block() { return threads_along(0) * threads_along(1) * threads_along(2); }
  // Blocks along group axis `axis`: the values its inames take (their union,
  // which is the longest range where they all start at 0).
  Count blocks_along(int axis) {
    isl_set* all = nullptr;
    for (auto& n : k.all_inames()) {
      InameTag t = k.tag_of(n);
      if (t.kind != InameTag::Group || t.axis != axis) continue;
      isl_set* d = isl_set_set_dim_name(aligned(islu::iteration_domain(k, {n})).release(), isl_dim_set, 0, "block");
      all = all ? isl_set_union(all, d) : d;
    }
    if (!all) return Count::constant(1);
    Count c = Count::points(all, assumptions.get());
    isl_set_free(all);
    return c;
  }

  // How often an instruction runs at granularity gr.
  Count runs(const Instruction& insn, CountGranularity gr, const std::vector<Expr>& branch = {}) {
    auto key = std::make_pair(insn.id, int(gr));
    if (branch.empty())
      if (auto it = runs_memo.find(key); it != runs_memo.end()) return it->second;
    bool threads = gr == CountGranularity::WorkItem;
    std::vector<std::string> inames;
    std::set<int> local_axes, group_axes;
    for (auto& n : insn.within_inames) {
      InameTag t = k.tag_of(n);
      if (t.kind == InameTag::Local) local_axes.insert(t.axis);
      if (t.kind == InameTag::Group) group_axes.insert(t.axis);
      // a tensor-core tile's (m, n) pairs are spread over the warp's lanes (l.0)
      if (t.kind == InameTag::MatrixM || t.kind == InameTag::MatrixN) local_axes.insert(0);
      if (t.kind != InameTag::Local || threads) inames.push_back(n);
    }
    std::vector<Expr> conditions = insn.predicates;
    conditions.insert(conditions.end(), branch.begin(), branch.end());
    Count c = points_of(inames, conditions);
    if (gr == CountGranularity::SubGroup) {
      int64_t block = threads_per_block();
      c = c * ((block + options.subgroup_size - 1) / options.subgroup_size);
    }
    if (options.count_redundant_work) {
      for (int a = 0; a < 3; ++a) {
        if (threads && !local_axes.count(a)) c = c * threads_along(a);
        if (!group_axes.count(a)) c = c.times(blocks_along(a));
      }
    }
    if (branch.empty()) runs_memo.emplace(key, c);
    return c;
  }
};

// Operations of one run of an instruction, by (dtype, name).
struct OpCollector : ExprVisitor {
  bool within_subscripts;
  std::map<std::pair<std::string, std::string>, int64_t> ops;  // (dtype name, op) -> count
  std::map<std::string, Type> types;
  void add(Type t, const std::string& name, int64_t n = 1) {
    ops[{t.name(), name}] += n;
    types[t.name()] = t;
  }
  void visit_binary(const Binary& b) override {
    switch (b.op) {
      case BinOp::Add:
      case BinOp::Sub: add(b.type, "add"); break;
      case BinOp::Mul: add(b.type, "mul"); break;
      case BinOp::Div:
      case BinOp::FloorDiv:
      case BinOp::Mod:
      case BinOp::TruncDiv:
      case BinOp::TruncRem: add(b.type, "div"); break;
      case BinOp::Pow: add(b.type, "pow"); break;
      case BinOp::Shl:
      case BinOp::Shr: add(b.type, "shift"); break;
      case BinOp::BitAnd:
      case BinOp::BitOr:
      case BinOp::BitXor: add(b.type, "bw"); break;
      default: break;  // comparisons and logic: not counted (as loopy)
    }
    ExprVisitor::visit_binary(b);
  }
  void visit_unary(const Unary& u) override {
    if (u.op == UnOp::BitNot) add(u.type, "bw");
    ExprVisitor::visit_unary(u);
  }
  void visit_call(const Call& c) override {
    if (c.name.rfind("__", 0) != 0) add(c.type, "func:" + c.name);
    ExprVisitor::visit_call(c);
  }
  void visit_subscript(const Subscript& s) override {
    if (within_subscripts) ExprVisitor::visit_subscript(s);
  }
  void visit_warp_reduce(const WarpReduce& w) override {
    int64_t steps = 0;
    for (int64_t x = 1; x < w.width; x *= 2) ++steps;
    const char* name = w.op == ReduceOp::Sum ? "add" : w.op == ReduceOp::Product ? "mul" : "maxmin";
    add(w.type, name, steps);
    ExprVisitor::visit_warp_reduce(w);
  }
};

struct Access {
  std::string mtype, variable, direction;
  Type dtype;
  std::map<int, Expr> lid, gid;
  std::vector<Expr> conditions;  // the branches it sits in (GuardedExprVisitor's guards)
};

// Global and local memory accesses of one run of an instruction, each with
// the guards it runs under: a branch's accesses happen where its condition
// holds (a zero-filled fetch loads only inside the array), counted there
// where the condition is affine.
struct AccessCollector : GuardedExprVisitor {
  const LoopKernel& k;
  std::vector<Access> out;
  std::string direction = "load";
  explicit AccessCollector(const LoopKernel& kk) : k(kk) {}

  std::string mtype_of(const std::string& name) const {
    for (auto& a : k.arguments)
      if (a.name == name) return a.kind == Argument::Array ? "global" : "";
    auto t = k.temporaries.find(name);
    if (t == k.temporaries.end()) return "";
    if (t->second.space == AddressSpace::Global) return "global";
    if (t->second.space == AddressSpace::Local) return "local";
    return "";
  }

  void record(const std::string& name, Type dtype, const Subscript* s) {
    std::string mt = mtype_of(name);
    if (mt.empty()) return;
    Access a{mt, name, direction, dtype, {}, {}, guards};
    if (s) {
      Expr flat = k.flat_index(*s);
      for (auto& n : k.all_inames()) {
        InameTag t = k.tag_of(n);
        if (!t.is_hardware() || !mentions_var(flat, n)) continue;
        auto c = coefficient(flat, n);
        Expr stride;
        if (c) {
          auto v = constant_int(*c);
          stride = v ? make_int(*v, k.options.index_dtype) : simplify(*c);
        }
        if (stride && stride.as<IntImm>() && stride.as<IntImm>()->value == 0) continue;
        (t.kind == InameTag::Local ? a.lid : a.gid)[t.axis] = stride;
      }
    }
    out.push_back(a);
  }
  void visit_var(const Var& v) override {
    auto t = k.temporaries.find(v.name);
    if (t != k.temporaries.end() && t->second.shape.empty()) record(v.name, v.type, nullptr);
  }
  void visit_subscript(const Subscript& s) override {
    record(s.name, s.type, &s);
    std::string d = direction;
    direction = "load";  // (an index reads)
    ExprVisitor::visit_subscript(s);
    direction = d;
  }
};

// Host loops around launches (global barriers inside sequential loops) are
// not counted yet: each launch's counts would depend on the loop's iname.
void refuse_host_loops(const std::string& kernel, const std::vector<HostStep>& steps) {
  if (std::any_of(steps.begin(), steps.end(), [](const HostStep& s) { return s.kind == HostStep::Loop; }))
    throw KernelError("kernel '" + kernel + "' runs loops on the host around global barriers (" + host_steps_text(steps) +
                      "); its statistics are not counted yet: each launch's counts would depend on the host loop's iname");
}

// The launches of a generated kernel (itself when it is one).
std::vector<Launch> launches_of(const GeneratedKernel& g) {
  std::vector<Launch> r;
  if (g.is_program()) {
    refuse_host_loops(g.kernel.name, g.host_steps);
    for (auto& l : g.launches) r.push_back({l.kernel, l.linearization});
  }
  else
    r.push_back({g.kernel, g.linearization});
  return r;
}

// The same from a kernel, without sizing the hardware axes (so a block
// extent that depends on the parameters is no obstacle unless a count needs
// it), and without common-subexpression elimination unless asked: every
// operation and access as written counts, as in loopy.
std::vector<Launch> launches_of(const LoopKernel& k, const StatisticsOptions& o) {
  std::vector<Launch> r;
  LaunchProgram program = split_global_barriers(resolve_address_spaces(k));
  refuse_host_loops(k.name, program.steps);
  for (auto& l : program.launches) {
    Launch one{preprocess(l, TargetInfo::generic_cuda(), o.as_generated), {}};
    one.linearization = linearize(one.kernel);
    one.kernel = place_local_barriers(one.kernel, one.linearization);
    r.push_back(std::move(one));
  }
  return r;
}

CountMap<OpKey> ops_of(const std::vector<Launch>& launches, const std::string& name, const StatisticsOptions& options) {
  CountMap<OpKey> result;
  for (auto& l : launches) {
    Counter c(l, options, name);
    auto matched = c.matched_ids();
    for (auto& insn : l.kernel.instructions) {
      if (insn.kind != Instruction::Assign || !c.selected(insn, matched)) continue;
      OpCollector ops;
      ops.within_subscripts = options.count_within_subscripts;
      if (options.count_within_subscripts)
        if (auto s = insn.lhs.as<Subscript>())
          for (auto& i : s->indices) ops.visit(i);
      ops.visit(insn.rhs);
      for (auto& [key, n] : ops.ops) {
        CountGranularity gr = options.granularity.value_or(CountGranularity::SubGroup);
        OpKey ok{ops.types[key.first], key.second, gr, c.kernel_name};
        accumulate(result, ok, c.runs(insn, gr) * n);
      }
    }
  }
  return result;
}

CountMap<MemAccessKey> accesses_of(const std::vector<Launch>& launches, const std::string& name, const StatisticsOptions& options) {
  CountMap<MemAccessKey> result;
  for (auto& l : launches) {
    Counter c(l, options, name);
    auto matched = c.matched_ids();
    for (auto& insn : l.kernel.instructions) {
      if (insn.kind != Instruction::Assign || !c.selected(insn, matched)) continue;
      AccessCollector acc(l.kernel);
      acc.visit(insn.rhs);
      acc.direction = "store";
      acc.visit(insn.lhs);
      for (auto& a : acc.out) {
        CountGranularity gr = CountGranularity::SubGroup;
        if (a.mtype == "global") {
          auto l0 = a.lid.find(0);
          if (l0 != a.lid.end() && !(l0->second && l0->second.as<IntImm>() && l0->second.as<IntImm>()->value == 0))
            gr = CountGranularity::WorkItem;
        }
        gr = options.granularity.value_or(gr);
        MemAccessKey key{a.mtype, a.dtype, a.lid, a.gid, a.direction, a.variable, gr, c.kernel_name};
        accumulate(result, key, c.runs(insn, gr, a.conditions));
      }
    }
  }
  return result;
}

CountMap<SyncKey> syncs_of(const std::vector<Launch>& launches, const std::string& name, const StatisticsOptions& options) {
  CountMap<SyncKey> result;
  auto add = [&](const std::string& kind, const Count& n) { accumulate(result, SyncKey{kind, name}, n); };
  add("kernel_launch", Count::constant(int64_t(launches.size())));
  if (launches.size() > 1) add("barrier_global", Count::constant(int64_t(launches.size()) - 1));
  for (auto& l : launches) {
    Counter c(l, options, name);
    std::vector<std::string> loops;
    std::function<void(const std::vector<ScheduleItem>&)> walk = [&](const std::vector<ScheduleItem>& items) {
      for (auto& it : items) {
        if (it.kind == ScheduleItem::Loop) {
          loops.push_back(it.name);
          walk(it.body);
          loops.pop_back();
          continue;
        }
        if (l.kernel.instruction(it.name).kind == Instruction::Barrier) add("barrier_local", c.points_of(loops));
      }
    };
    walk(l.linearization.items);
  }
  return result;
}

}  // namespace

CountMap<OpKey> op_map(const GeneratedKernel& g, const StatisticsOptions& o) { return ops_of(launches_of(g), g.kernel.name, o); }
CountMap<MemAccessKey> mem_access_map(const GeneratedKernel& g, const StatisticsOptions& o) {
  return accesses_of(launches_of(g), g.kernel.name, o);
}
CountMap<SyncKey> synchronization_map(const GeneratedKernel& g, const StatisticsOptions& o) {
  return syncs_of(launches_of(g), g.kernel.name, o);
}
CountMap<OpKey> op_map(const LoopKernel& k, const StatisticsOptions& o) { return ops_of(launches_of(k, o), k.name, o); }
CountMap<MemAccessKey> mem_access_map(const LoopKernel& k, const StatisticsOptions& o) {
  return accesses_of(launches_of(k, o), k.name, o);
}
CountMap<SyncKey> synchronization_map(const LoopKernel& k, const StatisticsOptions& o) {
  return syncs_of(launches_of(k, o), k.name, o);
}

std::map<std::string, double> kernel_features(const GeneratedKernel& g, const std::map<std::string, int64_t>& params) {
  StatisticsOptions o;
  o.granularity = CountGranularity::WorkItem;
  o.count_redundant_work = true;
  auto launches = launches_of(g);
  std::map<std::string, double> f;
  auto add = [&](const std::string& name, const Count& c, double scale) {
    if (!c.closed_form()) return;
    f[name] += double(c.eval(params)) * scale;
  };
  for (auto& [key, c] : ops_of(launches, g.kernel.name, o)) add(key.dtype.is_float() ? "flops" : "int_ops", c, 1);
  for (auto& [key, c] : accesses_of(launches, g.kernel.name, o)) {
    double bytes = key.dtype.bytes();
    add(key.mtype + "_" + key.direction + "_bytes", c, bytes);
    if (key.mtype == "global") {
      auto l0 = key.lid_strides.find(0);
      auto v = l0 != key.lid_strides.end() && l0->second ? constant_int(l0->second) : std::nullopt;
      if (l0 != key.lid_strides.end() && !(v && (*v == 0 || *v == 1))) add("strided_global_bytes", c, bytes);
    }
  }
  for (auto& [key, c] : syncs_of(launches, g.kernel.name, o))
    add(key.kind == "kernel_launch" ? "launches" : "barriers", c, 1);
  int64_t threads = g.threads_per_block();
  for (auto& l : g.launches) threads = std::max(threads, l.threads_per_block());
  f["threads_per_block"] = double(threads);
  return f;
}

std::string statistics_report(const LoopKernel& k, const StatisticsOptions& options,
                              const std::map<std::string, int64_t>* params) {
  auto launches = launches_of(k, options);
  std::ostringstream os;
  auto value = [&](const Count& c) { return params ? std::to_string(c.eval(*params)) : c.str(); };
  os << "# operations\n";
  for (auto& [key, c] : ops_of(launches, k.name, options)) os << key.str() << ": " << value(c) << "\n";
  os << "# memory accesses\n";
  for (auto& [key, c] : accesses_of(launches, k.name, options)) os << key.str() << ": " << value(c) << "\n";
  os << "# synchronization\n";
  for (auto& [key, c] : syncs_of(launches, k.name, options)) os << key.str() << ": " << value(c) << "\n";
  return os.str();
}

}  // namespace loom
