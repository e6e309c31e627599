// check_reorderings: the polyhedral legality test of a transformed kernel
// against the kernel as written (LoopKernel::original). Both are preprocessed
// and linearized; each linearization gives every instruction instance a time:
// the block indices first (blocks are not ordered; conflicts between them are
// refused by thread_conflicts), then its position in the loop tree and the
// values of its loops. The threads of a block run each statement together
// (a race-free kernel behaves so; races are refused before). A private
// temporary has a copy per thread. Through each instruction's origin (its
// original inames as expressions of the current ones) the transformed
// instances are the original ones, so isl computes the value-based dataflow
// of both on the same instances: for every read, the write instance it gets
// its value from (or none: the value from before the kernel), and for every
// argument element, the write that leaves its final value. The
// transformation is legal when both are the same; otherwise it is refused
// with a witness. Value-based dataflow keeps a temporary that every iteration
// writes before it reads it from looking like a loop-carried dependence.
//
// Compared are the arrays and the kernel's own private temporaries that only
// instructions with an origin access, the same instructions in both kernels;
// a transformed statement that answers to none as written is refused, and
// fewer statements (a launch of a program, a copy's reads) leave the array
// to the program's check or the copy's transformation. Data written once
// per element and never read is skipped before any isl work. Not compared: what a transformation adds (a prefetch's fetch, a
// buffer's store: that transformation answers for it), local temporaries
// (the barrier placement's business), reduction accumulators (a reduction's
// order is free, as in loopy; preprocessing makes them in both kernels),
// atomic updates (they commute) and pairs declared {nosync}.
#include <isl/flow.h>
#include <isl/map.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <functional>
#include <memory>
#include <optional>

#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/preprocess.h"
#include "loom/schedule.h"

namespace loom {

namespace {

struct Access {
  std::string array;
  std::string tuple;  // the instance's tuple: the original instruction
  bool write = false;
  bool may = false;   // predicated or non-affine: may happen / may touch any element
  // The left-hand side, or its read at the top of an accumulation
  // (x = x + f): what collapse_accumulations folds into one instance per sum.
  bool accumulator = false;
  isl::map map;       // tuple[keys] -> array[index]
};

// One kernel's instances, accesses and times, on the original instances.
struct Side {
  std::map<std::string, std::vector<std::string>> keys;  // tuple -> its dimensions
  std::set<std::string> unknown_arrays;                  // touched by an instruction without (usable) origin
  std::map<std::string, std::set<std::string>> accessors;  // array -> tuples
  std::vector<Access> accesses;
  std::map<std::string, isl::map> time;  // tuple -> its time: block indices, then the loop tree
  std::set<std::pair<std::string, std::string>> nosync;  // (tuple, tuple) pairs declared unsynchronized
  // Reads of a copy of an array as it was before the kernel
  // (read_initial_values), as reads of that array: instance -> element.
  // Not sinks of the side's dataflow: their value is the array's from
  // before the kernel by construction.
  isl::union_map initial_reads;
};

// Reads in an expression: subscripts and the scalars named in `scalars`.
struct ReadFinder : ExprVisitor {
  const std::set<std::string>& scalars;
  std::vector<std::pair<std::string, const Subscript*>> found;  // (name, subscript or null for a scalar)
  explicit ReadFinder(const std::set<std::string>& s) : scalars(s) {}
  void visit_subscript(const Subscript& s) override {
    found.push_back({s.name, &s});
    ExprVisitor::visit_subscript(s);
  }
  void visit_var(const Var& v) override {
    if (scalars.count(v.name)) found.push_back({v.name, nullptr});
  }
};

struct InstructionAccess {
  std::string name;
  const Subscript* sub;  // null: a scalar
  bool write;
  bool accumulator = false;  // the left-hand side or its read at the top of x = x + f (x - f, x * f)
};

std::vector<InstructionAccess> accesses_of(const Instruction& insn, const std::set<std::string>& scalars) {
  std::vector<InstructionAccess> out;
  ReadFinder f(scalars);
  const Expr* acc = insn.kind == Instruction::Assign ? accumulated_operand(insn) : nullptr;
  if (auto l = insn.lhs.as<Subscript>()) {
    out.push_back({l->name, l, true, acc != nullptr});
    for (auto& ix : l->indices) f.visit(ix);
  } else if (auto v = insn.lhs.as<Var>(); v && scalars.count(v->name)) {
    out.push_back({v->name, nullptr, true, acc != nullptr});
  }
  if (insn.rhs.defined()) f.visit(insn.rhs);
  for (auto& p : insn.predicates) f.visit(p);
  // (a scalar accumulator is marked where it is read once only: its one read is the accumulated operand)
  int scalar_reads = 0;
  for (auto& [n, sub] : f.found) scalar_reads += !sub && n == insn.assignee_name();
  for (auto& [n, sub] : f.found) {
    bool a = acc && (sub ? sub == acc->as<Subscript>() : n == insn.assignee_name() && scalar_reads == 1);
    out.push_back({n, sub, false, a});
  }
  return out;
}

// {[dims] -> name[values]} on `space` (a set space over dims), or null when a value is not affine.
isl::map function_map(const isl::space& space, const std::vector<Expr>& values, const std::string& name) {
  isl_pw_aff_list* list = isl_pw_aff_list_alloc(isl_context(), int(values.size()));
  for (auto& e : values) {
    isl::pw_aff p = islu::pw_aff_from_expr(e, space);
    if (p.is_null()) {
      isl_pw_aff_list_free(list);
      isl_ctx_reset_error(isl_context());
      return isl::map();
    }
    list = isl_pw_aff_list_add(list, p.release());
  }
  isl_space* range = isl_space_set_tuple_name(
      isl_space_add_dims(isl_space_set_from_params(isl_space_params(space.copy())), isl_dim_set, unsigned(values.size())),
      isl_dim_set, name.c_str());
  isl_space* ms = isl_space_map_from_domain_and_range(space.copy(), range);
  return isl::manage(isl_map_from_multi_pw_aff(isl_multi_pw_aff_from_pw_aff_list(ms, list)));
}

class SideBuilder {
 public:
  // The kernel runs on the threads and blocks its tags say (private
  // temporaries have a copy per thread; the block indices lead its time);
  // without tags (the kernel as written, usually) it is one sequential program.
  SideBuilder(const LoopKernel& k, const Linearization& L, const std::set<std::string>& compared)
      : k_(k), L_(L), compared_(compared) {
    for (auto& n : compared)
      if (const Temporary* t = k.find_temporary(n); t && t->shape.empty()) scalars_.insert(n);
    for (int kind : {int(InameTag::Group), int(InameTag::Local)})
      for (int axis = 0; axis < 3; ++axis) {
        InameTag t{InameTag::Kind(kind), axis};
        for (auto& [n, tag] : k.iname_tags)
          if (tag == t && k.has_iname(n)) {
            axes_.push_back(t);
            break;
          }
      }
    for (auto& p : k.parameters()) params_.insert(p);
    // A whole program (global barriers between its launches): each launch's
    // blocks after the host loops' iterations and the launches before it
    for (auto& insn : k.instructions)
      if (insn.kind == Instruction::GlobalBarrier) {
        program_ = true;
        host_loops_.insert(insn.within_inames.begin(), insn.within_inames.end());
      }
    depth_ = max_depth(L.items);
    std::vector<int64_t> path;
    place(L.items, path);
  }

