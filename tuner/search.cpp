// The search strategies (search.h).
#include "search.h"

#include <algorithm>
#include <cmath>

namespace loom::tune {

namespace {

// A configuration's values by choice point name, and its sketch's name
// under "sketch": what the user's restrictions are asked about.
std::map<std::string, std::string> choice_values(const Space& space, const Configuration& c) {
  const Sketch& s = space.sketches().at(size_t(c.sketch));
  std::map<std::string, std::string> v{{"sketch", s.name}};
  for (size_t i = 0; i < s.choices.size() && i < c.picks.size(); ++i) v[s.choices[i].name] = s.choices[i].values.at(size_t(c.picks[i]));
  return v;
}

}  // namespace

Search::Search(const Space& space, const Options& o, std::string strategy, std::vector<Configuration> seeds, const std::set<std::string>& done)
    : space_(space), o_(o), strategy_(std::move(strategy)), done_(done), rng_(o.seed), model_(space), gp_(space), starts_(std::move(seeds)) {
  if (strategy_ == "exhaustive") order_ = space.all();
  for (auto& c : space.starts()) starts_.push_back(c);
  std::reverse(starts_.begin(), starts_.end());
  for (size_t s = 0; s < space.sketches().size(); ++s) unvisited_.push_back(int(s));
  std::shuffle(unvisited_.begin(), unvisited_.end(), rng_);
}

size_t Search::untried() const {
  return size_t(std::count_if(order_.begin(), order_.end(), [&](const Configuration& c) { return !done_.count(space_.script(c)); }));
}

void Search::measured(const Configuration& c, std::optional<double> seconds) {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Configuration& p) { return p.key() == c.key(); }), pending_.end());
  if (seconds) {
    valid_.push_back({*seconds, c});
    model_.add(c, *seconds);
    gp_.add(c, std::log(*seconds));
    if (strategy_ == "annealing" && current_) {
      double excess = std::log(*seconds) - std::log(current_->first);
      if (excess < 0 || std::uniform_real_distribution<double>(0, 1)(rng_) < std::exp(-excess / temperature_)) current_ = {*seconds, c};
      temperature_ = std::max(0.005, temperature_ * 0.93);
    }
    for (auto& q : particles_)
      if (q.pending == c.key() && *seconds < q.best_seconds) q.best = c, q.best_seconds = *seconds;
    if (strategy_ == "local" && current_ && (restart_ || *seconds < current_->first)) {
      current_ = {*seconds, c};
      restart_ = false;
    }
  } else if (!valid_.empty()) {  // (as slow as four times the slowest valid one: its neighbourhood is avoided)
    double slowest = std::max_element(valid_.begin(), valid_.end(), [](auto& a, auto& b) { return a.first < b.first; })->first * 4;
    model_.add(c, slowest);
    gp_.add(c, std::log(slowest));
  }
}

std::optional<Configuration> Search::mutant_of_the_best() {
  // evolution: mutants of the best few, the most promising by the model;
  // one parent in four is the best of some sketch instead, so a sketch
  // whose first random draws were poor is still refined (a short run's
  // few random trials decide little about a sketch)
  std::sort(valid_.begin(), valid_.end(), [](auto& a, auto& b) { return a.first < b.first; });
  size_t parents = std::min<size_t>(valid_.size(), 4);
  std::vector<size_t> sketch_bests;  // indexes into valid, the first of each sketch
  std::set<int> seen_sketches;
  for (size_t v = 0; v < valid_.size(); ++v)
    if (seen_sketches.insert(valid_[v].second.sketch).second) sketch_bests.push_back(v);
  std::vector<std::pair<double, Configuration>> candidates;
  // (the model ranks the mutants together, so a sketch's best is
  // mutated alone: among the others' mutants its would never rank first)
  bool from_sketch = sketch_bests.size() > 1 && std::uniform_int_distribution<int>(0, 3)(rng_) == 0;
  size_t sketch_parent = from_sketch ? sketch_bests[std::uniform_int_distribution<size_t>(0, sketch_bests.size() - 1)(rng_)] : 0;
  for (int m = 0; m < 24; ++m) {
    size_t parent = from_sketch ? sketch_parent : std::uniform_int_distribution<size_t>(0, parents - 1)(rng_);
    Configuration c = valid_[parent].second;
    int steps = 1 + int(std::uniform_int_distribution<int>(0, 2)(rng_) == 0);
    for (int s = 0; s < steps; ++s) c = space_.mutate(c, rng_);
    if (fresh(c)) candidates.push_back({model_.predict(c), c});
  }
  if (candidates.empty()) return std::nullopt;
  return std::min_element(candidates.begin(), candidates.end(), [](auto& a, auto& b) { return a.first < b.first; })->second;
}

