// add_prefetch and set_temporary_address_space: the effect (a temporary, a
// fetch over new inames on the block's threads, rewritten accesses, barriers
// placed by Loom), the CPU oracle against the untransformed kernel at
// multiple and non-multiple sizes, CUDA C that NVRTC compiles, and every
// refusal with its reason.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/preprocess.h"
#include "loom/transforms.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

size_t count(const std::string& text, const std::string& what) { return loom::testing::count_of(text, what); }

LoopKernel matmul() { return loom::testing::matmul_kernel(); }

LoopKernel tiled_matmul(int64_t t = 16) {
  LoopKernel k = matmul();
  SplitOptions gi, gj;
  gi.outer_tag = InameTag::parse("g.1");
  gi.inner_tag = InameTag::parse("l.1");
  gj.outer_tag = InameTag::parse("g.0");
  gj.inner_tag = InameTag::parse("l.0");
  k = split_iname(k, "i", t, gi);
  k = split_iname(k, "j", t, gj);
  return split_iname(k, "k", t);
}

}  // namespace

TEST(Prefetch, MatmulTilesInLocalMemoryWithBarriersPlacedByLoom) {
  LoopKernel k = add_prefetch(add_prefetch(tiled_matmul(), "a", "i_inner, k_inner"), "b", "k_inner, j_inner");
  const Temporary* at = k.find_temporary("a_fetch");
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->space, AddressSpace::Local);
  EXPECT_EQ(at->shape.size(), 2u);
  EXPECT_EQ(at->shape[0].str(), "16");
  // the fetch runs on the block's threads: last (contiguous) dimension on l.0
  EXPECT_EQ(k.tag_of("a_dim_1").str(), "l.0");
  EXPECT_EQ(k.tag_of("a_dim_0").str(), "l.1");
  std::string cuda = cuda::print_source(generate(k));
  EXPECT_EQ(count(cuda, "__syncthreads()"), 2u) << cuda;  // after the fetches, and before the next k tile overwrites them
  EXPECT_NE(cuda.find("a_fetch[i_inner * 16 + k_inner] * b_fetch[k_inner * 16 + j_inner]"), std::string::npos) << cuda;
  for (auto p : std::vector<std::map<std::string, int64_t>>{{{"n", 32}, {"m", 16}, {"l", 48}},
                                                           {{"n", 33}, {"m", 17}, {"l", 45}},
                                                           {{"n", 1}, {"m", 5}, {"l", 3}}})
    EXPECT_SAME_RESULTS(matmul(), k, p);
}

TEST(Prefetch, ReadersWaitForTheFetchAndTheAccumulatorsInitDoesNot) {
  // as in loopy, the rewritten instruction depends on the fetch; once the
  // reduction is realized, its update waits for the fetch inside the k loop
  // and the accumulator's init, before that loop, does not (a wait there
  // would be a cycle)
  LoopKernel k = add_prefetch(add_prefetch(tiled_matmul(), "a", "i_inner, k_inner"), "b", "k_inner, j_inner");
  EXPECT_TRUE(k.instruction("insn_0").depends_on.count("fetch_a"));
  EXPECT_TRUE(k.instruction("insn_0").depends_on.count("fetch_b"));
  LoopKernel p = preprocess(k);
  for (auto& insn : p.instructions) {
    bool update = insn.within_inames.count("k_outer") && insn.id != "fetch_a" && insn.id != "fetch_b";
    if (update) EXPECT_TRUE(insn.depends_on.count("fetch_a")) << insn.str();
    if (!insn.within_inames.count("k_outer")) EXPECT_FALSE(insn.depends_on.count("fetch_a")) << insn.str();
  }
  for (auto q : std::vector<std::map<std::string, int64_t>>{{{"n", 33}, {"m", 17}, {"l", 45}}}) EXPECT_SAME_RESULTS(matmul(), k, q);
}

