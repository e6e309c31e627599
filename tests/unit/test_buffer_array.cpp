// buffer_array: the buffer, its init and store instructions, the CPU oracle
// against the untransformed kernel (register tiles of a product, a
// read-modify-write accumulation, local buffers on the block's threads,
// init/store expressions), and the refusals.
#include <gtest/gtest.h>

#include <chrono>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel accumulate() {
  return parse_kernel_text(R"(
kernel acc
domains:
  {[i, k]: 0 <= i < n and 0 <= k < 5}
arguments:
  a: float32[n, 5]
  out: float32[n]
instructions:
  out[i] = out[i] + a[i, k] * (k + 1)
)")
      .kernel;
}

}  // namespace

TEST(BufferArray, RegisterTileOfAMatrixProduct) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])",
                             {"a: float32[n, l], b: float32[l, m], c: float32[n, m]", "..."}, "mm");
  LoopKernel t = split_iname(split_iname(k, "i", 4), "j", 2);
  LoopKernel b = buffer_array(t, "c", "i_inner, j_inner");
  const Temporary* buf = b.find_temporary("c_buf");
  ASSERT_NE(buf, nullptr);
  EXPECT_EQ(buf->space, AddressSpace::Private);
  EXPECT_EQ(buf->shape.size(), 2u);
  EXPECT_EQ(b.instructions.size(), 2u);  // the product, store (c is only written: no fill)
  check_transformed(k, b, {{{"n", 9}, {"m", 5}, {"l", 3}}, {{"n", 8}, {"m", 4}, {"l", 0}}});
}

// A buffer the sweep only writes, every element it stores unconditionally
// written, needs no fill (loopy always fills: the values are the same). The
// fill stays where the store would otherwise write back elements nobody
// wrote: holes between strided writes, a conditional write, a read.
TEST(BufferArray, AFillIsLeftOutOnlyWhereEveryStoredElementIsWritten) {
  auto fills = [](const LoopKernel& b) {
    for (auto& insn : b.instructions)
      if (insn.id.rfind("init_", 0) == 0) return true;
    return false;
  };
  auto kernel = [](const std::string& insn, const std::string& out_shape) {
    return split_iname(make_kernel({"{[i]: 0 <= i < n}"}, insn, {"a: float32[n], out: float32[" + out_shape + "]", "..."}, "w"), "i", 8);
  };
  std::vector<std::map<std::string, int64_t>> sizes = {{{"n", 21}}, {{"n", 8}}, {{"n", 3}}};
  // every element of the tile written once
  LoopKernel plain = kernel("out[i] = 2 * a[i]", "n");
  LoopKernel b = buffer_array(plain, "out", "i_inner");
  EXPECT_FALSE(fills(b));
  EXPECT_FALSE(b.has_iname("out_init_dim_0"));  // (the fill's loop went with it)
  check_transformed(kernel("out[i] = 2 * a[i]", "n"), b, sizes);
  // every other element: the holes keep the array's values
  LoopKernel strided = kernel("out[2 * i] = 2 * a[i]", "2 * n");
  b = buffer_array(strided, "out", "i_inner");
  EXPECT_TRUE(fills(b));
  check_transformed(strided, b, sizes);
  // a conditional write
  LoopKernel guarded = kernel("out[i] = 2 * a[i]  {if=a[i] > 0}", "n");
  b = buffer_array(guarded, "out", "i_inner");
  EXPECT_TRUE(fills(b));
  check_transformed(guarded, b, sizes);
  // a read of the array
  LoopKernel update = kernel("out[i] = out[i] + a[i]", "n");
  b = buffer_array(update, "out", "i_inner");
  EXPECT_TRUE(fills(b));
  check_transformed(update, b, sizes);
  // an init expression asks for the fill
  BufferOptions zero;
  zero.init_expression = "0";
  EXPECT_TRUE(fills(buffer_array(plain, "out", "i_inner", zero)));
}

TEST(BufferArray, ReadModifyWriteAccumulation) {
  LoopKernel k = accumulate();
  LoopKernel t = split_iname(k, "i", 8);
  LoopKernel b = buffer_array(t, "out", "i_inner, k");
  check_transformed(k, b, {{{"n", 21}}, {{"n", 8}}, {{"n", 1}}});
  // the buffer starts at zero and is added to the array at the end: the same sums
  BufferOptions o;
  o.init_expression = "0";
  o.store_expression = "base + buffer";
  check_transformed(k, buffer_array(t, "out", "i_inner, k", o), {{{"n", 21}}});
  // in local memory on the block's threads
  SplitOptions so;
  so.outer_tag = InameTag::parse("g.0");
  so.inner_tag = InameTag::parse("l.0");
  LoopKernel l = buffer_array(split_iname(k, "i", 16, so), "out", "i_inner, k");
  EXPECT_EQ(l.find_temporary("out_buf")->space, AddressSpace::Local);
  check_transformed(k, l, {{{"n", 37}}});
  // through the registry
  LoopKernel r = apply_transforms(k, parse_transform_script("split_iname i 8\nbuffer_array out i_inner,k temporary_scope=private\n"));
  check_transformed(k, r, {{{"n", 13}}});
}

TEST(BufferArray, Refusals) {
  LoopKernel k = split_iname(accumulate(), "i", 8);
  auto expect = [](const std::function<void()>& f, const std::string& part) {
    std::string e = error_of(f);
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  expect([&] { buffer_array(k, "zz", "i_inner"); }, "'zz' is not an array argument");
  expect([&] { buffer_array(k, "a", "i_inner, k"); }, "no instruction writes 'a' within the buffer inames");
  expect([&] { buffer_array(k, "out", "i_outer"); }, "depends on the parameters");
  BufferOptions bad;
  bad.init_expression = "base +";
  expect([&] { buffer_array(k, "out", "i_inner, k", bad); }, "init_expression does not parse");
  BufferOptions scope;
  scope.temporary_scope = "global";
  expect([&] { buffer_array(k, "out", "i_inner, k", scope); }, "temporary_scope 'global'");
}

// A chunked parametric range is a union of pieces with floor(n/4) in them; the
// convex hull of a buffer's footprint over it ran for minutes in isl (the CPU
// random schedules, LOOM_RANDOM_SEED=89, examples/triangular.loom). Its work
// is bounded now: refused at once, with the reason.
TEST(BufferArray, FootprintHullBeyondIslsWorkBoundIsRefusedAtOnce) {
  LoopKernel k = parse_kernel_text(R"(
kernel triangular
domains:
  {[i, j]: 0 <= i < n and 0 <= j < m}
  {[k]: 0 <= k <= j}
arguments:
  a: float32[n, m]
  s: float32[n, m]
instructions:
  s[i, j] = sum(k, a[i, k])
)")
                     .kernel;
  SplitOptions ilp;
  ilp.outer_tag = InameTag::parse("g.1");
  ilp.inner_tag = InameTag::parse("ilp");
  SplitOptions blocks;
  blocks.outer_tag = InameTag::parse("g.0");
  LoopKernel t = split_iname(chunk_iname(split_iname(k, "j", 2, ilp), "i", 4), "i_inner", 3, blocks);
  auto start = std::chrono::steady_clock::now();
  std::string e = error_of([&] { buffer_array(t, "s", "j_inner"); });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(e.find("convex hull of the footprint within its work bound"), std::string::npos) << e;
  EXPECT_LT(seconds, 20.0);  // (minutes before; about 0.1 s now)
}
