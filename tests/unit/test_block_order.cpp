// group_blocks: the CUDA launch order of the blocks. The CUDA target launches
// one axis and maps it back to (g.0, g.1) in groups (printed, compiled); the
// result is the kernel's own on the CPU target; the option survives JSON and
// changes the kernel's hash; a grid with g.2 and a group below 1 are refused.
// (The GPU test GpuTransforms.GroupedBlocksCoverTheGridWithAShortLastGroup
// runs the mapping.)
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::compare_kernels;
using loom::testing::error_of;

namespace {
LoopKernel tiled(const std::string& extra) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "c[i, j] = 2 * a[i, j] + i - j", {"a: float32[n, m], c: float32[n, m]", "..."});
  return apply_transforms(k, parse_transform_script("split_iname i 4 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 32 outer_tag=g.0 inner_tag=l.0\n" + extra));
}
}  // namespace

TEST(BlockOrder, GroupedBlocksAreMappedFromOneAxis) {
  LoopKernel t = tiled("group_blocks 3\n");
  EXPECT_EQ(t.options.block_group, 3);
  std::string cuda = cuda::print_source(generate(t, TargetInfo::cuda("sm_80")));
  EXPECT_NE(cuda.find("loom_span = (loom_gy < 3 ? loom_gy : 3) * loom_gx"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("i_outer = loom_by"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("j_outer = loom_bx"), std::string::npos) << cuda;
  if (cuda::nvrtc_available()) EXPECT_GT(cuda::compile(cuda, "sm_80").cubin.size(), 0u);
  LoopKernel k = tiled("");
  for (auto [n, m] : {std::pair{27, 100}, {3, 5}}) EXPECT_EQ(compare_kernels(k, t, {{"n", n}, {"m", m}}), "");
  // the default order prints CUDA's own indices
  EXPECT_EQ(cuda::print_source(generate(tiled("group_blocks 1\n"), TargetInfo::cuda("sm_80"))).find("loom_bx"), std::string::npos);
}

TEST(BlockOrder, TheOptionTravelsAndRefusals) {
  LoopKernel t = tiled("group_blocks 8\n");
  EXPECT_EQ(kernel_from_json(kernel_to_json(t)).options.block_group, 8);
  EXPECT_NE(structural_hash(t), structural_hash(tiled("")));
  std::string e = error_of([&] { tiled("group_blocks 0\n"); });
  EXPECT_NE(e.find("group_blocks"), std::string::npos) << e;
  LoopKernel three = make_kernel({"{[b, i, j]: 0 <= b < 4 and 0 <= i < n and 0 <= j < m}"}, "c[b, i, j] = a[b, i, j]",
                                 {"a: float32[4, n, m], c: float32[4, n, m]", "..."});
  three = apply_transforms(three, parse_transform_script("tag_inames b:g.2\nsplit_iname i 4 outer_tag=g.1\nsplit_iname j 32 outer_tag=g.0 inner_tag=l.0\n"
                                                         "group_blocks 2\n"));
  e = error_of([&] { cuda::print_source(generate(three, TargetInfo::cuda("sm_80"))); });
  EXPECT_NE(e.find("group_blocks orders a grid of g.0 and g.1"), std::string::npos) << e;
}

// The arithmetic the printer writes (the text is pinned above): every block
// (bx, by) of every grid is taken by exactly one launched block, groups of
// G rows with a shorter last one, also where G exceeds the rows.
TEST(BlockOrder, TheMappingCoversEveryBlockOnce) {
  for (int64_t G = 1; G <= 9; ++G)
    for (int64_t gx = 1; gx <= 5; ++gx)
      for (int64_t gy = 1; gy <= 11; ++gy) {
        std::vector<int> hits(size_t(gx * gy), 0);
        for (int64_t pid = 0; pid < gx * gy; ++pid) {
          int64_t span = (gy < G ? gy : G) * gx, first = pid / span * G;
          int64_t rows = gy - first < G ? gy - first : G;
          int64_t by = first + pid % span % rows, bx = pid % span / rows;
          ASSERT_TRUE(bx >= 0 && bx < gx && by >= 0 && by < gy) << G << " " << gx << "x" << gy << " pid " << pid;
          ++hits[size_t(by * gx + bx)];
        }
        for (int h : hits) EXPECT_EQ(h, 1) << G << " " << gx << "x" << gy;
      }
}
