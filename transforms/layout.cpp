// tag_array_axes (loopy's name; also tag_data_axes): how an array argument's
// axes lie in memory, one tag per axis. "c"/"C" and "f"/"F" nest the axes so
// tagged in C or Fortran order; "N<k>" gives nesting levels explicitly (N0
// varies fastest); "stride:<int or parameter>" a fixed stride in elements;
// "vec" marks a vector axis: its extent (2 or 4, a float2/float4 and kin) is
// the lanes of one vector, it lies innermost (stride 1) and every other
// computed stride is a multiple of it. The tags become the argument's
// element strides, so every access follows them; a vector axis is also
// recorded (Argument::vector_axis) so that code generation moves its `vec`
// accesses as one vector or refuses the kernel with the reason
// (src/codegen/vectorize.cpp). A temporary is always stored in C order of
// its axes, so its tags (c, f, N<k>) reorder the axes instead.
//
// pad_array_axis (Loom's; TVM's storage_align): one axis of temporaries
// grows by elements nobody touches, skewing the axes before it in memory.
//
// split_array_axis (loopy's name): one axis of arrays (arguments or
// temporaries) becomes two, an outer one of ceil(extent / count) and an
// inner one of count, in C order (outer first) or Fortran order (inner
// first); every access a[.., e, ..] becomes a[.., e // count, e % count, ..]
// (or the two swapped). An argument keeps its memory layout, as in loopy:
// the inner axis keeps the old stride, the outer one gets count times it, so
// the caller passes the same memory viewed with the new shape. The
// argument's shape changes the kernel's interface, so the kernel as written
// (the legality checks' and `loom run`'s reference) is split the same way.
#include <algorithm>
#include <functional>

#include "common.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

namespace {

struct AxisTag {
  enum Kind { C, F, Nested, Fixed, Vec } kind = C;
  int level = 0;  // Nested
  Expr stride;    // Fixed
};

AxisTag parse_axis_tag(const LoopKernel& k, const std::string& what, const std::string& array, const std::string& text) {
  AxisTag t;
  std::string s = text;
  if (s == "c" || s == "C") return t;
  if (s == "f" || s == "F") {
    t.kind = AxisTag::F;
    return t;
  }
  if (s == "vec") {
    t.kind = AxisTag::Vec;
    return t;
  }
  if (s.size() > 1 && s[0] == 'N' && std::all_of(s.begin() + 1, s.end(), ::isdigit)) {
    t.kind = AxisTag::Nested;
    t.level = std::stoi(s.substr(1));
    return t;
  }
  if (s.rfind("stride:", 0) == 0) {
    std::string v = s.substr(7);
    t.kind = AxisTag::Fixed;
    if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) {
      t.stride = make_int(std::stoll(v));
    } else {
      auto params = k.parameters();
      if (std::find(params.begin(), params.end(), v) == params.end())
        refuse(k, what, "array '" + array + "': stride:" + v + " is neither an integer nor a parameter of the kernel");
      t.stride = make_var(v);
    }
    return t;
  }
  if (s == "sep")
    refuse(k, what, "array '" + array + "': 'sep' (one argument per index of an axis) is not supported; declare the arrays separately");
  refuse(k, what, "array '" + array + "': unknown axis tag '" + s + "' (c, f, N0, N1, ..., stride:K, vec)");
}

// The element strides the tags give (computed levels nest from the fastest,
// above the vector lanes when there is a vector axis).
std::vector<Expr> strides_of(const LoopKernel& k, const std::string& what, const Argument& a, std::vector<AxisTag> tags) {
  size_t rank = a.shape.size();
  // c and f become nesting levels: the last c axis, or the first f axis, fastest
  bool has_c = false, has_f = false, has_n = false;
  for (auto& t : tags) {
    has_c |= t.kind == AxisTag::C;
    has_f |= t.kind == AxisTag::F;
    has_n |= t.kind == AxisTag::Nested;
  }
  if (int(has_c) + int(has_f) + int(has_n) > 1)
    refuse(k, what, "array '" + a.name + "': mix c, f and N<k> tags of one array through N<k> levels only");
  int level = 0;
  if (has_c) {
    for (size_t d = rank; d-- > 0;)
      if (tags[d].kind == AxisTag::C) tags[d] = AxisTag{AxisTag::Nested, level++, {}};
  } else if (has_f) {
    for (size_t d = 0; d < rank; ++d)
      if (tags[d].kind == AxisTag::F) tags[d] = AxisTag{AxisTag::Nested, level++, {}};
  }
  std::vector<size_t> by_level;
  for (size_t d = 0; d < rank; ++d)
    if (tags[d].kind == AxisTag::Nested) by_level.push_back(d);
  std::sort(by_level.begin(), by_level.end(), [&](size_t x, size_t y) { return tags[x].level < tags[y].level; });
  for (size_t i = 0; i < by_level.size(); ++i)
    if (tags[by_level[i]].level != int(i))
      refuse(k, what, "array '" + a.name + "': the nesting levels N<k> must be 0, 1, ... once each");
  std::vector<Expr> strides(rank);
  Expr acc;  // undefined: 1
  for (size_t d = 0; d < rank; ++d)
    if (tags[d].kind == AxisTag::Vec) {
      strides[d] = make_int(1);
      acc = a.shape[d];
    }
  for (size_t d : by_level) {
    strides[d] = acc.defined() ? acc : make_int(1);
    acc = acc.defined() ? simplify(acc * a.shape[d]) : a.shape[d];
  }
  for (size_t d = 0; d < rank; ++d)
    if (tags[d].kind == AxisTag::Fixed) strides[d] = tags[d].stride;
  return strides;
}

