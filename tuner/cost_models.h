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

// How far apart two configurations' picks are: each choice point scaled to
// [0, 1] and summed; infinite between sketches.
double picks_distance(const Space& space, const Configuration& a, const Configuration& b);

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

// The surrogate of Bayesian optimisation (the bayes strategy): a Gaussian
// process on the measured log-times, its covariance exp(-d / l) of the
// picks' distance within a sketch (none between sketches), its prior
// the measurements' mean and variance. predict gives the posterior mean
// and standard deviation of an unmeasured configuration's log-time;
// expected_improvement how far below `best` it is expected to land.
class GaussianProcess {
 public:
  explicit GaussianProcess(const Space& s, double length = 0.35) : space_(s), length_(length) {}
  void add(const Configuration& c, double log_seconds);
  size_t size() const { return seen_.size(); }
  std::pair<double, double> predict(const Configuration& c) const;
  double expected_improvement(const Configuration& c, double best) const;

 private:
  double covariance(const Configuration& a, const Configuration& b) const;
  void fit() const;

  const Space& space_;
  double length_;
  std::vector<std::pair<Configuration, double>> seen_;
  mutable bool fitted_ = false;
  mutable double mean_ = 0, variance_ = 1;
  mutable std::vector<std::vector<double>> chol_;  // lower Cholesky factor of K + noise
  mutable std::vector<double> alpha_;              // (K + noise)^-1 (y - mean)
};

}  // namespace loom::tune
