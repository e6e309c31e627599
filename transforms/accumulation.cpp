// accumulation_to_reduction: an accumulation written as a loop, PolyBench's
// `tmp[i] = tmp[i] + A[i, j] * x[j]` inside `for j`, read as the reduction
// it computes: `tmp[i] = tmp[i] + sum(j, A[i, j] * x[j])` outside the loop.
// As a loop it keeps the loop sequential (each iteration reads what the one
// before wrote); as a reduction its terms may be summed in any order, so a
// row's sum can spread over threads (2000 rows are 2000 threads, too few
// for a GPU; 2000 rows of 2000 terms are not).
//
// The sum is reassociated: a float result may differ from the loop's in its
// last bits, as any parallel sum does (the tuner's check compares with a
// tolerance). Legal where the loops reduced hold this instruction alone,
// neither the left-hand side nor a condition mentions them, and the terms
// never read the element being accumulated (isl: trisolv's x[j] for j < i
// is never x[i]): then the loop's instances read nothing the sum would
// change. `+`, `-` (a sum subtracted) and `*` (a product) accumulate. The
// kernel as written gets the same step (proven there too), so the reorder
// check compares the accumulated array through the sums; where it cannot
// take it (symm's i holds other instructions as written, and only a
// distribution isolates the accumulation), the check reads each sum's terms
// there as one instance, legal where nothing else touches the element
// between them.
#include <algorithm>

#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

// Whether some instance reads, through s, the element its own left-hand
// side names (the pairs of instances that agree on every loop but the
// reduced ones).
bool reads_the_accumulator(const LoopKernel& k, const Instruction& insn, const Subscript& lhs, const Subscript& s,
                           const std::set<std::string>& reduced, bool& unknown) {
  isl::set pairs = element_pairs(k, insn, lhs, insn, s);
  if (pairs.is_null()) {
    unknown = true;
    return true;
  }
  for (auto& n : insn.within_inames)
    if (!reduced.count(n)) pairs = transforms::pairs_where(pairs, n, transforms::PairOrder::Equal);
  return !pairs.is_empty();
}

// The loops of insn that hold it alone and that its left-hand side and
// conditions do not mention (PolyBench's gemm: k, around j).
std::vector<std::string> default_loops(const LoopKernel& k, const Instruction& insn) {
  std::vector<std::string> out;
  for (auto& n : inames_in_order(k, insn)) {
    bool alone = std::none_of(k.instructions.begin(), k.instructions.end(),
                              [&](const Instruction& o) { return &o != &insn && o.within_inames.count(n); });
    bool mentioned = mentions_var(insn.lhs, n);
    for (auto& p : insn.predicates) mentioned |= mentions_var(p, n);
    if (alone && !mentioned) out.push_back(n);
  }
  return out;
}

// Whether a loop of insn that is not reduced runs inside a reduced one (gemm's
// j inside k): the reduction then moves it out, and other elements of the
// accumulated array are written between two terms of one sum.
bool reduces_around_another_loop(const LoopKernel& k, const Instruction& insn, const std::set<std::string>& reduced) {
  bool inside = false;
  for (auto& n : inames_in_order(k, insn)) {
    if (reduced.count(n)) inside = true;
    else if (inside) return true;
  }
  return false;
}