  Side build() {
    Side s;
    std::map<std::string, StandIn> stand_ins;  // a global temporary (a launch's argument) -> the array it stands for
    for (auto& [n, t] : k_.temporaries)
      if (t.stand_in) stand_ins[n] = t.stand_in;
    for (auto& a : k_.arguments)
      if (a.stand_in) stand_ins[a.name] = a.stand_in;
    for (auto& insn : k_.instructions) {
      if (insn.kind != Instruction::Assign) continue;
      // (the fill of a copy from before the kernel: read_initial_values answers for it)
      if (auto si = stand_ins.find(insn.assignee_name()); si != stand_ins.end() && si->second.kind == StandIn::InitialValues) continue;
      std::vector<InstructionAccess> acc = accesses_of(insn, scalars_);
      // (a reduction's part that touches nothing compared, its accumulator's
      // init, has no part in the dataflow: its time would join its store's)
      bool touches = false;
      for (auto& a : acc)
        touches |= compared_.count(a.name) || (stand_ins.count(a.name) && compared_.count(stand_ins[a.name].array));
      if (!touches && insn.origin_part && !insn.origin_of.empty() && insn.id != insn.origin_of) continue;
      std::string tuple = insn.origin_of.empty() ? insn.id : insn.origin_of;
      std::vector<std::string> dims;
      isl::map to_origin = origin_map(insn, tuple, dims);
      if (!to_origin.is_null() && insn.origin && dims.size() < insn.origin->size()) {
        // a part over fewer of the original inames (a reduction's store beside
        // its update): a statement of its own, named alike on both sides
        tuple += ", part over ";
        for (size_t d = 0; d < dims.size(); ++d) tuple += (d ? ", " : "") + dims[d];
        to_origin = isl::manage(isl_map_set_tuple_name(to_origin.release(), isl_dim_out, tuple.c_str()));
      }
      auto known = s.keys.find(tuple);
      if (to_origin.is_null() || (known != s.keys.end() && known->second != dims)) {
        for (auto& a : acc) s.unknown_arrays.insert(stand_ins.count(a.name) ? stand_ins[a.name].array : a.name);
        continue;
      }
      s.keys[tuple] = dims;
      for (auto& other : insn.no_sync_with) s.nosync.insert({tuple, other});
      isl::space space = to_origin.domain().space();
      bool predicated = false;
      for (auto& p : insn.predicates) predicated |= islu::condition_set(p, space).is_null();
      for (auto& a : acc) {
        // a copy from before the kernel's reads are its array's reads of
        // values from before the kernel (an expansion is in the kernel as
        // written too: compared as itself)
        std::string array = a.name;
        if (auto si = stand_ins.find(a.name); si != stand_ins.end() && si->second.kind == StandIn::InitialValues) {
          array = si->second.array;
          if (!compared_.count(array)) continue;
          {
            isl::map m = a.write || !a.sub ? isl::map() : function_map(space, a.sub->indices, array);
            if (m.is_null()) {
              s.unknown_arrays.insert(array);
              continue;
            }
            s.accessors[array].insert(tuple);
            m = isl::manage(isl_map_apply_domain(m.release(), to_origin.copy()));
            isl::union_map u = isl::manage(isl_union_map_from_map(m.release()));
            s.initial_reads = s.initial_reads.is_null() ? u : s.initial_reads.unite(u);
            continue;
          }
        }
        if (!compared_.count(array)) continue;
        s.accessors[array].insert(tuple);
        std::vector<Expr> index = a.sub ? a.sub->indices : std::vector<Expr>{};
        // a private temporary of the transformed kernel has a copy per thread:
        // the hardware indices are part of the element
        std::vector<unsigned> every_copy;  // axes the instruction runs on all indices of
        const Temporary* t = k_.find_temporary(a.name);
        if (t && t->space != AddressSpace::Global)
          for (auto& axis : axes_) {
            std::string h = axis_iname(insn, axis);
            if (h.empty()) every_copy.push_back(unsigned(index.size()));
            index.push_back(h.empty() ? make_int(0) : make_var(h));
          }
        isl::map m = function_map(space, index, array);
        for (unsigned pos : every_copy)
          if (!m.is_null()) m = isl::manage(isl_map_drop_constraints_involving_dims(m.release(), isl_dim_out, pos, 1));
        bool may = predicated;
        if (m.is_null()) {  // an index isl cannot read: any element
          isl_space* arr = isl_space_set_tuple_name(
              isl_space_add_dims(isl_space_set_from_params(isl_space_params(space.copy())), isl_dim_set, unsigned(index.size())),
              isl_dim_set, array.c_str());
          m = isl::manage(isl_map_from_domain_and_range(isl_set_universe(space.copy()), isl_set_universe(arr)));
          may = true;
        }
        // on the original instances
        m = isl::manage(isl_map_apply_domain(m.release(), to_origin.copy()));
        s.accesses.push_back({array, tuple, a.write, may, a.accumulator, m});
      }
      if (insn.origin_of.empty() || insn.origin_part) {  // (a piece's times join the other pieces')
        isl::map t = time_map(insn, space);
        isl::map on_origin = isl::manage(isl_map_apply_domain(t.release(), to_origin.copy()));
        auto known_time = s.time.find(tuple);
        if (known_time == s.time.end()) s.time[tuple] = on_origin;
        else known_time->second = isl::manage(isl_map_union(known_time->second.release(), on_origin.release()));
      }
    }
    return s;
  }

  int time_dims() const {
    int groups = 0;
    for (auto& a : axes_) groups += a.kind == InameTag::Group;
    return groups + 2 * depth_ + 1;
  }

 private:
  // The iname of insn on a hardware axis, or "" (it runs on every index of it).
  std::string axis_iname(const Instruction& insn, const InameTag& axis) const {
    for (auto& n : insn.within_inames)
      if (k_.tag_of(n) == axis) return n;
    return "";
  }

  static int max_depth(const std::vector<ScheduleItem>& items) {
    int d = 0;
    for (auto& it : items)
      if (it.kind == ScheduleItem::Loop) d = std::max(d, 1 + max_depth(it.body));
    return d;
  }

  void place(const std::vector<ScheduleItem>& items, std::vector<int64_t>& path) {
    for (size_t p = 0; p < items.size(); ++p) {
      path.push_back(int64_t(p));
      if (items[p].kind == ScheduleItem::Insn) position_[items[p].name] = path;
      else place(items[p].body, path);
      path.pop_back();
    }
  }

