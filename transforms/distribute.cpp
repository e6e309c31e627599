// distribute_loops: loop distribution (fission). The instructions inside
// loops L that come after the instructions matching `after` get loops of
// their own (copies of L, duplicate_inames), so every iteration of L runs
// the first part, and then every iteration runs the second. PolyBench's
// atax computes tmp[i] and then adds A[i, j] tmp[i] into y[j] in one loop
// over i: distributed, the first part is parallel over i and the second
// over j, where together no loop was.
//
// Legal when no instance of the second part touches an element (one of the
// two writing it) that an instance of the first part touches in a later
// iteration of L (in one iteration of the loops around L): those pairs are
// the ones distribution reverses. isl decides it on the kernel as written,
// exactly for affine indices; a private scalar that both parts use, one
// writing it, is refused (distribution would pass the last iteration's
// value only). Being order-preserving in what it computes, the step is
// applied to the kernel as written too (as add_global_barrier is), so a
// global barrier can then stand between the parts; where the kernel's
// instructions are in another order than as written (reorder_instructions),
// it is proven on the kernel as it stands and the kernel as written keeps
// its loops (the reorder check compares the two).
#include <algorithm>
#include <optional>

#include "common.h"
#include "loom/analysis.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

namespace {

struct Access {
  const Subscript* subscript = nullptr;  // null: a scalar, by name
  std::string name;
  bool write = false;
};

std::vector<Access> accesses_of(const LoopKernel& k, const Instruction& insn) {
  std::vector<Access> out;
  auto scalar = [&](const std::string& n) {
    const Temporary* t = k.find_temporary(n);
    return t && t->shape.empty();
  };
  if (auto s = insn.lhs.as<Subscript>()) out.push_back({s, s->name, true});
  else if (auto v = insn.lhs.as<Var>()) out.push_back({nullptr, v->name, true});
  auto look = [&](const Expr& e) {
    if (e.defined()) for_each_subscript(e, [&](const Subscript& s) { out.push_back({&s, s.name, false}); });
  };
  look(insn.rhs);
  for (auto& p : insn.predicates) look(p);
  for (auto& n : insn.read_names())
    if (scalar(n)) out.push_back({nullptr, n, false});
  return out;
}

// The pairs (src: an instance of the second part, dst: one of the first)
// that agree on the loops around L and whose iterations of L come in that
// order (src first): what distribution would reverse.
bool reversed(const isl::set& pairs, const std::vector<std::string>& around, const std::vector<std::string>& loops) {
  using transforms::PairOrder;
  using transforms::pairs_where;
  isl::set base = pairs;
  for (auto& n : around) base = pairs_where(base, n, PairOrder::Equal);
  for (size_t p = 0; p < loops.size(); ++p) {
    isl::set s = base;
    for (size_t q = 0; q < p; ++q) s = pairs_where(s, loops[q], PairOrder::Equal);
    if (!pairs_where(s, loops[p], PairOrder::SrcFirst).is_empty()) return true;
  }
  return false;
}

// Why distributing `loops` of k between first and second is illegal, or "".
std::string why_illegal(const LoopKernel& k, const std::vector<std::string>& loops, const std::vector<const Instruction*>& first,
                        const std::vector<const Instruction*>& second) {
  for (auto* b : first)
    for (auto* a : second) {
      // the loops both run in, other than L, must be around L
      std::vector<std::string> order = inames_in_order(k, *a), around;
      size_t first_loop = order.size();
      for (auto& l : loops) first_loop = std::min<size_t>(first_loop, size_t(std::find(order.begin(), order.end(), l) - order.begin()));
      for (size_t i = 0; i < order.size(); ++i) {
        const std::string& n = order[i];
        if (!b->within_inames.count(n) || std::count(loops.begin(), loops.end(), n)) continue;
        if (i > first_loop) return "loop '" + n + "' holds instructions of both parts inside the distributed loops: name it too";
        around.push_back(n);
      }
      for (auto& x : accesses_of(k, *a))
        for (auto& y : accesses_of(k, *b)) {
          if (x.name != y.name || (!x.write && !y.write)) continue;
          std::string pair = "'" + a->id + "' (after the split) and '" + b->id + "' (before it) both use '" + x.name + "'";
          if (!x.subscript || !y.subscript) return pair + ", a value one of them writes in every iteration";
          isl::set pairs = element_pairs(k, *a, *x.subscript, *b, *y.subscript);
          if (pairs.is_null()) return pair + " through an index isl cannot analyse";
          if (reversed(pairs, around, loops))
            return "'" + a->id + "' (after the split) touches an element of '" + x.name + "' in an earlier iteration than '" + b->id +
                   "' (before it) does, one of them writing it: distributed, the two would run the other way round (first: '" + a->id +
                   "', second: '" + b->id + "'; " + pair_witness(pairs) + ")";
        }
    }
  return "";
}

struct Parts {
  std::vector<const Instruction*> first, second;
  std::string second_match;  // "id:a or id:b"
};

Parts parts_of(const LoopKernel& k, const std::string& what, const std::vector<std::string>& loops, const std::string& after) {
  InstructionMatch m = transforms::parse_match(k, what, after);
  auto inside = [&](const Instruction& insn) {
    return insn.kind == Instruction::Assign &&
           std::all_of(loops.begin(), loops.end(), [&](const std::string& n) { return insn.within_inames.count(n) > 0; });
  };
  long last = -1;
  for (size_t i = 0; i < k.instructions.size(); ++i)
    if (m(k.instructions[i]) && inside(k.instructions[i])) last = long(i);
  if (last < 0) refuse(k, what, "no instruction inside the loops matches '" + after + "'");
  Parts p;
  for (size_t i = 0; i < k.instructions.size(); ++i) {
    const Instruction& insn = k.instructions[i];
    if (!inside(insn)) continue;
    if (long(i) <= last) {
      p.first.push_back(&insn);
    } else {
      p.second.push_back(&insn);
      p.second_match += (p.second_match.empty() ? "id:" : " or id:") + insn.id;
    }
  }
  if (p.second.empty()) refuse(k, what, "no instruction inside the loops follows '" + after + "': nothing to distribute");
  return p;
}

// duplicate_inames appends the copies' domains; loops nest in domain order,
// so each goes right after the domain it was copied from: the copies nest
// as their loops did (appended, atax's copy of i would nest inside j: an
// interchange nobody asked for, and not proven here).
LoopKernel nested_in_place(LoopKernel r, const LoopKernel& before, const std::vector<std::string>& loops,
                           const std::vector<std::string>& copies) {
  size_t n = before.domains.size();
  std::vector<Domain> order;
  for (size_t d = 0; d < n; ++d) {
    order.push_back(r.domains[d]);
    for (size_t a = n; a < r.domains.size(); ++a) {
      std::string first = r.domains[a].inames().front();
      size_t i = size_t(std::find(copies.begin(), copies.end(), first) - copies.begin());
      if (i < copies.size() && before.domain_of(loops[i]) == int(d)) order.push_back(r.domains[a]);
    }
  }
  if (order.size() != r.domains.size()) return r;  // (a copy not traced to its domain: left where it is)
  r.domains.edit() = order;
  return r;
}

}  // namespace

