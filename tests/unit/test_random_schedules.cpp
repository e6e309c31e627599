// Random schedules: sequences of splits and tags (blocks, threads, unrolling,
// ILP), loop priorities and reduction splits, drawn with fixed seeds, applied
// to every example; each kernel that Loom accepts must compute what the
// untransformed kernel computes (CPU oracle, sizes that are not multiples of
// anything). A refusal (TransformError, KernelError) is a fine outcome; a
// wrong number or a crash is not. LOOM_RANDOM_SEED=N explores other
// schedules, LOOM_RANDOM_VERBOSE=1 prints each one checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "oracle.h"

using namespace loom;

namespace {

LoopKernel random_schedule(const LoopKernel& k, std::mt19937& rng, std::string& log) {
  LoopKernel t = k;
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  std::vector<std::string> used_axes;
  int steps = 1 + pick(4);
  for (int s = 0; s < steps; ++s) {
    auto inames = t.all_inames();
    std::vector<std::string> free;
    for (auto& n : inames)
      if (t.tag_of(n).kind == InameTag::Seq) free.push_back(n);
    if (free.empty()) break;
    const std::string& n = free[size_t(pick(int(free.size())))];
    int what = pick(9);
    try {
      if (what <= 1) {
        int64_t f = std::vector<int64_t>{2, 3, 4, 8, 16, 32}[size_t(pick(6))];
        SplitOptions o;
        static const char* tags[] = {"for", "g.0", "g.1", "l.0", "l.1", "unr", "ilp"};
        o.outer_tag = InameTag::parse(tags[pick(3)]);
        o.inner_tag = InameTag::parse(tags[pick(7)]);
        if (o.inner_tag->kind == InameTag::Unroll || o.inner_tag->kind == InameTag::Ilp) f = std::min<int64_t>(f, 4);
        if (o.outer_tag->kind == InameTag::Seq && pick(3) == 0) o.slabs = {0, 1};
        t = split_iname(t, n, f, o);
        log += "split " + n + " " + std::to_string(f) + " " + o.outer_tag->str() + "/" + o.inner_tag->str() +
               (o.slabs.second ? " slabs" : "") + "; ";
      } else if (what == 5) {
        t = chunk_iname(t, n, 1 + pick(4));
        log += "chunk " + n + "; ";
      } else if (what == 6 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = join_inames(t, a + ", " + b);
          log += "join " + a + "," + b + "; ";
        }
      } else if (what == 7) {
        t = rename_iname(t, n, n + "_r");
        log += "rename " + n + "; ";
      } else if (what == 8) {
        auto params = t.parameters();
        if (!params.empty()) {
          t = assume(t, params[0] + " >= 1");
          log += "assume " + params[0] + " >= 1; ";
        }
      } else if (what == 2) {
        static const char* tags[] = {"g.0", "g.1", "unr"};
        std::string tag = tags[pick(3)];
        t = tag_inames(t, n + ":" + tag);
        log += "tag " + n + ":" + tag + "; ";
      } else if (what == 3 && free.size() >= 2) {
        std::string a = free[size_t(pick(int(free.size())))], b = free[size_t(pick(int(free.size())))];
        if (a != b) {
          t = prioritize_loops(t, b + ", " + a);
          log += "prioritize " + b + "," + a + "; ";
        }
      } else {
        t = split_reduction_inward(t, n);
        log += "split_reduction_inward " + n + "; ";
      }
    } catch (const TransformError&) {
      // refused: try another step
    }
  }
  return t;
}

}  // namespace

TEST(RandomSchedules, AcceptedKernelsComputeWhatTheOriginalComputes) {
  int accepted = 0, refused = 0;
  for (const std::string& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    std::map<std::string, int64_t> params;
    for (auto& p : f.kernel.parameters()) params[p] = p == "m" ? 23 : p == "l" ? 9 : 19;
    // LOOM_RANDOM_SEED explores other schedules; the suite's seed is fixed
    const char* seed_env = std::getenv("LOOM_RANDOM_SEED");
    unsigned seed = unsigned(std::hash<std::string>()(name) % 100000) + (seed_env ? unsigned(std::atoi(seed_env)) : 0u);
    std::mt19937 rng(seed);
    for (int trial = 0; trial < 10; ++trial) {
      std::string log;
      LoopKernel t = random_schedule(f.kernel, rng, log);
      std::string problems;
      try {
        generate(t);  // refusals (limits, block sizes depending on parameters, ...) are fine
      } catch (const KernelError&) {
        ++refused;
        continue;
      }
      ++accepted;
      if (std::getenv("LOOM_RANDOM_VERBOSE")) std::fprintf(stderr, "%s: %s\n", name.c_str(), log.c_str());
      EXPECT_EQ(loom::testing::compare_kernels(f.kernel, t, params), "") << name << ": " << log;
    }
  }
  EXPECT_GT(accepted, 20);  // the test must exercise real schedules
  std::printf("random schedules: %d accepted and checked, %d refused\n", accepted, refused);
}