  // insn's instances -> tuple[original inames]: the origin's entries whose
  // values use only the instruction's inames (the others belong to loops it
  // is not in: a reduction's iname for its init). Null when the origin is
  // missing, not affine or not one-to-one.
  isl::map origin_map(const Instruction& insn, const std::string& tuple, std::vector<std::string>& dims) {
    if (!insn.origin) return isl::map();
    std::vector<std::string> inames;
    for (auto& n : k_.all_inames())
      if (insn.within_inames.count(n)) inames.push_back(n);
    std::vector<Expr> values;
    for (auto& [key, value] : *insn.origin) {
      std::set<std::string> vars;
      collect_free_vars(value, vars);
      bool inside = true;
      for (auto& v : vars) inside &= insn.within_inames.count(v) > 0 || params_.count(v) > 0;
      if (!inside) continue;
      dims.push_back(key);
      values.push_back(value);
    }
    isl::set dom = islu::iteration_domain(k_, inames);
    if (k_.assumptions.defined()) dom = isl::manage(isl_set_intersect_params(dom.release(), islu::to_isl(k_.assumptions).release()));
    for (auto& p : insn.predicates)  // only the instances that run, where isl can tell
      if (isl::set c = islu::condition_set(p, dom.space()); !c.is_null()) dom = dom.intersect(c);
    isl::map m = function_map(dom.space(), values, tuple);
    if (m.is_null()) return m;
    m = isl::manage(isl_map_intersect_domain(m.release(), dom.release()));
    isl_bool injective = isl_map_is_injective(m.get());
    if (injective != isl_bool_true) {
      isl_ctx_reset_error(isl_context());
      return isl::map();
    }
    // name the original dimensions (for messages)
    isl_map* named = m.release();
    for (size_t d = 0; d < dims.size(); ++d)
      named = isl_map_set_dim_id(named, isl_dim_out, unsigned(d), isl_id_alloc(isl_context(), dims[d].c_str(), nullptr));
    return isl::manage(named);
  }

  // insn's instances -> time: the block indices, then the loop tree's
  // (position, loop value, ..., position), padded with zeros to time_dims();
  // dataflow() puts a leading 0 before it (END's is 1).
  isl::map time_map(const Instruction& insn, const isl::space& space) {
    std::vector<Expr> t;
    // blocks first (nothing orders them; conflicts between them are refused
    // before); the threads of a block run each statement together. In a
    // whole program, after the host loops and the launch's place among
    // them (a launch's blocks run after the launches before it).
    auto blocks = [&] {
      for (auto& axis : axes_) {
        if (axis.kind != InameTag::Group) continue;
        std::string h = axis_iname(insn, axis);
        t.push_back(h.empty() ? make_int(0) : make_var(h));
      }
    };
    const std::vector<int64_t>& path = position_.at(insn.id);
    const std::vector<std::string>& loops = L_.loop_inames.at(insn.id);
    size_t host = 0;
    while (program_ && host < loops.size() && host + 1 < path.size() && host_loops_.count(loops[host])) ++host;
    if (!program_) blocks();
    for (size_t l = 0; l < path.size(); ++l) {
      t.push_back(make_int(path[l]));
      if (program_ && l == host) blocks();
      if (l + 1 < path.size()) t.push_back(l < loops.size() ? make_var(loops[l]) : make_int(0));
    }
    while (int(t.size()) < time_dims()) t.push_back(make_int(0));
    isl::map m = function_map(space, t, "");
    isl_map* r = isl_map_reset_tuple_id(m.release(), isl_dim_out);
    return isl::manage(r);
  }

