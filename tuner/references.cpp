// The references a tuning run is measured against: the kernel as written
// (trial 0) and, where the caller has one, its own schedule (trial 1: a
// kernel file's transforms:). They are measured as any trial is (the same
// workers, timing and check), in a run of their own that never enters the
// log, so a resumed run and the search's trial counts are unchanged. The
// run's winner is never slower than them: where one is faster, it is the
// best, and the report says so.
#include "loom/tuner.h"

namespace loom::tune {

Options measuring_again(const Options& options) {
  Options o = options;
  o.references = false;
  o.settle = false;
  o.log.clear();
  o.resume = false;
  o.seed_logs.clear();
  o.strategy = "exhaustive";
  o.restrict = nullptr;
  o.progress = nullptr;
  o.time_limit_seconds = 0;
  return o;
}

void measure_references(const LoopKernel& k, const Options& options, Result& result) {
  Options o = measuring_again(options);
  std::vector<std::string> scripts{""};
  if (!options.own_schedule.empty()) scripts.push_back(options.own_schedule);
  o.trials = int(scripts.size());
  Space space = Space::from_scripts(scripts);
  std::vector<Trial> trials;
  try {
    trials = tune(k, space, o).trials;
  } catch (const NoValidConfiguration& e) {  // (neither ran correctly: each reports its status and reason)
    trials = e.trials;
  }
  for (auto& t : trials) {
    Trial named = t;
    bool written = t.script.empty();
    named.key = written ? "as written" : "own schedule";
    named.sketch = named.key;
    (written ? result.as_written : result.own_schedule) = named;
    if (t.status == TrialStatus::Ok && (!result.best || t.median_seconds < result.best->median_seconds)) result.best = named;
  }
}

}  // namespace loom::tune