LoopKernel distribute_loops(const LoopKernel& k, const std::string& inames, const std::string& after) {
  const std::string what = "distribute_loops('" + inames + "', after='" + after + "')";
  std::vector<std::string> loops = name_list(inames);
  if (loops.empty()) refuse(k, what, "name the loops to distribute");
  for (auto& n : loops) {
    if (!k.has_iname(n)) refuse(k, what, "no iname '" + n + "'");
    if (k.tag_of(n).kind != InameTag::Seq) refuse(k, what, "loop '" + n + "' is tagged " + k.tag_of(n).str() + "; distribute it before tagging");
  }
  const LoopKernel& as_written = k.original ? *k.original : k;
  for (auto& n : loops)
    if (!as_written.has_iname(n)) refuse(k, what, "loop '" + n + "' is not a loop of the kernel as written, where distribution is proven");
  // The parts in the kernel's order. Where reorder_instructions changed it
  // (symm's update of the rows above moved after the row's own store), the
  // kernel as written has other parts: the distribution is proven on the
  // kernel as it stands, and the reorder check compares the result with
  // the kernel as written, which keeps its loops.
  Parts parts = parts_of(k, what, loops, after);
  std::optional<Parts> written_parts;
  try {
    written_parts = parts_of(as_written, what, loops, after);
  } catch (const TransformError&) {
  }
  auto ids = [](const std::vector<const Instruction*>& v) {
    std::vector<std::string> out;
    for (auto* i : v) out.push_back(i->id);
    return out;
  };
  const bool as_in_written = written_parts && ids(written_parts->first) == ids(parts.first) && ids(written_parts->second) == ids(parts.second);
  if (as_in_written) {
    if (std::string why = why_illegal(as_written, loops, written_parts->first, written_parts->second); !why.empty()) refuse(k, what, why);
  } else if (std::string why = why_illegal(k, loops, parts.first, parts.second); !why.empty()) {
    refuse(k, what, why);
  }
  // the copies get the same names in the kernel and in the kernel as written
  std::string fresh;
  std::vector<std::string> copies;
  for (auto& n : loops) {
    std::string base = n + "_2", name = transforms::unique_name(k, base);
    for (int i = 0; as_written.has_iname(name) || k.has_iname(name); ++i) name = base + "_" + std::to_string(i);
    fresh += (fresh.empty() ? "" : ",") + name;
    copies.push_back(name);
  }
  LoopKernel r = nested_in_place(duplicate_inames(k, inames, parts.second_match, fresh, ""), k, loops, copies);
  if (k.original && as_in_written)
    r.original = std::make_shared<const LoopKernel>(
        nested_in_place(duplicate_inames(as_written, inames, written_parts->second_match, fresh, ""), as_written, loops, copies));
  return r;
}

void register_distribute_transforms(TransformRegistry& reg) {
  reg.add({"distribute_loops",
           "Give the instructions inside the loops that follow the ones matching after loops of their own (loop distribution): every "
           "iteration runs the first part, then every iteration the second. Refused where that would reverse two accesses of one element.",
           {TransformParam{"inames", TransformParam::String, true, "the loops to distribute ('i' or 'i, j')"}.of(TransformParam::Type::Inames),
            TransformParam{"after", TransformParam::String, true, "the last instructions of the first part"}.of(TransformParam::Type::Match)},
           [](const LoopKernel& k, const TransformArgs& a) { return distribute_loops(k, a.str("inames"), a.str("after")); }});
}

}  // namespace loom
