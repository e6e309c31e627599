// read_initial_values: the reads of an array that see its value from before
// the kernel, at every instance, read a copy of it taken before the kernel
// instead (array expansion's simplest case: one copy). An update in place
// whose later iterations read what the earlier ones have not yet
// overwritten (PolyBench's trmm: row i of B reads rows k > i, which their
// own iterations rewrite later) has anti dependences only through such
// reads; reading the copy removes them, and the loop that carried them runs
// in parallel. The copy is a global temporary (Temporary::stand_in)
// filled by a launch of its own before the kernel: the copy instruction
// first, then a global barrier tagged as added (the kernel as written has
// no launch there; both launches answer to its first).
//
// Legal where isl proves that, in the kernel as it stands, no write to the
// array precedes any instance of the read (overwritten_initial_reads); the
// reorder check then compares those reads as reads of values from before
// the kernel, so later reorderings are checked as before. A read that some
// instance gets from a write stays as it is; a match whose every read of
// the array does is refused, with that witness.
#include "common.h"
#include "loom/isl_util.h"
#include "loom/schedule.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

// The n-th read of `array` (in the order the mutator visits) renamed to `to`.
class NthReadRenamer : public ExprMutator {
 public:
  NthReadRenamer(std::string array, int n, std::string to) : array_(std::move(array)), n_(n), to_(std::move(to)) {}
  int seen = 0;

 protected:
  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    Expr inner = ExprMutator::mutate_subscript(s, self);
    if (s.name != array_) return inner;
    if (seen++ != n_) return inner;
    auto sub = inner.as<Subscript>();
    return make_subscript(to_, sub->indices, sub->type);
  }

 private:
  std::string array_;
  int n_;
  std::string to_;
};

int reads_in(const Instruction& insn, const std::string& array) {
  int n = 0;
  if (insn.rhs.defined()) for_each_subscript(insn.rhs, [&](const Subscript& s) { n += s.name == array; });
  return n;
}

}  // namespace

LoopKernel read_initial_values(const LoopKernel& k, const std::string& array, const std::string& within, const std::string& temporary_name) {
  const std::string what = "read_initial_values('" + array + "')";
  const Argument* arg = k.find_argument(array);
  if (!arg || arg->kind != Argument::Array) refuse(k, what, "'" + array + "' is not an array argument");
  if (!k.is_written(array)) refuse(k, what, "'" + array + "' is never written: its reads see its values from before the kernel already");
  if (!arg->dtype.known()) refuse(k, what, "'" + array + "' needs a dtype");
  std::string copy = temporary_name.empty() ? transforms::unique_name(k, array + "_initial") : temporary_name;
  if (k.name_taken(copy)) refuse(k, what, "the name '" + copy + "' is taken");
  InstructionMatch match = transforms::parse_match(k, what, within.empty() ? "*" : within);

  LoopKernel r = k;
  Temporary t;
  t.name = copy;
  t.dtype = arg->dtype;
  t.shape = arg->shape;
  t.space = AddressSpace::Global;
  t.stand_in = {StandIn::InitialValues, array, 0};
  r.temporaries.edit()[copy] = t;

  // each read on its own: renamed where every instance sees the array as it was
  bool matched = false;
  std::string witness;
  for (size_t i = 0; i < r.instructions.size(); ++i) {
    if (r.instructions[i].kind != Instruction::Assign || !match(k.instructions[i])) continue;
    int reads = reads_in(r.instructions[i], array);
    matched |= reads > 0;
    for (int n = reads - 1; n >= 0; --n) {  // (from the last: renaming one leaves the earlier ones' positions)
      LoopKernel trial = r;
      Instruction& insn = trial.instructions.edit()[i];
      NthReadRenamer rename(array, n, copy);
      insn.rhs = rename.mutate(insn.rhs);
      std::optional<std::string> overwritten = overwritten_initial_reads(trial);
      if (!overwritten)
        refuse(k, what, "isl cannot follow the accesses of '" + array + "' in '" + insn.id + "' (an index that is not affine, or beyond its work bound)");
      if (!overwritten->empty()) {
        if (witness.empty()) witness = *overwritten;
        continue;
      }
      r = trial;
    }
  }
  if (!matched) refuse(k, what, "no instruction" + std::string(within.empty() ? "" : " matching '" + within + "'") + " reads '" + array + "'");
  if (!r.is_read(copy))
    refuse(k, what, "every read of '" + array + "' gets, at some instance, a value the kernel wrote: " + witness);

  // the copy, over the array's shape, then a barrier: a launch before the kernel
  std::vector<std::string> dims;
  std::vector<Expr> index;
  std::set<std::string> inames;
  for (size_t d = 0; d < arg->shape.size(); ++d) {
    std::string c = transforms::unique_name(r, copy + "_" + std::to_string(d));  // (distinct bases: distinct names)
    dims.push_back(c);
    index.push_back(make_var(c));
    inames.insert(c);
  }
  std::string text;
  isl::set box = islu::shape_box(k, arg->shape, dims, "", &text);
  if (box.is_null()) refuse(k, what, "the shape of '" + array + "' is not affine in the parameters (isl reads: " + text + ")");
  r.domains.edit().push_back(Domain(box.release()));
  Instruction fill;
  fill.id = transforms::unique_instruction_id(r, copy + "_fill");
  fill.lhs = make_subscript(copy, index, arg->dtype);
  fill.rhs = make_subscript(array, index, arg->dtype);
  fill.within_inames = inames;
  fill.inames_given = true;
  fill.tags = {Instruction::kStandInCopyTag};
  Instruction barrier;
  barrier.kind = Instruction::GlobalBarrier;
  barrier.id = transforms::unique_instruction_id(r, copy + "_gbarrier");
  barrier.depends_on = {fill.id};
  barrier.tags = {Instruction::kAddedBarrierTag};
  auto& list = r.instructions.edit();
  list.insert(list.begin(), {fill, barrier});
  return r;
}

void register_initial_value_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"read_initial_values",
           "The reads of an array that see its value from before the kernel (at every instance) read a copy taken by a launch before the "
           "kernel instead: an update in place (trmm's B) loses the anti dependences of reading what it has not yet overwritten.",
           {P{"var_name", P::String, true, "the array argument"}.of(P::Type::Array),
            P{"within", P::String, false, "match expression of the instructions whose reads are rewritten (default: all)"}.of(P::Type::Match),
            P{"temporary_name", P::String, false, "the copy's name (default <array>_initial)"}.of(P::Type::Name)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return read_initial_values(k, a.str("var_name"), a.str_or("within", ""), a.str_or("temporary_name", ""));
           }});
}

}  // namespace loom
