// double_buffer: a local temporary that one instruction fills in every
// iteration of a sequential loop (a prefetch's tile in the k loop of a matrix
// product) gets two copies, and the fill moves one iteration ahead: while
// iteration ko computes from copy ko mod 2, the fill for ko + 1 goes into the
// other copy. A first fill (for the loop's first iteration) runs before the
// loop. TVM calls this double_buffer; loopy has no equivalent. With
// stages=S (Triton's num_stages, CUTLASS's pipeline stages) there are S
// copies and the fill runs S - 1 iterations ahead (S - 1 first fills before
// the loop), so a copy has S - 1 iterations of computation to arrive.
// ahead=A < S - 1 fills only A iterations ahead: the S - 1 - A copies in
// between are not written while their iteration's asynchronous readers may
// still run (a warpgroup's wgmma overlapping the next iteration's, see
// targets/cuda/cuda_printer.cpp).
//
// The fill is tagged `async` (unless async_copy=false): on sm_80 and newer the
// CUDA target copies global to shared memory with cp.async, which needs no
// register and lets the copy run while the threads compute; every barrier
// then waits for the thread's outstanding copies first. Other targets copy
// as before. Barriers come from the barrier pass as always: with the copies
// told apart by the loop's parity, the one the fill and the compute need is
// a single barrier at the end of the loop body.
//
// Refused, with the reason: a temporary that is not local or that several
// instructions write; a fill outside the loop, or reading what the kernel
// writes (moving it an iteration ahead would read too early); a reader
// outside the loop; a loop that is not sequential or whose range depends on
// inames inside the block (block inames are uniform: a range that changes
// from block to block is fine); an iname the fill shares with its readers
// that is nested inside the loop.
#include <algorithm>

#include <isl/set.h>

#include "common.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// The instruction's accesses of temporary t with `lead` as a new first index.
void lead_with(Instruction& insn, const std::string& t, const Expr& lead) {
  transforms::map_temporary_accesses(insn, t, [&](std::vector<Expr> idx, Type type) {
    idx.insert(idx.begin(), lead);
    return make_subscript(t, idx, type);
  });
}

// The inames an instruction's reads of `name` run within: its loops and the
// inames of the reductions around each read (a matrix product's k loop is the
// sum's iname, not a loop of the instruction).
class ReadScope : public ExprVisitor {
 public:
  ReadScope(const std::string& name, std::set<std::string> outer) : name_(name), scope_(std::move(outer)) {}
  std::optional<std::set<std::string>> common;  // inames around every read

 protected:
  void visit_reduce(const Reduce& n) override {
    auto saved = scope_;
    scope_.insert(n.inames.begin(), n.inames.end());
    ExprVisitor::visit_reduce(n);
    scope_ = saved;
  }
  void visit_subscript(const Subscript& n) override {
    if (n.name == name_) {
      if (!common) common = scope_;
      else {
        std::set<std::string> c;
        for (auto& x : *common)
          if (scope_.count(x)) c.insert(x);
        common = c;
      }
    }
    ExprVisitor::visit_subscript(n);
  }

 private:
  const std::string& name_;
  std::set<std::string> scope_;
};

std::set<std::string> read_scope(const Instruction& insn, const std::string& name) {
  ReadScope v(name, insn.within_inames);
  v.visit(insn.rhs);
  for (auto& p : insn.predicates) v.visit(p);
  if (insn.lhs.defined()) v.visit(insn.lhs);
  return v.common ? *v.common : insn.within_inames;
}

// isl's bounds may use C division of non-negative values (TruncDiv, internal
// to codegen); a kernel's own expressions say the same with // and %, which
// the kernel language and JSON can write back.
class WritableDivisions : public ExprMutator {
 protected:
  Expr mutate_binary(const Binary& n, const Expr& self) override {
    Expr e = ExprMutator::mutate_binary(n, self);
    auto b = e.as<Binary>();
    if (b && (b->op == BinOp::TruncDiv || b->op == BinOp::TruncRem))
      return make_binary(b->op == BinOp::TruncDiv ? BinOp::FloorDiv : BinOp::Mod, b->a, b->b, e.type());
    return e;
  }
};

