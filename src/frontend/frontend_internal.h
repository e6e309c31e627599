// Pieces of the front end shared between its files.
#pragma once
#include <vector>

#include "loom/kernel.h"
#include "loom/parser.h"
#include "../ir/source.h"

namespace loom::frontend {

// Declares what `...` leaves out: arrays accessed but not declared (dtype
// float32, shape from the bounding box of their accesses, computed with isl),
// scalars used but not declared (float32 value arguments) and domain
// parameters (int32 value arguments). Without `...` only the parameters are
// added (they are integers, so there is nothing to guess).
void infer_arguments(LoopKernel& k, bool infer_rest);
// loopy's `<> arr[k] = ...`: the named temporaries' shapes, one past the
// largest index of their accesses per axis (over each instruction's domain).
void size_temporaries_by_accesses(LoopKernel& k, const std::set<std::string>& names);

// Ids for instructions without one (insn_N); refuses a repeated id; expands
// dependency globs (dep=upd*) and refuses a dependency on no instruction.
void assign_ids(LoopKernel& k);
// The inames an instruction runs within: those its expressions use outside of
// reductions over them, or exactly the ones given by inames= (checked).
void infer_within_inames(const LoopKernel& k, Instruction& insn, const std::set<std::string>& inames);
bool add_domain_parents(const LoopKernel& kernel, Instruction& insn, const std::set<std::string>& inames);
void propagate_inames_from_writers(LoopKernel& kernel, const std::set<std::string>& inames);
// Every variable is an iname, parameter, argument or temporary; every array
// access names an array of the right rank. ParseError at the instruction.
void check_names(const LoopKernel& k);
// Every loop an instruction runs in has both ends (ParseError at its line otherwise).
void check_bounded_inames(const LoopKernel& k);

// The kernel as written becomes the reference of its transformed versions:
// each instruction's origin is itself (its inames and those of the
// reductions and rules it uses, by name), and k.original a copy of k.
// Arrays the kernel left without a dtype (inferred by `...`, or `auto`) that
// it writes take the dtype of what is assigned to them, as loopy infers it
// (out[i] = 2 * x[i] with x float64 makes out float64, not float32); they
// stay open, so a call may still choose (add_dtypes).
void infer_written_dtypes(LoopKernel& k);
void record_original(LoopKernel& k);

// Transformation-script lines in text[begin, end).
std::vector<TransformStep> parse_transform_lines(const Source& src, size_t begin, size_t end);

}  // namespace loom::frontend
