// Search spaces: sketches (transformation scripts with choice points), read
// from the script language (`choice(a|b|c)`, `optional ` lines) or from JSON
// ({"choice": [...]}, "optional": true), enumerated, sampled and mutated by
// configuration. A configuration's script is ordinary script text, so every
// trial can be replayed with `loom show FILE --transform`.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loom/parser.h"
#include "loom/stages.h"
#include "loom/transforms.h"
#include "loom/tuner.h"

namespace loom::tune {

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string placeholder(size_t n) { return "@" + std::to_string(n) + "@"; }

// The step's name and first argument, naming its choice points in messages.
std::string step_head(const std::string& line) {
  std::istringstream in(line);
  std::string name, first;
  in >> name >> first;
  return first.empty() || first.find("choice(") == 0 ? name : name + " " + first;
}

// The registry knows every transformation a sketch names: a typo would make
// every configuration fail the same way, so it is refused when read.
void check_transformation(const std::string& name, const SourceLoc& at) {
  if (!transform_registry().find(name)) throw ParseError(at, "no transformation named '" + name + "' (loom transforms lists them)");
}

}  // namespace

namespace {
// Every value of every choice point makes a script the reader and the
// registry's argument types take: values are text, and a misspelt keyword or
// a bad tag would otherwise fail every trial alike.
Space checked(Space space, const std::string& filename) {
  const Sketch& s = space.sketches().front();
  for (size_t c = 0; c < s.choices.size(); ++c)
    for (size_t v = 0; v < s.choices[c].values.size(); ++v) {
      Configuration conf{0, std::vector<int>(s.choices.size(), 0)};
      conf.picks[c] = int(v);
      for (auto& step : parse_transform_script(space.script(conf), filename)) bind_transform_arguments(step);
    }
  return space;
}
}  // namespace

std::string Configuration::key() const {
  std::string s = std::to_string(sketch) + ":";
  for (size_t i = 0; i < picks.size(); ++i) s += (i ? "." : "") + std::to_string(picks[i]);
  return s;
}

Space::Space(std::vector<Sketch> sketches) : sketches_(std::move(sketches)) {
  if (sketches_.empty()) throw Error("a search space needs at least one sketch");
  for (auto& s : sketches_)
    for (auto& c : s.choices)
      if (c.values.empty()) throw Error("choice point '" + c.name + "' of sketch '" + s.name + "' has no values");
}