  const LoopKernel& k_;
  const Linearization& L_;
  const std::set<std::string>& compared_;
  std::vector<InameTag> axes_;  // the hardware axes the kernel uses
  std::set<std::string> scalars_;
  std::set<std::string> params_;
  int depth_ = 0;
  bool program_ = false;              // global barriers between launches
  std::set<std::string> host_loops_;  // the loops around them
  std::map<std::string, std::vector<int64_t>> position_;
};

struct Flow {
  isl::union_map deps;       // source instance -> sink instance (END: the final values)
  isl::union_map no_source;  // sink instance -> element read before any write
};

// Dataflow of one order: for every read, the write it gets its value from;
// for every argument element written, the write that leaves its final value
// (a read by END, after everything); the reads of values from before the
// kernel. time_dims: the length of the side's times (SideBuilder::time_dims).
// isl operations one dataflow may take: about 0.5 s; every example, test
// and conformance kernel needs less than a tenth of it.
constexpr unsigned long kDataflowOperations = 1000000;

Flow dataflow(const Side& s, const std::set<std::string>& arrays, const std::set<std::string>& live_out, int time_dims,
              const std::string& kernel) {
  isl_union_map *sink = nullptr, *must = nullptr, *may = nullptr, *schedule = nullptr;
  auto add = [](isl_union_map*& u, isl_map* m) {
    isl_union_map* x = isl_union_map_from_map(m);
    u = u ? isl_union_map_union(u, x) : x;
  };
  std::set<std::string> tuples;
  for (auto& a : s.accesses) {
    if (!arrays.count(a.array)) continue;
    tuples.insert(a.tuple);
    if (!a.write) add(sink, a.map.copy());
    else add(a.may ? may : must, a.map.copy());
    if (a.write && live_out.count(a.array)) add(sink, isl_map_from_range(isl_map_range(a.map.copy())));
  }
  for (auto& t : tuples) {  // time: 0, then the instance's own (END: 1)
    auto tt = s.time.find(t);
    if (tt == s.time.end()) islu::fail("reorder check: an instance without a time");
    isl_map* m = isl_map_fix_si(isl_map_insert_dims(tt->second.copy(), isl_dim_out, 0, 1), isl_dim_out, 0, 0);
    add(schedule, m);
  }
  isl_union_map* empty = isl_union_map_empty(isl_space_params_alloc(isl_context(), 0));
  if (!sink) sink = isl_union_map_copy(empty);
  if (!must) must = isl_union_map_copy(empty);
  if (!may) may = isl_union_map_copy(empty);
  if (!schedule) schedule = isl_union_map_copy(empty);
  isl_union_map_free(empty);
  {
    isl_map* m = isl_map_universe(isl_space_map_from_domain_and_range(isl_space_set_alloc(isl_context(), 0, 0),
                                                                      isl_space_set_alloc(isl_context(), 0, unsigned(time_dims + 1))));
    m = isl_map_fix_si(m, isl_dim_out, 0, 1);
    for (int d = 1; d <= time_dims; ++d) m = isl_map_fix_si(m, isl_dim_out, unsigned(d), 0);
    schedule = isl_union_map_union(schedule, isl_union_map_from_map(m));
  }
  isl_union_access_info* info = isl_union_access_info_from_sink(sink);
  info = isl_union_access_info_set_must_source(info, must);
  info = isl_union_access_info_set_may_source(info, may);
  info = isl_union_access_info_set_schedule_map(info, schedule);
  // (its work is bounded: on unions of pieces with integer divisions, a
  // parametric chunk_iname of a split, isl's exact dataflow ran for seconds
  // to minutes; beyond the bound the order cannot be proven and the kernel
  // is refused, never generated unchecked)
  isl_ctx* ctx = isl_context();
  isl_ctx_reset_operations(ctx);
  isl_ctx_set_max_operations(ctx, kDataflowOperations);
  isl_union_flow* flow = isl_union_access_info_compute_flow(info);
  isl_ctx_set_max_operations(ctx, 0);
  if (!flow) {
    isl_ctx_reset_error(ctx);
    throw KernelError("kernel '" + kernel + "': the check that the transformations keep every value's writer (isl's exact dataflow) exceeded its work bound "
                      "on this kernel's domains (unions with integer divisions, e.g. a chunk_iname of a parametric range): the "
                      "loop order cannot be proven legal; chunk or split with constant lengths instead");
  }
  Flow f{isl::manage(isl_union_flow_get_may_dependence(flow)), isl::manage(isl_union_flow_get_may_no_source(flow))};
  isl_union_flow_free(flow);
  return f;
}

// Leaves out the dependences between tuples of a pair in `nosync` (either
// way): instructions declared unsynchronized; their order is the user's.
isl::union_map without_nosync(const isl::union_map& deps, const std::set<std::pair<std::string, std::string>>& nosync) {
  if (nosync.empty()) return deps;
  isl_map_list* list = isl_union_map_get_map_list(deps.get());
  isl_union_map* keep = isl_union_map_empty(isl_union_map_get_space(deps.get()));
  for (isl_size i = 0; i < isl_map_list_size(list); ++i) {
    isl_map* m = isl_map_list_get_at(list, i);
    const char* a = isl_map_get_tuple_name(m, isl_dim_in);
    const char* b = isl_map_get_tuple_name(m, isl_dim_out);
    bool waived = a && b && (nosync.count({a, b}) || nosync.count({b, a}));
    if (waived) isl_map_free(m);
    else keep = isl_union_map_union(keep, isl_union_map_from_map(m));
  }
  isl_map_list_free(list);
  return isl::manage(keep);
}

// Whether no two instances of insn write one element (each of its inames is
// an index by itself, or isl proves the index one-to-one).
bool writes_once(const LoopKernel& k, const Instruction& insn) {
  auto lhs = insn.lhs.as<Subscript>();
  if (!lhs) return insn.within_inames.empty();  // a scalar: once only outside every loop
  std::set<std::string> plain;
  for (auto& ix : lhs->indices)
    if (auto v = ix.as<Var>()) plain.insert(v->name);
  if (std::includes(plain.begin(), plain.end(), insn.within_inames.begin(), insn.within_inames.end())) return true;
  std::vector<std::string> inames(insn.within_inames.begin(), insn.within_inames.end());
  isl::set dom = islu::iteration_domain(k, inames);
  isl::map m = function_map(dom.space(), lhs->indices, "w");
  if (m.is_null()) return false;
  isl::map on_domain = isl::manage(isl_map_intersect_domain(m.release(), dom.release()));
  isl_bool one = isl_map_is_injective(on_domain.get());
  isl_ctx_reset_error(isl_context());
  return one == isl_bool_true;
}

// The data that may carry a dependence in the kernel as written: all but
// what one instruction alone touches, always at the same index, which no two
// of its instances share (an output written once per element, or updated in
// place element by element: y[i] = a*x[i] + y[i]).
std::set<std::string> dependence_candidates(const LoopKernel& written) {
  std::optional<LoopKernel> expanded;  // (rules expanded, when the kernel has any: their reads count)
  if (!written.substitutions.empty()) expanded = expand_substitutions(written);
  const LoopKernel& o = expanded ? *expanded : written;
  std::set<std::string> scalars;
  for (auto& [n, t] : o.temporaries)
    if (t.shape.empty()) scalars.insert(n);
  struct Use {
    std::set<const Instruction*> insns;
    std::set<std::string> indices;  // the index lists, as text
    const Instruction* writer = nullptr;
    int writers = 0;
  };
  std::map<std::string, Use> uses;
  for (auto& insn : o.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    for (auto& a : accesses_of(insn, scalars)) {
      Use& u = uses[a.name];
      u.insns.insert(&insn);
      std::string text;
      if (a.sub)
        for (auto& ix : a.sub->indices) text += ix.str() + ",";
      u.indices.insert(text);
      if (a.write) {
        u.writer = &insn;
        ++u.writers;
      }
    }
  }
  std::set<std::string> out;
  for (auto& [name, u] : uses) {
    const Argument* arg = o.find_argument(name);
    bool data = o.find_temporary(name) || (arg && arg->kind == Argument::Array);
    if (!data || u.writers == 0) continue;
    if (u.writer->atomic) continue;  // atomic updates commute: their order is free
    bool alone = u.writers == 1 && u.insns.size() == 1 && u.indices.size() == 1;
    if (alone && writes_once(o, *u.writer)) continue;
    out.insert(name);
  }
  return out;
}

}  // namespace

// A witness: one pair of a that b lacks, as a point (nothing where a is within b).
struct Point {
  std::string params, from, to;  // "n = 5", "'insn_0' at i = 3", "'insn_0' at i = 4" (or an element)
  bool from_end = false, to_end = false;
};
std::optional<Point> sample(const isl::union_map& a, const isl::union_map& b) {
  isl::union_map d = a.subtract(b);
  if (d.is_empty()) return std::nullopt;
  isl_map_list* list = isl_union_map_get_map_list(d.get());
  isl_map* m = isl_map_list_get_at(list, 0);
  isl_map_list_free(list);
  isl_basic_map* bm = isl_map_sample(m);
  isl_space* sp = isl_basic_map_get_space(bm);
  isl_point* pt = isl_basic_set_sample_point(isl_basic_map_wrap(bm));
  Point p;
  auto value = [&](isl_dim_type type, int pos) {
    isl_val* v = isl_point_get_coordinate_val(pt, type, pos);
    std::string r = std::to_string(isl_val_get_num_si(v));
    isl_val_free(v);
    return r;
  };
  isl_size np = isl_space_dim(sp, isl_dim_param);
  for (isl_size d = 0; d < np; ++d)
    p.params += std::string(p.params.empty() ? "" : ", ") + isl_space_get_dim_name(sp, isl_dim_param, unsigned(d)) + " = " +
                value(isl_dim_param, int(d));
  isl_size nin = isl_space_dim(sp, isl_dim_in), nout = isl_space_dim(sp, isl_dim_out);
  auto side = [&](isl_dim_type type, isl_size n, int offset, bool& end) {
    const char* tuple = isl_space_get_tuple_name(sp, type);
    end = !tuple;
    std::string r = tuple ? std::string("'") + tuple + "'" : "the end of the kernel";
    std::string coords;
    for (isl_size d = 0; d < n; ++d) {
      const char* name = isl_space_get_dim_name(sp, type, unsigned(d));
      coords += std::string(coords.empty() ? "" : ", ") + (name ? name : "x" + std::to_string(d)) + " = " +
                value(isl_dim_set, offset + int(d));
    }
    return coords.empty() ? r : r + " at " + coords;
  };
  p.from = side(isl_dim_in, nin, 0, p.from_end);
  p.to = side(isl_dim_out, nout, int(nin), p.to_end);
  isl_point_free(pt);
  isl_space_free(sp);
  return p;
}

// An accumulation (x = x + f inside loops) that the transformed kernel sums
// as a reduction over some of its loops, where the kernel as written cannot
// take the reduction (accumulation_to_reduction: its loop holds other
// instructions there, as symm's i does): the transformed kernel's store
// ("X, part over D") reads and writes the element once per sum. On the
// kernel as written, the accumulator's read and write of each sum's terms
// become one instance of that part, at its first term's time. That is the
// same dataflow where nothing else touches the element between the sum's
// first and last term (then summing the terms in another order is the
// reassociation the reduction is allowed); where something does, the
// reduction is refused with the access that stands between. The terms'
// other reads stay instances of X on both sides.
void collapse_accumulations(Side& before, const Side& after, const std::string& kernel) {
  const std::string mark = ", part over ";
  for (auto& [part, part_dims] : after.keys) {
    size_t at = part.find(mark);
    if (at == std::string::npos || before.keys.count(part)) continue;
    std::string whole = part.substr(0, at);
    auto full = before.keys.find(whole);
    if (full == before.keys.end()) continue;
    const std::vector<std::string>& dims = full->second;
    std::vector<Access*> acc;
    for (auto& a : before.accesses)
      if (a.tuple == whole && a.accumulator) acc.push_back(&a);
    if (acc.empty()) continue;
    // X[dims] -> part[part dims]: the dims the sum keeps, in the same order
    std::vector<unsigned> dropped;
    {
      size_t p = 0;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (p < part_dims.size() && dims[d] == part_dims[p]) ++p;
        else dropped.push_back(unsigned(d));
      }
      if (p != part_dims.size() || dropped.empty())
        throw KernelError("kernel '" + kernel + "': '" + whole + "' is summed as a reduction over loops the kernel as written does not " +
                          "give it in the same order, so its sums cannot be compared with its terms as written");
    }
    isl::map x_time = before.time.at(whole);
    isl_map* proj = isl_map_identity(isl_space_map_from_set(isl_space_domain(isl_map_get_space(x_time.get()))));
    for (auto d = dropped.rbegin(); d != dropped.rend(); ++d) proj = isl_map_project_out(proj, isl_dim_out, *d, 1);
    proj = isl_map_set_tuple_name(proj, isl_dim_out, part.c_str());
    isl::map to_part = isl::manage(proj);
    std::string array = acc.front()->array;
    // the terms' writes, each sum's element; every other access to it, with times
    isl::union_map terms, terms_time = isl::manage(isl_union_map_from_map(x_time.copy()));
    isl::union_map others, others_time;
    auto unite = [](isl::union_map& u, isl::map m) {
      isl::union_map x = isl::manage(isl_union_map_from_map(m.release()));
      u = u.is_null() ? x : u.unite(x);
    };
    for (auto& a : before.accesses) {
      if (a.array != array) continue;
      if (a.tuple == whole && a.accumulator) {
        if (a.write) unite(terms, a.map);
      } else {
        unite(others, a.map);
        unite(others_time, before.time.at(a.tuple));
      }
    }
    if (terms.is_null()) continue;
    if (!others.is_null()) {
      isl::union_map same_element = others.apply_range(terms.reverse());  // other access -> term of its element
      isl::union_map term_before = isl::manage(isl_union_map_lex_gt_union_map(others_time.copy(), terms_time.copy()));
      isl::union_map term_after = isl::manage(isl_union_map_lex_lt_union_map(others_time.copy(), terms_time.copy()));
      isl::union_set between = same_element.intersect(term_before).domain().intersect(same_element.intersect(term_after).domain());
      if (!between.is_empty()) {
        isl_basic_set* point = isl_union_set_sample(between.copy());
        char* text = isl_basic_set_to_str(point);
        std::string one = text ? text : "";
        free(text);
        isl_basic_set_free(point);
        throw KernelError("kernel '" + kernel + "': '" + whole + "' is summed as a reduction, but in the kernel as written another access to '" +
                          array + "' stands between two terms of one sum (" + one +
                          "): the order of its terms matters there");
      }
    }
    std::vector<isl::map> collapsed;
    bool one_element = true;
    for (Access* a : acc) {
      collapsed.push_back(isl::manage(isl_map_apply_domain(a->map.copy(), to_part.copy())));
      one_element &= isl_map_is_single_valued(collapsed.back().get()) == isl_bool_true;
    }
    if (!one_element) {
      isl_ctx_reset_error(isl_context());
      throw KernelError("kernel '" + kernel + "': '" + whole + "' is summed as a reduction, but as written the element it " +
                        "accumulates into depends on the summed loops, so its sums cannot be compared with its terms");
    }
    for (size_t i = 0; i < acc.size(); ++i) {
      acc[i]->map = collapsed[i];
      acc[i]->tuple = part;
    }
    before.keys[part] = part_dims;
    before.time[part] = isl::manage(isl_map_lexmin(isl_map_apply_domain(x_time.copy(), to_part.release())));
    before.accessors[array].insert(part);
    bool still = false;
    for (auto& a : before.accesses) still |= a.tuple == whole && a.array == array;
    if (!still) before.accessors[array].erase(whole);
  }
}