// A temporary is stored in C order of its axes, so its tags (c, f, N<k>:
// nesting levels, as for arguments) reorder the axes: the axis of the
// highest level first. Nothing outside the kernel sees a temporary, so only
// its shape and accesses change (a layout a tensor-core operand needs, say).
LoopKernel permute_temporary_axes(const LoopKernel& k, const std::string& what, const std::string& name, const std::vector<std::string>& texts) {
  const Temporary& t = *k.find_temporary(name);
  if (texts.size() != t.shape.size())
    refuse(k, what, "temporary '" + name + "' has " + std::to_string(t.shape.size()) + " axes, but " + std::to_string(texts.size()) + " tags were given");
  if (!t.double_buffered_in.empty())
    refuse(k, what, "temporary '" + name + "' is double-buffered (its first axis is the copies); tag its axes before double_buffer");
  std::vector<AxisTag> tags;
  for (auto& text : texts) {
    tags.push_back(parse_axis_tag(k, what, name, text));
    if (tags.back().kind == AxisTag::Vec || tags.back().kind == AxisTag::Fixed)
      refuse(k, what, "temporary '" + name + "': '" + text + "' gives a stride; a temporary's axes only reorder (c, f, N0, N1, ...)");
  }
  Argument as_array;  // (strides_of reads the name and the shape)
  as_array.name = name;
  as_array.shape = t.shape;
  strides_of(k, what, as_array, tags);  // (checks the levels: 0, 1, ... once each, tags not mixed)
  // the axes by decreasing stride: the new C order
  std::vector<int> level(t.shape.size());
  const int rank = int(tags.size());
  for (int d = 0; d < rank; ++d) {
    if (tags[size_t(d)].kind == AxisTag::Nested) level[size_t(d)] = tags[size_t(d)].level;
    else if (tags[size_t(d)].kind == AxisTag::C) level[size_t(d)] = rank - 1 - d;  // (c: the order it has)
    else level[size_t(d)] = d;                                                    // f: reversed
  }
  std::vector<size_t> order(t.shape.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return level[x] > level[y]; });
  LoopKernel r = k;
  Temporary& rt = r.temporaries.edit()[name];
  std::vector<Expr> shape;
  for (size_t d : order) shape.push_back(t.shape[d]);
  rt.shape = shape;
  auto permuted = [&](std::vector<Expr> idx, Type type) {
    std::vector<Expr> out;
    for (size_t d : order) out.push_back(idx[d]);
    return make_subscript(name, out, type);
  };
  for (auto& insn : r.instructions.edit()) transforms::map_temporary_accesses(insn, name, permuted);
  for (auto& [n, rule] : r.substitutions.edit()) rule.body = transforms::map_temporary_accesses(rule.body, name, permuted);
  return r;
}

}  // namespace