Space Space::parse(const std::string& text, const std::string& filename) {
  Sketch s;
  s.name = "user";
  std::istringstream in(text);
  std::string raw;
  std::vector<int> starred;  // per choice point: the value marked '*', or -1
  for (int line_no = 1; std::getline(in, raw); ++line_no) {
    std::string line = raw.substr(0, raw.find('#'));
    if (trim(line).empty()) continue;
    int switch_point = -1;
    size_t lead = line.find_first_not_of(" \t");
    if (line.compare(lead, 9, "optional ") == 0) {
      switch_point = int(s.choices.size());
      s.choices.push_back({"optional " + step_head(trim(line.substr(lead + 9))), {"yes", ""}});
      line = line.substr(0, lead) + line.substr(lead + 9);
    }
    std::string head = step_head(trim(line));
    std::string out;
    size_t pos = 0;
    for (size_t at; (at = line.find("choice(", pos)) != std::string::npos;) {
      size_t close = line.find(')', at);
      SourceLoc loc{filename, line_no, int(at) + 1};
      if (close == std::string::npos) throw ParseError(loc, "choice( without its closing ')'");
      std::vector<std::string> values;
      std::string inner = line.substr(at + 7, close - at - 7);
      // choice(16|32 as bx): the choice point's name (what restrictions use)
      std::string given;
      if (size_t as = inner.rfind(" as "); as != std::string::npos) {
        given = trim(inner.substr(as + 4));
        inner = inner.substr(0, as);
        bool ident = !given.empty() && (std::isalpha(static_cast<unsigned char>(given[0])) || given[0] == '_');
        for (char ch : given) ident &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
        if (!ident) throw ParseError(loc, "'" + given + "' after 'as' is not a name (letters, digits, _)");
      }
      for (size_t b = 0;;) {
        size_t bar = inner.find('|', b);
        std::string v = trim(inner.substr(b, bar == std::string::npos ? std::string::npos : bar - b));
        if (!v.empty() && v[0] == '*') {  // the sketch's start takes this value
          if (starred.size() <= s.choices.size()) starred.resize(s.choices.size() + 1, -1);
          if (starred[s.choices.size()] >= 0) throw ParseError(loc, "two values of choice(" + inner + ") are marked with '*'");
          starred[s.choices.size()] = int(values.size());
          v = trim(v.substr(1));
        }
        if (v.empty()) throw ParseError(loc, "an empty value in choice(" + inner + ") (values are separated by '|')");
        values.push_back(v);
        if (bar == std::string::npos) break;
        b = bar + 1;
      }
      // name it by the keyword it sets, or its place among the step's words
      std::string before = line.substr(0, at);
      size_t word = before.find_last_of(" \t");
      std::string what = before.substr(word == std::string::npos ? 0 : word + 1);
      std::string name = !given.empty() ? given : head + (what.empty() ? " argument " + std::to_string(std::count(before.begin(), before.end(), ' ')) : " " + what);
      out += line.substr(pos, at - pos) + placeholder(s.choices.size());
      s.choices.push_back({name, values});
      pos = close + 1;
    }
    out += line.substr(pos);
    std::string name = trim(out).substr(0, trim(out).find_first_of(" \t"));
    check_transformation(name, SourceLoc{filename, line_no, int(lead) + 1});
    s.lines.push_back(trim(out));
    s.line_switch.push_back(switch_point);
  }
  // values marked '*' make the sketch's start (the first value where none is marked)
  if (!starred.empty()) {
    starred.resize(s.choices.size(), -1);
    for (auto& v : starred) v = std::max(v, 0);
    s.starts.push_back(starred);
  }
  return checked(Space({s}), filename);
}

Space Space::from_json(const std::string& text, const std::string& filename) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(filename + ": not JSON: " + e.what());
  }
  if (doc.is_object() && doc.contains("transforms")) doc = doc["transforms"];
  if (!doc.is_array()) throw Error(filename + ": a JSON space is a list of steps (or {\"transforms\": [...]})");
  // each value as script text: integers, names, booleans, lists (a,b),
  // tag maps (i:g.0) and keyword maps (n=128), as the script language writes them
  auto value_text = [&](const nlohmann::json& v, const TransformParam* p, const std::string& where) -> std::string {
    auto scalar = [&](const nlohmann::json& x) -> std::string {
      if (x.is_string()) return x.get<std::string>();
      if (x.is_number_integer()) return std::to_string(x.get<int64_t>());
      if (x.is_boolean()) return x.get<bool>() ? "true" : "false";
      throw Error(filename + ": " + where + ": expected a name, an integer or a boolean, got " + x.dump());
    };
    if (v.is_array()) {
      std::string s;
      for (auto& x : v) s += (s.empty() ? "" : ",") + scalar(x);
      return s;
    }
    if (v.is_object()) {
      const char* sep = p && p->kind == TransformParam::KeywordMap ? "=" : ":";
      std::string s;
      for (auto& [k, x] : v.items()) s += (s.empty() ? "" : ",") + k + sep + scalar(x);
      return s;
    }
    return scalar(v);
  };
  Sketch s;
  s.name = "user";
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& step = doc[i];
    std::string where = "/" + std::to_string(i);
    if (!step.is_object() || !step.contains("transform") || !step["transform"].is_string())
      throw Error(filename + ": " + where + ": a step is an object with \"transform\": NAME");
    std::string name = step["transform"].get<std::string>();
    const TransformInfo* info = transform_registry().find(name);
    if (!info) throw Error(filename + ": " + where + "/transform: no transformation named '" + name + "' (loom transforms lists them)");
    int switch_point = -1;
    std::string line = name;
    for (auto& [key, v] : step.items()) {
      if (key == "transform") continue;
      if (key == "optional") {
        if (!v.is_boolean()) throw Error(filename + ": " + where + "/optional: expected true or false");
        if (v.get<bool>()) {
          switch_point = int(s.choices.size());
          s.choices.push_back({"optional " + name, {"yes", ""}});
        }
        continue;
      }
      const TransformParam* p = nullptr;
      for (auto& q : info->params)
        if (q.name == key) p = &q;
      if (v.is_object() && v.contains("choice")) {
        const auto& values = v["choice"];
        if (!values.is_array() || values.empty()) throw Error(filename + ": " + where + "/" + key + "/choice: expected a non-empty list");
        ChoicePoint c{name + " " + key, {}};
        if (v.contains("name")) {  // (what restrictions call it, as `choice(a|b as NAME)` in text)
          if (!v["name"].is_string() || v["name"].get<std::string>().empty() || v["name"].get<std::string>().find(' ') != std::string::npos)
            throw Error(filename + ": " + where + "/" + key + "/name: expected a name without spaces");
          c.name = v["name"].get<std::string>();
        }
        for (size_t j = 0; j < values.size(); ++j) c.values.push_back(value_text(values[j], p, where + "/" + key + "/choice/" + std::to_string(j)));
        line += " " + key + "=" + placeholder(s.choices.size());
        s.choices.push_back(c);
      } else {
        line += " " + key + "=" + value_text(v, p, where + "/" + key);
      }
    }
    s.lines.push_back(line);
    s.line_switch.push_back(switch_point);
  }
  return checked(Space({s}), filename);
}

