// Scalar element types of Loom kernels (bool, int8..uint64, float16, bfloat16,
// float32, float64) with a vector width. Types are small values: compare them
// with ==, name them with name(), parse them with Type::parse.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace loom {

enum class ScalarKind : uint8_t {
  Unknown, Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64
};

struct Type {
  ScalarKind kind = ScalarKind::Unknown;
  int lanes = 1;

  constexpr Type() = default;
  constexpr Type(ScalarKind k, int l = 1) : kind(k), lanes(l) {}

  bool known() const { return kind != ScalarKind::Unknown; }
  bool is_bool() const { return kind == ScalarKind::Bool; }
  bool is_float() const {
    return kind == ScalarKind::Float16 || kind == ScalarKind::BFloat16 ||
           kind == ScalarKind::Float32 || kind == ScalarKind::Float64;
  }
  bool is_int() const { return known() && !is_bool() && !is_float(); }
  bool is_signed_int() const {
    return kind == ScalarKind::Int8 || kind == ScalarKind::Int16 ||
           kind == ScalarKind::Int32 || kind == ScalarKind::Int64;
  }
  int bits() const;
  int bytes() const { return bits() == 1 ? 1 : bits() / 8; }
  std::string name() const;  // "float32", "int64", "float32x4"
  static std::optional<Type> parse(std::string_view name);
  static std::vector<std::string> names();  // the scalar dtypes' names ("bool", "int8", ..., "float64")

  friend bool operator==(Type a, Type b) { return a.kind == b.kind && a.lanes == b.lanes; }
  friend bool operator!=(Type a, Type b) { return !(a == b); }
};

namespace types {
inline constexpr Type unknown{};
inline constexpr Type boolean{ScalarKind::Bool};
inline constexpr Type int32{ScalarKind::Int32};
inline constexpr Type int64{ScalarKind::Int64};
inline constexpr Type float32{ScalarKind::Float32};
inline constexpr Type float64{ScalarKind::Float64};
}  // namespace types

// The type of a binary arithmetic operation on a and b (numpy-like promotion:
// float beats int, wider beats narrower, signed int beats unsigned of equal width).
Type promote(Type a, Type b);

// Whether `lanes` elements of scalar type t form one of CUDA's vector types
// (float2/float4, int2/int4, uint2/uint4, double2, longlong2, ...): 8 or 16
// bytes of 4- or 8-byte elements.
bool has_vector_type(Type t, int64_t lanes);

}  // namespace loom
