// Memory transformations: where data lives. add_prefetch copies the part of
// an array that the sweep inames touch (its footprint, as a box) into a new
// temporary — local (shared) memory by default — with a fetch instruction
// over new inames, and rewrites the accesses to read the temporary;
// set_temporary_address_space moves a temporary. Barriers between the fetch
// and its readers are not written here: place_local_barriers places them.
//
// The footprint: every index of a prefetched access is affine, with constant
// coefficients on the sweep inames (whose ranges must be constant); the rest
// of the index (outer inames and parameters) must be the same in every
// prefetched access, so it becomes the box's base and the sweep part spans
// the box. The box is fetched whole (loopy's fetch_bounding_box), guarded
// where it leaves the array (partial tiles, halos at the edges), or, with
// fill_value, copied whole with that value where it leaves the array.
#include <algorithm>
#include <array>
#include <climits>
#include <optional>

#include "common.h"
#include "footprint.h"
#include "loom/constraints.h"
#include "loom/isl_util.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;
using transforms::unique_instruction_id;
using transforms::unique_name;

LoopKernel add_prefetch(const LoopKernel& k, const std::string& array, const std::string& sweep_inames, const PrefetchOptions& o) {
  const std::string what = "add_prefetch('" + array + "', '" + sweep_inames + "')";
  // an array argument, or a temporary in global memory (a product's result
  // that a later launch reads: chained products)
  const Argument* arg = k.find_argument(array);
  const Temporary* global = k.find_temporary(array);
  if (global && global->space != AddressSpace::Global) global = nullptr;
  if ((!arg || arg->kind != Argument::Array) && !global) refuse(k, what, "'" + array + "' is not an array argument or a global temporary");
  const Type dtype = arg ? arg->dtype : global->dtype;
  const std::vector<Expr>& shape = arg ? arg->shape : global->shape;
  bool launches = std::any_of(k.instructions.begin(), k.instructions.end(), [](auto& i) { return i.kind == Instruction::GlobalBarrier; });
  if (k.is_written(array) && !launches)
    refuse(k, what, "array '" + array + "' is written by the kernel; only arrays it only reads (or that an earlier launch writes, " +
                        "behind a global barrier) can be prefetched");
  transforms::FootprintRequest rq;
  rq.what = what;
  rq.name = array;
  rq.sweep = name_list(sweep_inames);
  for (size_t d = 0; d < shape.size(); ++d) rq.storage_axes.push_back(d);
  rq.outer_inames = o.fetch_outer_inames;
  rq.only_using = o.accesses_using;
  if (!o.accesses_using.empty() && !k.has_iname(o.accesses_using)) refuse(k, what, "accesses_using: no iname '" + o.accesses_using + "'");
  AddressSpace space = o.temporary_address_space;
  std::optional<transforms::Footprint> found;
  if (space == AddressSpace::Auto) {
    // loopy's default (temporary_address_space=None): local memory, shared by
    // the block, unless the footprint depends on a local iname that is not
    // swept (each thread would need a tile of its own): then private, one per
    // thread (async_copy needs local memory)
    space = AddressSpace::Local;
    if (!o.async_copy) {
      rq.local = false;
      found = transforms::find_footprint(k, rq);  // (the same footprint either way: rq.local only refuses)
      for (auto& n : found->outer)
        if (k.tag_of(n).kind == InameTag::Local) space = AddressSpace::Private;
    }
  }
  if (space != AddressSpace::Local && space != AddressSpace::Private)
    refuse(k, what, "a prefetch goes into local or private memory, not " + std::string(to_string(space)));
  if (o.async_copy && space != AddressSpace::Local)
    refuse(k, what, "async_copy copies into local (shared) memory; this temporary is private");
  rq.local = space == AddressSpace::Local;
  transforms::Footprint fp = found ? *found : transforms::find_footprint(k, rq);
  if (k.is_written(array)) {
    // the copy is taken once per tile: nothing in the launch that reads it may
    // write the array (an earlier launch, behind a global barrier, may)
    std::set<size_t> uses;
    for (auto& u : fp.uses) uses.insert(u.insn);
    std::vector<bool> launch = transforms::same_launch(k, uses);
    for (size_t i = 0; i < k.instructions.size(); ++i)
      if (launch[i] && k.instructions[i].kind == Instruction::Assign && k.instructions[i].assignee_name() == array)
        refuse(k, what, "array '" + array + "' is written by '" + k.instructions[i].id +
                            "' in the launch that reads it; only arrays that launch only reads can be prefetched (a global barrier between writer and readers allows it)");
  }

  // ---- the temporary and the fetch loops ----
  LoopKernel r = k;
  std::string temp = unique_name(k, o.temporary_name.empty() ? array + "_fetch" : o.temporary_name);
  if (!o.temporary_name.empty() && temp != o.temporary_name)
    refuse(k, what, "temporary_name '" + o.temporary_name + "' is already taken");
  Temporary t{temp, dtype, {}, space, {}, {}};
  for (int64_t e : fp.extent) t.shape.push_back(make_int(e));
  // Rows that are a multiple of 128 bytes long put a column in one shared-memory
  // bank: threads reading down a column (a[i][j] with i across the warp) would
  // wait for each other 32 times over. One element of padding per row skews
  // the columns across the banks; the fetch loops still cover the box only.
  // A vectorized fetch pads by a whole vector so rows stay aligned.
  int64_t padding = o.padding;
  if (padding < 0)
    padding = space == AddressSpace::Local && fp.extent.size() >= 2 && fp.extent.back() * dtype.bytes() % 128 == 0
                  ? std::max<int64_t>(o.vector_width, 1)
                  : 0;
  if (padding > 0) {
    if (fp.extent.empty()) refuse(k, what, "padding: the temporary is a scalar");
    t.shape.back() = make_int(fp.extent.back() + padding);
  }
  transforms::StorageLoops loops = transforms::add_storage_loops(r, k, rq, fp, array, o.dim_arg_names);
  r.temporaries.edit()[temp] = t;

  // ---- the fetch instruction, guarded where the box leaves the array ----
  Instruction fetch;
  fetch.id = unique_instruction_id(r, "fetch_" + array);
  fetch.lhs = make_subscript(temp, loops.index);
  fetch.rhs = make_subscript(array, loops.source);
  fetch.within_inames = fp.outer;
  fetch.within_inames.insert(loops.inames.begin(), loops.inames.end());
  fetch.inames_given = true;
  fetch.loc = k.instructions[fp.uses[0].insn].loc;
  for (size_t d = 0; d < shape.size(); ++d) {
    // a constant box inside a constant extent needs no guard
    auto cb = constant_int(fp.base[d]), cs = constant_int(shape[d]);
    if (cb && cs && *cb >= 0 && *cb + fp.extent[d] <= *cs) continue;
    auto base = affine_form(fp.base[d]);
    bool may_be_negative = !base || base->constant < 0 || std::any_of(base->coef.begin(), base->coef.end(), [](auto& c) { return c.second < 0; });
    if (may_be_negative) fetch.predicates.push_back(make_binary(BinOp::Ge, loops.source[d], make_int(0)));
    fetch.predicates.push_back(make_binary(BinOp::Lt, loops.source[d], shape[d]));
  }
  fetch.async_copy = o.async_copy;
  transforms::drop_proven_predicates(r, fetch);
  bool integral = o.fill_value && double(int64_t(*o.fill_value)) == *o.fill_value;
  if (o.fill_value && dtype.is_int() && !integral)
    refuse(k, what, "fill_value " + std::to_string(*o.fill_value) + " is not a value of " + dtype.name());
  if (o.fill_value && !fetch.predicates.empty()) {
    // the whole box, unguarded: the array's element where the box is inside it, the fill value elsewhere
    Expr inside;
    for (auto& p : fetch.predicates) inside = inside.defined() ? make_binary(BinOp::And, inside, p, types::boolean) : p;
    // an array whose dtype is still to be inferred gets an untyped literal
    Expr fill = dtype.is_float() || (!dtype.known() && !integral) ? make_float(*o.fill_value, dtype) : make_int(int64_t(*o.fill_value), dtype);
    fetch.rhs = make_select(inside, fetch.rhs, fill, dtype);
    fetch.predicates.clear();
  }
  if (o.fill_value && *o.fill_value == 0) r.temporaries.edit()[temp].zero_fill_of = array;
  transforms::rewrite_uses(r, rq, fp, temp, fetch.id);
  r.instructions.edit().insert(r.instructions.edit().begin() + long(fp.uses[0].insn), fetch);
  return transforms::tag_storage_loops(r, k, rq, fp, loops, o.default_tag.empty() ? "l.auto" : o.default_tag, fetch.id,
                                       o.vector_width);
}

