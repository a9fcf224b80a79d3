// WordCounts: words with their counts, kept in the order they were first seen, and the
// "<word> <count>" vocabulary files of subword-nmt (get_vocab.py, learn_bpe.py --dict-input,
// learn_joint_bpe_and_vocab.py --write-vocabulary, apply_bpe.py --vocabulary).
//
// The first-seen order matters for vocabulary files: subword-nmt lists words by decreasing count
// with a stable sort, so equally frequent words appear in the order they were first seen.
// Text is read the way subword-nmt reads it: lines cut at every line boundary Python knows
// (str.splitlines), then line.strip('\r\n ').split(' '); only ASCII spaces separate words.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mixseq {

class WordCounts {
 public:
  // Adds `count` to `word` (a new word goes to the end of the first-seen order).
  void add(std::string_view word, int64_t count = 1);

  // Counts every word of `line` (learn_bpe.py's get_vocabulary on one line).
  void add_words_of_line(std::string_view line);

  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, int64_t>>& entries() const { return entries_; }  // first-seen order

  // Entries by decreasing count, equal counts in first-seen order (Python's stable sort).
  std::vector<std::pair<std::string, int64_t>> sorted_by_count() const;

  // Writes "<word> <count>\n" lines sorted by count, atomically; "-": stdout.
  void save(const std::string& path) const;

  // Reads a vocabulary file (learn_bpe.py --dict-input); counts of repeated words add up.
  static WordCounts load(const std::string& path);

 private:
  std::vector<std::pair<std::string, int64_t>> entries_;
  std::unordered_map<std::string, size_t> index_;  // word -> position in entries_
};

// Counts the words of text files ("-": stdin) in order, as learn_bpe.py does for its input.
WordCounts count_words(const std::vector<std::string>& paths);

// Calls fn(word, count) for each line "<word> <count>" of a vocabulary file ("-": stdin). A line
// that is not one word, one space and an integer throws "<path>:<line>: ...".
void for_each_word_count(const std::string& path, const std::function<void(std::string_view, int64_t)>& fn);

}  // namespace mixseq
