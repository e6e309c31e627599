// Transformations: pure functions LoopKernel -> LoopKernel that validate their
// input and throw TransformError naming the kernel, the iname or array, and
// the reason. Each is also registered by name with its argument schema
// (transform_registry()), which is how scripts, the CLI, Python and the
// tuner reach them.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/kernel.h"
#include "loom/script.h"

namespace loom {

// ---- inames (transforms/inames.cpp) ----

struct SplitOptions {
  std::optional<InameTag> outer_tag, inner_tag;
  std::string outer_iname, inner_iname;  // default: <iname>_outer, <iname>_inner
  // (head, tail): iterations of the outer loop given code of their own, so
  // the full tiles run without guards (loopy's slabs); (0, 1) separates the
  // partial last tile. For a sequential outer loop or a block axis (g.N).
  std::pair<int, int> slabs{0, 0};
  // loopy's within: split only in the matching instructions ("id:a"); they
  // get a copy of the iname, which is split, and the others keep the iname.
  std::string within;
};

// i -> inner_length*i_outer + i_inner with 0 <= i_inner < inner_length. The
// domain keeps the original bounds as constraints, so the last, partial tile
// is handled by guards.
LoopKernel split_iname(const LoopKernel& k, const std::string& iname, int64_t inner_length,
                       const SplitOptions& opts = {});

// "i:g.0, j:l.0" or a map iname -> tag ("g.N", "l.N", "unr", "for").
LoopKernel tag_inames(const LoopKernel& k, const std::map<std::string, std::string>& tags);
LoopKernel tag_inames(const LoopKernel& k, const std::string& spec);

// existing_ok: new_iname may exist; the two loops become one (their ranges' union, each instruction keeping its iterations).
LoopKernel rename_iname(const LoopKernel& k, const std::string& iname, const std::string& new_iname, bool existing_ok = false);
LoopKernel untag_inames(const LoopKernel& k, const std::string& inames);      // "i, j"
LoopKernel prioritize_loops(const LoopKernel& k, const std::string& inames);  // "i, j, k", outermost first
LoopKernel remove_unused_inames(const LoopKernel& k);
// Copies of inames for the instructions matching `within` ("" = all).
LoopKernel duplicate_inames(const LoopKernel& k, const std::string& inames, const std::string& within = "",
                            const std::string& new_inames = "", const std::string& tags = "");
// A split whose outer iname has num_chunks iterations of ceil(length /
// num_chunks). A range that depends on the parameters keeps the iname, which
// the two new ones determine (at most 64 chunks; see inames.cpp).
LoopKernel chunk_iname(const LoopKernel& k, const std::string& iname, int64_t num_chunks, const SplitOptions& opts = {});
// i, j (j of constant range from 0) -> ij = i*len(j) + j. Inames of separate,
// independent domains are joined over their product.
LoopKernel join_inames(const LoopKernel& k, const std::string& inames, const std::string& new_iname = "");

// ---- reductions (transforms/reductions.cpp) ----
// sum((i, j), e) -> sum(i, sum(j, e)) for the given inner inames (inward), or
// the given inames outside (outward), in the matching instructions.
LoopKernel split_reduction_inward(const LoopKernel& k, const std::string& inames, const std::string& within = "");
LoopKernel split_reduction_outward(const LoopKernel& k, const std::string& inames, const std::string& within = "");
// Reductions sharing an iname get copies, so each reduction has its own.
LoopKernel make_reduction_inames_unique(const LoopKernel& k);
// Halide's rfactor (transforms/rfactor.cpp): out[w] = sum((k, p), e) becomes
// out_partial[w, k] = sum(p, e), a global barrier, and out[w] = sum(k_r,
// out_partial[w, k_r]): the kept inames k may then go on blocks.
LoopKernel rfactor(const LoopKernel& k, const std::string& kept, const std::string& within = "", const std::string& temporary_name = "");

// ---- parameters (transforms/parameters.cpp) ----
LoopKernel assume(const LoopKernel& k, const std::string& constraints);  // "n >= 1 and n mod 16 = 0"
LoopKernel fix_parameters(const LoopKernel& k, const std::map<std::string, int64_t>& values);
// The integer type of inames, parameters and index arithmetic (loopy's
// make_kernel(..., index_dtype=np.int64)): int32 (the default) or int64,
// which arrays of more than 2^31 - 1 elements need.
LoopKernel set_index_dtype(const LoopKernel& k, const std::string& dtype);
// Parameters ('n, m') that calls keep general: no divisibility variant (KernelOptions).
LoopKernel do_not_specialize(const LoopKernel& k, const std::string& params);
// Accesses Loom cannot prove in bounds run unchecked (trust = true) or
// checked at run time (false, the default) on the CPU and CUDA targets.
LoopKernel trust_unproven_accesses(const LoopKernel& k, bool trust = true);
// The CUDA launch order of the blocks: groups of `group` values of g.1 (transforms/block_order.cpp).
LoopKernel group_blocks(const LoopKernel& k, int64_t group);

// ---- instructions (transforms/instructions.cpp); matches: loom/match.h ----
LoopKernel add_dependency(const LoopKernel& k, const std::string& match, const std::string& depends_on);
LoopKernel add_barrier(const LoopKernel& k, const std::string& before, const std::string& after, const std::string& id = "");
// A global barrier after the last instruction matching `before`, inside the
// sequential loops `within` ("t, k"), which then run on the host around the
// launches (transforms/global_barrier.cpp); refused where it would reorder
// the kernel; added to the kernel as written too.
LoopKernel add_global_barrier(const LoopKernel& k, const std::string& before, const std::string& within = "", const std::string& id = "");
// Loop distribution (transforms/distribute.cpp): the instructions inside the
// loops `inames` after those matching `after` get copies of those loops of
// their own; refused where it would reverse two accesses of one element;
// applied to the kernel as written too.
LoopKernel distribute_loops(const LoopKernel& k, const std::string& inames, const std::string& after);
// New inames defined by affine equations in old ones, which they replace
// (loopy's affine_map_inames): "w = 4*t + 2*i + j" skews j into a
// wavefront's time. The new inames' loops go outermost.
LoopKernel affine_map_inames(const LoopKernel& k, const std::vector<std::string>& old_inames, const std::vector<std::string>& new_inames,
                             const std::string& equations);
// Index-set splitting (transforms/index_set.cpp): each instruction matching
// `within` that runs in `iname` becomes three pieces, where iname < at,
// iname = at and iname > at, each in its own copy of the iname.
LoopKernel split_index_set(const LoopKernel& k, const std::string& iname, const std::string& at, const std::string& within = "");
// The reads of `array` (in the instructions `within` matches; default all)
// that see its value from before the kernel at every instance read a copy
// taken by a launch before the kernel (transforms/initial_values.cpp).
// An array argument that each iteration of `inames` writes whole before it
// reads it gets a copy per iteration; the last one's is copied back
// (transforms/expand_array.cpp).
LoopKernel expand_array(const LoopKernel& k, const std::string& array, const std::string& inames, const std::string& temporary_name = "");

// The reads that get every value from a store of a constant (matching
// `match`) read the constant; the store goes where nothing else reads its
// values and none is final. Proven with isl, applied to the kernel as
// written too (transforms/forward_substitute.cpp).
LoopKernel forward_substitute(const LoopKernel& k, const std::string& match);
LoopKernel read_initial_values(const LoopKernel& k, const std::string& array, const std::string& within = "",
                               const std::string& temporary_name = "");
// An accumulation written as a loop read as a reduction over that loop
// (transforms/accumulation.cpp): x = x + f inside loops `inames` (default:
// the loops holding it alone that x and its conditions do not name) becomes
// x = x + sum(inames, f);
// refused where the loops' order matters.
LoopKernel accumulation_to_reduction(const LoopKernel& k, const std::string& match, const std::string& inames = "");
LoopKernel add_nosync(const LoopKernel& k, const std::string& source, const std::string& sink);
LoopKernel set_instruction_priority(const LoopKernel& k, const std::string& match, int priority);
LoopKernel tag_instructions(const LoopKernel& k, const std::string& tag, const std::string& match);
LoopKernel remove_instructions(const LoopKernel& k, const std::string& match);
// The matching instructions on the first thread along a thread axis only ("l.0").
LoopKernel run_on_first_thread(const LoopKernel& k, const std::string& match, const std::string& axis = "l.0");
// The listed instructions, in this order, in the places of the list they hold.
LoopKernel reorder_instructions(const LoopKernel& k, const std::vector<std::string>& ids);

// ---- memory (transforms/memory.cpp) ----
struct PrefetchOptions {
  std::string temporary_name;  // default <array>_fetch
  // Auto (loopy's None): local, or private where the footprint depends on a
  // local iname that is not swept.
  AddressSpace temporary_address_space = AddressSpace::Auto;
  std::string dim_arg_names;   // comma-separated, one per array dimension; default <array>_dim_<d>
  // l.auto: the fetch inames go onto the local axes the block already has,
  // the contiguous (last) dimension on l.0, split by the axis' extent where
  // the box is larger; otherwise a tag for every fetch iname (for, unr, l.N)
  std::string default_tag = "l.auto";
  std::optional<std::string> fetch_outer_inames;  // default: the inames the footprint depends on
  // Loom's own: elements added to each row of a local temporary (-1: one
  // when rows are a multiple of 128 bytes, against bank conflicts down a
  // column; the vector width instead when the fetch is vectorized, so rows
  // stay aligned); and with l.auto, the contiguous fetch iname split by
  // vector_width with the inner part tagged vec (float4 copies for 4).
  int64_t padding = -1;
  int64_t vector_width = 1;
  // Loom's own: copy global to local memory with cp.async (sm_80+; the fetch
  // is tagged `async`). The loads of a guarded fetch then stay in flight
  // together instead of each waiting before its store to shared memory.
  bool async_copy = false;
  // Loom's own (Triton's masked load with `other=`): write this value where
  // the box leaves the array instead of leaving those elements unwritten, so
  // the fetch is one unguarded copy of the whole box (a select per element,
  // cp.async's zero-fill form for 0). With 0 the temporary is marked as a
  // zero-filled copy (Temporary::zero_fill_of), which round_up_reduction needs.
  std::optional<double> fill_value;
  // Loom's own: only the accesses whose indices use this iname ("": all).
  // An array read at two places (syrk's A[i, k] and A[j, k]) has no one
  // footprint; each read gets a prefetch of its own (accesses_using=i_inner,
  // then accesses_using=j_inner).
  std::string accesses_using;
};
// loopy's add_prefetch: the box the sweep inames' accesses to `array` cover,
// copied into a temporary by a fetch instruction; those accesses read it.
LoopKernel add_prefetch(const LoopKernel& k, const std::string& array, const std::string& sweep_inames,
                        const PrefetchOptions& opts = {});
// "a, b" into "private", "local" or "auto" memory.
LoopKernel set_temporary_address_space(const LoopKernel& k, const std::string& temporaries, const std::string& space);

// ---- round_up_reduction (transforms/round_up_reduction.cpp) ----
// A sum's partial last tile over `inames` run whole: their parametric bounds
// dropped, legal where every extra term is a product of zero-filled
// temporaries read outside their arrays (add_prefetch with fill_value=0).
LoopKernel round_up_reduction(const LoopKernel& k, const std::string& inames);

// ---- tensor_core (transforms/tensor_core.cpp) ----
// The (m, n, k) inames of a product's 16x8x16 tile tagged mma.m, mma.n,
// mma.k: one warp-level matrix instruction (shape "m16n8k16"), or of a
// 64xNx16 tile: one warpgroup-level instruction (shape "m64nNk16", wgmma).
LoopKernel tensor_core(const LoopKernel& k, const std::string& m, const std::string& n, const std::string& k_iname,
                       const std::string& shape = "", bool tf32 = false);
// N of a warpgroup shape "m64nNk16" (N a multiple of 8 up to 256), else 0.
int warpgroup_shape_n(const std::string& shape);

// ---- precompute (transforms/precompute.cpp) ----
struct PrecomputeOptions {
  std::string storage_axes;       // rule parameters stored, comma-separated; default all
  std::string temporary_name;     // default <rule>_0
  std::string precompute_inames;  // one per storage axis; default <rule>_dim_<d>
  std::optional<std::string> precompute_outer_inames;
  std::string default_tag = "l.auto";
  std::string temporary_address_space = "auto";  // auto: local when a sweep iname is local
  std::string compute_insn_id;
  std::string dtype;  // default: inferred
};
// loopy's precompute: the values of substitution rule `subst_use` that the
// uses within `sweep_inames` need, computed into a temporary first.
LoopKernel precompute(const LoopKernel& k, const std::string& subst_use, const std::string& sweep_inames,
                      const PrecomputeOptions& opts = {});

// ---- substitution rules (transforms/substitutions.cpp) ----
// Every occurrence of `pattern` (an expression whose variables listed in
// `parameters` match anything) becomes a call of the new rule subst_name.
LoopKernel extract_subst(const LoopKernel& k, const std::string& subst_name, const std::string& pattern,
                         const std::string& parameters = "");
// The temporary lhs_name, assigned by one instruction (indices: distinct
// inames), becomes a rule; its reads become calls, the assignment goes.
LoopKernel assignment_to_subst(const LoopKernel& k, const std::string& lhs_name);
// Rule calls in the instructions matching `within` ("" = all) are inlined;
// rules nothing calls any more are dropped.
LoopKernel expand_subst(const LoopKernel& k, const std::string& within = "");

// ---- temporaries per iteration (transforms/privatize.cpp) ----
// Temporaries written within the inames (or only_var_names) get a leading
// axis per iname, indexed by it: one copy per iteration.
LoopKernel privatize_temporaries_with_inames(const LoopKernel& k, const std::string& privatizing_inames,
                                             const std::string& only_var_names = "");
// The reverse: an axis every access indexes by the iname (plus one constant) goes.
LoopKernel unprivatize_temporaries_with_inames(const LoopKernel& k, const std::string& privatizing_inames,
                                               const std::string& only_var_names = "");
// With `within`: only the accesses of the matching instructions (a web of
// the temporary's own, proven on the kernel as written: no value flows
// between them and the others; applied to the kernel as written too).
LoopKernel rename_temporary(const LoopKernel& k, const std::string& old_name, const std::string& new_name, const std::string& within = "");

// ---- save_and_reload_temporaries (transforms/save_reload.cpp) ----
// Private temporaries that cross a global barrier become global ones with an
// element per thread (axes: their writers' parallel inames).
LoopKernel save_and_reload_temporaries(const LoopKernel& k);

// ---- fuse_kernels (transforms/fusion.cpp) ----
// loopy's fuse_kernels: one kernel running the instructions of all, in
// order; inames and arguments of one name shared (domains and declarations
// must agree), temporaries and ids that would collide renamed, assumptions
// conjoined; `suffixes` (one per kernel) rename temporaries other kernels
// also name; each data_flow entry makes kernel `to`'s readers of `var`
// depend on kernel `from`'s writers of it.
struct DataFlow {
  std::string var;
  int from = 0, to = 0;
};
LoopKernel fuse_kernels(const std::vector<LoopKernel>& kernels, const std::vector<std::string>& suffixes = {},
                        const std::vector<DataFlow>& data_flow = {});

// ---- double buffering (transforms/double_buffer.cpp) ----
// A local temporary that one instruction fills in every iteration of the
// sequential loop `iname` gets two copies; the fill moves one iteration
// ahead (into the other copy) and a first fill runs before the loop. With
// async, the fill is tagged `async` (cp.async on the CUDA target, sm_80+).
LoopKernel double_buffer(const LoopKernel& k, const std::string& temporary, const std::string& iname, bool async = true, int stages = 2,
                         int ahead = 0 /* 0: stages - 1 */);

// ---- buffer_array (transforms/buffer_array.cpp) ----
struct BufferOptions {
  std::string init_expression;   // default: the array's element ("base")
  std::string store_expression;  // default: the buffer ("buffer"); may use base
  std::string default_tag = "l.auto";
  std::string temporary_scope = "auto";  // auto: local when a buffer iname is local
  std::string temporary_name;            // default <array>_buf
};
// loopy's buffer_array: the part of var_name that the accesses within
// buffer_inames touch lives in a temporary for the sweep (init before, store after).
LoopKernel buffer_array(const LoopKernel& k, const std::string& var_name, const std::string& buffer_inames,
                        const BufferOptions& opts = {});

// ---- batches (transforms/batch.cpp) ----
// loopy's to_batched: every instruction in a new loop over nbatches problems
// (an integer or a parameter's name); the arguments named get a leading
// batch axis, and so do the shared temporaries unless sequential.
LoopKernel to_batched(const LoopKernel& k, const std::string& nbatches, const std::vector<std::string>& batch_varying_args,
                      const std::string& batch_iname_prefix = "ibatch", bool sequential = false);

// ---- dtypes (transforms/dtypes.cpp) ----
// loopy's add_dtypes: dtypes for arguments left open; open outputs follow.
LoopKernel add_dtypes(const LoopKernel& k, const std::map<std::string, std::string>& dtypes);

// ---- layouts (transforms/layout.cpp) ----
// loopy's tag_array_axes: one tag per axis of each named array argument
// (c, f, N<k>, stride:K, vec); sets its strides and its vector axis.
LoopKernel tag_array_axes(const LoopKernel& k, const std::string& arrays, const std::string& dim_tags);
// loopy's split_array_axis: axis axis_nr of each named array (argument or
// temporary) becomes (ceil(extent / count), count) in order "C", or
// (count, ceil(extent / count)) in order "F"; arguments keep their memory.
// pad_array_axis: axis axis_nr of each named temporary grows by `padding`
// elements no access reaches (the axes before it lie that much further apart).
LoopKernel pad_array_axis(const LoopKernel& k, const std::string& temporaries, int axis_nr, int64_t padding);
// swizzle_array: the named local temporaries' 16-byte pieces XOR-swizzled
// within 128-byte rows (Temporary::swizzle_bytes = 128; 0 undoes it).
LoopKernel swizzle_array(const LoopKernel& k, const std::string& temporaries, int64_t bytes);

// ---- bulk copies (transforms/bulk_copy.cpp) ----
// tma_copy: the named local tiles, filled by copies of one array argument,
// are filled by the tensor memory accelerator on sm_90+ (Temporary::bulk_copy;
// codegen/bulk_copies.cpp proves the fill's shape and plans the copies).
LoopKernel tma_copy(const LoopKernel& k, const std::string& temporaries);
LoopKernel split_array_axis(const LoopKernel& k, const std::string& array_names, int axis_nr, int64_t count,
                            const std::string& order = "C");

// ---- the registry ----

struct TransformParam {
  // How a script line's words bind: TagMap and Text, as a last parameter,
  // also take the rest of a line's words (joined by ',' and ' '); KeywordMap
  // collects the step's name=value words that name no other parameter ("n=128, m=64").
  enum Kind { String, Int, Tag, TagMap, Text, KeywordMap };
  // What a value is. Declared once, with the default, the range or choices
  // and the help: the registry checks a bound value against it (refusing it
  // with the parameter's name and type), and the JSON schema (`loom
  // transforms --json`), Python's signatures and help, and the tuner's
  // search domains all read it.
  enum class Type {
    Text, Int, Bool, Float, Dtype, Iname, Inames, Tag, FetchTag, TagMap, Array, Arrays, Temporary, Temporaries, Name, Names,
    Match, Choice, Expression, Constraints, KeywordMap
  };
  // The values a search may try for the parameter (search_domain):
  // PowersOfTwoToExtent: 1, 2, 4, ... up to the extent of the iname the
  // parameter `search_of` names (1024 where it depends on the parameters);
  // Choices: the declared choices; Bools: false, true; BlockTags/ThreadTags:
  // no tag, and the g.N/l.N axes no iname uses yet; Inames: the kernel's inames.
  enum class Search { None, PowersOfTwoToExtent, Choices, Bools, BlockTags, ThreadTags, Inames };

