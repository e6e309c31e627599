// The tuning log: one JSON object per line and per trial, appended and
// flushed (fsync'd) the moment the trial ends, so a run killed at any point
// keeps every trial it finished. A line cut short by the kill does not
// parse and is skipped when the log is read.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "loom/error.h"
#include "loom/tuner.h"

namespace loom::tune {

namespace {

// A hash as the log writes it: 16 hex digits.
std::string hash_text(uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return buf;
}

}  // namespace

const char* to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::Ok: return "ok";
    case TrialStatus::Illegal: return "illegal";
    case TrialStatus::Wrong: return "wrong";
    case TrialStatus::Crashed: return "crashed";
    case TrialStatus::Failed: return "failed";
  }
  return "failed";
}

TrialStatus trial_status_named(const std::string& name) {
  for (TrialStatus s : {TrialStatus::Ok, TrialStatus::Illegal, TrialStatus::Wrong, TrialStatus::Crashed, TrialStatus::Failed})
    if (name == to_string(s)) return s;
  throw Error("tuning log: unknown trial status '" + name + "' (ok, illegal, wrong, crashed or failed)");
}

std::string Trial::to_json() const {
  nlohmann::json j;
  j["key"] = key;
  if (!sketch.empty()) j["sketch"] = sketch;
  j["script"] = script;
  j["status"] = to_string(status);
  if (!error.empty()) j["error"] = error;
  j["kernel_hash"] = hash_text(kernel_hash);
  if (!kernel_name.empty()) j["kernel"] = kernel_name;
  j["variant_hash"] = hash_text(variant_hash);
  j["target"] = target;
  j["device"] = device;
  j["generate_seconds"] = generate_seconds;
  j["compile_seconds"] = compile_seconds;
  if (registers >= 0) j["registers"] = registers;
  j["shared_bytes"] = shared_bytes;
  if (occupancy >= 0) j["occupancy"] = occupancy;
  if (!features.empty()) j["features"] = features;
  if (status == TrialStatus::Ok) {
    j["median_seconds"] = median_seconds;
    j["min_seconds"] = min_seconds;
    j["max_seconds"] = max_seconds;
    j["reps"] = reps;
  }
  if (!check.empty()) {
    j["check"] = check;
    j["check_error"] = check_error;
    j["check_sizes"] = check_sizes;
    if (!check_against.empty()) j["check_against"] = check_against;
  }
  if (!timestamp.empty()) j["timestamp"] = timestamp;
  if (!version.empty()) j["version"] = version;
  if (!dtypes.empty()) j["dtypes"] = dtypes;
  if (seed) j["seed"] = seed;
  j["parameters"] = parameters;
  return j.dump();
}

Trial Trial::from_json(const std::string& line) {
  auto j = nlohmann::json::parse(line);  // (nlohmann's errors: the caller skips the line)
  Trial t;
  t.key = j.at("key").get<std::string>();
  t.script = j.at("script").get<std::string>();
  t.sketch = j.value("sketch", "");
  t.status = trial_status_named(j.at("status").get<std::string>());
  t.error = j.value("error", "");
  t.kernel_hash = std::stoull(j.at("kernel_hash").get<std::string>(), nullptr, 16);
  t.kernel_name = j.value("kernel", "");
  t.variant_hash = std::stoull(j.value("variant_hash", std::string("0")), nullptr, 16);
  t.target = j.value("target", "");
  t.device = j.value("device", "");
  t.generate_seconds = j.value("generate_seconds", 0.0);
  t.compile_seconds = j.value("compile_seconds", 0.0);
  t.registers = j.value("registers", -1);
  t.shared_bytes = j.value("shared_bytes", int64_t(0));
  t.occupancy = j.value("occupancy", -1.0);
  if (j.contains("features") && j["features"].is_object())
    for (auto& [n, v] : j["features"].items())
      if (v.is_number()) t.features[n] = v.get<double>();
  t.median_seconds = j.value("median_seconds", 0.0);
  t.min_seconds = j.value("min_seconds", 0.0);
  t.reps = j.value("reps", 0);
  t.max_seconds = j.value("max_seconds", 0.0);
  t.check = j.value("check", "");
  t.check_error = j.value("check_error", 0.0);
  t.check_sizes = j.value("check_sizes", "");
  t.check_against = j.value("check_against", "");
  t.timestamp = j.value("timestamp", "");
  t.version = j.value("version", "");
  t.dtypes = j.value("dtypes", "");
  t.seed = j.value("seed", uint64_t(0));
  t.parameters = j.value("parameters", "");
  return t;
}

