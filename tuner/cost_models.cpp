// The evolution strategy's cost models (cost_models.h): the neighbours'
// times and the kernel features' ridge regression.
#include "cost_models.h"

#include <algorithm>
#include <numeric>

namespace loom::tune {

double NeighbourModel::predict(const Configuration& c) const {
  const Sketch& s = space_.sketches()[size_t(c.sketch)];
  std::vector<std::pair<double, double>> near;  // (distance, log-time)
  for (auto& [m, y] : seen_) {
    if (m.sketch != c.sketch) continue;
    double d = 0;
    for (size_t p = 0; p < c.picks.size(); ++p) {
      double n = double(std::max<size_t>(1, s.choices[p].values.size() - 1));
      d += std::fabs(double(c.picks[p] - m.picks[p])) / n;
    }
    near.push_back({d, y});
  }
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

}  // namespace loom::tune
