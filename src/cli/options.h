// The command line's options and its help: what each command does, every
// option it takes, and an example (`loom --help`, `loom help run`,
// `loom run --help`).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::cli {

struct Options {
  std::string command, file, arch, target = "auto";
  std::string emit;    // a stage name (loom/stages.h) or ""
  std::string output;  // -o FILE: where --emit writes ("" = stdout)
  std::vector<std::string> transform_files;
  std::map<std::string, int64_t> params;
  std::map<std::string, double> scalars;  // -D NAME=1.5: a float value argument (alpha)
  std::map<std::string, std::string> inputs, outputs;  // --in / --out name=file.npy
  double max_memory_gib = 8;  // --max-memory: host memory the run's arrays may take
  int reps = -1;  // -1 until parse_args sets the command's default
  bool check = true;
  bool fallback_compile = false;
  bool verbose = false;
  bool json = false;  // transforms --json: the declarations as a JSON schema
  bool help = false;
  bool as_written = false;
  // stats
  bool redundant = false;
  std::string granularity;
  int subgroup_size = 32;  // leave out the file's transforms: (a tuned script replaces them)
  // tune
  std::string space = "auto";  // auto | a space file (choice(...) lines, or JSON)
  std::string strategy = "auto";
  std::string log;
  int trials = 64;
  uint64_t seed = 1;
  bool resume = true;
  bool settle = true;  // re-measure a winner within the runner-up's noise (--no-settle: off)
  std::vector<std::string> seed_logs;  // tune --seed-log
  std::vector<std::string> restrictions;  // tune --restrict
  std::string ray;                        // tune --ray ADDRESS: the Ray cluster to tune on
  std::string kernel, device;          // best --kernel / --device: which trials of a log
  bool feature_model = false;  // tune: evolution ranks screened candidates by their kernel features
  double trial_timeout = 60;
  double time_limit = 0;                          // tune --time-limit: seconds, 0 none
  std::map<std::string, double> rtol, atol;       // tune --rtol/--atol [ARRAY=]X ("" key: every array)
  std::map<std::string, std::string> check_inputs;  // tune --check-input NAME=FILE.npy
  std::map<std::string, int64_t> check_sizes;     // tune --check-size NAME=VALUE
  int gpus = 0;
};

// Parses argv; prints usage and exits with 2 on a usage error, or prints help
// and exits with 0 when asked for it.
Options parse_args(int argc, char** argv);

}  // namespace loom::cli
