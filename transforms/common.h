// Internal to transforms/: what every transformation file needs: the one way
// to refuse (TransformError naming the transformation, the kernel and the
// reason), fresh names, and comma-separated name lists.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <isl/cpp.h>

#include "loom/kernel.h"
#include "loom/match.h"

namespace loom::transforms {

[[noreturn]] void refuse(const LoopKernel& k, const std::string& what, const std::string& why);

// base, or base_0, base_1, ...: a name no iname, argument or temporary of k has.
std::string unique_name(const LoopKernel& k, const std::string& base);

// base, or base_0, base_1, ...: an id no instruction of k has.
std::string unique_instruction_id(const LoopKernel& k, const std::string& base);

// "i, j k" -> {"i", "j", "k"}
std::vector<std::string> name_list(const std::string& spec);

// Pairs of instances (analysis.h's element_pairs: inames "src:" and "dst:")
// narrowed to those whose iteration of loop n is the same (Equal) or comes
// first in src (SrcFirst); unchanged where either instance lacks n.
enum class PairOrder { Equal, SrcFirst };
isl::set pairs_where(const isl::set& pairs, const std::string& n, PairOrder order);

// The instruction match `text` (loom/match.h), refused with the parser's
// reason where it does not parse.
InstructionMatch parse_match(const LoopKernel& k, const std::string& what, const std::string& text);

// Which instructions run in the launch of any of `insns` (indices into k's
// list): those between the global barriers around them. A kernel without
// global barriers is one launch. (split_global_barriers may cut a run at a
// host loop's edge too: this is the run that holds such launches.)
std::vector<bool> same_launch(const LoopKernel& k, const std::set<size_t>& insns);

// Leaves out the predicates of `insn` (comparisons, affine in inames and
// parameters) that hold wherever it runs in r for every parameter value the
// assumptions allow: a fetch or compute over a tile that never leaves the
// array when sizes are multiples of the tile needs no guard (and its vec
// loops stay whole).
void drop_proven_predicates(const LoopKernel& r, Instruction& insn);

// Rewrites the instruction's accesses of temporary t (reads, its write, the
// indices of other accesses; a scalar read by name too) through fn, given the
// access's indices (already rewritten) and its type.
void map_temporary_accesses(Instruction& insn, const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn);
Expr map_temporary_accesses(const Expr& e, const std::string& t, const std::function<Expr(std::vector<Expr>, Type)>& fn);

// Applies f (an iname substitution or renaming) to the instruction's origin
// too, so it keeps naming the original inames in the current ones.
template <class F>
void update_origin(Instruction& insn, F&& f) {
  if (insn.origin)
    for (auto& entry : *insn.origin) entry.second = f(entry.second);
}

// The reductions of the expressions it visits that run over any of `names`
// (round_up_reduction's sums over a tile, tensor_core's product).
class ReductionsOver : public ExprVisitor {
 public:
  explicit ReductionsOver(std::set<std::string> names) : names_(std::move(names)) {}
  std::vector<const Reduce*> found;

 protected:
  void visit_reduce(const Reduce& r) override {
    for (auto& n : r.inames)
      if (names_.count(n)) {
        found.push_back(&r);
        break;
      }
    ExprVisitor::visit_reduce(r);
  }

 private:
  std::set<std::string> names_;
};

// Rewrites the bodies of k's substitution rules by f, which replaces the
// inames or parameters `names` (a split, rename, join, fix_parameters). A
// rule parameter named like one of them (f(i) := 3 * a[i]) is its own
// variable, not the iname: it is renamed to a fresh name first, so f leaves
// it alone (split_iname i once rewrote such a body into the iname's parts:
// a silent wrong result).
void rewrite_rule_bodies(LoopKernel& k, const std::set<std::string>& names, const std::function<Expr(const Expr&)>& f);

}  // namespace loom::transforms
