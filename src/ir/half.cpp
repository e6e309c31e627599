// float16 / bfloat16 <-> float conversions (round to nearest even).
#include "loom/half.h"

#include <cstring>

namespace loom {

namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

uint16_t float_to_half_bits(float f) {
  uint32_t x = bits_of(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));  // inf, quiet NaN
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00);  // overflow: inf
  if (e <= 0) {                                  // subnormal or zero
    if (e < -10) return sign;
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return uint16_t(sign | h);
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return float_of(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return float_of(sign);
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while (!(mant & 0x400));
    return float_of(sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13));
  }
  return float_of(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff)) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float bfloat16_bits_to_float(uint16_t b) { return float_of(uint32_t(b) << 16); }

float round_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;  // inf, NaN
  u = (u + 0x1000u) & 0xffffe000u;                 // (the sign bit apart: ties go away from zero)
  return float_of(u);
}

float trunc_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;  // inf, NaN
  return float_of(u & 0xffffe000u);
}

}  // namespace loom
