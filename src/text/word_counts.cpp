#include "mixseq/text/word_counts.h"

#include <algorithm>
#include <charconv>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "mixseq/util/output_file.h"
#include "subword_nmt_text.h"

namespace mixseq {
namespace {

// Python's int() on the count field: surrounding whitespace, a sign, digits with single "_"s between them.
bool parse_python_int(std::string_view text, int64_t& value) {
  text = strip_whitespace(text);
  std::string digits;
  const bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_' && i > 0 && i + 1 < text.size() && text[i - 1] != '_') continue;
    digits.push_back(text[i]);
  }
  if (negative) digits.insert(digits.begin(), '-');
  const char* end = digits.data() + digits.size();
  const auto result = std::from_chars(digits.data(), end, value);
  return !digits.empty() && result.ec == std::errc() && result.ptr == end;
}

}  // namespace

void WordCounts::add(std::string_view word, int64_t count) {
  const auto [it, inserted] = index_.try_emplace(std::string(word), entries_.size());
  if (inserted) entries_.emplace_back(word, 0);
  entries_[it->second].second += count;
}

void WordCounts::add_words_of_line(std::string_view line) {
  for (const std::string_view word : split_on_space(strip_subword_nmt(line)))
    if (!word.empty()) add(word);
}

std::vector<std::pair<std::string, int64_t>> WordCounts::sorted_by_count() const {
  auto sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

void WordCounts::save(const std::string& path) const {
  OutputFile out(path);
  for (const auto& [word, count] : sorted_by_count()) out.stream() << word << ' ' << count << '\n';
  out.commit();
}

WordCounts WordCounts::load(const std::string& path) {
  WordCounts counts;
  for_each_word_count(path, [&](std::string_view word, int64_t count) { counts.add(word, count); });
  return counts;
}

WordCounts count_words(const std::vector<std::string>& paths) {
  WordCounts counts;
  for (const auto& path : paths) {
    PythonLineReader reader(path);
    for (std::string_view line; reader.next(line);) counts.add_words_of_line(line);
  }
  return counts;
}

void for_each_word_count(const std::string& path, const std::function<void(std::string_view, int64_t)>& fn) {
  PythonLineReader reader(path);
  for (std::string_view line; reader.next(line);) {
    const std::string_view entry = strip_subword_nmt(line);
    const size_t space = entry.find(' ');
    int64_t count = 0;
    if (space == std::string_view::npos || entry.find(' ', space + 1) != std::string_view::npos ||
        !parse_python_int(entry.substr(space + 1), count))
      reader.fail("expected \"<word> <count>\" (one space, integer count), got '",
                  line.substr(0, line.size() - trailing_strip_chars(line)),
                  "'; vocabulary files are written by `mixseq bpe learn --write-vocabulary`");
    fn(entry.substr(0, space), count);
  }
}

}  // namespace mixseq