std::vector<std::string> ordered(const LoopKernel& k, const std::set<std::string>& inames) {
  std::vector<std::string> v;
  for (auto& n : k.all_inames())
    if (inames.count(n)) v.push_back(n);
  return v;
}

Instruction with_values(Instruction insn, const std::map<std::string, Expr>& values) {
  auto sub = [&](const Expr& e) { return e.defined() ? simplify(substitute(e, values)) : e; };
  insn.lhs = sub(insn.lhs);
  insn.rhs = sub(insn.rhs);
  for (auto& p : insn.predicates) p = sub(p);
  transforms::update_origin(insn, sub);
  return insn;
}

}  // namespace

LoopKernel double_buffer(const LoopKernel& k, const std::string& temporary, const std::string& iname, bool async, int stages, int ahead_given) {
  const std::string what = "double_buffer('" + temporary + "', '" + iname + "')";
  if (stages < 2 || stages > 8) refuse(k, what, "stages=" + std::to_string(stages) + ": a pipeline has 2 to 8 copies");
  const int fill_ahead = ahead_given > 0 ? ahead_given : stages - 1;
  if (fill_ahead > stages - 1)
    refuse(k, what, "ahead=" + std::to_string(fill_ahead) + ": with " + std::to_string(stages) + " copies the fill runs at most " +
                        std::to_string(stages - 1) + " iterations ahead (the copy it fills must not be the one being read)");
  const Temporary* t = k.find_temporary(temporary);
  if (!t) refuse(k, what, "no temporary '" + temporary + "'");
  if (t->space != AddressSpace::Local)
    refuse(k, what, "temporary '" + temporary + "' is not in local memory; double buffering overlaps filling a local tile with computing from the other one");
  if (!k.has_iname(iname)) refuse(k, what, "no iname '" + iname + "'");
  if (k.tag_of(iname).kind != InameTag::Seq)
    refuse(k, what, "iname '" + iname + "' is tagged " + k.tag_of(iname).str() + "; the fill moves one iteration ahead of a sequential loop");

  // the fill and the readers
  const Instruction* fill = nullptr;
  std::vector<const Instruction*> readers;
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    if (insn.assignee_name() == temporary) {
      if (fill) refuse(k, what, "instructions '" + fill->id + "' and '" + insn.id + "' both write '" + temporary + "'; double buffering needs one fill");
      fill = &insn;
    } else if (insn.reads(temporary)) {
      readers.push_back(&insn);
    }
  }
  if (!fill) refuse(k, what, "no instruction writes '" + temporary + "'");
  if (readers.empty()) refuse(k, what, "no instruction reads '" + temporary + "'");
  if (fill->reads(temporary)) refuse(k, what, "the fill '" + fill->id + "' reads '" + temporary + "' itself");
  if (!fill->within_inames.count(iname))
    refuse(k, what, "the fill '" + fill->id + "' does not run within '" + iname + "', so there is nothing to fill ahead");
  std::vector<std::set<std::string>> scopes;
  for (auto* r : readers) {
    scopes.push_back(read_scope(*r, temporary));
    if (!scopes.back().count(iname))
      refuse(k, what, "instruction '" + r->id + "' reads '" + temporary + "' outside '" + iname + "'");
  }
  // what the fill reads must not change while the loop runs: written in the
  // fill's launch (a global array written by an earlier launch is fixed)
  std::set<size_t> fill_index;
  for (size_t i = 0; i < k.instructions.size(); ++i)
    if (&k.instructions[i] == fill) fill_index.insert(i);
  std::vector<bool> launch = transforms::same_launch(k, fill_index);
  auto written_in_launch = [&](const std::string& name) {
    for (size_t i = 0; i < k.instructions.size(); ++i)
      if (launch[i] && k.instructions[i].kind == Instruction::Assign && k.instructions[i].assignee_name() == name) return true;
    return false;
  };
  for (auto& name : fill->read_names()) {
    const Temporary* t = k.find_temporary(name);
    bool written = (t && t->space != AddressSpace::Global) || ((k.find_argument(name) || t) && written_in_launch(name));
    if (written && !k.has_iname(name))
      refuse(k, what, "the fill '" + fill->id + "' reads '" + name + "', which the kernel writes; reading it one iteration early could read an old value");
  }

  // the loop's range: the same for every instance of the fill's inames
  // inside the block (its thread axes and its own loops). It may change from
  // block to block (a chunk of row tiles whose last chunk is partial): block
  // inames are uniform, so first and last become expressions of them.
  std::vector<std::string> fill_inames = ordered(k, fill->within_inames);
  std::vector<std::string> blocks, keyed, others;  // keyed: the block inames and the loop
  for (auto& n : fill_inames) {
    bool block = k.tag_of(n).kind == InameTag::Group;
    if (block) blocks.push_back(n);
    if (block || n == iname) keyed.push_back(n);
    if (n != iname) others.push_back(n);
  }
  isl::set all = islu::iteration_domain(k, fill_inames);
  isl::set keyed_range = islu::iteration_domain(k, keyed);
  isl::set product = islu::arrange_dims(islu::arrange_dims(all, others), fill_inames).intersect(islu::arrange_dims(keyed_range, fill_inames));
  if (!product.is_equal(all))
    refuse(k, what, "the range of '" + iname + "' depends on the fill's inames inside the block; the first fill could not run before the loop");
  isl::set range = islu::dims_to_params(keyed_range, blocks);
  isl::set context = k.assumptions.defined() ? islu::to_isl(k.assumptions) : isl::set::universe(range.params().space());
  Type it = k.options.index_dtype;
  isl::pw_aff lo = islu::min_over(range, make_var(iname)), hi = islu::max_over(range, make_var(iname));
  if (lo.is_null() || hi.is_null()) refuse(k, what, "the range of '" + iname + "' is not bounded");
  Expr first = WritableDivisions().mutate(islu::expr_from_pw_aff(lo, context, it));
  Expr last = WritableDivisions().mutate(islu::expr_from_pw_aff(hi, context, it));

  // inames the fill shares with every reader stay (outer loops); its own
  // sequential loops get copies for the first fill, outside the loop
  std::set<std::string> shared = fill->within_inames;
  for (auto& scope : scopes) {
    std::set<std::string> s;
    for (auto& n : shared)
      if (scope.count(n)) s.insert(n);
    shared = s;
  }
  std::vector<std::string> own;
  for (auto& n : fill_inames) {
    if (n == iname || k.tag_of(n).is_hardware()) continue;
    if (!shared.count(n)) {
      own.push_back(n);
      continue;
    }
    for (auto& chain : k.loop_priority) {
      auto pi = std::find(chain.begin(), chain.end(), iname), pn = std::find(chain.begin(), chain.end(), n);
      if (pi != chain.end() && pn != chain.end() && pi < pn)
        refuse(k, what, "iname '" + n + "' of the fill and its readers is nested inside '" + iname + "'");
    }
  }

  LoopKernel r = k;
  Temporary& tv = r.temporaries.edit().at(temporary);
  tv.shape.insert(tv.shape.begin(), make_int(stages));
  tv.double_buffered_in = iname;
  tv.double_buffer_ahead = fill_ahead;
  Expr ko = make_var(iname, it);
  Expr ahead = make_int(fill_ahead, it);
  auto slot = [&](Expr at) {  // (at - first) mod stages
    bool zero = first.as<IntImm>() && first.as<IntImm>()->value == 0;
    return make_binary(BinOp::Mod, zero ? at : simplify(at - first), make_int(stages, it), it);
  };
  Expr parity = slot(ko), next_parity = slot(ko + ahead);

  const std::string fill_id = fill->id;
  // the first fills: the loop's first stages - 1 iterations, into copies 0, 1, ..., before the loop
  std::vector<std::string> first_ids;
  for (int s = 0; s < fill_ahead; ++s)
    first_ids.push_back(transforms::unique_instruction_id(k, fill_id + "_first" + (s ? "_" + std::to_string(s) : std::string())));
  Instruction fill_as_written;
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind != Instruction::Assign) continue;
    if (insn.id == fill_id) {
      // the fill for iteration ko + stages - 1, into its copy, while there is one
      fill_as_written = insn;
      insn = with_values(insn, {{iname, ko + ahead}});
      lead_with(insn, temporary, next_parity);
      insn.predicates.push_back(make_binary(BinOp::Le, simplify(ko + ahead), last, types::boolean));
      if (async) insn.async_copy = true;
      continue;
    }
    lead_with(insn, temporary, parity);
    for (auto& id : first_ids) {
      if (insn.depends_on.count(fill_id)) insn.depends_on.insert(id);
      if (insn.no_sync_with.count(fill_id)) insn.no_sync_with.insert(id);
    }
  }
  for (int s = 0; s < fill_ahead; ++s) {
    Expr at_s = simplify(first + make_int(s, it));
    Instruction head = with_values(fill_as_written, {{iname, at_s}});
    head.id = first_ids[size_t(s)];
    head.within_inames.erase(iname);
    head.inames_given = true;
    lead_with(head, temporary, make_int(s, it));
    head.predicates.push_back(make_binary(BinOp::Le, at_s, last, types::boolean));
    if (async) head.async_copy = true;
    transforms::drop_proven_predicates(r, head);
    // before the fill in the list: the order of the instructions is the order
    // of their writes for the dependence analysis
    auto at = std::find_if(r.instructions.begin(), r.instructions.end(), [&](const Instruction& i) { return i.id == fill_id; });
    r.instructions.edit().insert(at, head);
  }
  for (auto& n : shared)
    if (n != iname && !k.tag_of(n).is_hardware()) r.loop_priority.edit().push_back({n, iname});
  if (!own.empty()) {
    std::string names, tags;
    for (auto& n : own) {
      names += (names.empty() ? "" : ",") + n;
      tags += (tags.empty() ? "" : ",") + k.tag_of(n).str();
    }
    for (auto& id : first_ids) r = duplicate_inames(r, names, "id:" + id, "", tags);
  }
  for (auto& insn : r.instructions.edit())
    if (insn.id == fill_id) transforms::drop_proven_predicates(r, insn);
  return r;
}