void Trial::adopt(const Trial& m) {
  status = m.status;
  error = m.error;
  variant_hash = m.variant_hash;
  if (!m.device.empty()) device = m.device;
  generate_seconds = m.generate_seconds;
  compile_seconds = std::max(compile_seconds, m.compile_seconds);
  registers = m.registers;
  shared_bytes = m.shared_bytes;
  median_seconds = m.median_seconds;
  min_seconds = m.min_seconds;
  max_seconds = m.max_seconds;
  reps = m.reps;
  check = m.check;
  check_error = m.check_error;
  check_sizes = m.check_sizes;
  check_against = m.check_against;
}

std::vector<Trial> read_log(const std::string& path) {
  std::vector<Trial> out;
  std::ifstream in(path);
  if (!in) return out;  // (no log yet: nothing to resume)
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      out.push_back(Trial::from_json(line));
    } catch (const std::exception&) {
      // a line cut short by a killed run
    }
  }
  return out;
}

void append_log(const std::string& path, const Trial& t) {
  std::string line = t.to_json() + "\n";
  FILE* f = std::fopen(path.c_str(), "a+");
  if (!f) throw Error("cannot append to the tuning log '" + path + "'");
  // a run killed while writing left a line without its end: end it, so this trial is a line of its own
  if (std::fseek(f, -1, SEEK_END) == 0 && std::fgetc(f) != '\n') line = "\n" + line;
  std::fseek(f, 0, SEEK_END);
  bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size() && std::fflush(f) == 0;
  if (ok) fsync(fileno(f));
  std::fclose(f);
  if (!ok) throw Error("cannot write the tuning log '" + path + "'");
}

std::optional<Trial> best(const std::vector<Trial>& trials, uint64_t kernel_hash, const std::string& target) {
  std::optional<Trial> b;
  for (auto& t : trials) {
    if (t.status != TrialStatus::Ok || (kernel_hash && t.kernel_hash != kernel_hash) || (!target.empty() && t.target != target)) continue;
    if (!b || t.median_seconds < b->median_seconds) b = t;
  }
  return b;
}

namespace {

// One group of a log: what its trials' times can be compared within.
std::string group_of(const Trial& t) {
  std::string name = t.kernel_name.empty() ? "kernel" : "kernel '" + t.kernel_name + "'";
  return name + " (hash " + hash_text(t.kernel_hash) + "), " + (t.parameters.empty() ? "no sizes" : t.parameters) + ", " + t.target +
         (t.device.empty() ? "" : " on " + t.device);
}

bool admits(const LogFilter& f, const Trial& t) {
  if (!f.kernel.empty() && f.kernel != t.kernel_name && f.kernel != hash_text(t.kernel_hash) &&
      !(f.kernel.size() >= 4 && hash_text(t.kernel_hash).rfind(f.kernel, 0) == 0))
    return false;
  if (!f.target.empty() && f.target != "auto" && f.target != t.target) return false;
  if (!f.device.empty() && t.device.find(f.device) == std::string::npos) return false;
  std::istringstream sizes(t.parameters);
  std::set<std::string> timed;
  for (std::string item; sizes >> item;) timed.insert(item);
  for (auto& [n, v] : f.parameters)
    if (!timed.count(n + "=" + std::to_string(v))) return false;
  return true;
}

}  // namespace

Trial best_in_log(const std::string& path, const LogFilter& filter, std::string* picked) {
  if (!std::filesystem::exists(path)) throw Error("tuning log '" + path + "' does not exist");
  std::vector<Trial> trials = read_log(path);
  if (trials.empty()) throw Error("tuning log '" + path + "' holds no trials");
  std::map<std::string, std::vector<const Trial*>> groups, all;
  for (auto& t : trials) {
    all[group_of(t)].push_back(&t);
    if (admits(filter, t)) groups[group_of(t)].push_back(&t);
  }
  auto listing = [](const std::map<std::string, std::vector<const Trial*>>& g) {
    std::string s;
    for (auto& [name, ts] : g) s += "\n  " + name + ": " + std::to_string(ts.size()) + " trials";
    return s;
  };
  if (groups.empty()) throw Error("tuning log '" + path + "': no trials match the filter; it holds" + listing(all));
  if (groups.size() > 1)
    throw Error("tuning log '" + path + "' holds trials of " + std::to_string(groups.size()) +
                " kernels, sizes, targets or cards, whose times do not compare; pick one with --kernel NAME, -D NAME=VALUE, --target "
                "or --device:" + listing(groups));
  auto& [name, ts] = *groups.begin();
  const Trial* b = nullptr;
  int valid = 0;
  for (auto* t : ts) {
    if (t->status != TrialStatus::Ok) continue;
    ++valid;
    if (!b || t->median_seconds < b->median_seconds) b = t;
  }
  if (!b) throw Error("tuning log '" + path + "': none of the " + std::to_string(ts.size()) + " trials of " + name + " ran correctly");
  if (picked) *picked = name + ": " + std::to_string(ts.size()) + " trials, " + std::to_string(valid) + " valid";
  return *b;
}

}  // namespace loom::tune
