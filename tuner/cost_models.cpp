// The evolution strategy's cost models (cost_models.h): the neighbours'
// times and the kernel features' ridge regression.
#include "cost_models.h"

#include <algorithm>
#include <numeric>

namespace loom::tune {

double picks_distance(const Space& space, const Configuration& a, const Configuration& b) {
  if (a.sketch != b.sketch) return HUGE_VAL;
  const Sketch& s = space.sketches()[size_t(a.sketch)];
  double d = 0;
  for (size_t p = 0; p < a.picks.size() && p < b.picks.size(); ++p) {
    double n = double(std::max<size_t>(1, s.choices[p].values.size() - 1));
    d += std::fabs(double(a.picks[p] - b.picks[p])) / n;
  }
  return d;
}

double NeighbourModel::predict(const Configuration& c) const {
  std::vector<std::pair<double, double>> near;  // (distance, log-time)
  for (auto& [m, y] : seen_)
    if (m.sketch == c.sketch) near.push_back({picks_distance(space_, c, m), y});
  if (near.empty()) return 0;  // unknown sketch: neutral
  std::sort(near.begin(), near.end());
  double num = 0, den = 0;
  for (size_t i = 0; i < std::min<size_t>(4, near.size()); ++i) {
    double w = 1 / (near[i].first + 0.05);
    num += w * near[i].second;
    den += w;
  }
  return num / den;

}

void FeatureModel::add(const std::map<std::string, double>& features, double seconds) {
  if (features.empty() || !(seconds > 0)) return;
  samples_.push_back({features, std::log(seconds)});
  fitted_ = false;
}

std::vector<double> FeatureModel::row(const std::map<std::string, double>& f) const {
  std::vector<double> x(names_.size() + 1, 0);
  x[0] = 1;  // (the intercept)
  for (size_t i = 0; i < names_.size(); ++i) {
    auto it = f.find(names_[i]);
    x[i + 1] = it == f.end() ? 0 : std::log1p(std::max(0.0, it->second));
  }
  return x;
}

void FeatureModel::fit() const {
  std::set<std::string> names;
  for (auto& [f, y] : samples_)
    for (auto& [n, v] : f) names.insert(n);
  names_.assign(names.begin(), names.end());
  size_t d = names_.size() + 1;  // (and an intercept)
  // (X'X + lambda I) w = X'y, by Gaussian elimination with partial pivoting
  std::vector<std::vector<double>> a(d, std::vector<double>(d + 1, 0));
  for (auto& [f, y] : samples_) {
    auto x = row(f);
    for (size_t i = 0; i < d; ++i) {
      for (size_t j = 0; j < d; ++j) a[i][j] += x[i] * x[j];
      a[i][d] += x[i] * y;
    }
  }
  for (size_t i = 1; i < d; ++i) a[i][i] += 0.1;  // ridge: features that do not vary say nothing
  for (size_t c = 0; c < d; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < d; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    if (std::fabs(a[c][c]) < 1e-12) continue;
    for (size_t r = 0; r < d; ++r) {
      if (r == c) continue;
      double m = a[r][c] / a[c][c];
      for (size_t j = c; j <= d; ++j) a[r][j] -= m * a[c][j];
    }
  }
  weights_.assign(d, 0);
  for (size_t i = 0; i < d; ++i) weights_[i] = std::fabs(a[i][i]) < 1e-12 ? 0 : a[i][d] / a[i][i];
  fitted_ = true;
}

std::optional<double> FeatureModel::predict(const std::map<std::string, double>& features) const {
  if (!ready() || features.empty()) return std::nullopt;
  if (!fitted_) fit();
  std::vector<double> x = row(features);
  return std::inner_product(x.begin(), x.end(), weights_.begin(), 0.0);
}

void GaussianProcess::add(const Configuration& c, double log_seconds) {
  seen_.push_back({c, log_seconds});
  fitted_ = false;
}

double GaussianProcess::covariance(const Configuration& a, const Configuration& b) const {
  double d = picks_distance(space_, a, b);
  // (exp(-d / l) of the picks' L1 distance: a product of one exponential
  // kernel a choice point, positive definite, as a Gaussian of it is not)
  return std::isinf(d) ? 0 : variance_ * std::exp(-d / length_);
}

void GaussianProcess::fit() const {
  size_t n = seen_.size();
  mean_ = 0;
  for (auto& [c, y] : seen_) mean_ += y / double(n);
  double v = 0;
  for (auto& [c, y] : seen_) v += (y - mean_) * (y - mean_) / double(n);
  variance_ = std::max(v, 1e-4);
  // K + noise = L L' (the noise: a trial's spread, a few percent of the log-time)
  chol_.assign(n, std::vector<double>(n, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j) {
      double sum = covariance(seen_[i].first, seen_[j].first) + (i == j ? 0.05 * variance_ + 1e-9 : 0);
      for (size_t k = 0; k < j; ++k) sum -= chol_[i][k] * chol_[j][k];
      chol_[i][j] = i == j ? std::sqrt(std::max(sum, 1e-12)) : sum / chol_[j][j];
    }
  // alpha = L'^-1 L^-1 (y - mean)
  alpha_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    double sum = seen_[i].second - mean_;
    for (size_t k = 0; k < i; ++k) sum -= chol_[i][k] * alpha_[k];
    alpha_[i] = sum / chol_[i][i];
  }
  for (size_t i = n; i-- > 0;) {
    double sum = alpha_[i];
    for (size_t k = i + 1; k < n; ++k) sum -= chol_[k][i] * alpha_[k];
    alpha_[i] = sum / chol_[i][i];
  }
  fitted_ = true;
}

std::pair<double, double> GaussianProcess::predict(const Configuration& c) const {
  if (seen_.empty()) return {0, 1};
  if (!fitted_) fit();
  size_t n = seen_.size();
  std::vector<double> k(n);
  for (size_t i = 0; i < n; ++i) k[i] = covariance(c, seen_[i].first);
  double mean = mean_;
  for (size_t i = 0; i < n; ++i) mean += k[i] * alpha_[i];
  // variance: k(c, c) - v'v with L v = k
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    double sum = k[i];
    for (size_t j = 0; j < i; ++j) sum -= chol_[i][j] * v[j];
    v[i] = sum / chol_[i][i];
  }
  double var = variance_;
  for (double x : v) var -= x * x;
  return {mean, std::sqrt(std::max(var, 1e-12))};
}

double GaussianProcess::expected_improvement(const Configuration& c, double best) const {
  auto [mean, sd] = predict(c);
  double gain = best - mean - 0.01;  // (a small margin: a tie is no improvement)
  double z = gain / sd;
  double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0)), pdf = std::exp(-z * z / 2) / std::sqrt(2 * M_PI);
  return gain * cdf + sd * pdf;
}

}  // namespace loom::tune
