// The tuner (issue 30): from a kernel as written and a search space of
// transformation scripts, the fastest schedule that computes the same
// result. A space is a set of sketches, each a transformation script whose
// values may be choice points (`split_iname i choice(64|128|256)`, a whole
// step made `optional`); a user writes one, or auto_space derives one from
// the kernel's structure. A configuration picks a sketch and a value at
// every choice point; its script is an ordinary script, replayable with
// `loom show FILE --transform`. Each trial is generated (Loom's legality
// checks prune an illegal one with its reason), run in an isolated worker
// process, checked against the untransformed kernel on random inputs,
// timed (median of repetitions), and appended to a JSON-lines log as soon
// as it finishes, so an interrupted run resumes where it stopped.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "loom/kernel.h"
#include "loom/script.h"
#include "loom/target_info.h"

namespace loom::tune {

// ---- spaces ---------------------------------------------------------------

// One choice point: where it is (sketch line, for messages) and its values
// as script text ("" for a step made optional and left out).
struct ChoicePoint {
  std::string name;                 // e.g. "split_iname i, factor" or "optional add_prefetch a"
  std::vector<std::string> values;
};

// A sketch: a transformation script with choice points. Its text lines keep
// `@N@` where choice point N goes; an optional line is choice point N with
// values {"yes", ""} and the line is left out when "" is chosen.
struct Sketch {
  std::string name;                  // "user", "map 2-d", "rows across threads", ...
  std::vector<std::string> lines;    // templates
  std::vector<int> line_switch;      // per line: the choice point that turns it off, or -1
  std::vector<ChoicePoint> choices;
  // Configurations of this sketch to measure before any random draw: a
  // rule's guess for the timed sizes (auto_space), as the schedules a
  // hand-written default would pick (picks, one per choice point).
  std::vector<std::vector<int>> starts;
};

struct Configuration {
  int sketch = 0;
  std::vector<int> picks;            // one value index per choice point of the sketch
  std::string key() const;           // "2:0.3.1" (sketch:picks), unique in a space
};

class Space {
 public:
  Space() = default;
  explicit Space(std::vector<Sketch> sketches);
  // A user's space in the script language: transformation lines whose
  // values may be `choice(a|b|c)`; `optional ` before a line makes the
  // whole step a choice. Errors name line and column.
  static Space parse(const std::string& text, const std::string& filename = "<space>");
  // A JSON space: a script (a list of steps, as transform_script_from_json
  // reads) whose values may be {"choice": [...]} and whose steps may carry
  // "optional": true.
  static Space from_json(const std::string& text, const std::string& filename = "<space>");
  // A list of whole scripts (Triton's list of configurations): one sketch
  // each, without choice points.
  static Space from_scripts(const std::vector<std::string>& scripts);

  const std::vector<Sketch>& sketches() const { return sketches_; }
  double size() const;                               // configurations in all
  std::string script(const Configuration& c) const;  // the script text of c
  std::vector<TransformStep> steps(const Configuration& c) const;
  std::optional<Configuration> from_key(const std::string& key) const;
  std::vector<Configuration> all() const;            // every configuration (small spaces)
  Configuration random(std::mt19937_64& rng) const;  // a sketch uniformly, then each choice point
  Configuration random_in(int sketch, std::mt19937_64& rng) const;  // each choice point of that sketch
  // c with one choice point changed at random (the same sketch).
  Configuration mutate(const Configuration& c, std::mt19937_64& rng) const;
  // Every sketch's starts, in sketch order.
  std::vector<Configuration> starts() const;
  std::string str() const;                           // the sketches with their choice points

