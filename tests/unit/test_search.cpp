// The search strategies (tuner/search.cpp) on a made-up objective, nothing
// generated or measured: a bowl over two ordered tile sizes and an optional
// unroll, fastest at one configuration. Every strategy measures each
// configuration at most once, repeats itself for a seed, and the
// model-based ones (evolution, bayes, annealing, local, diff_evo, pso) find a
// configuration within a few percent of the fastest in a third of the
// space's size, on average nearer to it than random draws.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "../../tuner/search.h"

using namespace loom;
using namespace loom::tune;

namespace {

const char* const kSpace =
    "split_iname i choice(1|2|4|8|16|32|64|128|256) outer_tag=g.0 inner_tag=l.0\n"
    "split_iname j choice(1|2|4|8|16|32)\n"
    "optional split_iname k 2 inner_tag=unr\n";

// seconds: 1 ms at i = 32 (pick 5), j = 4 (pick 2), k unrolled; slower away from it
double bowl(const Configuration& c) {
  double d0 = c.picks[0] - 5, d1 = c.picks[1] - 2;
  return 1e-3 * (1 + 0.08 * d0 * d0 + 0.15 * d1 * d1 + (c.picks[2] == 0 ? 0 : 0.3));
}

struct SearchRun {
  std::vector<std::string> keys;
  double best = HUGE_VAL;
};

SearchRun search(const Space& space, const std::string& strategy, uint64_t seed, int trials) {
  Options o;
  o.seed = seed;
  o.trials = trials;
  std::set<std::string> done;
  Search s(space, o, strategy, {}, done);
  SearchRun r;
  while (int(r.keys.size()) < trials) {
    auto batch = s.next_batch(size_t(std::min(8, trials - int(r.keys.size()))), r.keys.size());
    if (batch.empty()) break;
    for (auto& c : batch) {
      double t = bowl(c);
      s.measured(c, t);
      r.keys.push_back(c.key());
      r.best = std::min(r.best, t);
    }
  }
  return r;
}

}  // namespace

TEST(SearchStrategies, EachMeasuresAConfigurationOnceAndRepeatsForASeed) {
  Space space = Space::parse(kSpace);
  ASSERT_EQ(space.size(), 108.0);
  for (const char* strategy : {"random", "evolution", "bayes", "annealing", "local", "diff_evo", "pso"}) {
    SearchRun a = search(space, strategy, 3, 40), b = search(space, strategy, 3, 40);
    EXPECT_EQ(a.keys.size(), 40u) << strategy;
    EXPECT_EQ(std::set<std::string>(a.keys.begin(), a.keys.end()).size(), a.keys.size()) << strategy;
    EXPECT_EQ(a.keys, b.keys) << strategy;
    EXPECT_NE(a.keys, search(space, strategy, 4, 40).keys) << strategy;
  }
}

TEST(SearchStrategies, ModelBasedStrategiesFindTheBowlsBottom) {
  Space space = Space::parse(kSpace);
  const int trials = 36, seeds = 10;
  auto mean_best = [&](const std::string& strategy, double& worst) {
    double sum = 0;
    worst = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      double b = search(space, strategy, uint64_t(seed), trials).best;
      sum += b;
      worst = std::max(worst, b);
    }
    return sum / seeds;
  };
  double worst_random = 0;
  const double random = mean_best("random", worst_random);
  for (const char* strategy : {"evolution", "bayes", "annealing", "local", "diff_evo", "pso"}) {
    double worst = 0, mean = mean_best(strategy, worst);
    std::cerr << strategy << ": mean best " << mean * 1e3 << " ms, worst " << worst * 1e3 << " ms (random " << random * 1e3 << ", "
              << worst_random * 1e3 << ")\n";
    EXPECT_LE(mean, 1.04e-3) << strategy;
    EXPECT_LE(mean, random) << strategy;
  }
}

// A resumed run (or a task scheduler's next round) hands the log's trials to
// the search as measurements (tuner/tune.cpp): past the warm-up, local search
// goes on from their best, one choice point a step away, not from random draws.
TEST(SearchStrategies, MeasurementsFromTheLogAreWhereTheSearchGoesOn) {
  Space space = Space::parse(kSpace);
  Options o;
  o.seed = 2;
  o.trials = 40;
  std::set<std::string> done;
  Search s(space, o, "local", {}, done);
  std::mt19937_64 rng(9);
  Configuration best;
  double fastest = HUGE_VAL;
  for (int i = 0; i < 12; ++i) {  // the log's twelve
    Configuration c = space.random(rng);
    s.measured(c, bowl(c));
    if (bowl(c) < fastest) fastest = bowl(c), best = c;
  }
  auto next = s.next_batch(1, 12);
  ASSERT_EQ(next.size(), 1u);
  int steps = 0;
  for (size_t p = 0; p < next[0].picks.size(); ++p) steps += std::abs(next[0].picks[p] - best.picks[p]);
  EXPECT_EQ(steps, 1) << next[0].key() << " from " << best.key();
}