TEST(Prefetch, RectangularTilesLargerThanTheBlockLoopOverIt) {
  // 8x8 threads, 8x32 tiles of a: the fetch's k dimension is split by the block's l.0 extent
  LoopKernel k = tiled_matmul(8);
  k = split_iname(remove_unused_inames(k), "k_outer", 4);
  k = add_prefetch(k, "a", "i_inner, k_outer_inner, k_inner");
  k = add_prefetch(k, "b", "k_outer_inner, k_inner, j_inner");
  // rows of 32 floats (128 bytes) get one element of padding against bank conflicts
  EXPECT_EQ(k.find_temporary("a_fetch")->shape[1].str(), "33");
  EXPECT_SAME_RESULTS(matmul(), k, {{"n", 19}, {"m", 23}, {"l", 70}});
  EXPECT_SAME_RESULTS(matmul(), k, {{"n", 16}, {"m", 16}, {"l", 64}});
}

TEST(Prefetch, StencilHaloIsFetchedAndGuardedAtTheEdges) {
  LoopKernel k = make_kernel({"{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}"},
                             "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]",
                             {"u: float32[n, m], out: float32[n, m]"}, "stencil");
  SplitOptions gi, gj;
  gi.outer_tag = InameTag::parse("g.1");
  gi.inner_tag = InameTag::parse("l.1");
  gj.outer_tag = InameTag::parse("g.0");
  gj.inner_tag = InameTag::parse("l.0");
  LoopKernel t = split_iname(split_iname(k, "i", 16, gi), "j", 16, gj);
  LoopKernel p = add_prefetch(t, "u", "i_inner, j_inner");
  EXPECT_EQ(p.find_temporary("u_fetch")->shape[0].str(), "18");  // 16 + a halo of one on each side
  EXPECT_SAME_RESULTS(k, p, {{"n", 37}, {"m", 21}});
  EXPECT_SAME_RESULTS(k, p, {{"n", 34}, {"m", 18}});
  EXPECT_SAME_RESULTS(k, p, {{"n", 3}, {"m", 3}});
}

// async_copy=true: the halo's guarded copies become cp.async (no register,
// so a thread's loads are in flight together), the barrier waits for them
// first. Refused for private memory.
TEST(Prefetch, AsyncCopiesOfAHaloAreWaitedForAtTheBarrier) {
  LoopKernel k = make_kernel({"{[i, j]: 1 <= i < n - 1 and 1 <= j < m - 1}"},
                             "out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4 * u[i, j]",
                             {"u: float32[n, m], out: float32[n, m]"}, "stencil");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname j 32 outer_tag=g.0 inner_tag=l.0\n"
                                                            "split_iname i 8 outer_tag=g.1\n"
                                                            "split_iname i_inner 4 outer_tag=l.1 inner_tag=unr\n"
                                                            "add_prefetch u i_inner_outer,i_inner_inner,j_inner async_copy=true\n"
                                                            "tag_inames u_dim_0_outer:unr u_dim_1_outer:unr\n"));
  EXPECT_TRUE(t.instruction("fetch_u").async_copy);
  std::string cuda = cuda::print_source(generate(t));
  EXPECT_EQ(count(cuda, "loom_cp_async<4>("), 10u) << cuda;  // 5 rows of 2 (l.1) x 2 column chunks
  EXPECT_EQ(count(cuda, "loom_cp_async_wait_all();\n  __syncthreads();"), 1u) << cuda;
  EXPECT_SAME_RESULTS(k, t, {{"n", 37}, {"m", 70}});
  EXPECT_SAME_RESULTS(k, t, {{"n", 34}, {"m", 66}});
  EXPECT_SAME_RESULTS(k, t, {{"n", 3}, {"m", 3}});
  if (cuda::nvrtc_available()) EXPECT_GT(cuda::compile(cuda, "sm_90").cubin.size(), 0u);
  // a fetch of a row: the async copy is waited for before it is read
  LoopKernel own = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 2 * a[i]", {"a: float32[n], out: float32[n]"}, "own");
  own = apply_transforms(own, parse_transform_script("split_iname i 64 outer_tag=g.0 inner_tag=l.0"));
  PrefetchOptions ao;
  ao.async_copy = true;
  std::string waited = cuda::print_source(generate(add_prefetch(own, "a", "i_inner", ao)));
  EXPECT_EQ(count(waited, "loom_cp_async_wait_all();\n  __syncthreads();"), 1u) << waited;
  EXPECT_SAME_RESULTS(own, add_prefetch(own, "a", "i_inner", ao), {{"n", 100}});
  ao.temporary_address_space = AddressSpace::Private;
  std::string e = error_of([&] { add_prefetch(own, "a", "i_inner", ao); });
  EXPECT_NE(e.find("async_copy copies into local (shared) memory"), std::string::npos) << e;
  e = error_of([&] { apply_transforms(own, parse_transform_script("add_prefetch a i_inner async_copy=perhaps")); });
  EXPECT_NE(e.find("argument 'async_copy' must be true or false, got 'perhaps'"), std::string::npos) << e;
}

