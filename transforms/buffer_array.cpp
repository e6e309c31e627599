// buffer_array (loopy's name and arguments): the part of an array that the
// accesses inside the buffer inames read and write lives in a temporary
// (registers or shared memory) for the sweep: an init instruction fills it
// before (the array's values, or init_expression), the accesses use it, and a
// store instruction writes it back after (or store_expression, such as
// "base + buffer" to accumulate into the array). Both are guarded by the
// array's bounds and by the footprint, so elements the sweep does not touch
// are neither read nor written. The fill is left out where no value it
// reads could survive: the sweep only writes the array, unconditionally, and
// the store writes back exactly the elements written (an output staged
// through shared memory for wide stores; loopy always fills).
#include <algorithm>

#include "common.h"
#include "footprint.h"
#include "loom/expr_text.h"
#include "loom/transforms.h"

namespace loom {

using transforms::name_list;
using transforms::refuse;

LoopKernel buffer_array(const LoopKernel& k, const std::string& var_name, const std::string& buffer_inames, const BufferOptions& o) {
  const std::string what = "buffer_array('" + var_name + "', '" + buffer_inames + "')";
  const Argument* arg = k.find_argument(var_name);
  if (!arg || arg->kind != Argument::Array) refuse(k, what, "'" + var_name + "' is not an array argument");
  transforms::FootprintRequest rq;
  rq.what = what;
  rq.name = var_name;
  rq.sweep = name_list(buffer_inames);
  if (rq.sweep.empty()) refuse(k, what, "give the buffer inames");
  rq.include_writes = true;
  for (size_t d = 0; d < arg->shape.size(); ++d) rq.storage_axes.push_back(d);
  AddressSpace space = AddressSpace::Private;
  if (o.temporary_scope.empty() || o.temporary_scope == "auto") {
    for (auto& s : rq.sweep)
      if (k.has_iname(s) && k.tag_of(s).kind == InameTag::Local) space = AddressSpace::Local;
  } else if (o.temporary_scope == "local" || o.temporary_scope == "shared") {
    space = AddressSpace::Local;
  } else if (o.temporary_scope != "private") {
    refuse(k, what, "temporary_scope '" + o.temporary_scope + "' is not private, local or auto");
  }
  rq.local = space == AddressSpace::Local;
  transforms::Footprint fp = transforms::find_footprint(k, rq);
  bool writes = false;
  for (auto& u : fp.uses) writes |= k.instructions[u.insn].assignee_name() == var_name;
  if (!writes) refuse(k, what, "no instruction writes '" + var_name + "' within the buffer inames; to keep values that are only read, use add_prefetch");

  auto parse_opt = [&](const std::string& text, const char* which) {
    try {
      return parse_expr(text);
    } catch (const Error& e) {
      refuse(k, what, std::string(which) + " does not parse: " + e.what());
    }
  };
  LoopKernel r = k;
  std::string temp = transforms::unique_name(k, o.temporary_name.empty() ? var_name + "_buf" : o.temporary_name);
  if (!o.temporary_name.empty() && temp != o.temporary_name) refuse(k, what, "temporary_name '" + o.temporary_name + "' is already taken");
  Temporary t{temp, arg->dtype, {}, space, {}, {}};
  for (int64_t e : fp.extent) t.shape.push_back(make_int(e));
  r.temporaries.edit()[temp] = t;

  // the element's guards: inside the array, and used by some iteration of the
  // sweep; `exact`, when given, says whether they admit written elements only
  auto guards = [&](const transforms::StorageLoops& loops, bool* exact) {
    std::vector<Expr> g = transforms::footprint_conditions(k, rq, fp, loops, exact);
    for (size_t d = 0; d < arg->shape.size(); ++d) {
      g.push_back(make_binary(BinOp::Ge, loops.source[d], make_int(0)));
      g.push_back(make_binary(BinOp::Lt, loops.source[d], arg->shape[d]));
    }
    return g;
  };
  auto instruction = [&](const std::string& id, const transforms::StorageLoops& loops, bool* exact) {
    Instruction insn;
    insn.id = transforms::unique_instruction_id(r, id);
    insn.within_inames = fp.outer;
    insn.within_inames.insert(loops.inames.begin(), loops.inames.end());
    insn.inames_given = true;
    insn.loc = k.instructions[fp.uses[0].insn].loc;
    insn.predicates = guards(loops, exact);
    // guards the assumptions and the loops' ranges prove are not printed
    // (a tile of an array whose extents are multiples of it needs none)
    transforms::drop_proven_predicates(r, insn);
    return insn;
  };

  // ---- store: the buffer (buffer), or store_expression ----
  bool guards_exact = false;
  size_t store_domains = r.domains.size();
  transforms::StorageLoops out = transforms::add_storage_loops(r, k, rq, fp, var_name + "_store", "");
  Instruction store = instruction("store_" + temp, out, &guards_exact);
  Expr buffered = make_subscript(temp, out.index);
  store.lhs = make_subscript(var_name, out.source);
  store.rhs = o.store_expression.empty()
                  ? buffered
                  : substitute(parse_opt(o.store_expression, "store_expression"), {{"base", make_subscript(var_name, out.source)}, {"buffer", buffered}});

  // A buffer the sweep only writes, unconditionally, and whose store writes
  // back exactly the elements written (the guards admit no unwritten one),
  // needs no fill: every stored value is one the sweep wrote. Leaving the
  // fill out saves reading the array (an output staged through shared memory
  // for wide stores reads nothing). loopy always fills.
  bool fill = !o.init_expression.empty() || !guards_exact;
  for (auto& u : fp.uses) {
    const Instruction& use = k.instructions[u.insn];
    fill |= use.reads(var_name) || use.atomic || !use.predicates.empty();
  }

  // ---- init: the array's values (base), or init_expression ----
  transforms::StorageLoops in;
  Instruction init;
  if (fill) {
    size_t init_domains = r.domains.size();
    in = transforms::add_storage_loops(r, k, rq, fp, var_name + "_init", "");
    // (the fill's loops before the store's, as they run)
    auto& domains = r.domains.edit();
    std::rotate(domains.begin() + long(store_domains), domains.begin() + long(init_domains), domains.end());
    init = instruction("init_" + temp, in, nullptr);
    Expr base_in = make_subscript(var_name, in.source);
    init.lhs = make_subscript(temp, in.index);
    init.rhs = o.init_expression.empty() ? base_in : substitute(parse_opt(o.init_expression, "init_expression"), {{"base", base_in}});
  }

  transforms::rewrite_uses(r, rq, fp, temp);
  transforms::order_outer_before_sweep(r, rq, fp);
  size_t first = fp.uses.front().insn, last = first;
  for (auto& u : fp.uses) {
    first = std::min(first, u.insn);
    last = std::max(last, u.insn);
  }
  r.instructions.edit().insert(r.instructions.edit().begin() + long(last) + 1, store);
  std::string tag = o.default_tag.empty() ? "l.auto" : o.default_tag;
  if (fill) {
    r.instructions.edit().insert(r.instructions.edit().begin() + long(first), init);
    r = transforms::tag_storage_loops(r, k, rq, fp, in, tag, init.id);
  }
  return transforms::tag_storage_loops(r, k, rq, fp, out, tag, store.id);
}

void register_buffer_array_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"buffer_array",
           "Keep the part of an array that the buffer inames read and write in a temporary for the sweep: filled before, written back after.",
           {TransformParam{"var_name", TransformParam::String, true, "the array"}.of(TransformParam::Type::Array),
            TransformParam{"buffer_inames", TransformParam::String, true, "inames whose accesses the buffer covers"}.of(TransformParam::Type::Inames),
            TransformParam{"init_expression", TransformParam::String, false, "the buffer's initial value; 'base' is the array's element (default: base)"}.of(TransformParam::Type::Expression),
            TransformParam{"store_expression", TransformParam::String, false, "what is written back; 'base' and 'buffer' (default: buffer)"}.of(TransformParam::Type::Expression),
            TransformParam{"default_tag", TransformParam::String, false, "tag of the init and store inames: l.auto (default), for, unr, l.N"}.of(TransformParam::Type::FetchTag).otherwise("l.auto"),
            TransformParam{"temporary_scope", TransformParam::String, false, "auto (default: local when a buffer iname is local), local or private"}.one_of({"auto", "local", "shared", "private"}).otherwise("auto").searched(TransformParam::Search::Choices),
            TransformParam{"temporary_name", TransformParam::String, false, "name of the buffer (default <array>_buf)"}.of(TransformParam::Type::Name),
            TransformParam{"fetch_bounding_box", TransformParam::String, false, "accepted for loopy's scripts: the bounding box is always buffered"}.of(TransformParam::Type::Bool)},
           [](const LoopKernel& k, const TransformArgs& a) {
             BufferOptions o;
             o.init_expression = a.str_or("init_expression", "");
             o.store_expression = a.str_or("store_expression", "");
             o.default_tag = a.str("default_tag");
             o.temporary_scope = a.str("temporary_scope");
             o.temporary_name = a.str_or("temporary_name", "");
             return buffer_array(k, a.str("var_name"), a.str("buffer_inames"), o);
           }});
}

}  // namespace loom
