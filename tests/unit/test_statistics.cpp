// Kernel statistics (loom/statistics.h): the closed-form counts against
// isl's enumeration of the same sets, loopy's tutorial numbers, and every
// example's memory accesses against an instrumented run of the interpreter.
#include <gtest/gtest.h>
#include <isl/set.h>
#include <isl/val.h>

#include "loom/domain.h"
#include "loom/interpreter.h"
#include "loom/statistics.h"
#include "oracle.h"

using namespace loom;

namespace {

int64_t enumerate(const std::string& set, const std::map<std::string, int64_t>& params) {
  isl_set* s = isl_set_read_from_str(isl_context(), set.c_str());
  isl_size n = isl_set_dim(s, isl_dim_param);
  for (int i = n - 1; i >= 0; --i) s = isl_set_fix_si(s, isl_dim_param, unsigned(i), params.at(isl_set_get_dim_name(s, isl_dim_param, unsigned(i))));
  isl_val* v = isl_set_count_val(s);
  int64_t r = isl_val_get_num_si(v);
  isl_val_free(v);
  isl_set_free(s);
  return r;
}

Count count_of(const std::string& set) {
  isl_set* s = isl_set_read_from_str(isl_context(), set.c_str());
  Count c = Count::points(s, nullptr);
  isl_set_free(s);
  return c;
}

}  // namespace

TEST(Count, ClosedFormsAgreeWithEnumeration) {
  const char* sets[] = {
      "[n] -> {[i]: 0 <= i < n}",
      "[n, m] -> {[i, j]: 0 <= i < n and 0 <= j < m}",
      "[n] -> {[i, j]: 0 <= i < n and 0 <= j <= i}",                                 // triangle
      "[n] -> {[i, j, k]: 0 <= i < n and 0 <= j <= i and j <= k < n}",               // a tetrahedron-like nest
      "[n] -> {[io, ii]: 0 <= ii < 16 and 0 <= 16io + ii < n}",                      // a split with a partial tile
      "[n] -> {[io]: io >= 0 and 16io < n}",                                         // the tiles alone
      "[n, m] -> {[i, k]: 0 <= i < n and k = i + 5 and k < m}",                      // a nested equality domain
      "[n] -> {[i, j]: 0 <= i < n and 0 <= j < n and (i < j or i > j + 3)}",         // a union
      "[n, m] -> {[a, b, c]: 0 <= a < 4 and 0 <= 32a + b < n and 0 <= b < 32 and 0 <= c < m - a}",
      "[n] -> {[i, j]: 0 <= i < n and i - 3 <= j <= i + 3 and 0 <= j < n}",          // a band
      "[n, m] -> {[jo, ji, k]: 0 <= ji < 8 and 0 <= 8jo + ji < m and 0 <= k <= 8jo + ji and k < n}",
      "[n] -> {[i, j]: 0 <= i < n and 2j >= i and 2j <= i + 7}",                     // non-unit coefficients
      "{[i, j]: 0 <= i < 7 and 0 <= j < 5}",
  };
  for (const char* s : sets) {
    Count c = count_of(s);
    EXPECT_TRUE(c.closed_form()) << s << ": " << c.str();
    for (int64_t n : {0, 1, 2, 5, 15, 16, 17, 31, 33, 100, 257})
      for (int64_t m : {3, 16, 40}) {
        std::map<std::string, int64_t> p{{"n", n}, {"m", m}};
        EXPECT_EQ(c.eval(p), enumerate(s, p)) << s << " at n=" << n << " m=" << m << ": " << c.str();
      }
  }
}

TEST(Count, StridesAreCountedForTheValuesGiven) {
  const std::string s = "[n] -> {[i]: 0 <= i < n and exists e: i = 3e}";
  Count c = count_of(s);
  EXPECT_FALSE(c.closed_form());
  EXPECT_NE(c.str().find("card"), std::string::npos) << c.str();
  for (int64_t n : {0, 1, 3, 4, 100}) EXPECT_EQ(c.eval({{"n", n}}), enumerate(s, {{"n", n}})) << n;
  EXPECT_EQ((c * 2 + count_of("[n] -> {[i]: 0 <= i < n}")).eval({{"n", 10}}), 2 * 4 + 10);
}