namespace {
// "local" (or CUDA's "shared"), "private", "global", "auto"
std::optional<AddressSpace> parse_address_space(const std::string& name) {
  if (name == "local" || name == "shared") return AddressSpace::Local;
  if (name == "private") return AddressSpace::Private;
  if (name == "global") return AddressSpace::Global;
  if (name == "auto") return AddressSpace::Auto;
  return std::nullopt;
}
}  // namespace

LoopKernel set_temporary_address_space(const LoopKernel& k, const std::string& temporaries, const std::string& space) {
  const std::string what = "set_temporary_address_space('" + temporaries + "', '" + space + "')";
  auto parsed = parse_address_space(space);
  if (!parsed) refuse(k, what, "unknown address space '" + space + "' (private, local, global or auto)");
  AddressSpace s = *parsed;
  LoopKernel r = k;
  auto names = name_list(temporaries);
  if (names.empty()) refuse(k, what, "no temporaries given");
  for (auto& n : names) {
    auto it = r.temporaries.edit().find(n);
    if (it == r.temporaries.edit().end()) refuse(k, what, "no temporary '" + n + "'");
    // (a global temporary is allocated by the runtimes for each call: its size must be known)
    if (s == AddressSpace::Global && !it->second.dtype.known())
      refuse(k, what, "temporary '" + n + "' has no dtype yet; a global temporary needs one (add_dtypes)");
    it->second.space = s;
  }
  // a value in global memory is the same value: the kernel as written keeps
  // it there too, so that split into launches alike (global barriers), each
  // launch of it is the reference of the same transformed launch
  if (s == AddressSpace::Global && r.original) {
    bool everywhere = std::all_of(names.begin(), names.end(), [&](const std::string& n) { return r.original->find_temporary(n) != nullptr; });
    if (everywhere) r.original = std::make_shared<const LoopKernel>(set_temporary_address_space(*r.original, temporaries, space));
  }
  return r;
}

