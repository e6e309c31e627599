// The measuring worker (measure.cpp): one process, forked from the tuner,
// that runs trials one at a time and is restarted when a trial kills it.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "loom/tuner.h"

namespace loom::tune::detail {

// What the worker reported when it started: the target it resolved
// ("auto" becomes cuda with a GPU), its device, and the GPU's architecture
// and shared memory (so this process need not ask the driver).
struct WorkerInfo {
  std::string target, device, arch;
  int max_shared_bytes = 0;
};

// The GPUs this process may use, counted without opening the driver:
// CUDA_VISIBLE_DEVICES's entries, else the /dev/nvidiaN device nodes.
std::vector<std::string> visible_gpu_ids();

// The worker's loop: its setup, then one trial per message (worker_main).
int serve_trials(int in_fd, int out_fd);

class MeasureWorker {
 public:
  // gpu: the CUDA device this worker may see (CUDA_VISIBLE_DEVICES in the
  // worker), "" for all of them
  MeasureWorker(const LoopKernel& as_written, const Options& o, std::string gpu = "");
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;
  // Applies t.script, checks and times it; fills t's status, error and
  // figures. A worker that dies or overruns the trial timeout is recorded
  // as such (crashed / failed) and replaced at the next trial.
  void measure(Trial& t);
  // The same in two halves, so that one process can keep a worker per GPU
  // busy: begin sends the trial (false: the worker had gone), finish waits
  // for its result until the trial's timeout (see fd() to wait on several).
  bool begin(const Trial& t);
  void finish(Trial& t, bool sent);
  int fd() const { return from_; }
  bool busy() const { return busy_; }
  double seconds_left() const;
  const WorkerInfo& info();  // starts the worker if it is not running
  int restarts() const { return restarts_; }

 private:
  void start();
  void stop();
  LoopKernel kernel_;
  Options options_;
  std::string gpu_;
  int pid_ = -1, to_ = -1, from_ = -1;
  bool busy_ = false;
  std::chrono::steady_clock::time_point started_;
  int restarts_ = 0;
  WorkerInfo info_;
};

}  // namespace loom::tune::detail