void check_reorderings(const LoopKernel& k, const Linearization& L) {
  if (!k.original) return;
  // most kernels write each output element once and read no output: nothing to order
  std::set<std::string> candidates = dependence_candidates(*k.original);
  // Local temporaries are the barrier placement's business: not compared.
  for (auto& [n, t] : k.original->temporaries)
    if (t.space == AddressSpace::Local) candidates.erase(n);
  for (auto& [n, t] : k.temporaries)
    if (t.space == AddressSpace::Local) candidates.erase(n);
  if (candidates.empty()) return;
  LoopKernel ref;
  Linearization ref_order;
  try {
    ref = preprocess(*k.original);
    ref_order = linearize(ref);
  } catch (const Error&) {
    return;  // the kernel as written has no order of its own to keep
  }

  // the kernel as written: one sequential program (usually); the transformed
  // one: on threads and blocks, a copy of each private temporary per thread
  SideBuilder ref_builder(ref, ref_order, candidates), new_builder(k, L, candidates);
  Side before = ref_builder.build(), after = new_builder.build();
  collapse_accumulations(before, after, k.name);
  std::set<std::string> arrays;
  for (auto& a : candidates) {
    if (before.unknown_arrays.count(a) || after.unknown_arrays.count(a)) continue;
    // A statement of the transformed kernel that answers to none of the
    // kernel as written, or to one over other loops, cannot be compared:
    // refused, never left unchecked. Fewer statements are a launch of a
    // program (it holds some of the kernel's instructions; the program is
    // checked as a whole where its launches answer to none as written) or a
    // copy's reads (read_initial_values answers for them): not compared.
    for (auto& t : after.accessors[a])
      if (!before.accessors[a].count(t) || before.keys[t] != after.keys[t])
        throw KernelError("kernel '" + k.name + "': the transformations leave '" + t + "' accessing '" + a + "' as no statement of the " +
                          "kernel as written does" + (before.accessors[a].count(t) ? " (over other loops)" : "") +
                          ", so the order of its accesses cannot be checked");
    if (before.accessors[a] != after.accessors[a]) continue;
    arrays.insert(a);
  }
  if (arrays.empty()) return;
  std::set<std::string> live_out;
  for (auto& a : k.original->arguments) live_out.insert(a.name);
  Flow f0 = dataflow(before, arrays, live_out, ref_builder.time_dims(), k.name);
  Flow f1 = dataflow(after, arrays, live_out, new_builder.time_dims(), k.name);
  std::set<std::pair<std::string, std::string>> nosync = before.nosync;
  nosync.insert(after.nosync.begin(), after.nosync.end());
  f0.deps = without_nosync(f0.deps, nosync);
  f1.deps = without_nosync(f1.deps, nosync);
  if (!after.initial_reads.is_null()) {
    // reads of a copy taken before the kernel: legal where the kernel as
    // written reads the same elements before any write to them
    // (of the arrays compared)
    isl_union_map* compared = isl_union_map_empty(isl_union_map_get_space(after.initial_reads.get()));
    isl_map_list* reads = isl_union_map_get_map_list(after.initial_reads.get());
    for (isl_size i = 0; i < isl_map_list_size(reads); ++i) {
      isl_map* m = isl_map_list_get_at(reads, i);
      const char* array = isl_map_get_tuple_name(m, isl_dim_out);
      if (array && arrays.count(array)) compared = isl_union_map_union(compared, isl_union_map_from_map(m));
      else isl_map_free(m);
    }
    isl_map_list_free(reads);
    isl::union_map initial = isl::manage(compared);
    isl::union_map wrong = initial.subtract(f0.no_source);
    if (auto p = sample(wrong, isl::manage(isl_union_map_empty(isl_union_map_get_space(wrong.get()))))) {
      throw KernelError("kernel '" + k.name + "': a read of a copy taken before the kernel (read_initial_values) stands where the kernel as " +
                        "written reads a value the kernel wrote: " + p->from + " reads the element " + p->to +
                        (p->params.empty() ? "" : " (with " + p->params + ")"));
    }
    f0.no_source = f0.no_source.subtract(initial);
    f1.no_source = f1.no_source.subtract(initial);
  }
  if (f0.deps.is_equal(f1.deps) && f0.no_source.is_equal(f1.no_source)) return;

  auto flow_text = [](const Point& p) {
    return p.to_end ? p.from + " leaves an element's final value" : p.to + " reads the value " + p.from + " writes";
  };
  std::string detail;
  auto with = [](const Point& p) { return p.params.empty() ? std::string() : " (with " + p.params + ")"; };
  if (auto p = sample(f0.deps, f1.deps))
    detail = "in the kernel as written, " + flow_text(*p) + with(*p) + "; after the transformations it does not";
  else if (auto q = sample(f1.deps, f0.deps))
    detail = "after the transformations, " + flow_text(*q) + with(*q) + "; in the kernel as written it does not";
  else if (auto r = sample(f0.no_source, f1.no_source))
    detail = "in the kernel as written, " + r->from + " reads an element before any write to it" + with(*r) + "; after the transformations it does not";
  else if (auto t = sample(f1.no_source, f0.no_source))
    detail = "after the transformations, " + t->from + " reads an element before any write to it" + with(*t) + "; in the kernel as written it does not";
  std::string names;
  for (auto& a : arrays) names += (names.empty() ? "'" : ", '") + a + "'";
  throw KernelError("kernel '" + k.name + "': the transformations reorder dependent iterations of sequential loops (data " + names +
                    "): " + detail + ". Keep the order of the loop that carries the dependence (loop priorities, no split part outside it)");
}