 private:
  std::vector<Sketch> sketches_;
};

// The space a tuner explores for a kernel as written, from its structure:
// parallel loops mapped to blocks and threads with free tile sizes, work
// per thread (ilp/unroll), reductions over threads, warps or sequential,
// shared-memory tiles where a footprint is reused, vector loads on
// contiguous axes. `target` is "cuda" or "cpu" (the CPU target runs GPU
// schedules too; its space is the same). With the sizes to be timed,
// sketches whose assumptions those sizes break (a vector axis of 77) are
// left out.
Space auto_space(const LoopKernel& k, const std::string& target = "cuda", const std::map<std::string, int64_t>& sizes = {});

// ---- trials and their log ---------------------------------------------------

// What became of a trial: measured (Ok); refused by the checks before it ran
// (Illegal); ran but computed other results than the kernel as written
// (Wrong); its worker died (Crashed); or it failed otherwise: a time-out, a
// compile or launch error (Failed). Logs and Python name it in lowercase.
enum class TrialStatus : uint8_t { Ok, Illegal, Wrong, Crashed, Failed };
const char* to_string(TrialStatus s);
TrialStatus trial_status_named(const std::string& name);  // Error for an unknown name
inline std::ostream& operator<<(std::ostream& os, TrialStatus s) { return os << to_string(s); }

struct Trial {
  std::string key;                   // Configuration::key
  std::string sketch;                // its sketch's name ("map", "rows + vec", "user", ...)
  std::string script;                // the transformation script (text)
  TrialStatus status = TrialStatus::Failed;  // (Failed until a worker says otherwise)
  std::string error;                 // why, for every status but ok
  uint64_t kernel_hash = 0;          // of the kernel as written
  std::string kernel_name;           // its name ("" in logs written before it was recorded)
  uint64_t variant_hash = 0;         // of the transformed kernel
  std::string target, device;        // "cpu"/"cuda"; the CPU or GPU name
  double generate_seconds = 0, compile_seconds = 0;
  int registers = -1;
  int64_t shared_bytes = 0;
  double occupancy = -1;             // the target model's estimate (cuda), -1: none
  double median_seconds = 0, min_seconds = 0, max_seconds = 0;  // over the reps (the spread: min to max)
  int reps = 0;
  std::string parameters;            // "m=1024 n=65536" (the timed sizes)
  // The check against the kernel as written: "passed", "failed", or "" (not
  // reached); the largest absolute error over the written arrays; the
  // sizes; what computed the expected outputs ("the interpreter", or "the
  // kernel as written compiled for cuda" (or cpu), where interpreting it would cost
  // more than the trial: tuner/measure.cpp, check_reference).
  std::string check;
  double check_error = 0;
  std::string check_sizes;
  std::string check_against;
  // What the record was made with: when (UTC, ISO 8601), Loom's version, the
  // dtypes of the kernel's arrays ("a:float32 out:float32") and the run's seed.
  std::string timestamp, version, dtypes;
  uint64_t seed = 0;
  // The variant's kernel features at the timed sizes (loom/statistics.h,
  // kernel_features): operations, bytes moved, barriers, threads per block.
  std::map<std::string, double> features;
  std::string to_json() const;       // one line
  static Trial from_json(const std::string& line);
  // Takes what a measuring worker found (status, error, figures) and keeps
  // what the tuner knew of the trial (its configuration, kernel, target,
  // sizes, occupancy); the device when the worker names one, and the longer
  // compile time (the screening's NVRTC run, not the worker's cache hit).
  void adopt(const Trial& measured);
};

// The log: a JSON-lines file, one trial per line, appended and flushed as
// each trial ends. Lines that do not parse (a run killed while writing)
// are skipped when read.
std::vector<Trial> read_log(const std::string& path);
void append_log(const std::string& path, const Trial& t);
// The fastest valid trial of these (for this kernel and target when given).
std::optional<Trial> best(const std::vector<Trial>& trials, uint64_t kernel_hash = 0, const std::string& target = "");

// Which trials of a log a question is about. Times compare only within one
// kernel, one set of sizes, one target and one card: a log may hold several.
struct LogFilter {
  std::string kernel;                          // its name, or its hash (hex digits); "" any
  std::map<std::string, int64_t> parameters;   // each must be among the trial's timed sizes
  std::string target;                          // "cpu" / "cuda"; "" any
  std::string device;                          // text the trial's card name contains; "" any
};
// The fastest valid trial of one group (kernel, sizes, target, card) of a
// log, with what it was picked from in `picked` ("kernel 'matmul'
// (hash ...), n=1000, cpu on ...: 12 trials, 11 valid"). Errors name what
// the log holds when the filter leaves no group, or several (give --kernel,
// -D, --target or --device to pick one), or none of the group's trials ran
// correctly. A log that does not exist is an error (read_log reads it as
// empty, for a run that starts one).
Trial best_in_log(const std::string& path, const LogFilter& filter, std::string* picked = nullptr);

// ---- the tuning loop --------------------------------------------------------
// What screening says of one script: whether Loom accepts it, and its
// figures (VariantResult's, without the code).
struct ScreenResult {
  bool ok = false;
  bool stopped = false;  // not refused: it took longer than compile_timeout_seconds (or its worker died)
  std::string error;
  uint64_t hash = 0;
  double generate_seconds = 0, compile_seconds = 0;
  int registers = -1;        // per thread, when compiled (-1: unknown)
  int64_t threads = 0, shared_bytes = 0;  // per block
  std::map<std::string, double> features;
};

// The target model's estimate of the fraction of an SM's threads a kernel
// keeps resident (blocks per SM x threads per block / threads per SM), from
// its threads, registers (-1: unknown, not counted) and shared memory per
// block; 0 when one block does not fit. `limit` names what bounds it
// (threads, registers, shared memory).
double occupancy(const TargetInfo& t, int64_t threads, int registers, int64_t shared_bytes, std::string* limit = nullptr);


struct Options {
  std::string target = "cpu";        // cpu | cuda
  std::string strategy = "auto";     // exhaustive | random | evolution | bayes | annealing | local | diff_evo | pso | auto (exhaustive when it fits, else evolution)
  int trials = 64;                   // measured or refused configurations, at most
  uint64_t seed = 1;
  std::string log;                   // "" : no log file
  bool resume = true;                // skip configurations already in the log for this kernel, target, device and sizes
  // Logs of other runs (another device, other sizes) whose fastest valid
  // trials of this kernel and target are measured first here (random and
  // evolution). The run's own log seeds the same way with its trials from
  // other devices or sizes, which it does not resume.
  std::vector<std::string> seed_logs;
  std::map<std::string, int64_t> parameters;        // the sizes timed
  std::map<std::string, int64_t> check_parameters;  // the sizes checked (default: small, not tile multiples)
  // The check's inputs and tolerances (Kernel Tuner's answer/atol): arrays
  // by name from .npy files (their shapes must be those of the check sizes;
  // the rest random), and tolerances per written array ("" key: every
  // array; none: by dtype, loom/runtime.h's compare).
  std::map<std::string, std::string> check_inputs;
  std::map<std::string, double> rtol, atol;
  double time_limit_seconds = 0;     // no new trial starts after this long (0: no limit)
  // Measure the kernel as written, and own_schedule (a script) where given,
  // besides the space (tuner/references.cpp): the winner is never slower.
  bool references = false;
  std::string own_schedule;
  // A winner whose runner-up's range of times reaches into its own is
  // measured again against it (settle_close_winners) before it is named.
  bool settle = false;
  // The user's restrictions on a space (Kernel Tuner's `restrictions`,
  // Triton's `prune_configs_by`): given a configuration's values by choice
  // point name (and "sketch": its sketch's name), false leaves it out before
  // anything is generated; it is neither a trial nor counted in the budget.
  std::function<bool(const std::map<std::string, std::string>& values)> restrict;
  double min_time_seconds = 0.05;    // timing: repeat until this long (at least 3 reps) ...
  int max_reps = 50;                 // ... or this many
  double trial_timeout_seconds = 60; // a trial longer than this: its worker is killed, the trial failed
  double compile_timeout_seconds = 30;  // screening (generation and NVRTC) longer than this: the trial failed
  int compile_workers = 0;           // processes generating (and compiling) candidates; 0: one per core
  // Evolution: once enough trials are measured, screen twice the batch and
  // measure the half a model of the kernel features (FeatureModel) predicts
  // fastest; the other half is left unmeasured (Result::unmeasured). Off by
  // default: its gain is small (3.5% on the CPU target, 2.3% on an H200, as
  // a geometric mean; docs/tuning.md, "Kernel features and the feature model").
  bool feature_model = false;
  int gpus = 0;                      // cuda: measuring workers, one per GPU; 0: every visible GPU
  std::string arch;                  // cuda: "" = the GPU's
  // The measuring worker: forked from this process (empty), or a fresh
  // program run with this argv that calls worker_main(3, 4) (the loom tool's
  // `tune-worker`, Python's `_loom.tune_worker()`). A process that has used
  // the GPU cannot hand CUDA to a forked child: from Python, or after any
  // GPU work, the worker is exec'd. The tuner's own process never opens the GPU.
  std::vector<std::string> worker_command;
  std::function<void(const Trial&, const std::optional<Trial>& best, int done, int total)> progress;