void register_double_buffer_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"double_buffer",
           "Give a local temporary filled in every iteration of a loop two copies, and fill the next iteration's copy while this one's is read.",
           {TransformParam{"temporary", TransformParam::String, true, "the local temporary (a prefetch's tile)"}.of(TransformParam::Type::Temporary),
            TransformParam{"iname", TransformParam::String, true, "the sequential loop the fill runs in (a k-tile loop)"}.of(TransformParam::Type::Iname),
            TransformParam{"async_copy", TransformParam::String, false, "true (default): copy global to shared memory with cp.async on sm_80+; false: plain copies"}.of(TransformParam::Type::Bool).otherwise("true").searched(TransformParam::Search::Bools),
            TransformParam{"stages", TransformParam::Int, false, "copies of the tile: 2 (default) double-buffers; S fills S - 1 iterations ahead"}.of(TransformParam::Type::Int).at_least(2).otherwise("2"),
            TransformParam{"ahead", TransformParam::Int, false, "Loom: iterations the fill runs ahead (default stages - 1); fewer leave copies that asynchronous readers (wgmma) may still read while the next iteration runs"}.of(TransformParam::Type::Int).at_least(0).otherwise("0")},
           [](const LoopKernel& k, const TransformArgs& a) {
             bool async = a.flag("async_copy", true /* declared: true */);
             return double_buffer(k, a.str("temporary"), a.str("iname"), async, int(a.integer("stages")), int(a.integer("ahead")));
           }});
}

}  // namespace loom