std::optional<Configuration> Search::most_promising_by_expected_improvement() {
  // Bayesian optimisation (Kernel Tuner's bayes_opt, without its library):
  // of random draws and of mutants of the best few, the configuration whose
  // expected improvement on the best log-time is largest under the
  // Gaussian process; a batch's earlier picks count as measured at their
  // predicted time, so the batch spreads out
  std::vector<std::pair<double, Configuration>> sorted = valid_;
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.first < b.first; });
  const double best = sorted.front().first;
  std::vector<Configuration> candidates;
  for (int r = 0; r < 48; ++r) candidates.push_back(space_.random(rng_));
  for (size_t p = 0; p < std::min<size_t>(4, sorted.size()); ++p)
    for (int m = 0; m < 12; ++m) candidates.push_back(space_.mutate(sorted[p].second, rng_));
  GaussianProcess believed = gp_;
  for (auto& c : pending_) believed.add(c, believed.predict(c).first);
  std::optional<Configuration> pick;
  double most = -1;
  for (auto& c : candidates) {
    if (!fresh(c)) continue;
    double ei = believed.expected_improvement(c, std::log(best));
    if (ei > most) most = ei, pick = c;
  }
  return pick;
}

std::optional<Configuration> Search::next_annealing_step() {
  // simulated annealing (Kernel Tuner's simulated_annealing): a neighbour of
  // the current configuration; measured(), it replaces the current one when
  // faster, or when slower with probability exp(-(its log-time's excess) / T),
  // T falling with each measurement
  if (!current_) current_ = *std::min_element(valid_.begin(), valid_.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (int attempt = 0; attempt < 24; ++attempt) {
    Configuration c = space_.mutate(current_->second, rng_);
    if (fresh(c)) return c;
  }
  return std::nullopt;
}

std::optional<Configuration> Search::next_local_step() {
  // multi-start local search (Kernel Tuner's mls): each neighbour of the
  // current configuration (one choice point a step up or down) in turn; the
  // first faster one becomes current; with every neighbour measured and
  // none faster (a local minimum), a random configuration starts again
  if (!current_) current_ = *std::min_element(valid_.begin(), valid_.end(), [](auto& a, auto& b) { return a.first < b.first; });
  const Sketch& s = space_.sketches()[size_t(current_->second.sketch)];
  std::vector<Configuration> around;
  for (size_t p = 0; p < s.choices.size(); ++p)
    for (int step : {1, -1}) {
      Configuration c = current_->second;
      c.picks[p] += step;
      if (c.picks[p] >= 0 && c.picks[p] < int(s.choices[p].values.size()) && fresh(c)) around.push_back(c);
    }
  if (!around.empty()) return around[std::uniform_int_distribution<size_t>(0, around.size() - 1)(rng_)];
  restart_ = true;  // (the next measurement becomes current, whatever its time)
  Configuration r = space_.random(rng_);
  return fresh(r) ? std::optional<Configuration>(r) : std::nullopt;
}

// The valid configurations measured so far of the fastest one's sketch,
// fastest first (differential evolution's population, the swarm's start).
std::vector<std::pair<double, Configuration>> Search::population() const {
  std::vector<std::pair<double, Configuration>> out = valid_;
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.first < b.first; });
  int sketch = out.front().second.sketch;
  out.erase(std::remove_if(out.begin(), out.end(), [&](auto& v) { return v.second.sketch != sketch; }), out.end());
  return out;
}

// picks rounded to the nearest value and kept in each choice point's range
Configuration Search::rounded(int sketch, const std::vector<double>& position) const {
  const Sketch& s = space_.sketches()[size_t(sketch)];
  Configuration c{sketch, std::vector<int>(s.choices.size(), 0)};
  for (size_t p = 0; p < s.choices.size(); ++p)
    c.picks[p] = std::clamp(int(std::lround(position[p])), 0, int(s.choices[p].values.size()) - 1);
  return c;
}

std::optional<Configuration> Search::next_differential_step() {
  // differential evolution (Kernel Tuner's diff_evo, scipy's scheme
  // best/1/bin on the picks): the fastest plus F (0.5 to 1) times the difference of two
  // others of its sketch, crossed with a member of the population (the
  // eight fastest of that sketch) dimension by dimension, rounded to choice
  // values
  auto pop = population();
  if (pop.size() < 3) return mutant_of_the_best();
  if (pop.size() > 8) pop.resize(8);  // (the population: the eight fastest, as selection keeps the fitter)
  const size_t n = pop[0].second.picks.size();
  for (int attempt = 0; attempt < 24; ++attempt) {
    std::uniform_int_distribution<size_t> any(1, pop.size() - 1);
    size_t b = any(rng_), c = any(rng_), x = std::uniform_int_distribution<size_t>(0, pop.size() - 1)(rng_);
    if (b == c) continue;
    std::vector<double> v(n);
    const double f = std::uniform_real_distribution<double>(0.5, 1)(rng_);  // (dithered, as scipy's default (0.5, 1))
    size_t forced = std::uniform_int_distribution<size_t>(0, std::max<size_t>(n, 1) - 1)(rng_);
    for (size_t p = 0; p < n; ++p) {
      double mutant = pop[0].second.picks[p] + f * (pop[b].second.picks[p] - pop[c].second.picks[p]);
      bool cross = p == forced || std::uniform_real_distribution<double>(0, 1)(rng_) < 0.7;
      v[p] = cross ? mutant : pop[x].second.picks[p];
    }
    Configuration t = rounded(pop[0].second.sketch, v);
    if (fresh(t)) return t;
  }
  return mutant_of_the_best();
}

