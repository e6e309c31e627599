// save_and_reload_temporaries: private temporaries that cross a global
// barrier become global ones with an element per thread, checked on the CPU
// target against the same kernel written with a global temporary by hand
// (the kernel before the step is refused: its per-thread value would cross
// a launch), at sizes that are no multiple of the block; refusals name the
// reason; kernels without such temporaries are left as they are.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

namespace {
LoopKernel scheduled(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }
}  // namespace

TEST(SaveAndReload, PrivateValuesCrossAGlobalBarrierThroughGlobalMemory) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 3}"},
                             "<> s = 2 * a[i] {id=w}\n<> v[j] = a[i] * j {id=wv}\n... gbarrier {id=g, dep=w:wv}\nout[i] = s + v[0] + v[1] + v[2] {dep=g}",
                             {"a: float32[n], out: float32[n]"}, "sr");
  EXPECT_NE(error_of([&] { generate(scheduled(k, "split_iname i 32 outer_tag=g.0 inner_tag=l.0\n")); }).find("crosses launches"), std::string::npos);
  LoopKernel t = scheduled(k, "split_iname i 32 outer_tag=g.0 inner_tag=l.0\nsave_and_reload_temporaries\n");
  const Temporary* s = t.find_temporary("s");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->space, AddressSpace::Global);
  EXPECT_EQ(s->shape.size(), 2u);                          // one element per thread: i_outer, i_inner
  EXPECT_EQ(t.find_temporary("v")->shape.size(), 3u);      // and v's own axis after them
  EXPECT_EQ(s->dtype.name(), "float32");                   // (inferred: a global array is declared with one)
  LoopKernel by_hand = parse_kernel_text(
                           "kernel by_hand\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < 3}\narguments:\n  a: float32[n], out: float32[n]\n"
                           "temporaries:\n  s: float32[n] global\n  v: float32[n, 3] global\ninstructions:\n"
                           "  s[i] = 2 * a[i] {id=w}\n  v[i, j] = a[i] * j {id=wv}\n  ... gbarrier {id=g, dep=w:wv}\n"
                           "  out[i] = s[i] + v[i, 0] + v[i, 1] + v[i, 2] {dep=g}\n")
                           .kernel;
  for (int64_t n : {1, 31, 100})
    EXPECT_EQ(loom::testing::compare_kernels(by_hand, t, {{"n", n}}), "") << n;
  // nothing crosses a barrier: the kernel is left as it is
  LoopKernel plain = make_kernel({"{[i]: 0 <= i < n}"}, "<> s = 2 * a[i]\nout[i] = s", {"a: float32[n], out: float32[n]"}, "plain");
  EXPECT_EQ(save_and_reload_temporaries(plain).str(), plain.str());
  // a local temporary across the barrier is refused with the reason
  LoopKernel local = parse_kernel_text(
                         "kernel loc\ndomains:\n  {[i]: 0 <= i < 32}\narguments:\n  a: float32[32], out: float32[32]\n"
                         "temporaries:\n  tile: float32[32] local\ninstructions:\n"
                         "  tile[i] = a[i] {id=w}\n  ... gbarrier {id=g, dep=w}\n  out[i] = tile[31 - i] {dep=g}\n")
                         .kernel;
  std::string e = error_of([&] { save_and_reload_temporaries(scheduled(local, "tag_inames i:l.0\n")); });
  EXPECT_NE(e.find("local temporary 'tile' crosses a global barrier"), std::string::npos) << e;
}
