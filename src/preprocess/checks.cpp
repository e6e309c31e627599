// check_kernel: consistency checks that need no isl: dependencies name
// existing instructions, instruction inames exist, tagged inames exist,
// nothing is assigned that cannot be (value arguments, inames), and barriers
// are unconditional and outside thread inames.
#include <functional>

#include "loom/isl_util.h"
#include "loom/preprocess.h"

#include <isl/set.h>

namespace loom {

namespace {

bool uses_var(const Expr& e, const std::string& v) {
  std::set<std::string> vars;
  collect_free_vars(e, vars);
  return vars.count(v) != 0;
}

// Calls fn on every access insn makes to array var (reads and its left-hand side).
void for_each_subscript_in(const Instruction& insn, const std::string& var, const std::function<void(const Subscript&)>& fn) {
  auto visit = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) { if (s.name == var) fn(s); });
  };
  visit(insn.rhs);
  visit(insn.lhs);
  for (auto& p : insn.predicates) visit(p);
}

// Whether the reader's element (its indices, the thread's iname renamed to
// the writer's) is the writer's wherever the writer writes: isl decides over
// the writer's iteration set under its affine conditions (a precompute's
// `if=D_dim_0 - j == 0` makes D_0[D_dim_0] the element D_0[j] a thread
// reads). An index isl cannot read proves nothing.
bool same_element_where_written(const LoopKernel& k, const Instruction& w, const std::vector<Expr>& written, const std::vector<Expr>& read,
                                const std::map<std::string, Expr>& rename) {
  if (w.predicates.empty()) return false;
  std::vector<std::string> names;
  for (auto& n : k.all_inames())
    if (w.within_inames.count(n)) names.push_back(n);
  isl::set dom = islu::iteration_domain(k, names);
  if (dom.is_null()) return false;
  isl::space sp = dom.space();
  for (auto& p : w.predicates) {
    isl::set c = islu::condition_set(p, sp);
    if (!c.is_null()) dom = dom.intersect(c);
  }
  for (size_t d = 0; d < written.size(); ++d) {
    isl::pw_aff a = islu::pw_aff_from_expr(written[d], sp), b = islu::pw_aff_from_expr(substitute(read[d], rename), sp);
    if (a.is_null() || b.is_null()) return false;
    isl::set differ = isl::manage(isl_pw_aff_ne_set(a.release(), b.release())).intersect(dom);
    if (!differ.is_empty()) return false;
  }
  return true;
}

}  // namespace



