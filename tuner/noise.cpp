// settle_close_winners (tuner.h): a winner that beats the runner-up by less
// than the noise of its own measurement is not a winner yet. Each trial
// reports the min, median and max of its runs; where the runner-up's range
// reaches into the winner's (its fastest run is faster than the winner's
// slowest), both are measured again, three rounds, alternating, in fresh
// workers (as the references are: a nested tune of the two scripts), and the
// one with the lower median over the rounds wins — so the name of a run's
// winner does not change from one run to the next on noise alone (Kernel
// Tuner re-measures for the same reason).
#include <algorithm>

#include "loom/tuner.h"

namespace loom::tune {

namespace {

bool overlap(const Trial& best, const Trial& runner_up) { return runner_up.min_seconds <= best.max_seconds; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

void settle_close_winners(const LoopKernel& k, const Options& options, Result& result, int rounds) {
  if (!result.best) return;
  std::vector<const Trial*> ok;
  for (auto* set : {&result.trials, &result.resumed})
    for (auto& t : *set)
      if (t.status == TrialStatus::Ok && t.script != result.best->script) ok.push_back(&t);
  if (ok.empty()) return;
  const Trial& runner_up = **std::min_element(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->median_seconds < b->median_seconds; });
  if (!overlap(*result.best, runner_up)) return;
  Options o = measuring_again(options);
  o.trials = 2;
  const Trial contenders[2] = {*result.best, runner_up};
  std::vector<double> medians[2];
  for (int round = 0; round < rounds; ++round) {
    // (alternating which runs first: a card warming up favours neither)
    std::vector<std::string> scripts{contenders[round % 2].script, contenders[1 - round % 2].script};
    std::vector<Trial> again;
    try {
      again = tune(k, Space::from_scripts(scripts), o).trials;
    } catch (const Error&) {
      return;  // (a contender that no longer runs: the first measurement stands)
    }
    for (auto& t : again) {
      if (t.status != TrialStatus::Ok) return;
      // (the key's sketch is the script's place in `scripts`)
      int first = round % 2, place = std::stoi(t.key);
      medians[place == 0 ? first : 1 - first].push_back(t.median_seconds);
    }
  }
  if (medians[0].empty() || medians[1].empty()) return;
  int winner = median_of(medians[1]) < median_of(medians[0]) ? 1 : 0;
  Trial settled = contenders[winner];
  settled.median_seconds = median_of(medians[winner]);
  settled.min_seconds = *std::min_element(medians[winner].begin(), medians[winner].end());
  settled.max_seconds = *std::max_element(medians[winner].begin(), medians[winner].end());
  result.settled = "re-measured " + contenders[0].key + " and " + contenders[1].key + " " + std::to_string(rounds) +
                   " rounds (their ranges overlapped): medians " + std::to_string(median_of(medians[0]) * 1e3) + " and " +
                   std::to_string(median_of(medians[1]) * 1e3) + " ms; " + settled.key + " wins";
  result.best = settled;
}

}  // namespace loom::tune
