// fuse_kernels (loopy's): the fused kernel runs what the kernels run, in
// order, checked on the CPU target against the same instructions written as
// one kernel, at sizes that are no multiple of anything; inames and
// arguments of one name are shared, colliding temporaries and ids renamed,
// data_flow orders writers before readers; refusals name the reason.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::error_of;

TEST(FuseKernels, RunsWhatTheKernelsRunInOrder) {
  LoopKernel k1 = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "a[i, j] = 2 * b[i, j] {id=w}", {"a: float32[n, m], b: float32[n, m]"}, "twice");
  LoopKernel k2 = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "<> t = a[i, j] + 1 {id=w}\nc[i, j] = t * t {dep=w}",
                              {"a: float32[n, m], c: float32[n, m]"}, "square");
  LoopKernel f = fuse_kernels({k1, k2}, {}, {DataFlow{"a", 0, 1}});
  EXPECT_EQ(f.name, "twice_and_square");
  EXPECT_EQ(f.domains.size(), 1u);  // (one domain: the inames are shared)
  ASSERT_EQ(f.instructions.size(), 3u);
  EXPECT_EQ(f.instructions[1].id, "w_0");  // k2's `w`, renamed; its reader follows
  EXPECT_TRUE(f.instructions[2].depends_on.count("w_0"));
  EXPECT_TRUE(f.instructions[1].depends_on.count("w"));  // data_flow: a's writer first
  LoopKernel by_hand = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"},
                                   "a[i, j] = 2 * b[i, j] {id=w}\n<> t = a[i, j] + 1 {id=w_0, dep=w}\nc[i, j] = t * t {dep=w_0}",
                                   {"a: float32[n, m], b: float32[n, m], c: float32[n, m]"}, "both");
  for (auto& p : std::vector<std::map<std::string, int64_t>>{{{"n", 13}, {"m", 7}}, {{"n", 1}, {"m", 30}}})
    EXPECT_EQ(loom::testing::compare_kernels(by_hand, f, p), "");
  // a transformation of the fused kernel runs right too
  LoopKernel t = apply_transforms(f, parse_transform_script("split_iname i 4 outer_tag=g.0 inner_tag=l.0\n"));
  EXPECT_EQ(loom::testing::compare_kernels(by_hand, t, {{"n", 13}, {"m", 7}}), "");
}

TEST(FuseKernels, TemporariesOfOneNameStayApartAndRefusals) {
  LoopKernel k3 = make_kernel({"{[i]: 0 <= i < n}"}, "<> t = x[i] + 1\ny[i] = t", {"x: float32[n], y: float32[n]"}, "k3");
  LoopKernel k4 = make_kernel({"{[k]: 0 <= k < n}"}, "<> t = x[k] * 3\nz[k] = t", {"x: float32[n], z: float32[n]"}, "k4");
  LoopKernel f = fuse_kernels({k3, k4});
  EXPECT_EQ(f.temporaries.size(), 2u);  // t and t_0
  EXPECT_EQ(f.domains.size(), 2u);      // (no shared iname: two domains)
  LoopKernel g = fuse_kernels({k3, k4}, {"_a", "_b"});
  EXPECT_TRUE(g.find_temporary("t_a") && g.find_temporary("t_b"));
  LoopKernel by_hand = make_kernel({"{[i]: 0 <= i < n}", "{[k]: 0 <= k < n}"}, "<> t = x[i] + 1\ny[i] = t\n<> u = x[k] * 3\nz[k] = u",
                                   {"x: float32[n], y: float32[n], z: float32[n]"}, "both");
  EXPECT_EQ(loom::testing::compare_kernels(by_hand, g, {{"n", 11}}), "");
  EXPECT_NE(error_of([&] { fuse_kernels({k3, k4}, {"_a"}); }).find("1 suffixes for 2 kernels"), std::string::npos);
  EXPECT_NE(error_of([&] { fuse_kernels({k3, k4}, {}, {DataFlow{"z", 0, 1}}); }).find("kernel 0 does not write 'z'"), std::string::npos);
  EXPECT_NE(error_of([&] { fuse_kernels({k3, k4}, {}, {DataFlow{"y", 0, 2}}); }).find("beyond the 2 given"), std::string::npos);
  LoopKernel k5 = make_kernel({"{[i]: 0 <= i < n}"}, "p[i] = 1", {"p: float32[n]"}, "k5");
  LoopKernel k6 = make_kernel({"{[i]: 0 <= i < m}"}, "q[i] = 2", {"q: float32[m]"}, "k6");
  std::string e = error_of([&] { fuse_kernels({k5, k6}); });
  EXPECT_NE(e.find("do not agree on the domain of inames i"), std::string::npos) << e;
  LoopKernel k7 = make_kernel({"{[i]: 0 <= i < n}"}, "x[i] = 1", {"x: float64[n]"}, "k7");
  e = error_of([&] { fuse_kernels({k3, k7}); });
  EXPECT_NE(e.find("argument 'x' is declared differently"), std::string::npos) << e;
  EXPECT_NE(error_of([] { fuse_kernels({}); }).find("no kernels given"), std::string::npos);
  // one rule name, two definitions (here the same body over other parameters)
  LoopKernel r1 = make_kernel({"{[i]: 0 <= i < n}"}, "f(x) := x * 2\np[i] = f(i)", {"p: float32[n]"}, "r1");
  LoopKernel r2 = make_kernel({"{[i]: 0 <= i < n}"}, "f(x, y) := x * 2\nq[i] = f(i, i)", {"q: float32[n]"}, "r2");
  e = error_of([&] { fuse_kernels({r1, r2}); });
  EXPECT_NE(e.find("substitution rule 'f' is defined differently"), std::string::npos) << e;
}