void check_kernel(const LoopKernel& k, const TargetInfo& target) {
  auto fail = [&](const std::string& why) { throw KernelError("kernel '" + k.name + "': " + why); };
  // A double-buffered tile's loop: iteration i fills the copy iteration i + 1
  // reads, which only a loop of one block keeps (tagged onto blocks, every
  // block would read a copy no iteration of its own filled).
  for (auto& [tn, tv] : k.temporaries) {
    const std::string& loop = tv.double_buffered_in;
    if (loop.empty()) continue;
    if (!k.has_iname(loop))
      fail("temporary '" + tn + "' is double-buffered in loop '" + loop +
           "', which a later transformation split, joined or removed; apply double_buffer after restructuring the loop");
    InameTag tag = k.tag_of(loop);
    if (tag.kind != InameTag::Seq && tag.kind != InameTag::Unroll)
      fail("temporary '" + tn + "' is double-buffered in loop '" + loop + "', which is now tagged " + tag.str() +
           ": each iteration fills the copy the next one reads, so the iterations must run in order on one block");
    // its readers stay in that loop (a split of the loop for the readers
    // alone gave them loops of their own, on blocks); the fill is in it
    // (double_buffer made it so), the first fill before it
    for (auto& insn : k.instructions) {
      if (insn.kind != Instruction::Assign || !insn.reads(tn)) continue;
      if (!insn.iteration_inames().count(loop))
        fail("instruction '" + insn.id + "' uses temporary '" + tn + "', double-buffered in loop '" + loop +
             "', outside that loop (a later transformation moved it to loops of its own); the copy it finds would be another iteration's");
    }
  }
  // every name a domain is bounded by has a value: an argument, an iname of
  // an outer loop, or a temporary the kernel computes (a data-dependent
  // bound); a transformation that removed it would leave the loop unbounded
  for (auto& d : k.domains)
    for (auto& p : d.params())
      if (!k.find_argument(p) && !k.has_iname(p) && !k.temporaries.count(p))
        fail("the domain of '" + d.inames().front() + "' is bounded by '" + p +
             "', which is no argument of the kernel, no iname and no temporary it computes");
  std::set<std::string> ids;
  for (auto& insn : k.instructions) ids.insert(insn.id);
  for (auto& insn : k.instructions) {
    for (auto& d : insn.depends_on)
      if (!ids.count(d)) fail("instruction '" + insn.id + "' depends on unknown instruction '" + d + "'");
    for (auto& n : insn.within_inames)
      if (!k.has_iname(n)) fail("instruction '" + insn.id + "' runs within unknown iname '" + n + "'");
    if (insn.kind == Instruction::Barrier) {
      // every thread of a block must reach the same barriers
      if (!insn.predicates.empty())
        fail("barrier '" + insn.id + "' has a condition (if=...): every thread of a block must reach it");
      for (auto& n : insn.within_inames)
        if (k.tag_of(n).kind == InameTag::Local)
          fail("barrier '" + insn.id + "' runs within thread iname '" + n + "': a barrier is reached once by each thread, not once per thread iteration");
    }
    // one iname per hardware axis: two would both be blockIdx.y (say), forced equal
    std::map<std::string, std::string> axis_iname;
    for (auto& n : insn.within_inames) {
      InameTag t = k.tag_of(n);
      if (!t.is_hardware()) continue;
      auto [it, fresh] = axis_iname.emplace(t.str(), n);
      if (!fresh)
        fail("instruction '" + insn.id + "' runs within inames '" + it->second + "' and '" + n + "', both tagged " + t.str() +
             ": one instruction can use each hardware axis once");
    }
    if (insn.kind != Instruction::Assign) continue;
    if (auto a = k.find_argument(insn.assignee_name()); a && a->kind == Argument::Value)
      fail("instruction '" + insn.id + "' assigns to value argument '" + a->name + "'");
  }
  for (auto& [n, tag] : k.iname_tags)
    if (!k.has_iname(n)) fail("iname '" + n + "' is tagged '" + tag.str() + "' but no domain defines it");
  // every loop has both ends ({[i, j]: 0 <= i < n} leaves j without any: isl's
  // AST generator then stopped with "unbounded optimum")
  // (only inames something runs in: loopy accepts an unused unbounded one)
  std::set<std::string> used_inames;
  for (auto& insn : k.instructions) {
    std::set<std::string> in = insn.iteration_inames();
    used_inames.insert(in.begin(), in.end());
  }
  for (auto& d : k.domains) {
    if (isl_set_plain_is_empty(d.get()) == isl_bool_true) continue;  // (nothing runs)
    auto names = d.inames();
    for (size_t i = 0; i < names.size(); ++i) {
      if (!used_inames.count(names[i])) continue;
      std::string missing = islu::missing_bound(d.get(), unsigned(i));
      if (!missing.empty()) fail("iname '" + names[i] + "' has no " + missing + " bound in its domain " + d.str() + "; every loop needs both ends");
    }
  }
  int64_t local_bytes = 0;
  for (auto& [n, t] : k.temporaries) {
    if (t.space == AddressSpace::Global) fail("temporary '" + n + "': global temporaries are not supported yet");
    int64_t elems = 1, bytes = 0;
    for (auto& d : t.shape) {
      int64_t extent = 0;
      try {
        extent = eval_int(d, {});
      } catch (const Error&) {
        fail("temporary '" + n + "' needs a constant shape, got " + d.str());
      }
      if (__builtin_mul_overflow(elems, extent, &elems)) fail("temporary '" + n + "' has more than 2^63 - 1 elements");
    }
    if (__builtin_mul_overflow(elems, int64_t(t.dtype.bytes()), &bytes)) fail("temporary '" + n + "' takes more than 2^63 - 1 bytes");
    if (t.space == AddressSpace::Local && bytes > target.max_shared_bytes)
      fail("local temporary '" + n + "' takes " + std::to_string(bytes) + " bytes; a block's local (shared) memory holds at most " +
           std::to_string(target.max_shared_bytes) + " bytes on " + target.arch + " (with the opt-in)");
    if (t.space == AddressSpace::Local) local_bytes += bytes;
    else if (bytes > target.max_private_bytes)
      fail("private temporary '" + n + "' takes " + std::to_string(bytes) + " bytes per thread; a thread's private memory holds at most " +
           std::to_string(target.max_private_bytes) + " (" + std::to_string(target.max_private_bytes / 1024) + " KiB, CUDA's local memory per thread)");
  }
  // Up to 48 KiB is static shared memory; above that, dynamic shared memory
  // with an opt-in, up to what the target allows a block
  if (local_bytes > target.max_shared_bytes)
    fail(std::to_string(local_bytes) + " bytes of local (shared) memory per block; at most " + std::to_string(target.max_shared_bytes) +
         " bytes on " + target.arch + " (" + std::to_string(target.max_shared_bytes / 1024) + " KiB with the opt-in; " +
         std::to_string(target.static_shared_bytes / 1024) + " KiB without)");
  // Private memory belongs to one thread: a value written within a hardware
  // iname h exists only in the thread of that h. So every reader must run on
  // the same threads (within h, or within an iname of h's axis with the same
  // range: a parallel reduction's copy of it), and where the element depends
  // on the thread, the reader must access the element the same thread wrote
  // (the same indices, h's copy renamed). Exact dependences between threads
  // are the legality analysis' business; these are the rules private memory
  // cannot break, and what they cannot prove is refused.
  // (the writers and readers of each name, found once: asking every
  // instruction about every temporary was quadratic in the kernel's size)
  std::map<std::string, std::vector<const Instruction*>> writers, readers;
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    writers[insn.assignee_name()].push_back(&insn);
    std::set<std::string> names = insn.read_names();
    if (auto s = insn.lhs.as<Subscript>())  // (what reads() also counts: the written element's indices)
      for (auto& i : s->indices) {
        collect_free_vars(i, names);
        for_each_subscript(i, [&](const Subscript& x) { names.insert(x.name); });
      }
    for (auto& name : names) readers[name].push_back(&insn);
  }
  static const std::vector<const Instruction*> none;
  auto of = [&](const std::map<std::string, std::vector<const Instruction*>>& m, const std::string& n) -> const auto& {
    auto it = m.find(n);
    return it == m.end() ? none : it->second;
  };
  for (auto& entry : k.temporaries) {
    const std::string& n = entry.first;  // (not a structured binding: lambdas below capture it)
    if (entry.second.space == AddressSpace::Local || entry.second.space == AddressSpace::Global) continue;
    for (const Instruction* wp : of(writers, n)) {
      const Instruction& w = *wp;
      auto ws = w.lhs.as<Subscript>();
      for (auto& h : w.within_inames) {
        InameTag tag = k.tag_of(h);
        if (!tag.is_hardware()) continue;
        for (const Instruction* rp : of(readers, n)) {
          const Instruction& r = *rp;
          if (!r.reads(n)) continue;
          auto refuse = [&](const std::string& why) {
            fail("private temporary '" + n + "' is written by '" + w.id + "' within iname '" + h + "' (" + tag.str() + ") and read by '" + r.id +
                 "', " + why + ": private memory belongs to one thread (make the temporary local, or do not tag '" + h + "')");
          };
          std::string same = h;
          if (!r.within_inames.count(h)) {
            same.clear();
            for (auto& x : r.within_inames)
              if (k.tag_of(x) == tag) same = x;
            // a warp reduction gives every lane of its group the same value: each thread reads its own copy
            if (same.empty() && tag == InameTag{InameTag::Local, 0} && as_warp_reduce(w.rhs)) continue;
            if (same.empty()) refuse("which runs on threads of every " + tag.str() + " index");
            if (islu::constant_range(k, same) != islu::constant_range(k, h) || !islu::constant_range(k, h))
              refuse("which runs within '" + same + "', an iname of the same axis with another range");
          }
          std::vector<Expr> written = ws ? ws->indices : std::vector<Expr>{};
          std::map<std::string, Expr> rename{{same, make_var(h)}};
          for_each_subscript_in(r, n, [&](const Subscript& s) {
            bool thread_dependent = false;
            for (auto& e : written) thread_dependent |= uses_var(e, h);
            for (auto& e : s.indices) thread_dependent |= uses_var(e, same);
            if (!thread_dependent) return;
            bool equal = s.indices.size() == written.size();
            for (size_t d = 0; equal && d < written.size(); ++d) equal = simplify(substitute(s.indices[d], rename)).str() == simplify(written[d]).str();
            if (!equal && s.indices.size() == written.size()) equal = same_element_where_written(k, w, written, s.indices, rename);
            if (!equal) refuse("where the element depends on the thread and another thread may have written it (" + s.name + "[...] vs " + w.lhs.str() + ")");
          });
        }
      }
    }
  }
  // every iname an instruction uses must be one of its loops (or a reduction's)
  for (auto& insn : k.instructions) {
    if (insn.kind != Instruction::Assign) continue;
    std::set<std::string> used;
    collect_free_vars(insn.lhs, used);
    collect_free_vars(insn.rhs, used);
    for (auto& p : insn.predicates) collect_free_vars(p, used);
    for (auto& u : used)
      if (k.has_iname(u) && !insn.within_inames.count(u))
        fail("instruction '" + insn.id + "' uses iname '" + u + "' but runs within no loop or tag of it (its inames: " +
             [&] {
               std::string s;
               for (auto& w : insn.within_inames) s += (s.empty() ? "" : ", ") + w;
               return s.empty() ? std::string("none") : s;
             }() + ")");
  }
}

}  // namespace loom