// loopy's test_rank_one: a fetch of a[i] on a 16x16 block needs only l.0; the
// l.1 threads would all store the same elements. A loop still sequential
// goes onto the unused axis; with none left, only the axis' first thread stores.
TEST(Prefetch, LocalAxesTheFetchDoesNotNeedTakeALoopOrOneThreadStores) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "c[i, j] = a[i] * b[j]",
                             {"a: float32[n], b: float32[m], c: float32[n, m]"}, "rank_one");
  auto tiles = [](const std::string& outer, const std::string& inner) {
    SplitOptions o;
    o.outer_tag = InameTag::parse(outer);
    o.inner_tag = InameTag::parse(inner);
    return o;
  };
  SplitOptions gj = tiles("g.1", "l.1");
  LoopKernel t = split_iname(split_iname(k, "i", 16, tiles("g.0", "l.0")), "j", 16, gj);
  LoopKernel p = add_prefetch(add_prefetch(t, "a", "i_inner"), "b", "j_inner");
  EXPECT_EQ(p.tag_of("a_dim_0").str(), "l.0");
  EXPECT_EQ(p.tag_of("fetch_a_l1").str(), "l.1");
  EXPECT_EQ(p.instruction("fetch_a").predicates.back().str(), "fetch_a_l1 == 0");
  EXPECT_SAME_RESULTS(k, p, {{"n", 37}, {"m", 21}});
  EXPECT_SAME_RESULTS(k, p, {{"n", 16}, {"m", 1}});
  // 64 elements of a on 16x16 threads: 16 on l.0, the 4 sequential rounds on l.1
  SplitOptions g64;
  g64.outer_tag = InameTag::parse("g.0");
  LoopKernel w = split_iname(split_iname(split_iname(k, "i", 64, g64), "i_inner", 16, tiles("ilp", "l.0")), "j", 16, gj);
  LoopKernel q = add_prefetch(w, "a", "i_inner_outer, i_inner_inner");
  EXPECT_EQ(q.tag_of("a_dim_0_inner").str(), "l.0");
  EXPECT_EQ(q.tag_of("a_dim_0_outer").str(), "l.1");
  EXPECT_SAME_RESULTS(k, q, {{"n", 150}, {"m", 33}});
}

// loopy's test_intel_matrix_mul: register tiles (ilp) with prefetches and no
// loop priorities; the ilp loops go inside k, where the tile fetches run.
TEST(Prefetch, RegisterTilesWithoutPrioritiesNestInsideTheFetchLoop) {
  LoopKernel k = matmul();
  auto script = parse_transform_script(
      "split_iname i 32 outer_tag=g.0\n"
      "split_iname i_inner 4 outer_tag=l.1 inner_tag=ilp\n"
      "split_iname j 32 outer_tag=g.1\n"
      "split_iname j_inner 4 outer_tag=l.0 inner_tag=ilp\n"
      "split_iname k 8\n"
      "add_prefetch a i_inner_outer,i_inner_inner,k_inner default_tag=l.auto\n"
      "add_prefetch b k_inner,j_inner_outer,j_inner_inner default_tag=l.auto\n");
  LoopKernel t = apply_transforms(k, script);
  EXPECT_SAME_RESULTS(k, t, {{"n", 70}, {"m", 45}, {"l", 19}});
  EXPECT_SAME_RESULTS(k, t, {{"n", 64}, {"m", 32}, {"l", 16}});
}