TEST(Count, ValuesMustBeGivenAndInsideTheAssumptions) {
  isl_set* s = isl_set_read_from_str(isl_context(), "[n] -> {[i]: 0 <= i < n}");
  isl_set* a = isl_set_read_from_str(isl_context(), "[n] -> {: n >= 8}");
  Count c = Count::points(s, a);
  isl_set_free(s);
  isl_set_free(a);
  EXPECT_EQ(c.eval({{"n", 9}}), 9);
  EXPECT_THROW(c.eval({}), ArgumentError);
  try {
    c.eval({{"n", 3}});
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("assumptions"), std::string::npos) << e.what();
  }
}

namespace {

LoopKernel tutorial_kernel() {
  return make_kernel({"[n, m, l] -> {[i, k, j]: 0 <= i < n and 0 <= k < m and 0 <= j < l}"},
                     "c[i, j, k] = a[i, j, k] * b[i, j, k] / 3.0 + a[i, j, k]\ne[i, k] = g[i, k] * (2 + h[i, k + 1])",
                     {"a: float32[n, l, m], b: float32[n, l, m], g: float64[n, m], h: float64[n, m + 1]", "..."},
                     "stats_knl");
}

template <class Key>
int64_t value_of(const CountMap<Key>& m, const std::function<bool(const Key&)>& pick, const std::map<std::string, int64_t>& p) {
  int64_t total = 0;
  for (auto& [k, c] : m)
    if (pick(k)) total += c.eval(p);
  return total;
}

}  // namespace

// loopy's tutorial, "Obtaining Performance Statistics", with its numbers.
TEST(Statistics, LoopysTutorialCounts) {
  LoopKernel k = tutorial_kernel();
  std::map<std::string, int64_t> p{{"n", 256}, {"m", 256}, {"l", 8}};
  auto ops = op_map(k);
  auto op = [&](const char* dtype, const char* name) {
    return value_of<OpKey>(ops, [&](const OpKey& o) { return o.dtype.name() == dtype && o.name == name && o.granularity == CountGranularity::SubGroup; }, p);
  };
  EXPECT_EQ(op("float32", "add"), 524288);
  EXPECT_EQ(op("float32", "div"), 524288);
  EXPECT_EQ(op("float32", "mul"), 524288);
  EXPECT_EQ(op("float64", "add"), 65536);
  EXPECT_EQ(op("float64", "mul"), 65536);
  EXPECT_EQ(op("int32", "add"), 65536);
  auto mem = mem_access_map(k);
  auto access = [&](const char* var, const char* dir) {
    return value_of<MemAccessKey>(mem, [&](const MemAccessKey& m) { return m.variable == var && m.direction == dir && m.mtype == "global"; }, p);
  };
  EXPECT_EQ(access("a", "load"), 1048576);
  EXPECT_EQ(access("c", "store"), 524288);
  EXPECT_EQ(access("g", "load"), 65536);
  EXPECT_EQ(access("e", "store"), 65536);
  int64_t loaded = 0, stored = 0;
  for (auto& [key, c] : mem) (key.direction == "load" ? loaded : stored) += c.eval(p) * key.dtype.bytes();
  EXPECT_EQ(loaded, 7340032);
  EXPECT_EQ(stored, 2621440);
  auto sync = synchronization_map(k);
  ASSERT_EQ(sync.size(), 1u);
  EXPECT_EQ(sync.begin()->first.kind, "kernel_launch");
  EXPECT_EQ(sync.begin()->second.eval(p), 1);

  // consecutive and non-consecutive threads (l.0 stride 1 or 128), counted per work-item
  for (bool consecutive : {true, false}) {
    LoopKernel t = apply_transforms(k, parse_transform_script(consecutive ? "split_iname k 128 outer_tag=l.1 inner_tag=l.0"
                                                                          : "split_iname k 128 outer_tag=l.0 inner_tag=l.1"));
    auto tm = mem_access_map(t);
    bool found = false;
    for (auto& [key, c] : tm) {
      if (key.variable != "a") continue;
      found = true;
      EXPECT_EQ(key.granularity, CountGranularity::WorkItem);
      ASSERT_EQ(key.lid_strides.size(), 2u) << key.str();
      EXPECT_EQ(key.lid_strides.at(0).str(), consecutive ? "1" : "128") << key.str();
      EXPECT_EQ(key.lid_strides.at(1).str(), consecutive ? "128" : "1") << key.str();
      EXPECT_EQ(c.eval(p), 1048576);
    }
    EXPECT_TRUE(found);
  }
}

