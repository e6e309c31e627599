// The search strategies of the tuner (tuner/search.cpp): which
// configurations of a space to try next. exhaustive takes them in order;
// random draws them (each sketch uniformly, then each choice point). The
// others draw at random until they have a few measurements (evolution: each
// sketch once first), then: evolution mutates the fastest few and measures
// the mutant the cost model (NeighbourModel) ranks first, one draw in four at
// random; bayes (Bayesian optimisation) measures the configuration whose
// expected improvement is largest under a Gaussian process (GaussianProcess);
// annealing (simulated annealing) a neighbour of its current configuration,
// which a slower one replaces with a probability that falls as it cools;
// local (multi-start local search) each neighbour of the current
// configuration until one is faster, and a random one at a local minimum;
// diff_evo (differential evolution) the fastest plus a scaled difference of
// two others of its sketch, crossed with a third; pso (particle swarm) the
// next position of eight particles pulled toward their own and the swarm's
// best. Every strategy
// measures the starts first: the fastest trials measured elsewhere (seeds),
// then the sketches' own starts. A configuration the log already holds is
// skipped, one the user's restrictions leave out is never generated; neither
// is a trial.
#pragma once
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cost_models.h"
#include "loom/tuner.h"

namespace loom::tune {

class Search {
 public:
  // strategy: exhaustive, random, evolution, bayes, annealing, local, diff_evo or pso (resolved); seeds: measured
  // first; done: the scripts the log already holds
  Search(const Space& space, const Options& o, std::string strategy, std::vector<Configuration> seeds, const std::set<std::string>& done);
  // Up to `want` configurations nobody has tried; measured: the trials so far.
  std::vector<Configuration> next_batch(size_t want, size_t measured);
  // What a configuration measured: its median, or nothing (it failed or was refused).
  void measured(const Configuration& c, std::optional<double> seconds);
  // exhaustive: the configurations of the space the log does not hold
  size_t untried() const;
  int skipped() const { return skipped_; }        // already in the log
  int restricted() const { return restricted_; }  // left out by the user's restrictions

 private:
  bool fresh(const Configuration& c) const { return !picked_.count(c.key()); }
  // each strategy's next configuration once it has measurements (nothing: its neighbourhood is worn out)
  std::optional<Configuration> mutant_of_the_best();
  std::optional<Configuration> most_promising_by_expected_improvement();
  std::optional<Configuration> next_annealing_step();
  std::optional<Configuration> next_local_step();
  std::optional<Configuration> next_differential_step();
  std::optional<Configuration> next_swarm_step();
  std::vector<std::pair<double, Configuration>> population() const;
  Configuration rounded(int sketch, const std::vector<double>& position) const;

  const Space& space_;
  const Options& o_;
  std::string strategy_;
  const std::set<std::string>& done_;
  std::mt19937_64 rng_;
  std::vector<Configuration> order_;  // exhaustive: the whole list, in order
  size_t next_in_order_ = 0;
  std::set<std::string> picked_;      // keys tried or skipped in this run
  NeighbourModel model_;
  GaussianProcess gp_;                                  // bayes
  std::vector<Configuration> pending_;                  // bayes: taken, not yet measured (believed at their predicted time)
  std::optional<std::pair<double, Configuration>> current_;  // annealing, local: (median, configuration)
  double temperature_ = 0.3;                            // annealing: in log-time
  bool restart_ = false;                                // local: at a local minimum, the next measurement is current
  struct Particle {                                     // pso: a position in a sketch's pick space
    std::vector<double> position, velocity;
    Configuration best;
    double best_seconds = 0;
    std::string pending;  // the key of its proposal not yet measured
  };
  std::vector<Particle> particles_;
  size_t next_particle_ = 0;
  std::vector<std::pair<double, Configuration>> valid_;  // (median, configuration), this run
  std::vector<Configuration> starts_;  // measured first (a stack: the next at the back)
  std::vector<int> unvisited_;         // evolution's first draws: each sketch once, in a random order
  int skipped_ = 0, restricted_ = 0;
};

}  // namespace loom::tune