LoopKernel tag_array_axes(const LoopKernel& k, const std::string& arrays, const std::string& dim_tags) {
  const std::string what = "tag_array_axes";
  std::vector<std::string> tag_texts;
  {
    std::string cur;
    for (char c : dim_tags + ",") {
      if (c == ',' || c == ' ' || c == '(' || c == ')' || c == '\'' || c == '"') {
        if (!cur.empty()) tag_texts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  LoopKernel r = k;
  auto names = transforms::name_list(arrays);
  if (names.empty()) refuse(k, what, "no array named");
  for (auto& name : names) {
    Argument* a = nullptr;
    for (auto& x : r.arguments.edit())
      if (x.name == name) a = &x;
    if (!a) {
      if (k.find_temporary(name)) {
        r = permute_temporary_axes(r, what, name, tag_texts);
        continue;
      }
      refuse(k, what, "no array argument '" + name + "'");
    }
    if (a->kind != Argument::Array) refuse(k, what, "'" + name + "' is a scalar, not an array");
    if (tag_texts.size() != a->shape.size())
      refuse(k, what, "array '" + name + "' has " + std::to_string(a->shape.size()) + " axes, but " +
                          std::to_string(tag_texts.size()) + " tags were given ('" + dim_tags + "')");
    std::vector<AxisTag> tags;
    int vector_axis = -1;
    for (size_t d = 0; d < tag_texts.size(); ++d) {
      tags.push_back(parse_axis_tag(k, what, name, tag_texts[d]));
      if (tags.back().kind != AxisTag::Vec) continue;
      if (vector_axis >= 0) refuse(k, what, "array '" + name + "' has two vec axes; one vector axis per array");
      vector_axis = int(d);
    }
    a->strides = strides_of(k, what, *a, tags);
    auto c_order = row_major_strides(a->shape);
    bool is_c_order = true;
    for (size_t d = 0; d < c_order.size(); ++d) is_c_order &= simplify(c_order[d]).same_as(simplify(a->strides[d]));
    if (is_c_order) a->strides.clear();  // C order: printed and serialized as the plain declaration
    a->vector_axis = vector_axis;
    if (vector_axis >= 0) {
      std::string problem = vector_axis_problem(*a, vector_axis);
      if (!problem.empty()) refuse(k, what, "array '" + name + "': " + problem);
    }
  }
  return r;
}

namespace {

// Rewrites each access of the named arrays: index `axis` becomes two.
struct SplitAxisAccesses : ExprMutator {
  const std::set<std::string>& names;
  int axis;
  Expr count;
  bool fortran;
  SplitAxisAccesses(const std::set<std::string>& n, int a, Expr c, bool f) : names(n), axis(a), count(std::move(c)), fortran(f) {}

  Expr mutate_subscript(const Subscript& s, const Expr& self) override {
    Expr inner = ExprMutator::mutate_subscript(s, self);
    if (!names.count(s.name)) return inner;
    std::vector<Expr> idx = inner.as<Subscript>()->indices;
    Expr e = idx[size_t(axis)];
    Type t = e.type().known() ? e.type() : count.type();
    Expr outer = simplify(make_binary(BinOp::FloorDiv, e, count, t));
    Expr in = simplify(make_binary(BinOp::Mod, e, count, t));
    idx[size_t(axis)] = fortran ? in : outer;
    idx.insert(idx.begin() + axis + 1, fortran ? outer : in);
    return make_subscript(s.name, idx, s.type);
  }
};

LoopKernel split_axis(const LoopKernel& k, const std::vector<std::string>& names, int axis, int64_t count, bool fortran) {
  const std::string what = "split_array_axis(axis " + std::to_string(axis) + ", count " + std::to_string(count) + ")";
  if (count < 1) refuse(k, what, "the count is a positive integer");
  if (names.empty()) refuse(k, what, "no array named");
  LoopKernel r = k;
  Type it = k.options.index_dtype;
  Expr c = make_int(count, it);
  auto outer_extent = [&](const Expr& extent) {
    return simplify(make_binary(BinOp::FloorDiv, make_binary(BinOp::Add, extent, make_int(count - 1, it), it), c, it));
  };
  auto split_shape = [&](std::vector<Expr>& shape, const std::string& name) {
    if (axis < 0 || size_t(axis) >= shape.size())
      refuse(k, what, "array '" + name + "' has " + std::to_string(shape.size()) + " axes; there is no axis " + std::to_string(axis));
    Expr outer = outer_extent(shape[size_t(axis)]);
    shape[size_t(axis)] = fortran ? c : outer;
    shape.insert(shape.begin() + axis + 1, fortran ? outer : c);
  };
  std::set<std::string> split;
  for (auto& name : names) {
    if (!split.insert(name).second) refuse(k, what, "'" + name + "' is named twice");
    bool found = false;
    for (auto& a : r.arguments.edit()) {
      if (a.name != name) continue;
      found = true;
      if (a.kind != Argument::Array) refuse(k, what, "'" + name + "' is a scalar, not an array");
      if (a.vector_axis >= 0) refuse(k, what, "array '" + name + "' has a vec axis (tag_array_axes): split it before tagging");
      std::vector<Expr> strides = a.element_strides();
      Expr s = strides[size_t(axis < int(strides.size()) && axis >= 0 ? axis : 0)];
      split_shape(a.shape, name);
      Expr outer_stride = simplify(make_binary(BinOp::Mul, c, s, it));
      strides[size_t(axis)] = fortran ? s : outer_stride;
      strides.insert(strides.begin() + axis + 1, fortran ? outer_stride : s);
      a.strides = strides;
      auto c_order = row_major_strides(a.shape);
      bool is_c_order = true;
      for (size_t d = 0; d < c_order.size(); ++d) is_c_order &= simplify(c_order[d]).same_as(simplify(a.strides[d]));
      if (is_c_order) a.strides.clear();
    }
    if (!found) {
      auto t = r.temporaries.edit().find(name);
      if (t == r.temporaries.edit().end()) {
        std::vector<std::string> known;
        for (auto& x : k.arguments) known.push_back(x.name);
        for (auto& [n, x] : k.temporaries) known.push_back(n);
        refuse(k, what, "no array argument or temporary '" + name + "'" + did_you_mean(name, known));
      }
      split_shape(t->second.shape, name);  // (temporaries stay in C order)
    }
  }
  SplitAxisAccesses rewrite(split, axis, c, fortran);
  for (auto& insn : r.instructions.edit()) {
    if (insn.kind == Instruction::Assign) {
      insn.lhs = rewrite.mutate(insn.lhs);
      insn.rhs = rewrite.mutate(insn.rhs);
    }
    for (auto& p : insn.predicates) p = rewrite.mutate(p);
  }
  for (auto& [n, rule] : r.substitutions.edit()) rule.body = rewrite.mutate(rule.body);
  if (r.original) {
    // (the kernel as written has the arguments, not the temporaries transformations made)
    std::vector<std::string> there;
    for (auto& n : names)
      if (r.original->find_argument(n) || r.original->find_temporary(n)) there.push_back(n);
    if (!there.empty()) r.original = std::make_shared<const LoopKernel>(split_axis(*r.original, there, axis, count, fortran));
  }
  return r;
}

}  // namespace

LoopKernel split_array_axis(const LoopKernel& k, const std::string& array_names, int axis_nr, int64_t count, const std::string& order) {
  if (order != "C" && order != "F" && order != "c" && order != "f")
    refuse(k, "split_array_axis", "order is 'C' (the outer axis first) or 'F' (the inner axis first), got '" + order + "'");
  return split_axis(k, transforms::name_list(array_names), axis_nr, count, order == "F" || order == "f");
}

namespace {
// Each named temporary of r (a copy of k) given to `change`; an argument or
// an unknown name refused (`arguments_why`: why an argument cannot be).
void for_each_temporary(const LoopKernel& k, LoopKernel& r, const std::string& what, const std::string& temporaries,
                        const std::string& arguments_why, const std::function<void(const std::string&, Temporary&)>& change) {
  auto names = transforms::name_list(temporaries);
  if (names.empty()) refuse(k, what, "no temporary named");
  for (auto& name : names) {
    auto t = r.temporaries.edit().find(name);
    if (t == r.temporaries.edit().end()) {
      if (k.find_argument(name)) refuse(k, what, "'" + name + "' is an argument; " + arguments_why);
      std::vector<std::string> known;
      for (auto& [n, x] : k.temporaries) known.push_back(n);
      refuse(k, what, "no temporary '" + name + "'" + did_you_mean(name, known));
    }
    change(name, t->second);
  }
}
}  // namespace

LoopKernel pad_array_axis(const LoopKernel& k, const std::string& temporaries, int axis_nr, int64_t padding) {
  const std::string what = "pad_array_axis(axis " + std::to_string(axis_nr) + ", padding " + std::to_string(padding) + ")";
  if (padding < 0) refuse(k, what, "the padding is a count of elements, at least 0");
  LoopKernel r = k;
  Type it = k.options.index_dtype;
  for_each_temporary(k, r, what, temporaries, "its layout is the caller's (tag_array_axes gives it strides)", [&](const std::string& name, Temporary& t) {
    if (axis_nr < 0 || size_t(axis_nr) >= t.shape.size())
      refuse(k, what, "temporary '" + name + "' has " + std::to_string(t.shape.size()) + " axes; there is no axis " + std::to_string(axis_nr));
    if (!t.double_buffered_in.empty() && axis_nr == 0) refuse(k, what, "axis 0 of temporary '" + name + "' is its copies (double_buffer)");
    t.shape[size_t(axis_nr)] = simplify(make_binary(BinOp::Add, t.shape[size_t(axis_nr)], make_int(padding, it), it));
  });
  return r;
}

LoopKernel swizzle_array(const LoopKernel& k, const std::string& temporaries, int64_t bytes) {
  const std::string what = "swizzle_array(" + std::to_string(bytes) + " bytes)";
  if (bytes != 128 && bytes != 0) refuse(k, what, "the swizzle is 128 (bytes, the 16-byte pieces of each 128-byte row) or 0 (none)");
  LoopKernel r = k;
  for_each_temporary(k, r, what, temporaries, "only temporaries in local memory are swizzled", [&](const std::string& name, Temporary& t) {
    if (t.space != AddressSpace::Local)
      refuse(k, what, "temporary '" + name + "' is not in local memory (a swizzle spreads shared-memory rows over the banks)");
    int eb = t.dtype.known() ? t.dtype.bytes() : 0;
    if (eb && (eb > 16 || 16 % eb != 0))
      refuse(k, what, "temporary '" + name + "' has " + std::to_string(eb) + "-byte elements; a swizzle moves 16-byte pieces");
    t.swizzle_bytes = int(bytes);
  });
  return r;
}

void register_layout_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"tag_array_axes",
           "How array arguments' axes lie in memory, one tag per axis: c/f (C or Fortran order), N0, N1, ... (nesting "
           "levels, N0 fastest), stride:K, vec (a vector axis of 2 or 4 lanes: its `vec` accesses move as one float2/"
           "float4, or the kernel is refused with the reason). A temporary's axes reorder (c, f, N<k> only). loopy's tag_array_axes.",
           {TransformParam{"ary_names", TransformParam::String, true, "array arguments or temporaries, comma-separated"}.of(TransformParam::Type::Arrays),
            TransformParam{"dim_tags", TransformParam::Text, true, "one tag per axis, comma-separated ('N1,N0', 'c,vec', 'stride:1,stride:n')"}.of(TransformParam::Type::Text)},
           [](const LoopKernel& k, const TransformArgs& a) { return tag_array_axes(k, a.str("ary_names"), a.str("dim_tags")); }});
  reg.add({"pad_array_axis",
           "Loom: one axis of local or private temporaries grows by `padding` elements that nothing reads or writes, so the "
           "axes before it are that much further apart (add_prefetch's padding, on any axis; TVM's storage_align): rows of "
           "a tile that would share shared-memory banks are skewed across them.",
           {P{"temporaries", P::String, true, "temporaries, comma-separated"}.of(P::Type::Names),
            P{"axis_nr", P::Int, true, "the axis to grow (0 is the first)"}.of(P::Type::Int).at_least(0),
            P{"padding", P::Int, true, "elements added to the axis' extent"}.of(P::Type::Int).at_least(0)},
           [](const LoopKernel& k, const TransformArgs& a) {
             return pad_array_axis(k, a.str("temporaries"), int(a.integer("axis_nr")), a.integer("padding"));
           }});
  reg.add({"swizzle_array",
           "Loom: the 16-byte pieces of each 128-byte row of local temporaries are XOR-swizzled by the row's place in its "
           "1024-byte block (CUTLASS's Swizzle<3,4,3>; wgmma's 128-byte swizzle mode): a tile whose rows are 128 bytes "
           "long is then written along its rows and read down its columns without bank conflicts. Only addresses change; "
           "the CPU target and the interpreter keep the plain layout.",
           {P{"temporaries", P::String, true, "local temporaries, comma-separated"}.of(P::Type::Names),
            P{"bytes", P::Int, false, "128 (the swizzle), or 0 (none)"}.one_of({"128", "0"}).otherwise("128")},
           [](const LoopKernel& k, const TransformArgs& a) { return swizzle_array(k, a.str("temporaries"), a.integer("bytes")); }});
  reg.add({"split_array_axis",
           "One axis of arrays (arguments or temporaries) becomes two: outer ceil(extent / count) and inner count, in C order "
           "(outer first) or F order; accesses a[e] become a[e // count, e % count]. Arguments keep their memory layout "
           "(loopy's split_array_axis).",
           {P{"array_names", P::String, true, "arrays, comma-separated"}.of(P::Type::Names),
            P{"axis_nr", P::Int, true, "the axis to split (0 is the first)"}.of(P::Type::Int).at_least(0),
            P{"count", P::Int, true, "the inner axis' extent"}.of(P::Type::Int).at_least(1),
            P{"order", P::String, false, "C: the outer axis first; F: the inner first"}.one_of({"C", "F"}).otherwise("C")},
           [](const LoopKernel& k, const TransformArgs& a) {
             return split_array_axis(k, a.str("array_names"), int(a.integer("axis_nr")), a.integer("count"),
                                     a.has("order") ? a.str("order") : "C");
           },
           /*changes_interface=*/true});
}

}  // namespace loom
