// float16 (IEEE binary16) and bfloat16 conversions for host arrays and the
// reference interpreter: round to nearest even, NaN kept quiet, infinities
// and subnormals handled.
#pragma once
#include <cstdint>

namespace loom {

uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat16_bits(float f);
float bfloat16_bits_to_float(uint16_t b);
// f with its mantissa rounded to TF32's 10 bits, to nearest with ties away
// from zero (PTX cvt.rna.tf32.f32); infinities and NaN unchanged.
float round_tf32(float f);
// f with its 13 low mantissa bits dropped (toward zero): the TF32 value the
// warpgroup tensor cores (wgmma) read from a float32 tile in shared memory;
// infinities and NaN unchanged.
float trunc_tf32(float f);

}  // namespace loom
