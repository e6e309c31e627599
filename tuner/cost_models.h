// The evolution strategy's cost models (tuner/cost_models.cpp): how it
// guesses a configuration's time before measuring it. NeighbourModel ranks
// mutants by their measured neighbours' times (the picks' distance);
// FeatureModel (declared in loom/tuner.h, with Result) by a regression on
// the screened variant's kernel features.
#pragma once
#include <cmath>
#include <utility>
#include <vector>

#include "loom/tuner.h"

namespace loom::tune {

// The cost model of the evolution strategy: the measured log-times of this
// run's valid trials, and a prediction for an unmeasured configuration of
// the same sketch from its nearest measured neighbours (distance: how far
// apart the picks are, each choice point scaled to [0, 1]). Invalid trials
// count as slow, so their neighbourhood is avoided.
class NeighbourModel {
 public:
  explicit NeighbourModel(const Space& s) : space_(s) {}
  void add(const Configuration& c, double seconds) { seen_.push_back({c, std::log(seconds)}); }
  double predict(const Configuration& c) const;

 private:
  const Space& space_;
  std::vector<std::pair<Configuration, double>> seen_;
};

}  // namespace loom::tune