  std::string name;
  Kind kind = String;
  bool required = true;
  std::string help;
  Type type = Type::Text;
  std::string default_value;         // as text; "" = none (the transformation decides, as its help says)
  std::vector<std::string> choices;  // Type::Choice
  int64_t min = INT64_MIN, max = INT64_MAX;  // Type::Int
  Search search = Search::None;
  std::string search_of;

  TransformParam() = default;
  TransformParam(std::string n, Kind k, bool req, std::string h) : name(std::move(n)), kind(k), required(req), help(std::move(h)) {}

  TransformParam& of(Type t) {
    type = t;
    return *this;
  }
  TransformParam& otherwise(std::string v) {  // the default
    default_value = std::move(v);
    return *this;
  }
  TransformParam& one_of(std::vector<std::string> c) {
    type = Type::Choice;
    choices = std::move(c);
    return *this;
  }
  TransformParam& at_least(int64_t m) {
    min = m;
    return *this;
  }
  TransformParam& searched(Search s, std::string of_param = "") {
    search = s;
    search_of = std::move(of_param);
    return *this;
  }
  // "int >= 1", "one of local, private", "iname", "tag (g.N, l.N, unr, ilp, vec, for)", ...
  std::string type_name() const;
  // "" when `value` is one of the type's; else why not ("must be an integer, got 'x'")
  std::string check(const std::string& value) const;
};

// The values a search may try for one parameter of a transformation, given
// the kernel and the arguments bound so far (a split factor needs its
// iname): from the parameter's declaration (TransformParam::Search).
std::vector<std::string> search_domain(const std::string& transform, const std::string& param, const LoopKernel& k,
                                       const std::map<std::string, std::string>& bound = {});
// Every registered transformation's declaration as a JSON document (the
// schema of scripts: names, types, defaults, choices, ranges, help, search).
std::string transform_schema_json();

// Arguments bound to a transform's schema (all values as text, converted on access).
class TransformArgs {
 public:
  TransformArgs(std::string transform, std::map<std::string, std::string> values)
      : transform_(std::move(transform)), values_(std::move(values)) {}
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string str(const std::string& name) const;
  std::string str_or(const std::string& name, const std::string& absent) const { return has(name) ? str(name) : absent; }
  int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;  // an integer or a decimal number
  bool flag(const std::string& name, bool absent) const;  // true/True/1 or false/False/0
  std::optional<InameTag> tag(const std::string& name) const;  // nullopt when absent

