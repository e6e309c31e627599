// libFuzzer target: JSON kernel documents (loom/json.h) and what they drive
// (their transforms, preprocessing, code generation). Any input must end in a
// kernel or a Loom error (JsonError, ParseError, ...), never a crash, a hang
// or a sanitizer report. Built with LOOM_FUZZ=ON (clang); run:
// tools/fuzz-libfuzzer.sh json
#include <cstddef>
#include <cstdint>
#include <string>

#include "loom/codegen.h"
#include "loom/error.h"
#include "loom/json.h"
#include "loom/transforms.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    loom::KernelFile f = loom::kernel_file_from_json(text, "<fuzz>");
    loom::LoopKernel k = loom::apply_transforms(f.kernel, f.transforms);
    loom::generate(k);
    loom::kernel_from_json(loom::kernel_to_json(k), "<fuzz round trip>");
  } catch (const loom::Error&) {
  } catch (const loom::DomainSyntaxError&) {
  }
  return 0;
}
