// check_synchronization: every barrier and collective (warp reduction) of a
// kernel's loop nest must be reached by all threads of the block together,
// so no condition around one (if, loop bounds) may depend on the thread: a
// thread iname or a private value. Runs for every target after codegen.
#include "hardware_axes.h"

namespace loom::codegen {

namespace {

void walk(const LoopKernel& k, const StmtPtr& s, const std::set<std::string>& thread_vars, std::vector<Expr>& conds) {
  if (s->kind == Stmt::Barrier || is_collective(*s)) {
    for (auto& c : conds) {
      std::set<std::string> vars;
      collect_free_vars(c, vars);
      for (auto& v : vars)
        if (thread_vars.count(v))
          throw KernelError("kernel '" + k.name + "': a " + std::string(s->kind == Stmt::Barrier ? "barrier" : "warp reduction") +
                            " under the condition '" + c.str() + "', which depends on the thread ('" + v +
                            "'): every thread of a block must reach it together");
    }
    return;
  }
  size_t n = conds.size();
  if (s->kind == Stmt::If || s->kind == Stmt::For) conds.push_back(s->cond);
  if (s->kind == Stmt::For) conds.push_back(s->init);
  for (auto& c : s->children) walk(k, c, thread_vars, conds);
  conds.resize(n);
}

}  // namespace

void check_synchronization(const LoopKernel& k, const GeneratedKernel& g) {
  if (!has_sync(g.body)) return;
  std::set<std::string> thread_vars;
  for (auto& h : g.hardware_inames)
    if (h.tag.kind == InameTag::Local) thread_vars.insert(h.name);
  for (auto& [n, t] : k.temporaries)
    if (t.space != AddressSpace::Local) thread_vars.insert(n);
  std::vector<Expr> conds;
  walk(k, g.body, thread_vars, conds);
}

}  // namespace loom::codegen
