// The measuring worker (measure.cpp): one process, forked from the tuner,
// that runs trials one at a time and is restarted when a trial kills it.
#pragma once
#include <string>

#include "loom/tuner.h"

namespace loom::tune::detail {

// What the worker reported when it started: the target it resolved
// ("auto" becomes cuda with a GPU), its device, and the GPU's architecture
// and shared memory (so this process need not ask the driver).
struct WorkerInfo {
  std::string target, device, arch;
  int max_shared_bytes = 0;
};

// The worker's loop: its setup, then one trial per message (worker_main).
int serve_trials(int in_fd, int out_fd);

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
  const WorkerInfo& info();  // starts the worker if it is not running
  int restarts() const { return restarts_; }

 private:
  void start();
  void stop();
  LoopKernel kernel_;
  Options options_;
  int pid_ = -1, to_ = -1, from_ = -1;
  int restarts_ = 0;
  WorkerInfo info_;
};

}  // namespace loom::tune::detail
