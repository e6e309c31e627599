// Type names, parsing and promotion.
#include "loom/type.h"

#include <string>

namespace loom {

namespace {
struct Named {
  const char* name;
  ScalarKind kind;
};
constexpr Named kNames[] = {
    {"bool", ScalarKind::Bool},       {"int8", ScalarKind::Int8},         {"int16", ScalarKind::Int16},
    {"int32", ScalarKind::Int32},     {"int64", ScalarKind::Int64},       {"uint8", ScalarKind::UInt8},
    {"uint16", ScalarKind::UInt16},   {"uint32", ScalarKind::UInt32},     {"uint64", ScalarKind::UInt64},
    {"float16", ScalarKind::Float16}, {"bfloat16", ScalarKind::BFloat16}, {"float32", ScalarKind::Float32},
    {"float64", ScalarKind::Float64},
};
// Aliases loopy/numpy users type.
constexpr Named kAliases[] = {{"float", ScalarKind::Float32}, {"double", ScalarKind::Float64},
                              {"int", ScalarKind::Int32},     {"half", ScalarKind::Float16},
                              {"fp32", ScalarKind::Float32},  {"fp64", ScalarKind::Float64}};
}  // namespace

std::vector<std::string> Type::names() {
  std::vector<std::string> r;
  for (const auto& n : kNames) r.push_back(n.name);
  return r;
}

int Type::bits() const {
  switch (kind) {
    case ScalarKind::Bool: return 8;
    case ScalarKind::Int8: case ScalarKind::UInt8: return 8;
    case ScalarKind::Int16: case ScalarKind::UInt16: case ScalarKind::Float16: case ScalarKind::BFloat16: return 16;
    case ScalarKind::Int32: case ScalarKind::UInt32: case ScalarKind::Float32: return 32;
    case ScalarKind::Int64: case ScalarKind::UInt64: case ScalarKind::Float64: return 64;
    case ScalarKind::Unknown: return 0;
  }
  return 0;
}

std::string Type::name() const {
  std::string base = "unknown";
  for (const auto& n : kNames)
    if (n.kind == kind) base = n.name;
  return lanes == 1 ? base : base + "x" + std::to_string(lanes);
}

std::optional<Type> Type::parse(std::string_view s) {
  int lanes = 1;
  // "float32x4": vector of 4
  if (auto x = s.rfind('x'); x != std::string_view::npos && x + 1 < s.size() && x > 0 &&
                             s.substr(x + 1).find_first_not_of("0123456789") == std::string_view::npos) {
    std::string digits(s.substr(x + 1));
    if (digits.size() > 4) return std::nullopt;  // no vector is that wide (and stoi would throw)
    lanes = std::stoi(digits);
    s = s.substr(0, x);
  }
  for (const auto& n : kNames)
    if (s == n.name) return Type(n.kind, lanes);
  for (const auto& n : kAliases)
    if (s == n.name) return Type(n.kind, lanes);
  return std::nullopt;
}

bool has_vector_type(Type t, int64_t lanes) {
  bool ok_kind = t.kind == ScalarKind::Float32 || t.kind == ScalarKind::Int32 || t.kind == ScalarKind::UInt32 ||
                 t.kind == ScalarKind::Float64 || t.kind == ScalarKind::Int64 || t.kind == ScalarKind::UInt64;
  int64_t bytes = lanes * t.bytes();
  return ok_kind && t.lanes == 1 && (bytes == 8 || bytes == 16);
}

Type promote(Type a, Type b) {
  if (!a.known()) return b;
  if (!b.known()) return a;
  int lanes = a.lanes > b.lanes ? a.lanes : b.lanes;
  if (a.is_float() != b.is_float()) return Type((a.is_float() ? a : b).kind, lanes);
  if (a.is_bool()) return Type(b.kind, lanes);
  if (b.is_bool()) return Type(a.kind, lanes);
  if (a.bits() != b.bits()) return Type((a.bits() > b.bits() ? a : b).kind, lanes);
  if (a.is_float()) {  // float16 vs bfloat16: no exact common type of 16 bits
    return a.kind == b.kind ? Type(a.kind, lanes) : Type(ScalarKind::Float32, lanes);
  }
  return Type((a.is_signed_int() ? a : b).kind, lanes);
}

}  // namespace loom