  // A backend other than this machine's processes (Ray, from Python): when
  // `measure` is set, no local measuring worker starts; `target`, `arch`,
  // `device` and `max_shared_bytes` are the backend's (it asked a worker of
  // its own), `screen` checks, generates (and compiles) a batch of scripts,
  // one result each, and `measure` runs a batch of trials, calling
  // finished(i) as trial i is filled in (so it is logged at once).
  std::function<std::vector<ScreenResult>(const std::vector<std::string>& scripts)> screen;
  std::function<void(std::vector<Trial>& trials, const std::function<void(size_t)>& finished)> measure;
  std::string device;
  int max_shared_bytes = 0;
};


// tune()'s error when no configuration of the space ran correctly: the
// message names the first few, and `trials` holds every one tried.
struct NoValidConfiguration : Error {
  std::vector<Trial> trials;
  NoValidConfiguration(const std::string& message, std::vector<Trial> tried) : Error(message), trials(std::move(tried)) {}
};

struct Result {
  std::vector<Trial> trials;         // this run's, in order
  std::vector<Trial> resumed;        // the log's earlier trials of this space it reused (not run again)
  std::optional<Trial> best;         // over this run, the log's earlier trials and the references
  // The references (Options::references): the kernel as written (trial 0)
  // and the caller's own schedule (trial 1), keyed "as written" and "own
  // schedule"; best is one of them where it is faster than every trial.
  std::optional<Trial> as_written, own_schedule;
  int skipped = 0;                   // already in the log
  int seeded = 0;                    // configurations measured first because they were fastest elsewhere
  int other_workloads = 0;           // other kernels' trials (the seed logs') the feature model learnt from first
  int unmeasured = 0;                // screened, but predicted slow by the feature model
  int restricted = 0;                // configurations the user's restrictions left out (never generated)
  int refused = 0;                   // in trials, refused by the checks before running: not counted against the budget
  // Where the runner-up's range of times reached into the winner's, what
  // re-measuring both found (settle_close_winners); "" otherwise.
  std::string settled;
  double seconds = 0;
};

// The evolution strategy's second model: log-time as a ridge regression on
// the logarithms of a variant's kernel features (Trial::features), learnt
// from this run's measurements. It ranks screened candidates before any is
// measured (Ansor's cost model does this job with gradient-boosted trees).
class FeatureModel {
 public:
  void add(const std::map<std::string, double>& features, double seconds);
  bool ready() const { return samples_.size() >= 6; }
  // Predicted log-seconds; nullopt without features or before ready().
  std::optional<double> predict(const std::map<std::string, double>& features) const;

