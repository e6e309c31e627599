// The tuning log: one JSON object per line and per trial, appended and
// flushed (fsync'd) the moment the trial ends, so a run killed at any point
// keeps every trial it finished. A line cut short by the kill does not
// parse and is skipped when the log is read.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "loom/error.h"
#include "loom/tuner.h"

namespace loom::tune {

std::string Trial::to_json() const {
  nlohmann::json j;
  j["key"] = key;
  j["script"] = script;
  j["status"] = status;
  if (!error.empty()) j["error"] = error;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)kernel_hash);
  j["kernel_hash"] = hash;
  std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)variant_hash);
  j["variant_hash"] = hash;
  j["target"] = target;
  j["device"] = device;
  j["generate_seconds"] = generate_seconds;
  j["compile_seconds"] = compile_seconds;
  if (registers >= 0) j["registers"] = registers;
  j["shared_bytes"] = shared_bytes;
  if (occupancy >= 0) j["occupancy"] = occupancy;
  if (!features.empty()) j["features"] = features;
  if (status == "ok") {
    j["median_seconds"] = median_seconds;
    j["min_seconds"] = min_seconds;
    j["reps"] = reps;
  }
  j["parameters"] = parameters;
  return j.dump();
}

Trial Trial::from_json(const std::string& line) {
  auto j = nlohmann::json::parse(line);  // (nlohmann's errors: the caller skips the line)
  Trial t;
  t.key = j.at("key").get<std::string>();
  t.script = j.at("script").get<std::string>();
  t.status = j.at("status").get<std::string>();
  t.error = j.value("error", "");
  t.kernel_hash = std::stoull(j.at("kernel_hash").get<std::string>(), nullptr, 16);
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
  reps = m.reps;
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
    if (t.status != "ok" || (kernel_hash && t.kernel_hash != kernel_hash) || (!target.empty() && t.target != target)) continue;
    if (!b || t.median_seconds < b->median_seconds) b = t;
  }
  return b;
}

}  // namespace loom::tune
