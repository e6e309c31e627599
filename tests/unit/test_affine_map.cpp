// affine_map_inames (transforms/affine_map.cpp) and the wavefronts it makes:
// PolyBench's seidel-2d and nussinov, whose loops all carry dependences as
// written, skewed so that one new loop (the wavefront's time) runs on the
// host and the others on blocks and threads — checked against the kernel as
// written on random inputs at sizes no tile divides, with empty and tiny
// domains; a wrong skew refused by the whole-program order check
// (check_program_order); the map's own refusals with their reasons.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/preprocess.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::polybench;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel transformed(const LoopKernel& k, const std::string& script) { return apply_transforms(k, parse_transform_script(script)); }

}  // namespace

// seidel-2d's points of one w = 4 t + 2 i + j depend only on smaller w: w on
// the host, i on blocks and threads, t sequential in each thread.
TEST(AffineMapInames, SeidelRunsAsAWavefrontOfLaunches) {
  LoopKernel k = polybench("seidel_2d");
  LoopKernel skewed = transformed(k, "affine_map_inames j w \"w = 4*t + 2*i + j\"\n");
  EXPECT_EQ(skewed.domains.size(), 1u);
  EXPECT_EQ(skewed.domains[0].inames(), (std::vector<std::string>{"w", "t", "i"}));
  LoopKernel t = transformed(skewed, "add_global_barrier id:insn_0 within=w\nsplit_iname i 32 outer_tag=g.0 inner_tag=l.0\n");
  GeneratedKernel g = generate(t);
  EXPECT_NE(host_steps_text(g.host_steps).find("for w in"), std::string::npos) << host_steps_text(g.host_steps);
  check_transformed(k, t, {{{"tsteps", 5}, {"n", 37}}, {{"tsteps", 0}, {"n", 5}}, {{"tsteps", 2}, {"n", 3}}, {{"tsteps", 3}, {"n", 70}}});
}

// nussinov's table[i][j] (i = n - 1 - ir) depends on shorter intervals
// only: w = j + ir (j - i, shifted) on the host, ir across threads, the k
// loop (whose bounds use j) rewritten in w and kept apart, so points with
// an empty k range still run.
TEST(AffineMapInames, NussinovRunsDiagonalByDiagonal) {
  LoopKernel k = polybench("nussinov");
  LoopKernel t = transformed(k, "affine_map_inames j w \"w = j + ir\"\nadd_global_barrier id:insn_4 within=w\n"
                                "split_iname ir 32 outer_tag=g.0 inner_tag=l.0\n");
  ASSERT_EQ(t.domains.size(), 2u);
  EXPECT_EQ(t.domains[1].inames(), (std::vector<std::string>{"k"}));
  check_transformed(k, t, {{{"n", 37}}, {{"n", 1}}, {{"n", 2}}, {{"n", 64}}});
}

// A map that changes nothing's order runs as the kernel does; one whose
// host loop runs the points in an order the dependences forbid is refused
// by the whole-program check (the launches answer to no launch of the
// kernel as written), naming the reversed pair.
TEST(AffineMapInames, AWrongWavefrontIsRefused) {
  LoopKernel k = polybench("seidel_2d");
  check_transformed(k, transformed(k, "affine_map_inames j w \"w = j\"\n"), {{{"tsteps", 3}, {"n", 9}}});
  LoopKernel wrong = transformed(k, "affine_map_inames j w \"w = j\"\nadd_global_barrier id:insn_0 within=w\n");
  std::string e = error_of([&] { generate(wrong); });
  EXPECT_NE(e.find("the transformations reorder dependent iterations of sequential loops (data 'A')"), std::string::npos) << e;
  // w = 2 t + i + j puts dependent points of one w on different blocks
  LoopKernel racing = transformed(k, "affine_map_inames j w \"w = 2*t + i + j\"\nadd_global_barrier id:insn_0 within=w\n"
                                     "split_iname i 32 outer_tag=g.0 inner_tag=l.0\n");
  e = error_of([&] { generate(racing); });
  EXPECT_NE(e.find("reads A at an element that another block writes"), std::string::npos) << e;
}

TEST(AffineMapInames, RefusalsNameTheInamesAndTheReason) {
  LoopKernel k = polybench("seidel_2d");
  auto refused = [&](const std::string& script, const std::string& part) {
    std::string e = error_of([&] { transformed(k, script); });
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  refused("affine_map_inames j w \"w = 2*j\"\n", "do not give 'j' as an affine expression with integer coefficients");
  refused("affine_map_inames j,i w \"w = j + i\"\n", "give as many new inames as old ones (2 old, 1 new)");
  refused("affine_map_inames q w \"w = q\"\n", "no iname 'q'");
  refused("affine_map_inames j i \"i = j\"\n", "the name 'i' is taken");
  refused("affine_map_inames j w \"w = j + \"\n", "are not affine equations in the inames and parameters");
  refused("split_iname j 4 outer_tag=g.0\naffine_map_inames j_outer w \"w = j_outer\"\n", "is tagged 'g.0'; map it before tagging");
  LoopKernel sum = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < n}"}, "out[i] = sum(j, a[i, j])", {"a: float32[n, n], out: float32[n], n: int32"}, "rows");
  std::string e = error_of([&] { transformed(sum, "affine_map_inames j w \"w = i + j\"\n"); });
  EXPECT_NE(e.find("iname 'j' is reduced over in 'insn_0'"), std::string::npos) << e;
  // jacobi-2d's first sweep runs in t but not in the second sweep's j2: it
  // would run as many iterations of t_w as t + j2 takes (once accepted, and
  // wrong; found by the whole-program random schedules)
  e = error_of([&] { transformed(polybench("jacobi_2d"), "affine_map_inames t t_w \"t_w = t + j2\"\n"); });
  EXPECT_NE(e.find("instruction 'insn_0' runs in 't' but not in 'j2', which the equations name"), std::string::npos) << e;
}