void register_memory_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"add_prefetch",
           "Copy the part of an array the sweep inames touch into a temporary (local memory by default) and read it from there.",
           {TransformParam{"var_name", TransformParam::String, true, "the array to prefetch"}.of(TransformParam::Type::Array),
            TransformParam{"sweep_inames", TransformParam::String, false, "inames whose accesses the temporary covers ('i_inner, k_inner'; default none: one element, or the accesses outside every loop)"}.of(TransformParam::Type::Inames),
            TransformParam{"temporary_name", TransformParam::String, false, "name of the temporary (default <array>_fetch)"}.of(TransformParam::Type::Name),
            TransformParam{"temporary_address_space", TransformParam::String, false, "local, private, or auto (default, loopy's None: local unless the footprint depends on a local iname not swept, then private)"}.one_of({"local", "shared", "private", "auto"}).otherwise("auto").searched(TransformParam::Search::Choices),
            TransformParam{"dim_arg_names", TransformParam::String, false, "names of the fetch inames, one per dimension ('a_i,a_k')"}.of(TransformParam::Type::Names),
            TransformParam{"default_tag", TransformParam::String, false, "tag of the fetch inames: l.auto (default: onto the block's local axes), for, unr, l.N"}.of(TransformParam::Type::FetchTag).otherwise("l.auto"),
            TransformParam{"fetch_outer_inames", TransformParam::String, false, "inames around the fetch (default: those the footprint depends on)"}.of(TransformParam::Type::Inames),
            TransformParam{"fetch_bounding_box", TransformParam::String, false, "accepted for loopy's scripts: the bounding box is always fetched"}.of(TransformParam::Type::Bool),
            TransformParam{"padding", TransformParam::Int, false, "Loom: elements added to each row of a local temporary (default: 1 when rows are a multiple of 128 bytes, the vector width for a vectorized fetch)"}.of(TransformParam::Type::Int).at_least(0),
            TransformParam{"vector_width", TransformParam::Int, false, "Loom: with l.auto, split the contiguous fetch iname by this and tag the inner part vec (4: float4 copies)"}.one_of({"1", "2", "4"}).otherwise("1").searched(TransformParam::Search::Choices),
            TransformParam{"async_copy", TransformParam::String, false, "Loom: true: copy with cp.async (sm_80+), so a thread's guarded loads are in flight together; false (default)"}.of(TransformParam::Type::Bool).otherwise("false").searched(TransformParam::Search::Bools),
            TransformParam{"fill_value", TransformParam::String, false, "Loom: write this number (e.g. 0) where the box leaves the array, so the whole box is copied unguarded (round_up_reduction needs 0)"}.of(TransformParam::Type::Float),
            TransformParam{"accesses_using", TransformParam::String, false, "Loom: only the accesses whose indices use this iname (an array read at two places, syrk's A[i, k] and A[j, k]: a prefetch for each)"}.of(TransformParam::Type::Iname)},
           [](const LoopKernel& k, const TransformArgs& a) {
             PrefetchOptions o;
             o.temporary_name = a.str_or("temporary_name", "");
             std::string sp = a.str("temporary_address_space");
             auto space = parse_address_space(sp);
             if (!space) throw TransformError("add_prefetch on kernel '" + k.name + "': unknown temporary_address_space '" + sp + "' (local, private or auto)");
             o.temporary_address_space = *space;  // global: add_prefetch refuses it with the reason
             o.dim_arg_names = a.str_or("dim_arg_names", "");
             o.default_tag = a.str("default_tag");
             if (a.has("fetch_outer_inames")) o.fetch_outer_inames = a.str("fetch_outer_inames");
             o.padding = a.has("padding") ? a.integer("padding") : -1;
             o.vector_width = a.integer("vector_width");
             o.async_copy = a.flag("async_copy", false /* declared: false */);
             if (a.has("fill_value")) o.fill_value = a.number("fill_value");
             o.accesses_using = a.str_or("accesses_using", "");
             if (o.vector_width < 1 || o.padding < -1)
               throw TransformError("add_prefetch on kernel '" + k.name + "': vector_width must be >= 1 and padding >= 0");
             return add_prefetch(k, a.str("var_name"), a.str_or("sweep_inames", ""), o);
           }});
  reg.add({"set_temporary_address_space", "Put temporaries into private, local (shared) or auto memory.",
           {TransformParam{"temporaries", TransformParam::String, true, "comma-separated temporaries"}.of(TransformParam::Type::Temporaries), TransformParam{"address_space", TransformParam::String, true, "private, local or auto"}.one_of({"private", "local", "shared", "global", "auto"})},
           [](const LoopKernel& k, const TransformArgs& a) {
             return set_temporary_address_space(k, a.str("temporaries"), a.str("address_space"));
           }});
}

}  // namespace loom