TEST(Prefetch, PrivatePrefetchIsPerThread) {
  // each thread copies its row's chunk into registers, unrolled
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"}, "out[i] = sum(j, a[i, j] * a[i, j])",
                             {"a: float32[n, 8], out: float32[n]"}, "rows");
  SplitOptions o;
  o.outer_tag = InameTag::parse("g.0");
  o.inner_tag = InameTag::parse("l.0");
  LoopKernel t = split_iname(k, "i", 32, o);
  PrefetchOptions po;
  po.temporary_address_space = AddressSpace::Private;
  po.default_tag = "unr";
  LoopKernel p = add_prefetch(t, "a", "j", po);
  EXPECT_EQ(p.find_temporary("a_fetch")->space, AddressSpace::Private);
  EXPECT_EQ(p.tag_of("a_dim_1").str(), "unr");
  std::string cuda = cuda::print_source(generate(p));
  EXPECT_EQ(count(cuda, "__syncthreads()"), 0u) << cuda;  // a thread reads only what it fetched
  EXPECT_SAME_RESULTS(k, p, {{"n", 77}});
}

TEST(Prefetch, ReachableThroughTheRegistryWithLoopysArgumentNames) {
  KernelFile f = parse_kernel_file(loom::testing::source_dir() + "/examples/matmul_prefetch.loom");
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  EXPECT_NE(k.find_temporary("a_fetch"), nullptr);
  EXPECT_NE(k.find_temporary("b_fetch"), nullptr);
  auto script = parse_transform_script(
      "add_prefetch a i_inner,k_inner temporary_name=tile_a dim_arg_names=ta0,ta1 default_tag=for\n"
      "set_temporary_address_space tile_a private\n");
  LoopKernel s = apply_transforms(tiled_matmul(), script);
  ASSERT_NE(s.find_temporary("tile_a"), nullptr);
  EXPECT_EQ(s.find_temporary("tile_a")->space, AddressSpace::Private);
  EXPECT_EQ(s.tag_of("ta0").kind, InameTag::Seq);
}

TEST(Prefetch, CudaOfPrefetchedKernelsCompilesWithNvrtc) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "NVRTC not found";
  LoopKernel k = add_prefetch(add_prefetch(tiled_matmul(), "a", "i_inner, k_inner"), "b", "k_inner, j_inner");
  auto r = cuda::compile(cuda::print_source(generate(k)), "sm_90");
  EXPECT_GT(r.cubin.size(), 0u);
}