Space Space::from_scripts(const std::vector<std::string>& scripts) {
  std::vector<Sketch> sketches;
  for (size_t i = 0; i < scripts.size(); ++i) {
    Sketch s;
    s.name = "configuration " + std::to_string(i);
    for (auto& step : parse_transform_script(scripts[i], "<configuration " + std::to_string(i) + ">")) {
      bind_transform_arguments(step);
      s.lines.push_back(step_text(step));
      s.line_switch.push_back(-1);
    }
    sketches.push_back(s);
  }
  return Space(sketches);
}

double Space::size() const {
  double n = 0;
  for (auto& s : sketches_) {
    double m = 1;
    for (auto& c : s.choices) m *= double(c.values.size());
    n += m;
  }
  return n;
}

std::string Space::script(const Configuration& c) const {
  if (c.sketch < 0 || size_t(c.sketch) >= sketches_.size()) throw Error("configuration " + c.key() + ": no such sketch");
  const Sketch& s = sketches_[size_t(c.sketch)];
  if (c.picks.size() != s.choices.size()) throw Error("configuration " + c.key() + ": the sketch has " + std::to_string(s.choices.size()) + " choice points");
  std::string out;
  for (size_t l = 0; l < s.lines.size(); ++l) {
    if (s.line_switch[l] >= 0 && s.choices[size_t(s.line_switch[l])].values[size_t(c.picks[size_t(s.line_switch[l])])].empty()) continue;
    std::string line = s.lines[l];
    for (size_t p = 0; p < s.choices.size(); ++p) {
      std::string mark = placeholder(p);
      for (size_t at; (at = line.find(mark)) != std::string::npos;) {
        int pick = c.picks[p];
        if (pick < 0 || size_t(pick) >= s.choices[p].values.size()) throw Error("configuration " + c.key() + ": no value " + std::to_string(pick) + " at '" + s.choices[p].name + "'");
        line.replace(at, mark.size(), s.choices[p].values[size_t(pick)]);
      }
    }
    out += line + "\n";
  }
  return out;
}

std::vector<TransformStep> Space::steps(const Configuration& c) const { return parse_transform_script(script(c), "<configuration " + c.key() + ">"); }

