// libFuzzer target: the transformation-script reader and every registered
// transformation with whatever arguments the input gives, applied to a tiled
// matrix product, then code generation. Any input must end in a kernel or a
// Loom error. Built with LOOM_FUZZ=ON (clang); run:
//   build-fuzz/fuzz_transform_script tests/fuzz/corpus/script
#include <cstddef>
#include <cstdint>
#include <string>

#include "loom/codegen.h"
#include "loom/error.h"
#include "loom/parser.h"
#include "loom/transforms.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2048) return 0;
  static const loom::LoopKernel base = loom::make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                                                         "c[i, j] = sum(k, a[i, k] * b[k, j])",
                                                         {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto steps = loom::parse_transform_script(text, "<fuzz>");
    if (steps.size() > 12) return 0;
    loom::generate(loom::apply_transforms(base, steps));
  } catch (const loom::Error&) {
  } catch (const loom::DomainSyntaxError&) {
  }
  return 0;
}
