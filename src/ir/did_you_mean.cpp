// did_you_mean: a suggestion for an unknown name in an error message, by edit
// distance (Levenshtein; insertions, deletions and substitutions cost one).
#include <algorithm>

#include "loom/error.h"

namespace loom {

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 3;  // within two edits
  for (auto& k : known) {
    size_t d = edit_distance(name, k);
    if (d < best_distance && d < std::max<size_t>(name.size(), 1)) {
      best = &k;
      best_distance = d;
    }
  }
  return best ? "; did you mean '" + *best + "'?" : "";
}

}  // namespace loom
