// The references a tuning run is measured against: the kernel as written
// (trial 0) and, where the caller has one, its own schedule (trial 1: a
// kernel file's transforms:). They are measured as any trial is (the same
// workers, timing and check), in a run of their own that never enters the
// log, so a resumed run and the search's trial counts are unchanged. The
// run's winner is never slower than them: where one is faster, it is the
// best, and the report says so.
#include "loom/tuner.h"

namespace loom::tune {

void measure_references(const LoopKernel& k, const Options& options, Result& result) {
  Options o = options;
  o.references = false;
  o.log.clear();
  o.resume = false;
  o.seed_logs.clear();
  o.strategy = "exhaustive";
  o.restrict = nullptr;
  o.progress = nullptr;
  o.time_limit_seconds = 0;
  std::vector<std::string> scripts{""};
  if (!options.own_schedule.empty()) scripts.push_back(options.own_schedule);
  o.trials = int(scripts.size());
  Space space = Space::from_scripts(scripts);
  Result r;
  try {
    r = tune(k, space, o);
  } catch (const Error& e) {
    // none ran correctly: tune() lists each as "\n  KEY (STATUS): ERROR"
    std::string what = e.what();
    for (size_t i = 0; i < scripts.size(); ++i) {
      Trial t;
      t.key = t.sketch = i == 0 ? "as written" : "own schedule";
      t.script = scripts[i];
      t.status = "failed";
      t.error = what;
      std::string head = "\n  " + std::to_string(i) + ": (";  // (a script's key: "0:")
      if (size_t at = what.find(head); at != std::string::npos) {
        size_t close = what.find("): ", at);
        size_t end = what.find('\n', at + 1);
        if (close != std::string::npos) {
          t.status = what.substr(at + head.size(), close - at - head.size());
          t.error = what.substr(close + 3, end == std::string::npos ? std::string::npos : end - close - 3);
        }
      }
      (i == 0 ? result.as_written : result.own_schedule) = t;
    }
    return;
  }
  for (auto& t : r.trials) {
    Trial named = t;
    bool written = t.script.empty();
    named.key = written ? "as written" : "own schedule";
    named.sketch = named.key;
    (written ? result.as_written : result.own_schedule) = named;
    if (t.status == "ok" && (!result.best || t.median_seconds < result.best->median_seconds)) result.best = named;
  }
}

}  // namespace loom::tune