Instruction rewritten(const LoopKernel& k, const std::string& what, const Instruction& insn, std::vector<std::string> loops) {
  if (insn.kind != Instruction::Assign) refuse(k, what, "'" + insn.id + "' is not an assignment");
  const Expr* accumulated = accumulated_operand(insn);
  if (!accumulated)
    refuse(k, what, "'" + insn.id + "' is not an accumulation (x = x + f, x = f + x, x = x - f or x = x * f): " + insn.rhs.str());
  auto sum = insn.rhs.as<Binary>();
  Expr terms = accumulated == &sum->a ? sum->b : sum->a;
  if (loops.empty()) loops = default_loops(k, insn);
  if (loops.empty())
    refuse(k, what, "'" + insn.id + "' has no loop to reduce: each of its loops holds other instructions too, or its "
                    "left-hand side or a condition names it");
  std::set<std::string> reduced(loops.begin(), loops.end());
  for (auto& n : loops) {
    if (!insn.within_inames.count(n)) refuse(k, what, "'" + insn.id + "' does not run in loop '" + n + "'");
    if (k.tag_of(n).kind != InameTag::Seq) refuse(k, what, "loop '" + n + "' is tagged " + k.tag_of(n).str());
    if (mentions_var(insn.lhs, n)) refuse(k, what, "the left-hand side of '" + insn.id + "' names '" + n + "': it is not accumulated over it");
    for (auto& p : insn.predicates)
      if (mentions_var(p, n)) refuse(k, what, "a condition of '" + insn.id + "' names '" + n + "'");
    for (auto& o : k.instructions)
      if (&o != &insn && o.within_inames.count(n))
        refuse(k, what, "loop '" + n + "' holds '" + o.id + "' too: only a loop that holds the accumulation alone is a reduction");
  }
  const std::string& x = insn.assignee_name();
  auto lhs = insn.lhs.as<Subscript>();
  bool around = reduces_around_another_loop(k, insn, reduced);
  for_each_subscript(terms, [&](const Subscript& s) {
    if (s.name != x) return;
    if (around)
      refuse(k, what, "the terms of '" + insn.id + "' read '" + x + "', whose other elements the loops inside the reduced ones write "
                      "between two of its terms");
    bool unknown = false;
    std::string read = s.name + "[";
    for (size_t d = 0; d < s.indices.size(); ++d) read += (d ? ", " : "") + s.indices[d].str();
    read += "]";
    if (!lhs || reads_the_accumulator(k, insn, *lhs, s, reduced, unknown))
      refuse(k, what, "the terms of '" + insn.id + "' read " + read + (unknown ? ", which isl cannot tell apart from " : ", which may be ") +
                          insn.lhs.str() + " itself: the loop's order matters");
  });
  if (!lhs && mentions_var(terms, x)) refuse(k, what, "the terms of '" + insn.id + "' read the accumulated value");
  Instruction r = insn;
  ReduceOp op = sum->op == BinOp::Mul ? ReduceOp::Product : ReduceOp::Sum;
  r.rhs = make_binary(sum->op, insn.lhs, make_reduce(op, loops, terms, terms.type()), sum->type);
  for (auto& n : loops) r.within_inames.erase(n);
  r.inames_given = true;
  return r;
}

}  // namespace

LoopKernel accumulation_to_reduction(const LoopKernel& k, const std::string& match, const std::string& inames) {
  const std::string what = "accumulation_to_reduction('" + match + "')";
  InstructionMatch m = transforms::parse_match(k, what, match);
  std::vector<std::string> loops = name_list(inames);
  LoopKernel r = k;
  bool any = false;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    if (!m(k.instructions[i])) continue;
    r.instructions.edit()[i] = rewritten(k, what, k.instructions[i], loops);
    any = true;
  }
  if (!any) refuse(k, what, "no instruction matches '" + match + "'");
  // The kernel as written reads the same accumulations as sums (they compute
  // the same values, reassociated), proven there too: the reorder check then
  // compares the accumulated array's dataflow through the sums' shape (with
  // a loop on one side and a sum on the other it could not, and a reordering
  // before this step went unchecked).
  if (k.original) {
    LoopKernel o = *k.original;
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      if (!m(k.instructions[i])) continue;
      const std::string& id = k.instructions[i].id;
      auto at = std::find_if(o.instructions.begin(), o.instructions.end(), [&](const Instruction& x) { return x.id == id; });
      if (at == o.instructions.end())
        refuse(k, what, "'" + id + "' is not an instruction of the kernel as written, where the reduction is proven too");
      // (rewritten before the list is edited: a copy-on-write edit would move the instruction it reads)
      size_t index = size_t(at - o.instructions.begin());
      Instruction insn;
      try {
        insn = rewritten(o, what + " (in the kernel as written)", *at, loops);
      } catch (const TransformError&) {
        // The kernel as written cannot read it as a sum (its loop holds other
        // instructions there, or is another loop since a distribution): it
        // keeps the loop, and the reorder check folds each sum's terms into
        // one instance there, refusing where another access to the element
        // stands between two of them (check_reorderings).
        continue;
      }
      o.instructions.edit()[index] = insn;
    }
    r.original = std::make_shared<const LoopKernel>(o);
  }
  return r;
}

void register_accumulation_transforms(TransformRegistry& reg) {
  reg.add({"accumulation_to_reduction",
           "Read an accumulation written as a loop (x = x + f inside the loop) as a reduction over that loop (x = x + sum(j, f)), "
           "whose terms may then be summed in any order; refused where the loop's order matters.",
           {TransformParam{"match", TransformParam::String, true, "the accumulating instructions"}.of(TransformParam::Type::Match),
            TransformParam{"inames", TransformParam::String, false,
                           "the loops to reduce (default: those that hold the instruction alone and that neither its left-hand "
                           "side nor a condition names)"}
                .of(TransformParam::Type::Inames)},
           [](const LoopKernel& k, const TransformArgs& a) { return accumulation_to_reduction(k, a.str("match"), a.str_or("inames", "")); }});
}

}  // namespace loom