namespace {

// k with each instruction its own statement over its own loops (its origin
// its own inames): a kernel's dataflow as it stands, not as written, where a
// transformed kernel's pieces are statements of their own.
LoopKernel as_its_own_statements(const LoopKernel& k) {
  LoopKernel written = k;
  for (auto& insn : written.instructions.edit()) {
    std::map<std::string, Expr> own;
    for (auto& n : insn.within_inames) own[n] = make_var(n);
    // (and its sums' inames: a sum's update is a statement over them, its
    // store a part over the instruction's own)
    std::set<std::string> reduced;
    if (insn.kind == Instruction::Assign && insn.rhs.defined()) collect_reduction_inames(insn.rhs, reduced);
    for (auto& n : reduced) own[n] = make_var(n);
    insn.origin = own;
    insn.origin_of.clear();
    insn.origin_part = false;
  }
  return written;
}

// k as it stands (each instruction a statement of its own, global
// temporaries as arguments), preprocessed and linearized; false where either refuses.
bool preprocessed_as_it_stands(const LoopKernel& k, LoopKernel& ref, Linearization& order) {
  try {
    ref = preprocess(with_global_temporaries_as_arguments(as_its_own_statements(k)));
    order = linearize(ref);
  } catch (const Error&) {
    return false;
  }
  return true;
}

// The value-based dataflow of the data `compared` in k as it stands (each
// instruction a statement of its own, global temporaries as arguments),
// with the side it is computed on; nothing where preprocessing or
// linearizing refuses, or isl cannot follow an access or exceeds its work bound.
// (held by a pointer: isl's C++ maps have no move, and a side's map of
// initial reads may be null, which they refuse to copy)
struct FlowAsItStands {
  Side side;
  Flow flow;
};
std::unique_ptr<FlowAsItStands> flow_as_it_stands(const LoopKernel& k, const std::set<std::string>& compared,
                                                  const std::set<std::string>& live_out = {}) {
  LoopKernel ref;
  Linearization order;
  if (!preprocessed_as_it_stands(k, ref, order)) return nullptr;
  SideBuilder builder(ref, order, compared);
  std::unique_ptr<FlowAsItStands> out(new FlowAsItStands{builder.build(), Flow{}});
  if (!out->side.unknown_arrays.empty()) return nullptr;
  try {
    out->flow = dataflow(out->side, compared, live_out, builder.time_dims(), k.name);
  } catch (const KernelError&) {
    return nullptr;
  }
  return out;
}

// f(domain tuple, range tuple) for each map of u (null: an unnamed tuple, the end of the kernel).
void for_each_tuple_pair(const isl::union_map& u, const std::function<void(const char*, const char*)>& f) {
  isl_union_map_foreach_map(
      u.get(),
      [](isl_map* m, void* user) {
        (*static_cast<const std::function<void(const char*, const char*)>*>(user))(isl_map_get_tuple_name(m, isl_dim_in),
                                                                                  isl_map_get_tuple_name(m, isl_dim_out));
        isl_map_free(m);
        return isl_stat_ok;
      },
      const_cast<std::function<void(const char*, const char*)>*>(&f));
}

// The instruction a tuple of a side stands for ("insn_0, part over i": insn_0).
std::string instruction_of_tuple(const std::string& tuple) { return tuple.substr(0, tuple.find(", part over ")); }

}  // namespace

LoopKernel with_global_temporaries_as_arguments(const LoopKernel& k) {
  LoopKernel out = k;
  for (auto& [n, t] : k.temporaries) {
    if (t.space != AddressSpace::Global) continue;
    Argument a;
    a.name = n;
    a.dtype = t.dtype;
    a.shape = t.shape;
    a.stand_in = t.stand_in;
    out.arguments.edit().push_back(a);
    out.temporaries.edit().erase(n);
  }
  return out;
}

