#include "mixseq/util/nearest_name.h"

#include <algorithm>

namespace mixseq {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = diagonal + (a[i - 1] != b[j - 1]);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& unknown, const std::vector<std::string>& known) {
  if (known.empty()) return "";
  const auto nearest = std::min_element(known.begin(), known.end(), [&](const auto& a, const auto& b) {
    return edit_distance(unknown, a) < edit_distance(unknown, b);
  });
  if (edit_distance(unknown, *nearest) <= std::max<size_t>(2, unknown.size() / 3))
    return "; did you mean '" + *nearest + "'?";
  std::string list;
  for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
  return "; known: " + list;
}

}  // namespace mixseq
