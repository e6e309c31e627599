// libFuzzer target: the kernel-language front end and everything a kernel
// file drives (its transforms, preprocessing, code generation). Any input must
// end in a kernel or a Loom error (ParseError, TransformError, KernelError,
// ...), never a crash, a hang or a sanitizer report. Built with LOOM_FUZZ=ON
// (clang); run: build-fuzz/fuzz_kernel_parser tests/fuzz/corpus/kernel
#include <cstddef>
#include <cstdint>
#include <string>

#include "loom/codegen.h"
#include "loom/error.h"
#include "loom/parser.h"
#include "loom/transforms.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // long inputs explore nothing short ones do not, and slow the run
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    loom::KernelFile f = loom::parse_kernel_text(text, "<fuzz>");
    loom::LoopKernel k = loom::apply_transforms(f.kernel, f.transforms);
    loom::generate(k);
  } catch (const loom::Error&) {
  } catch (const loom::DomainSyntaxError&) {
  }
  return 0;
}
