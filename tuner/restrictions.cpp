// restriction_of (tuner.h): the user's restrictions on a space written as
// expressions over its named choice points (`choice(16|32|64 as bx)`), as
// Kernel Tuner's restrictions name its tunable parameters: `bx * by <= 256`.
// A configuration is left out, before anything is generated, where one of
// them is false. A choice value reads as its integer ("32"), an optional
// step's as 1 or 0, true and false as 1 and 0; an expression that names a
// choice point of another sketch, or one whose value is not a number, does
// not apply to that configuration.
#include <cstdlib>

#include "loom/expr_text.h"
#include "loom/tuner.h"

namespace loom::tune {

namespace {

std::optional<int64_t> number(const std::string& v) {
  if (v == "yes" || v == "true") return 1;
  if (v.empty() || v == "false") return 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (*end) return std::nullopt;
  return int64_t(x);
}

}  // namespace

std::function<bool(const std::map<std::string, std::string>&)> restriction_of(const Space& space, const std::vector<std::string>& texts) {
  std::set<std::string> names;
  for (auto& s : space.sketches())
    for (auto& c : s.choices) names.insert(c.name);
  std::vector<std::pair<Expr, std::set<std::string>>> checks;
  for (auto& text : texts) {
    Expr e;
    try {
      e = parse_expr(text);
    } catch (const Error& err) {
      throw Error("restriction '" + text + "': " + err.what());
    }
    std::set<std::string> vars;
    collect_free_vars(e, vars);
    for (auto& v : vars)
      if (!names.count(v)) {
        std::string named;
        for (auto& n : names)
          if (n.find(' ') == std::string::npos) named += (named.empty() ? "" : ", ") + n;
        throw Error("restriction '" + text + "': no choice point is named '" + v + "' (name one with choice(a|b as NAME)" +
                    (named.empty() ? "; this space names none)" : "; this space names " + named + ")"));
      }
    checks.push_back({e, vars});
  }
  return [checks](const std::map<std::string, std::string>& values) {
    std::map<std::string, int64_t> known;
    for (auto& [name, value] : values)
      if (auto x = number(value)) known[name] = *x;
    for (auto& [e, vars] : checks) {
      bool applies = std::all_of(vars.begin(), vars.end(), [&](const std::string& v) { return known.count(v) > 0; });
      if (applies && eval_int(e, known) == 0) return false;
    }
    return true;
  };
}

}  // namespace loom::tune
