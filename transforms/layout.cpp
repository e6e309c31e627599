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
// (src/codegen/vectorize.cpp).
#include <algorithm>

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
      if (k.find_temporary(name))
        refuse(k, what, "'" + name + "' is a temporary; Loom lays temporaries out in C order (tag the axes of arguments)");
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

void register_layout_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"tag_array_axes",
           "How array arguments' axes lie in memory, one tag per axis: c/f (C or Fortran order), N0, N1, ... (nesting "
           "levels, N0 fastest), stride:K, vec (a vector axis of 2 or 4 lanes: its `vec` accesses move as one float2/"
           "float4, or the kernel is refused with the reason). loopy's tag_array_axes.",
           {TransformParam{"ary_names", TransformParam::String, true, "array arguments, comma-separated"}.of(TransformParam::Type::Arrays),
            TransformParam{"dim_tags", TransformParam::Text, true, "one tag per axis, comma-separated ('N1,N0', 'c,vec', 'stride:1,stride:n')"}.of(TransformParam::Type::Text)},
           [](const LoopKernel& k, const TransformArgs& a) { return tag_array_axes(k, a.str("ary_names"), a.str("dim_tags")); }});
}

}  // namespace loom