// A kernel's instances, as it stands, and their memory-based dependences
// (flow, anti and output), each instance from the one before it that touches the
// same element, on the same tuples and time as check_reorderings: what isl's
// scheduler takes to find an order of its own (tuner/isl_schedule.cpp).
std::optional<KernelDependences> dependences_of(const LoopKernel& k) {
  LoopKernel written = with_global_temporaries_as_arguments(as_its_own_statements(k));
  std::set<std::string> candidates = dependence_candidates(written);
  for (auto& [n, t] : written.temporaries)
    if (t.space == AddressSpace::Local) candidates.erase(n);
  LoopKernel ref = preprocess(written);
  Linearization order = linearize(ref);
  SideBuilder builder(ref, order, candidates);
  Side side = builder.build();
  if (!side.unknown_arrays.empty()) return std::nullopt;  // (accesses isl cannot follow)
  isl_union_map *reads = nullptr, *writes = nullptr, *schedule = nullptr;
  auto add = [](isl_union_map*& u, isl_map* m) {
    isl_union_map* x = isl_union_map_from_map(m);
    u = u ? isl_union_map_union(u, x) : x;
  };
  KernelDependences out;
  isl_union_set* instances = nullptr;
  for (auto& [tuple, time] : side.time) {
    add(schedule, time.copy());
    isl_union_set* d = isl_union_set_from_set(isl_map_domain(time.copy()));
    instances = instances ? isl_union_set_union(instances, d) : d;
    out.keys[tuple] = side.keys[tuple];
  }
  if (!instances) return std::nullopt;
  for (auto& a : side.accesses) add(a.write ? writes : reads, a.map.copy());
  isl_union_map* none = isl_union_map_empty(isl_union_set_get_space(instances));
  if (!reads) reads = isl_union_map_copy(none);
  if (!writes) writes = isl_union_map_copy(none);
  // sink <- source, each a may-source (every write and read of the element)
  auto deps = [&](isl_union_map* sink, isl_union_map* source) {
    isl_union_access_info* info = isl_union_access_info_from_sink(isl_union_map_copy(sink));
    info = isl_union_access_info_set_may_source(info, isl_union_map_copy(source));
    info = isl_union_access_info_set_schedule_map(info, isl_union_map_copy(schedule));
    isl_union_flow* flow = isl_union_access_info_compute_flow(info);
    if (!flow) return static_cast<isl_union_map*>(nullptr);
    isl_union_map* d = isl_union_flow_get_may_dependence(flow);
    isl_union_flow_free(flow);
    return d;
  };
  isl_ctx* ctx = isl_context();
  isl_ctx_reset_operations(ctx);
  isl_ctx_set_max_operations(ctx, kDataflowOperations);
  isl_union_map* flow = deps(reads, writes);
  isl_union_map* anti = deps(writes, reads);
  isl_union_map* output = deps(writes, writes);
  isl_ctx_set_max_operations(ctx, 0);
  isl_union_map_free(reads);
  isl_union_map_free(writes);
  isl_union_map_free(schedule);
  isl_union_map_free(none);
  if (!flow || !anti || !output) {
    isl_ctx_reset_error(ctx);
    isl_union_map_free(flow);
    isl_union_map_free(anti);
    isl_union_map_free(output);
    isl_union_set_free(instances);
    return std::nullopt;
  }
  out.instances = isl::manage(instances);
  out.deps = isl::manage(isl_union_map_union(isl_union_map_union(flow, anti), output));
  return out;
}

std::optional<std::string> overwritten_initial_reads(const LoopKernel& k) {
  std::set<std::string> copied;
  for (auto& [n, t] : k.temporaries)
    if (t.stand_in.kind == StandIn::InitialValues) copied.insert(t.stand_in.array);
  LoopKernel ref;
  Linearization order;
  if (!preprocessed_as_it_stands(k, ref, order)) return std::nullopt;
  SideBuilder builder(ref, order, copied);
  Side side = builder.build();
  if (!side.unknown_arrays.empty()) return std::nullopt;
  if (side.initial_reads.is_null()) return "";
  // the writes of the copied arrays, and the copies' reads as the arrays' reads
  Side probe;
  probe.time = side.time;
  for (auto& a : side.accesses)
    if (a.write) probe.accesses.push_back(a);
  isl_map_list* reads = isl_union_map_get_map_list(side.initial_reads.get());
  for (isl_size i = 0; i < isl_map_list_size(reads); ++i) {
    isl::map m = isl::manage(isl_map_list_get_at(reads, i));
    probe.accesses.push_back({isl_map_get_tuple_name(m.get(), isl_dim_out), isl_map_get_tuple_name(m.get(), isl_dim_in), false, false, false, m});
  }
  isl_map_list_free(reads);
  Flow f;
  try {
    f = dataflow(probe, copied, {}, builder.time_dims(), k.name);
  } catch (const KernelError&) {
    return std::nullopt;
  }
  std::optional<Point> p = sample(f.deps, isl::manage(isl_union_map_empty(isl_union_map_get_space(f.deps.get()))));
  if (!p) return "";
  return p->to + " reads what " + p->from + " wrote" + (p->params.empty() ? "" : " (with " + p->params + ")");
}

namespace {

// m ({tuple[dims] -> ...}) with its domain projected onto `loops` (all
// among dims; the order of dims kept) and its tuple name dropped.
isl_map* onto_loops(isl_map* m, const std::vector<std::string>& dims, const std::vector<std::string>& loops) {
  for (int d = int(dims.size()) - 1; d >= 0; --d)
    if (std::find(loops.begin(), loops.end(), dims[size_t(d)]) == loops.end()) m = isl_map_project_out(m, isl_dim_in, unsigned(d), 1);
  return isl_map_reset_tuple_id(m, isl_dim_in);
}

}  // namespace