std::optional<Configuration> Space::from_key(const std::string& key) const {
  size_t colon = key.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Configuration c;
  try {
    c.sketch = std::stoi(key.substr(0, colon));
    std::string rest = key.substr(colon + 1);
    for (size_t b = 0; b < rest.size();) {
      size_t dot = rest.find('.', b);
      c.picks.push_back(std::stoi(rest.substr(b, dot - b)));
      if (dot == std::string::npos) break;
      b = dot + 1;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (c.sketch < 0 || size_t(c.sketch) >= sketches_.size()) return std::nullopt;
  const Sketch& s = sketches_[size_t(c.sketch)];
  if (c.picks.size() != s.choices.size()) return std::nullopt;
  for (size_t p = 0; p < c.picks.size(); ++p)
    if (c.picks[p] < 0 || size_t(c.picks[p]) >= s.choices[p].values.size()) return std::nullopt;
  return c;
}

std::vector<Configuration> Space::all() const {
  if (size() > 1e6) throw Error("the space has " + std::to_string(size()) + " configurations: too many to list (use the random or evolution strategy)");
  std::vector<Configuration> out;
  for (size_t si = 0; si < sketches_.size(); ++si) {
    const Sketch& s = sketches_[si];
    Configuration c{int(si), std::vector<int>(s.choices.size(), 0)};
    for (bool more = true; more;) {
      out.push_back(c);
      more = false;
      for (size_t p = c.picks.size(); p-- > 0;) {  // an odometer, the last choice point fastest
        if (size_t(++c.picks[p]) < s.choices[p].values.size()) {
          more = true;
          break;
        }
        c.picks[p] = 0;
      }
    }
  }
  return out;
}

Configuration Space::random(std::mt19937_64& rng) const {
  // a sketch at random, then a value at each choice point: each sketch is as
  // likely as another (as Ansor samples sketches), so a sketch of thousands of
  // configurations does not drown one of five
  return random_in(int(std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng)), rng);
}

Configuration Space::random_in(int sketch, std::mt19937_64& rng) const {
  Configuration c{sketch, {}};
  for (auto& cp : sketches_[size_t(sketch)].choices) c.picks.push_back(int(std::uniform_int_distribution<size_t>(0, cp.values.size() - 1)(rng)));
  return c;
}

std::vector<Configuration> Space::starts() const {
  std::vector<Configuration> out;
  for (size_t s = 0; s < sketches_.size(); ++s)
    for (auto& picks : sketches_[s].starts) out.push_back({int(s), picks});
  return out;
}

Configuration Space::mutate(const Configuration& c, std::mt19937_64& rng) const {
  const Sketch& s = sketches_[size_t(c.sketch)];
  std::vector<size_t> free;
  for (size_t p = 0; p < s.choices.size(); ++p)
    if (s.choices[p].values.size() > 1) free.push_back(p);
  if (free.empty()) return random(rng);
  Configuration m = c;
  size_t p = free[std::uniform_int_distribution<size_t>(0, free.size() - 1)(rng)];
  int n = int(s.choices[p].values.size());
  // a neighbour more often than a jump: tile sizes are ordered
  if (std::uniform_int_distribution<int>(0, 2)(rng) > 0) {
    int step = std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : -1;
    m.picks[p] = std::clamp(c.picks[p] + step, 0, n - 1);
    if (m.picks[p] == c.picks[p]) m.picks[p] = std::clamp(c.picks[p] - step, 0, n - 1);
  } else {
    int v = std::uniform_int_distribution<int>(0, n - 2)(rng);
    m.picks[p] = v >= c.picks[p] ? v + 1 : v;
  }
  return m;
}

std::string Space::str() const {
  std::string out;
  for (size_t si = 0; si < sketches_.size(); ++si) {
    const Sketch& s = sketches_[si];
    out += "sketch " + std::to_string(si) + " (" + s.name + "):\n";
    for (size_t l = 0; l < s.lines.size(); ++l) {
      std::string line = s.lines[l];
      for (size_t p = 0; p < s.choices.size(); ++p) {
        std::string all;
        for (auto& v : s.choices[p].values) all += (all.empty() ? "" : "|") + v;
        if (s.choices[p].name.find(' ') == std::string::npos) all += " as " + s.choices[p].name;  // (a name given with `as`)
        for (size_t at; (at = line.find(placeholder(p))) != std::string::npos;) line.replace(at, placeholder(p).size(), "choice(" + all + ")");
      }
      out += "  " + std::string(s.line_switch[l] >= 0 ? "optional " : "") + line + "\n";
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f configurations\n", size());
  return out + buf;
}

}  // namespace loom::tune
