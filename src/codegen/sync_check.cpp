// check_synchronization: every barrier of a kernel's loop nest must be
// reached by all threads of the block together, so no condition around one
// (if, loop bounds) may depend on the thread: a thread iname or a private
// value. A collective (warp reduction) needs only its group of lanes, one
// row of the block's x axis: its conditions may depend on the other axes,
// not on what varies along the row (lane_varying_names). Runs for every
// target after codegen.
#include "hardware_axes.h"
#include "loom/analysis.h"

namespace loom::codegen {

namespace {

struct ThreadVars {
  std::set<std::string> block;  // differ between the threads of a block
  std::set<std::string> lane;   // differ between the lanes of an x row
};

void walk(const LoopKernel& k, const StmtPtr& s, const ThreadVars& tv, std::vector<Expr>& conds) {
  if (s->kind == Stmt::Barrier || is_collective(*s)) {
    const std::set<std::string>& thread_vars = s->kind == Stmt::Barrier ? tv.block : tv.lane;
    for (auto& c : conds) {
      std::set<std::string> vars;
      if (s->kind == Stmt::Barrier) collect_free_vars(c, vars);
      else collect_free_names(c, vars);  // (a private array read at a uniform index may still differ by lane)
      for (auto& v : vars)
        if (thread_vars.count(v))
          throw KernelError("kernel '" + k.name + "': a " + std::string(s->kind == Stmt::Barrier ? "barrier" : "warp reduction") +
                            " under the condition '" + c.str() + "', which depends on the thread ('" + v +
                            "'): every thread " + (s->kind == Stmt::Barrier ? "of a block" : "of its group of lanes") +
                            " must reach it together");
    }
    return;
  }
  size_t n = conds.size();
  if (s->kind == Stmt::If || s->kind == Stmt::For) conds.push_back(s->cond);
  if (s->kind == Stmt::For) conds.push_back(s->init);
  for (auto& c : s->children) walk(k, c, tv, conds);
  conds.resize(n);
}

}  // namespace

void check_synchronization(const LoopKernel& k, const GeneratedKernel& g) {
  if (!has_sync(g.body)) return;
  ThreadVars tv;
  for (auto& h : g.hardware_inames)
    if (h.tag.kind == InameTag::Local) tv.block.insert(h.name);
  for (auto& [n, t] : k.temporaries)
    if (t.space != AddressSpace::Local) tv.block.insert(n);
  tv.lane = lane_varying_names(k);
  std::vector<Expr> conds;
  walk(k, g.body, tv, conds);
}

}  // namespace loom::codegen