// loopy's tutorial: a barrier between two instructions in two loops, per work-item.
TEST(Statistics, BarriersAreCountedPerWorkItem) {
  LoopKernel k = parse_kernel_text(
                     "kernel loopy_kernel\ndomains:\n  {[i, k, j]: 0 <= i < 50 and 1 <= k < 98 and 0 <= j < 10}\n"
                     "arguments:\n  a: int32[50, 10, 98]\n  e: int32[50, 10, 98]\ntemporaries:\n  c: int32[50, 10, 99] local\n"
                     "instructions:\n  c[i, j, k] = 2 * a[i, j, k]\n  e[i, j, k] = c[i, j, k + 1] + c[i, j, k - 1]\n"
                     "transforms:\n  split_iname k 128 inner_tag=l.0\n")
                     .kernel;
  k = apply_transforms(k, parse_transform_script("split_iname k 128 inner_tag=l.0"));
  auto sync = synchronization_map(k);
  int64_t barriers = 0;
  for (auto& [key, c] : sync)
    if (key.kind == "barrier_local") barriers += c.eval({});
  // loopy places two barriers per (i, j) (1000); Loom sees that iteration
  // j + 1 writes other elements of c than iteration j read, and needs one
  EXPECT_EQ(barriers, 500);
}

// Every example at odd sizes: the accesses each array sees, counted per
// work-item with the redundant work, are what the interpreter observes.
TEST(Statistics, MemoryAccessesMatchAnInstrumentedRun) {
  StatisticsOptions o;
  o.granularity = CountGranularity::WorkItem;
  o.count_redundant_work = true;
  int checked = 0;
  for (auto& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    LoopKernel t = apply_transforms(f.kernel, f.transforms);
    if (!t.data_parameters().empty()) continue;  // (counts in a bound that differs per row: a symbol, as loopy's)
    GeneratedKernel g = generate(t);
    auto mem = mem_access_map(g, o);
    for (auto& p : loom::testing::example_sizes(f, t, {19}, 4)) {
      int64_t work = 1;
      for (auto& [n, v] : p) work *= std::max<int64_t>(v, 1);
      if (work > 2000000) continue;  // (the interpreter is slow: the defaults of the big examples)
      auto arrays = make_host_arrays(t, p, 3);
      InterpretCounts seen;
      interpret(g, loom::testing::args_of(t, arrays, p), &seen);
      std::map<std::pair<std::string, std::string>, int64_t> predicted;
      for (auto& [key, c] : mem) predicted[{key.variable, key.direction}] += c.eval(p);
      for (auto& [key, n] : predicted) {
        auto& observed = key.second == "load" ? seen.loads : seen.stores;
        // Loads of local memory may exceed the domain's: code generation runs
        // register tiles and out-of-range threads whole where only their
        // stores need guards (the extra loads stay inside the shared array).
        bool local = t.find_temporary(key.first) != nullptr && key.second == "load";
        if (local) EXPECT_LE(n, observed[key.first]) << name << ": loads of " << key.first;
        else EXPECT_EQ(n, observed[key.first]) << name << ": " << key.second << "s of " << key.first;
      }
      for (auto& [array, n] : seen.stores)
        if (n && (t.find_argument(array) || (t.find_temporary(array) && t.find_temporary(array)->space == AddressSpace::Local)))
          EXPECT_TRUE(predicted.count({array, "store"})) << name << ": stores of " << array << " not counted";
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}

TEST(Statistics, ReportNamesEveryKindAndEvaluates) {
  LoopKernel g = apply_transforms(loom::testing::example("matmul_prefetch").kernel, loom::testing::example("matmul_prefetch").transforms);
  std::map<std::string, int64_t> p{{"n", 100}, {"m", 100}, {"l", 100}};
  std::string symbolic = statistics_report(g, {}, nullptr), at = statistics_report(g, {}, &p);
  for (auto* s : {"# operations", "Op(float32, mul, subgroup", "MemAccess(local, float32", "Sync(barrier_local, matmul_prefetch)"}) {
    EXPECT_NE(symbolic.find(s), std::string::npos) << s << "\n" << symbolic;
    EXPECT_NE(at.find(s), std::string::npos) << s << "\n" << at;
  }
  EXPECT_NE(symbolic.find("floor((15 + l)/16)"), std::string::npos) << symbolic;
  EXPECT_NE(at.find("Sync(barrier_local, matmul_prefetch): 14"), std::string::npos) << at;
}

// The features the tuner logs with each trial: matmul_prefetch at 64^3 (16 x 16
// tiles: a and b are fetched once per block of the other's axis).
TEST(Statistics, KernelFeaturesOfATiledProduct) {
  KernelFile f = loom::testing::example("matmul_prefetch");
  GeneratedKernel g = generate(apply_transforms(f.kernel, f.transforms));
  auto x = kernel_features(g, {{"n", 64}, {"m", 64}, {"l", 64}});
  EXPECT_EQ(x["flops"], 2.0 * 64 * 64 * 64);
  EXPECT_EQ(x["global_load_bytes"], 2 * 4.0 * 64 * 64 * 4);  // 4 blocks along the other axis
  EXPECT_EQ(x["global_store_bytes"], 4.0 * 64 * 64);
  EXPECT_EQ(x["local_store_bytes"], 2 * 4.0 * 64 * 64 * 4);
  EXPECT_EQ(x["local_load_bytes"], 2 * 4.0 * 64 * 64 * 64);
  EXPECT_EQ(x["barriers"], 8);  // two per k tile, per thread
  EXPECT_EQ(x["launches"], 1);
  EXPECT_EQ(x["threads_per_block"], 256);
  EXPECT_EQ(x.count("strided_global_bytes"), 0u);
}

// An access runs only where its guards hold (GuardedExprVisitor): the right
// operand of `and` where the left holds, a branch where its condition does;
// the counts and an instrumented run agree.
TEST(Statistics, GuardedAccessesAreCountedWhereTheyRun) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = if_then_else(i < 5 and a[i] > 0, b[i], 0.5 * b[i + 1])",
                             {"a: float32[n], b: float32[n + 1], out: float32[n]"}, "guarded");
  StatisticsOptions o;
  o.granularity = CountGranularity::WorkItem;
  GeneratedKernel g = generate(k);
  std::map<std::string, int64_t> p{{"n", 10}};
  std::map<std::string, int64_t> loads;
  for (auto& [key, c] : mem_access_map(g, o))
    if (key.direction == "load") loads[key.variable] += c.eval(p);
  EXPECT_EQ(loads["a"], 5);
  EXPECT_LE(loads["b"], 10 + 10);  // (each element's branch is data-dependent: b counted in both, an upper bound)
  auto arrays = make_host_arrays(k, p, 3);
  InterpretCounts seen;
  interpret(g, loom::testing::args_of(k, arrays, p), &seen);
  EXPECT_EQ(seen.loads["a"], 5);
  EXPECT_EQ(seen.loads["b"], 10);
}