std::optional<std::string> expansion_problem(const LoopKernel& k, const std::string& array, const std::vector<std::string>& loops) {
  const std::set<std::string> compared{array};
  std::unique_ptr<FlowAsItStands> standing = flow_as_it_stands(k, compared);
  if (!standing) return std::nullopt;
  const Side& side = standing->side;
  const Flow& f = standing->flow;
  isl::union_map none = isl::manage(isl_union_map_empty(isl_union_map_get_space(f.deps.get())));
  auto with = [](const Point& p) { return p.params.empty() ? std::string() : " (with " + p.params + ")"; };
  if (auto p = sample(f.no_source, none))
    return p->from + " reads the element " + p->to + " before any write to it" + with(*p) + ": its value from before the kernel is in no copy";
  std::string names;
  for (auto& l : loops) names += (names.empty() ? "'" : ", '") + l + "'";
  names += "'";
  // flows across iterations of the loops
  isl_map_list* deps = isl_union_map_get_map_list(f.deps.get());
  std::optional<std::string> problem;
  for (isl_size i = 0; i < isl_map_list_size(deps) && !problem; ++i) {
    isl_map* m = isl_map_list_get_at(deps, i);
    const std::vector<std::string>& from = side.keys.at(isl_map_get_tuple_name(m, isl_dim_in));
    const std::vector<std::string>& to = side.keys.at(isl_map_get_tuple_name(m, isl_dim_out));
    isl_map* same = isl_map_copy(m);
    for (auto& l : loops) {
      auto a = std::find(from.begin(), from.end(), l), b = std::find(to.begin(), to.end(), l);
      if (a == from.end() || b == to.end()) {
        isl_map_free(same);
        isl_map_free(m);
        problem = "an instruction accesses '" + array + "' outside loop '" + l + "'";
        break;
      }
      same = isl_map_equate(same, isl_dim_in, int(a - from.begin()), isl_dim_out, int(b - to.begin()));
    }
    if (problem) break;
    isl::union_map across = isl::manage(isl_union_map_from_map(isl_map_subtract(m, same)));
    if (auto p = sample(across, none))
      problem = p->to + " reads the value " + p->from + " writes, in another iteration of " + names + with(*p);
  }
  isl_map_list_free(deps);
  if (problem) return problem;
  // every iteration of the loops writes the same elements
  isl_map* per_iteration = nullptr;  // {[loops] -> array[index]}
  isl_set* iterations = nullptr;     // [loops]
  for (auto& a : side.accesses) {
    if (!a.write || a.array != array) continue;
    if (a.may) return "'" + a.tuple + "' may write '" + array + "' (under a condition, or at an index isl cannot read)";
    const std::vector<std::string>& dims = side.keys.at(a.tuple);
    for (auto& l : loops)
      if (std::find(dims.begin(), dims.end(), l) == dims.end()) return "'" + a.tuple + "' writes '" + array + "' outside loop '" + l + "'";
    isl_set* instances = isl_map_domain(side.time.at(a.tuple).copy());
    isl_map* w = onto_loops(isl_map_intersect_domain(a.map.copy(), isl_set_copy(instances)), dims, loops);
    isl_set* its = isl_map_domain(onto_loops(isl_map_from_domain(instances), dims, loops));
    per_iteration = per_iteration ? isl_map_union(per_iteration, w) : w;
    iterations = iterations ? isl_set_union(iterations, its) : its;
  }
  if (!per_iteration) return "no instruction writes '" + array + "'";
  // ... and every element of the array (the copy back copies them all)
  if (const Argument* arg = k.find_argument(array)) {
    std::vector<std::string> dims;
    for (size_t d = 0; d < arg->shape.size(); ++d) dims.push_back("x" + std::to_string(d));
    isl_set* whole = islu::shape_box(k, arg->shape, dims, array).release();
    if (!whole) {
      isl_map_free(per_iteration);
      isl_set_free(iterations);
      return "the shape of '" + array + "' is not affine in the parameters";
    }
    isl_set* written_elements = isl_map_range(isl_map_copy(per_iteration));
    whole = isl_set_align_params(whole, isl_set_get_space(written_elements));
    written_elements = isl_set_align_params(written_elements, isl_set_get_space(whole));
    isl_set* assumed = isl_set_align_params(islu::assumptions_of(k).release(), isl_set_get_space(whole));
    whole = isl_set_intersect_params(whole, assumed);
    // (where the loops run at all: without an iteration nothing is copied back)
    isl_set* running = isl_set_align_params(isl_set_params(isl_set_copy(iterations)), isl_set_get_space(whole));
    whole = isl_set_intersect_params(whole, running);
    isl_set* unwritten = isl_set_subtract(whole, written_elements);
    if (isl_set_is_empty(unwritten) != isl_bool_true) {
      std::string w = islu::witness(isl::manage(unwritten));
      isl_map_free(per_iteration);
      isl_set_free(iterations);
      return "no iteration of " + names + " writes some element of '" + array + "' (" + w + "), which the copy back would overwrite";
    }
    isl_set_free(unwritten);
  }
  isl_map* every = isl_map_from_domain_and_range(iterations, isl_map_range(isl_map_copy(per_iteration)));
  isl_map* lacking = isl_map_set_tuple_name(isl_map_subtract(every, per_iteration), isl_dim_in, "iteration");
  isl::union_map missing = isl::manage(isl_union_map_from_map(lacking));
  if (auto p = sample(missing, isl::manage(isl_union_map_empty(isl_union_map_get_space(missing.get())))))
    return "an iteration of " + names + " does not write an element another one writes (" + p->from + " does not write " + p->to + with(*p) +
           "): the last iteration would not leave every final value";
  return "";
}

std::optional<std::vector<std::vector<std::string>>> temporary_webs(const LoopKernel& k, const std::string& temporary) {
  const std::set<std::string> compared{temporary};  // (the builder keeps a reference)
  std::unique_ptr<FlowAsItStands> standing = flow_as_it_stands(k, compared);
  if (!standing) return std::nullopt;
  // union-find over the instructions that access it, joined by each flow
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string&)> root = [&](const std::string& x) {
    return parent[x] == x ? x : parent[x] = root(parent[x]);
  };
  for (auto& insn : k.instructions)
    if (insn.kind == Instruction::Assign && (insn.assignee_name() == temporary || insn.reads(temporary))) parent[insn.id] = insn.id;
  bool unknown = false;
  std::function<void(const char*, const char*)> join = [&](const char* from, const char* to) {
    if (!from || !to) return;
    std::string a = instruction_of_tuple(from), b = instruction_of_tuple(to);
    if (!parent.count(a) || !parent.count(b)) {
      unknown = true;
      return;
    }
    parent[root(a)] = root(b);
  };
  for_each_tuple_pair(standing->flow.deps, join);
  if (unknown) return std::nullopt;
  std::map<std::string, std::vector<std::string>> groups;
  std::vector<std::string> order;  // (webs in the order of their first instruction)
  for (auto& insn : k.instructions) {
    if (!parent.count(insn.id)) continue;
    std::string r = root(insn.id);
    if (!groups.count(r)) order.push_back(r);
    groups[r].push_back(insn.id);
  }
  std::vector<std::vector<std::string>> webs;
  for (auto& r : order) webs.push_back(groups[r]);
  return webs;
}

std::optional<std::string> renaming_problem(const LoopKernel& before, const LoopKernel& after, const std::string& temporary,
                                            const std::string& renamed) {
  const std::set<std::string> old_only{temporary}, both{temporary, renamed};  // (the builder keeps a reference)
  std::unique_ptr<FlowAsItStands> one = flow_as_it_stands(before, old_only);
  std::unique_ptr<FlowAsItStands> two = flow_as_it_stands(after, both);
  if (!one || !two) return std::nullopt;
  auto with = [](const Point& p) { return p.params.empty() ? std::string() : " (with " + p.params + ")"; };
  if (auto p = sample(one->flow.deps, two->flow.deps))
    return p->to + " reads the value " + p->from + " writes, which the renamed temporary would no longer carry" + with(*p);
  if (auto p = sample(two->flow.deps, one->flow.deps))
    return p->to + " would read the value " + p->from + " writes, which it does not read in the kernel" + with(*p);
  isl::union_set a = isl::manage(isl_union_map_domain(one->flow.no_source.copy()));
  isl::union_set b = isl::manage(isl_union_map_domain(two->flow.no_source.copy()));
  if (!a.is_equal(b)) return std::string("a read of '") + temporary + "' before any write to it would read another temporary's";
  return "";
}

std::optional<StoreReaders> store_readers(const LoopKernel& k, const std::string& store) {
  const Instruction& s = k.instruction(store);
  const std::string array = s.assignee_name();
  const std::set<std::string> compared{array};  // (the builder keeps a reference)
  std::set<std::string> live_out;
  if (k.find_argument(array)) live_out.insert(array);
  std::unique_ptr<FlowAsItStands> standing = flow_as_it_stands(k, compared, live_out);
  if (!standing) return std::nullopt;
  StoreReaders out;
  std::set<std::string> from_store, from_others;  // readers of values the store wrote, of values others did
  bool unknown = false;
  std::function<void(const char*, const char*)> note = [&](const char* from, const char* to) {
    if (!from) return;  // (a value from before the kernel: a no-source read, below)
    std::string source = instruction_of_tuple(from);  // (a reduction's part: its instruction's)
    if (!to) {
      if (source == store) out.live_out = true;
      return;
    }
    std::string sink = instruction_of_tuple(to);
    if (source == store && std::string(from) != source) unknown = true;  // (the store a sum's part: not a plain store)
    (source == store ? from_store : from_others).insert(sink);
  };
  for_each_tuple_pair(standing->flow.deps, note);
  for_each_tuple_pair(standing->flow.no_source, [&](const char* reader, const char*) { note("", reader); });  // (reader -> element)
  if (unknown) return std::nullopt;
  for (auto& r : from_store) (from_others.count(r) ? out.mixed : out.readers).insert(r);
  return out;
}

}  // namespace loom