TEST(Prefetch, RefusalsNameTheArrayAndTheReason) {
  LoopKernel t = tiled_matmul();
  EXPECT_NE(error_of([&] { add_prefetch(t, "q", "k_inner"); }).find("'q' is not an array argument"), std::string::npos);
  EXPECT_NE(error_of([&] { add_prefetch(t, "c", "k_inner"); }).find("array 'c' is written by the kernel"), std::string::npos);
  EXPECT_NE(error_of([&] { add_prefetch(t, "a", "zz"); }).find("no iname 'zz'"), std::string::npos);
  // the tile of a depends on i_inner (l.1): every row of threads would need another one
  // in local memory (loopy's default, auto, makes it private instead: a tile per thread)
  PrefetchOptions local;
  local.temporary_address_space = AddressSpace::Local;
  std::string e = error_of([&] { add_prefetch(t, "a", "k_inner", local); });
  EXPECT_NE(e.find("depends on local iname 'i_inner' (l.1)"), std::string::npos) << e;
  EXPECT_NE(e.find("add_prefetch('a', 'k_inner') on kernel 'mm'"), std::string::npos) << e;
  LoopKernel per_thread = add_prefetch(t, "a", "k_inner");
  EXPECT_EQ(per_thread.find_temporary("a_fetch")->space, AddressSpace::Private);
  // a sweep over a parameter-sized range has no constant box
  e = error_of([&] { add_prefetch(matmul(), "a", "k"); });
  EXPECT_NE(e.find("sweep iname 'k' has a range that depends on the parameters"), std::string::npos) << e;
  // no access runs within the sweep
  e = error_of([&] { add_prefetch(t, "a", "j_inner, i_inner, k_inner, i_outer, j_outer, k_outer"); });
  EXPECT_NE(e.find("range that depends on the parameters"), std::string::npos) << e;
  LoopKernel nonaffine = make_kernel({"{[i]: 0 <= i < 16}"}, "out[i] = a[i * i % 16]", {"a: float32[16], out: float32[16]"});
  e = error_of([&] { add_prefetch(nonaffine, "a", "i"); });
  EXPECT_NE(e.find("is not affine"), std::string::npos) << e;
  LoopKernel two = make_kernel({"{[i, j]: 0 <= i < 16 and 0 <= j < 4}"}, "out[i, j] = a[i, j] + a[j, i]",
                               {"a: float32[16, 16], out: float32[16, 4]"});
  e = error_of([&] { add_prefetch(two, "a", "i"); });
  EXPECT_NE(e.find("differ in dimension"), std::string::npos) << e;
  e = error_of([&] { add_prefetch(t, "a", "i_inner, k_inner", PrefetchOptions{"", AddressSpace::Global}); });
  EXPECT_NE(e.find("local or private memory"), std::string::npos) << e;
  e = error_of([&] { set_temporary_address_space(t, "nope", "local"); });
  EXPECT_NE(e.find("no temporary 'nope'"), std::string::npos) << e;
  e = error_of([&] { set_temporary_address_space(add_prefetch(t, "a", "i_inner, k_inner"), "a_fetch", "texture"); });
  EXPECT_NE(e.find("unknown address space 'texture'"), std::string::npos) << e;
}

// An array read at two places (a product with its own transpose, syrk's
// A[i, k] A[j, k]) has no one footprint; accesses_using gives each read a
// tile of its own, and the other read keeps reading the array.
TEST(Prefetch, EachOfTwoReadsOfOneArrayGetsItsOwnTile) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < m}"}, "c[i, j] = sum(k, a[i, k] * a[j, k])",
                             {"a: float64[n, m], c: float64[n, n]", "..."}, "aat");
  const std::string tiles = "split_iname i 16 outer_tag=g.1 inner_tag=l.1\nsplit_iname j 16 outer_tag=g.0 inner_tag=l.0\nsplit_iname k 8\n";
  LoopKernel tiled = apply_transforms(k, parse_transform_script(tiles));
  EXPECT_NE(error_of([&] { add_prefetch(tiled, "a", "i_inner, j_inner, k_inner"); }), "no error");
  PrefetchOptions rows, columns;
  rows.temporary_name = "a_rows";
  rows.accesses_using = "i_inner";
  columns.temporary_name = "a_columns";
  columns.accesses_using = "j_inner";
  LoopKernel one = add_prefetch(tiled, "a", "i_inner, k_inner", rows);
  std::string text = one.instructions.back().str();
  EXPECT_NE(text.find("a_rows[i_inner, k_inner] * a[16 * j_outer + j_inner, 8 * k_outer + k_inner]"), std::string::npos) << text;
  LoopKernel both = add_prefetch(one, "a", "j_inner, k_inner", columns);
  for (auto p : std::vector<std::map<std::string, int64_t>>{{{"n", 32}, {"m", 16}}, {{"n", 37}, {"m", 13}}, {{"n", 1}, {"m", 1}}})
    EXPECT_SAME_RESULTS(k, both, p);
  std::string cuda = cuda::print_source(generate(both));
  EXPECT_NE(cuda.find("a_rows["), std::string::npos);
  EXPECT_NE(cuda.find("a_columns["), std::string::npos);
  PrefetchOptions nothing = columns;
  nothing.accesses_using = "nosuch";
  EXPECT_NE(error_of([&] { add_prefetch(tiled, "a", "j_inner, k_inner", nothing); }).find("accesses_using: no iname 'nosuch'"), std::string::npos);
  nothing.accesses_using = "k_outer";  // (both reads use it: no one footprint)
  EXPECT_NE(error_of([&] { add_prefetch(tiled, "a", "j_inner, k_inner", nothing); }), "no error");
}
