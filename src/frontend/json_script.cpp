// Transformation scripts as JSON: a list of steps {"transform": NAME, ARG:
// VALUE, ...} whose arguments are checked against the registry's schema
// where they are read, so an error names the JSON path of the argument.
// Values are JSON integers for integer parameters, strings otherwise; lists
// may be arrays (["i", "j"]), tag maps and keyword maps objects
// ({"i": "g.0"}, {"n": 128}).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "loom/json.h"
#include "loom/transforms.h"

namespace loom {

namespace frontend {

namespace {

const TransformParam* find_param(const TransformInfo& t, const std::string& name) {
  for (auto& p : t.params)
    if (p.name == name) return &p;
  return nullptr;
}

// A name or an integer, as script text.
std::string scalar_text(const JsonValue& v) {
  return v.raw().is_number_integer() ? std::to_string(v.integer(INT64_MIN, INT64_MAX)) : v.string();
}

// A list value: an array of names or integers, joined by ','.
std::string list_text(const JsonValue& v) {
  std::string out;
  for (auto& x : v.items()) out += (out.empty() ? "" : ",") + scalar_text(x);
  return out;
}

// An object value as "k:v,..." (tag maps) or "k=v,..." (keyword maps).
std::string map_text(const JsonValue& v, const char* sep) {
  std::string out;
  for (auto& [key, value] : v.members()) out += (out.empty() ? "" : ",") + key + sep + scalar_text(value);
  return out;
}

std::string argument_text(const JsonValue& v, const TransformParam* p) {
  auto kind = p ? p->kind : TransformParam::Int;  // keywords a collector gathers are values (n=128)
  if (kind == TransformParam::Int) {
    if (!p && v.is_string()) return v.string();  // add_dtypes: {"a": "float32"}
    return std::to_string(v.integer(INT64_MIN, INT64_MAX));
  }
  if (v.is_array()) return list_text(v);
  if (v.is_object()) {
    if (kind == TransformParam::TagMap) return map_text(v, ":");
    if (kind == TransformParam::KeywordMap) return map_text(v, "=");
    v.fail("expected a string or an array, got an object");
  }
  if (v.raw().is_boolean()) return v.boolean() ? "true" : "false";
  return scalar_text(v);
}

TransformStep read_step(const JsonValue& v) {
  TransformStep step;
  step.name = v.field("transform").string();
  const TransformInfo* info = transform_registry().find(step.name);
  if (!info) {
    std::vector<std::string> names;
    for (auto& t : transform_registry().all()) names.push_back(t.name);
    v.field("transform").fail("unknown transform '" + step.name + "'" + did_you_mean(step.name, names));
  }
  bool collects = std::any_of(info->params.begin(), info->params.end(),
                              [](auto& p) { return p.kind == TransformParam::KeywordMap; });
  std::vector<std::string> names;
  for (auto& p : info->params) names.push_back(p.name);
  for (auto& [key, value] : v.members()) {
    if (key == "transform") continue;
    const TransformParam* p = find_param(*info, key);
    if (!p && !collects) {
      std::string known;
      for (auto& n : names) known += (known.empty() ? "" : ", ") + n;
      value.fail("unknown argument '" + key + "' of " + step.name + did_you_mean(key, names) + " (arguments: " + known + ")");
    }
    step.keyword[key] = argument_text(value, p);
  }
  for (auto& p : info->params)
    if (p.required && !v.has(p.name) && !(p.kind == TransformParam::KeywordMap && step.keyword.size() > 0))
      v.fail(step.name + ": missing argument '" + p.name + "' (" + p.help + ")");
  step.loc.file = v.file() + ": " + v.path();  // apply_transform's errors then name the step
  return step;
}

}  // namespace

std::vector<TransformStep> read_transform_steps(const JsonValue& v) {
  std::vector<TransformStep> out;
  for (auto& s : v.items()) out.push_back(read_step(s));
  return out;
}

}  // namespace frontend

namespace {

// A step's arguments by parameter name, as apply_transform binds them.
nlohmann::ordered_json step_to_json(const TransformStep& step) {
  const TransformInfo* info = transform_registry().find(step.name);
  if (!info) throw TransformError("unknown transform '" + step.name + "'");
  nlohmann::ordered_json j;
  j["transform"] = step.name;
  auto put = [&](const std::string& name, const std::string& value) {
    const TransformParam* p = nullptr;
    for (auto& q : info->params)
      if (q.name == name) p = &q;
    if (p && p->kind == TransformParam::Int) {
      try {
        size_t used = 0;
        long long x = std::stoll(value, &used);
        if (used == value.size()) {
          j[name] = x;
          return;
        }
      } catch (...) {
      }
    }
    j[name] = value;
  };
  for (auto& [name, value] : bind_transform_arguments(step)) put(name, value);
  return j;
}

}  // namespace

namespace frontend {

nlohmann::ordered_json transform_steps_to_json(const std::vector<TransformStep>& steps) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (auto& s : steps) a.push_back(step_to_json(s));
  return a;
}

}  // namespace frontend

std::string transform_script_to_json(const std::vector<TransformStep>& steps, int indent) {
  nlohmann::ordered_json j;
  j["format"] = "loom-transforms";
  j["version"] = kJsonVersion;
  j["transforms"] = frontend::transform_steps_to_json(steps);
  return j.dump(indent) + "\n";
}

std::vector<TransformStep> transform_script_from_json(const std::string& text, const std::string& filename) {
  frontend::JsonReader doc(text, filename);
  doc.check_format("loom-transforms");
  doc.root().allow_fields({"format", "version", "transforms"});
  return frontend::read_transform_steps(doc.root().field("transforms"));
}

}  // namespace loom