std::optional<Configuration> Search::next_swarm_step() {
  // particle swarm (Kernel Tuner's pso): eight particles in the fastest
  // sketch's pick space, each pulled toward its own best and the swarm's
  // (inertia 0.5, both pulls 1.5 times a random factor); a particle's
  // proposal, once measured, may become its best (measured())
  auto pop = population();
  const int sketch = pop[0].second.sketch;
  if (particles_.empty() || particles_.front().best.sketch != sketch) {
    particles_.clear();
    for (size_t i = 0; i < 8; ++i) {
      const auto& [t, c] = pop[i % pop.size()];
      Particle q;
      q.best = c;
      q.best_seconds = t;
      q.position.assign(c.picks.begin(), c.picks.end());
      for (size_t p = 0; p < q.position.size(); ++p) q.velocity.push_back(std::uniform_real_distribution<double>(-1, 1)(rng_));
      particles_.push_back(q);
    }
  }
  const Configuration& swarm_best = pop[0].second;
  for (int attempt = 0; attempt < int(particles_.size()) * 3; ++attempt) {
    Particle& q = particles_[next_particle_++ % particles_.size()];
    for (size_t p = 0; p < q.position.size(); ++p) {
      double r1 = std::uniform_real_distribution<double>(0, 1)(rng_), r2 = std::uniform_real_distribution<double>(0, 1)(rng_);
      q.velocity[p] = 0.5 * q.velocity[p] + 1.5 * r1 * (q.best.picks[p] - q.position[p]) + 1.5 * r2 * (swarm_best.picks[p] - q.position[p]);
      q.position[p] += q.velocity[p];
    }
    Configuration c = rounded(sketch, q.position);
    if (fresh(c)) {
      q.pending = c.key();
      return c;
    }
  }
  return mutant_of_the_best();
}

std::vector<Configuration> Search::next_batch(size_t want, size_t measured) {
  std::vector<Configuration> batch;
  auto take = [&](const Configuration& c) {
    picked_.insert(c.key());
    if (done_.count(space_.script(c))) {
      ++skipped_;
      return;
    }
    if (o_.restrict && !o_.restrict(choice_values(space_, c))) {
      ++restricted_;
      return;
    }
    batch.push_back(c);
  };
  if (strategy_ == "exhaustive") {
    while (batch.size() < want && next_in_order_ < order_.size()) take(order_[next_in_order_++]);
    return batch;
  }
  // evolution: random until this many; with a trial for each sketch,
  // every sketch is drawn once first (unvisited), so a sketch the few
  // random draws of a short run would miss (the one tensor-core sketch of
  // twelve, 16 trials) is measured
  size_t warm = std::max<size_t>(8, size_t(o_.trials) / 4);
  bool covers = size_t(o_.trials) >= space_.sketches().size();
  if (covers) warm = std::max(warm, space_.sketches().size());
  for (int attempts = 0; batch.size() < want && attempts < 200 * int(want); ++attempts) {
    if (double(picked_.size()) >= space_.size()) break;
    if (!starts_.empty()) {
      Configuration c = starts_.back();
      starts_.pop_back();
      if (fresh(c)) take(c);
      continue;
    }
    if (strategy_ == "random" || valid_.size() < 2 || measured < warm) {
      bool cover = strategy_ == "evolution" && !unvisited_.empty() && covers;
      Configuration c = cover ? space_.random_in(unvisited_.back(), rng_) : space_.random(rng_);
      if (cover) unvisited_.pop_back();
      if (fresh(c)) take(c);
      continue;
    }
    std::optional<Configuration> c;
    if (strategy_ == "bayes") c = most_promising_by_expected_improvement();
    else if (strategy_ == "annealing") c = next_annealing_step();
    else if (strategy_ == "local") c = next_local_step();
    else if (strategy_ == "diff_evo") c = next_differential_step();
    else if (strategy_ == "pso") c = next_swarm_step();
    else c = mutant_of_the_best();
    if (!c) {  // a neighbourhood worn out: explore
      Configuration r = space_.random(rng_);
      if (fresh(r)) take(r);
      continue;
    }
    take(*c);
    if (strategy_ == "bayes") pending_.push_back(*c);
    if (strategy_ == "evolution" && std::uniform_int_distribution<int>(0, 3)(rng_) == 0) {  // one in four also random, as evolution keeps diversity
      Configuration r = space_.random(rng_);
      if (fresh(r) && batch.size() < want) take(r);
    }
  }
  return batch;
}

}  // namespace loom::tune
