// The measuring worker (measure.cpp): one process, forked from the tuner,
// that runs trials one at a time and is restarted when a trial kills it.
#pragma once
#include <string>

#include "loom/tuner.h"

namespace loom::tune::detail {

class MeasureWorker {
 public:
  MeasureWorker(const LoopKernel& as_written, const Options& o);
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;
  // Applies t.script, checks and times it; fills t's status, error and
  // figures. A worker that dies or overruns the trial timeout is recorded
  // as such (crashed / failed) and replaced at the next trial.
  void measure(Trial& t);
  int restarts() const { return restarts_; }

 private:
  void start();
  void stop();
  LoopKernel kernel_;
  Options options_;
  int pid_ = -1, to_ = -1, from_ = -1;
  int restarts_ = 0;
};

// The device trials run on, as the log names it.
std::string device_name(const Options& o);

}  // namespace loom::tune::detail