 private:
  std::string transform_;
  std::map<std::string, std::string> values_;
};

struct TransformInfo {
  std::string name;
  std::string doc;
  std::vector<TransformParam> params;
  std::function<LoopKernel(const LoopKernel&, const TransformArgs&)> apply;
  // Whether it changes the computation's interface (its parameters' values,
  // its arguments' dtypes or shapes), so the reference the tuner and `loom run`
  // check against takes it too (reference_kernel); scheduling steps do not.
  bool changes_interface = false;
};

class TransformRegistry {
 public:
  void add(TransformInfo info);
  const TransformInfo* find(const std::string& name) const;
  const std::vector<TransformInfo>& all() const { return list_; }

 private:
  std::vector<TransformInfo> list_;
};

const TransformRegistry& transform_registry();

// Binds a step's positional and keyword arguments to its transform's schema,
// by parameter name (errors name the step's line): what apply_transform passes on.
std::map<std::string, std::string> bind_transform_arguments(const TransformStep& step);
// Applies one script step: binds positional and keyword arguments to the
// schema (errors name the step's line), then runs the transform.
LoopKernel apply_transform(const LoopKernel& k, const TransformStep& step);
LoopKernel apply_transforms(const LoopKernel& k, const std::vector<TransformStep>& steps);
// The kernel a run of `transformed` is checked against: the kernel as
// written with what the script declares rather than transforms (assume,
// fix_parameters, add_dtypes), so it runs on the same inputs and proves its
// bounds under the same facts, reading each argument through the
// transformed kernel's layout (how the caller's memory lies, not what the
// kernel computes).
LoopKernel reference_kernel(const LoopKernel& as_written, const std::vector<TransformStep>& steps, const LoopKernel& transformed);

// Registration hooks, one per transforms/ file (called by the registry).
void register_iname_transforms(TransformRegistry& r);
void register_reduction_transforms(TransformRegistry& r);
void register_parameter_transforms(TransformRegistry& r);
void register_instruction_transforms(TransformRegistry& r);
void register_memory_transforms(TransformRegistry& r);
void register_precompute_transforms(TransformRegistry& r);
void register_substitution_transforms(TransformRegistry& r);
void register_privatize_transforms(TransformRegistry& r);
void register_buffer_array_transforms(TransformRegistry& r);
void register_dtype_transforms(TransformRegistry& r);
void register_batch_transforms(TransformRegistry& r);
void register_layout_transforms(TransformRegistry& r);
void register_double_buffer_transforms(TransformRegistry& r);
void register_round_up_reduction_transforms(TransformRegistry& r);
void register_tensor_core_transforms(TransformRegistry& r);
void register_save_reload_transforms(TransformRegistry& r);
void register_bulk_copy_transforms(TransformRegistry& r);
void register_block_order_transforms(TransformRegistry& r);
void register_rfactor_transforms(TransformRegistry& r);
void register_global_barrier_transforms(TransformRegistry& r);
void register_distribute_transforms(TransformRegistry& r);
void register_accumulation_transforms(TransformRegistry& r);
void register_affine_map_transforms(TransformRegistry& r);
void register_index_set_transforms(TransformRegistry& r);
void register_initial_value_transforms(TransformRegistry& r);
void register_expand_array_transforms(TransformRegistry& r);
void register_forward_substitute_transforms(TransformRegistry& r);

}  // namespace loom