 private:
  void fit() const;
  // A variant's features as the model reads them: 1 (the intercept), then
  // log(1 + feature) for each name it was fitted on.
  std::vector<double> row(const std::map<std::string, double>& features) const;
  std::vector<std::pair<std::map<std::string, double>, double>> samples_;
  mutable std::vector<std::string> names_;
  mutable std::vector<double> weights_;
  mutable bool fitted_ = false;
};

// The user's restrictions written as expressions over a space's named
// choice points (`choice(16|32|64 as bx)`; `bx * by <= 256`): false for a
// configuration one of them rules out (Options::restrict). Error for an
// expression that does not parse or names no choice point.
std::function<bool(const std::map<std::string, std::string>&)> restriction_of(const Space& space, const std::vector<std::string>& texts);

// Options for measuring a few given scripts again inside a run (the
// references, settle_close_winners): every one of them, exhaustively, no
// log, no resume, no seeds, restrictions, progress, time limit, references
// or settling of their own.
Options measuring_again(const Options& options);

// Measures the references of Options::references into result (as_written,
// own_schedule) and makes the faster of them the best where it beats it.
void measure_references(const LoopKernel& k, const Options& options, Result& result);

// Where the runner-up's fastest run was faster than the winner's slowest (the
// two within the noise), measures both again `rounds` times in fresh workers
// and makes the one with the lower median the best (tuner/noise.cpp);
// Result::settled says what it found.
void settle_close_winners(const LoopKernel& k, const Options& options, Result& result, int rounds = 3);

// The measuring worker's program (see Options::worker_command): reads its
// setup (the kernel as JSON, the options) and then trials from in_fd,
// answers on out_fd, until in_fd closes. Returns the exit status.
int worker_main(int in_fd, int out_fd);

namespace detail {
class MeasureWorker;
}
// One measuring worker for a backend of one's own (a Ray actor holds one):
// the same isolated process as the tuner's local workers (a trial that
// crashes or hangs costs a fresh process, not the caller). The first call
// starts it; target "auto" is resolved by it.
class Measurer {
 public:
  Measurer(const LoopKernel& as_written, const Options& o);
  ~Measurer();
  std::string target();
  std::string device();
  std::string arch();
  int max_shared_bytes();
  Trial measure(const std::string& script);  // status, error and figures filled in

 private:
  std::unique_ptr<detail::MeasureWorker> worker_;
};

// Tunes `k` (the kernel as written) over `space`. Throws Error when no
// configuration of the space is valid (with the reasons of the first few),
// or when the reference cannot run for the given parameters.
Result tune(const LoopKernel& k, const Space& space, const Options& o);

}  // namespace loom::tune
