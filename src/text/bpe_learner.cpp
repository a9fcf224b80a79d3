// learn_bpe, step for step as subword-nmt's learn_bpe.py (rsennrich/subword-nmt, subword_nmt/learn_bpe.py,
// version 0.3.9): get_pair_statistics, replace_pair, update_pair_statistics, prune_stats and the main loop.
// The reference's dictionaries are kept with their exact contents (entries that a lookup creates,
// negative partial counts of pruned pairs, counts that its index update leaves behind), because
// they decide which pair wins in corner cases. Comments name the reference's variables.
#include "mixseq/text/bpe_learner.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"

namespace mixseq {
namespace {

using SymbolId = uint32_t;
using PairKey = uint64_t;  // (left << 32) | right

PairKey make_pair_key(SymbolId left, SymbolId right) { return (PairKey{left} << 32) | right; }
SymbolId left_of(PairKey pair) { return static_cast<SymbolId>(pair >> 32); }
SymbolId right_of(PairKey pair) { return static_cast<SymbolId>(pair); }

// Interned symbols: equal strings share an id, so the reference's tuple comparisons become integer ones.
class SymbolTable {
 public:
  SymbolId intern(const std::string& text) {
    const auto [it, inserted] = ids_.try_emplace(text, static_cast<SymbolId>(texts_.size()));
    if (inserted) texts_.push_back(text);
    return it->second;
  }
  const std::string& text(SymbolId id) const { return texts_[id]; }  // stable: texts_ is a deque

 private:
  std::unordered_map<std::string, SymbolId> ids_;
  std::deque<std::string> texts_;
};

struct Word {
  std::vector<SymbolId> symbols;
  int64_t count = 0;
  bool has_whitespace = false;  // holds a character Python's \s matches (tab, no-break space, form feed...)
  std::vector<std::pair<PairKey, int64_t>> index;  // this word's column of indices[pair][word]
};

// One entry of replace_pair's `changes`; the new symbols are already in the word.
struct Change {
  uint32_t word;
  std::vector<SymbolId> old_symbols;
};

struct HeapItem {
  int64_t frequency;
  PairKey pair;
};

// True when the code point that ends at text[pos] (exclusive) is whitespace, or pos is the start.
bool whitespace_or_start_before(const std::string& text, size_t pos) {
  if (pos == 0) return true;
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return is_unicode_whitespace(decode_utf8(std::string_view(text).substr(start, pos - start))[0]);
}

// True when the code point that starts at text[pos] is whitespace, or pos is the end.
bool whitespace_or_end_at(const std::string& text, size_t pos) {
  if (pos == text.size()) return true;
  size_t end = pos + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return is_unicode_whitespace(decode_utf8(std::string_view(text).substr(pos, end - pos))[0]);
}

class Learner {
 public:
  explicit Learner(const WordCounts& counts);
  BpeCodes run(const BpeLearnOptions& options);

 private:
  bool pair_less(PairKey a, PairKey b) const;  // Python's (left, right) tuple order
  bool item_less(const HeapItem& a, const HeapItem& b) const {
    return a.frequency < b.frequency || (a.frequency == b.frequency && pair_less(a.pair, b.pair));
  }

  // stats[pair] with defaultdict semantics: reading or changing a missing pair creates it.
  int64_t& stat(PairKey pair);
  void add_stat(PairKey pair, int64_t delta) { stat(pair) += delta; }
  // indices[pair][word], creating the entry (and listing the word under the pair) when missing.
  int64_t& index_entry(uint32_t word, PairKey pair);
  int64_t index_count(uint32_t word, PairKey pair) const;  // the same, for an entry known to exist
  // indices[pair] = defaultdict(int)
  void clear_index(PairKey pair);

  PairKey most_frequent();             // max(stats, key=lambda x: (stats[x], x))
  void prune_stats(double threshold);  // prune_stats(stats, big_stats, threshold)
  void reload_stats(int64_t step, double& threshold, PairKey& best);
  void rebuild_heap();

  std::vector<SymbolId> merge_symbols(const Word& word, SymbolId first, SymbolId second, SymbolId merged);
  std::vector<Change> replace_pair(PairKey pair);
  void update_pair_statistics(PairKey pair, const std::vector<Change>& changes);

  SymbolTable symbols_;
  std::vector<Word> words_;  // sorted_vocab: by decreasing count, ties in first-seen order
  std::unordered_map<PairKey, int64_t> stats_;      // pruned statistics searched for the best pair
  std::unordered_map<PairKey, int64_t> big_stats_;  // full statistics, refreshed when pairs are pruned
  std::unordered_map<PairKey, std::vector<uint32_t>> pair_words_;  // words with an entry in indices[pair]
  // Max-heap over stats_ for most_frequent(). Entries go stale when a count changes; every change
  // is recorded in dirty_ and pushed anew, and stale entries are dropped when they reach the top.
  std::vector<HeapItem> heap_;
  std::vector<PairKey> dirty_;
};

Learner::Learner(const WordCounts& counts) {
  const auto sorted = counts.sorted_by_count();
  words_.reserve(sorted.size());
  for (const auto& [text, count] : sorted) {
    Word word;
    word.count = count;
    const std::u32string chars = decode_utf8(text);
    word.has_whitespace = std::any_of(chars.begin(), chars.end(), is_unicode_whitespace);
    // learn_bpe.py: tuple(x[:-1]) + (x[-1] + '</w>',)
    std::string symbol;
    for (size_t i = 0; i < chars.size(); ++i) {
      symbol.clear();
      append_utf8(chars[i], symbol);
      if (i + 1 == chars.size()) symbol += kBpeEndOfWord;
      word.symbols.push_back(symbols_.intern(symbol));
    }
    words_.push_back(std::move(word));
  }
  // get_pair_statistics
  for (uint32_t w = 0; w < words_.size(); ++w) {
    const auto& symbols = words_[w].symbols;
    for (size_t i = 1; i < symbols.size(); ++i) {
      const PairKey pair = make_pair_key(symbols[i - 1], symbols[i]);
      add_stat(pair, words_[w].count);
      index_entry(w, pair) += 1;
    }
  }
  big_stats_ = stats_;
  rebuild_heap();
}

bool Learner::pair_less(PairKey a, PairKey b) const {
  if (left_of(a) != left_of(b)) return symbols_.text(left_of(a)) < symbols_.text(left_of(b));
  return right_of(a) != right_of(b) && symbols_.text(right_of(a)) < symbols_.text(right_of(b));
}

int64_t& Learner::stat(PairKey pair) {
  dirty_.push_back(pair);
  return stats_[pair];
}

int64_t& Learner::index_entry(uint32_t word, PairKey pair) {
  auto& index = words_[word].index;
  for (auto& [key, count] : index)
    if (key == pair) return count;
  pair_words_[pair].push_back(word);
  return index.emplace_back(pair, 0).second;
}

int64_t Learner::index_count(uint32_t word, PairKey pair) const {
  const auto& index = words_[word].index;
  return std::find_if(index.begin(), index.end(), [&](const auto& e) { return e.first == pair; })->second;
}

void Learner::clear_index(PairKey pair) {
  const auto it = pair_words_.find(pair);
  if (it == pair_words_.end()) return;
  for (const uint32_t word : it->second) {
    auto& index = words_[word].index;
    const auto entry = std::find_if(index.begin(), index.end(), [&](const auto& e) { return e.first == pair; });
    *entry = index.back();
    index.pop_back();
  }
  it->second.clear();
}

void Learner::rebuild_heap() {
  heap_.clear();
  heap_.reserve(stats_.size());
  for (const auto& [pair, frequency] : stats_) heap_.push_back({frequency, pair});
  std::make_heap(heap_.begin(), heap_.end(), [this](const auto& a, const auto& b) { return item_less(a, b); });
  dirty_.clear();
}

PairKey Learner::most_frequent() {
  const auto less = [this](const auto& a, const auto& b) { return item_less(a, b); };
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  for (const PairKey pair : dirty_) {
    heap_.push_back({stats_.at(pair), pair});
    std::push_heap(heap_.begin(), heap_.end(), less);
  }
  dirty_.clear();
  for (;;) {
    const HeapItem top = heap_.front();  // stats_ is not empty, and holds each entry's value in the heap
    const auto it = stats_.find(top.pair);
    if (it != stats_.end() && it->second == top.frequency) return top.pair;
    std::pop_heap(heap_.begin(), heap_.end(), less);
    heap_.pop_back();
  }
}

void Learner::prune_stats(double threshold) {
  for (auto it = stats_.begin(); it != stats_.end();) {
    const auto [pair, frequency] = *it;
    if (frequency < threshold) {
      it = stats_.erase(it);
      // A negative count is a change to a pair that was pruned earlier: add it to the full count.
      if (frequency < 0)
        big_stats_[pair] += frequency;
      else
        big_stats_[pair] = frequency;
    } else {
      ++it;
    }
  }
  rebuild_heap();
}

// "We probably missed the best pair because of pruning; go back to full statistics":
//   prune_stats(stats, big_stats, threshold); stats = copy.deepcopy(big_stats)
//   most_frequent = max(...); threshold = stats[most_frequent] * i/(i+10000.0)
//   prune_stats(stats, big_stats, threshold)
void Learner::reload_stats(int64_t step, double& threshold, PairKey& best) {
  prune_stats(threshold);
  best = big_stats_.begin()->first;
  for (const auto& [pair, frequency] : big_stats_)
    if (item_less({big_stats_.at(best), best}, {frequency, pair})) best = pair;
  threshold = static_cast<double>(big_stats_.at(best) * step) / (static_cast<double>(step) + 10000.0);
  // The second prune on the fresh copy removes pairs under the new threshold and, since the copy
  // and big_stats agree, doubles the negative counts in big_stats (big_stats[item] += freq).
  stats_.clear();
  for (auto& [pair, frequency] : big_stats_) {
    if (frequency >= threshold)
      stats_.emplace(pair, frequency);
    else if (frequency < 0)
      frequency *= 2;
  }
  rebuild_heap();
}

// replace_pair's re.sub(r'(?<!\S)' + re.escape(first + ' ' + second) + r'(?!\S)', first + second,
// ' '.join(word)). Without whitespace characters inside the symbols this merges each non-overlapping
// (first, second) from left to right; with them, the pattern can also match inside a symbol (after
// a tab, say), and the reference keeps what it then produces.
std::vector<SymbolId> Learner::merge_symbols(const Word& word, SymbolId first, SymbolId second, SymbolId merged) {
  const auto& symbols = word.symbols;
  std::vector<SymbolId> out;
  out.reserve(symbols.size());
  if (!word.has_whitespace) {
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == first && symbols[i + 1] == second) {
        out.push_back(merged);
        ++i;
      } else {
        out.push_back(symbols[i]);
      }
    }
    return out;
  }
  std::string joined;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i) joined += ' ';
    joined += symbols_.text(symbols[i]);
  }
  const std::string needle = symbols_.text(first) + ' ' + symbols_.text(second);
  std::string replaced;
  size_t copied = 0;
  for (size_t pos = joined.find(needle); pos != std::string::npos; pos = joined.find(needle, pos)) {
    const size_t end = pos + needle.size();
    if (whitespace_or_start_before(joined, pos) && whitespace_or_end_at(joined, end)) {
      replaced.append(joined, copied, pos - copied);
      replaced += symbols_.text(merged);
      copied = pos = end;
    } else {
      ++pos;
    }
  }
  replaced.append(joined, copied);
  for (const std::string_view piece : split_on_space(replaced)) out.push_back(symbols_.intern(std::string(piece)));
  return out;
}

std::vector<Change> Learner::replace_pair(PairKey pair) {
  const SymbolId first = left_of(pair), second = right_of(pair);
  const SymbolId merged = symbols_.intern(symbols_.text(first) + symbols_.text(second));
  std::vector<Change> changes;
  const auto it = pair_words_.find(pair);
  if (it == pair_words_.end()) return changes;
  for (const uint32_t w : it->second) {
    if (index_count(w, pair) < 1) continue;
    Word& word = words_[w];
    std::vector<SymbolId> merged_symbols = merge_symbols(word, first, second, merged);
    changes.push_back({w, std::move(word.symbols)});
    word.symbols = std::move(merged_symbols);
  }
  return changes;
}

void Learner::update_pair_statistics(PairKey pair, const std::vector<Change>& changes) {
  stat(pair) = 0;
  clear_index(pair);
  const SymbolId first = left_of(pair), second = right_of(pair);
  const SymbolId merged = symbols_.intern(symbols_.text(first) + symbols_.text(second));
  for (const auto& [w, old_word] : changes) {
    const int64_t freq = words_[w].count;
    const size_t old_size = old_word.size();
    // Each occurrence of the pair: "A B C" with "B C" merged loses "A B"; "A B C B" loses "C B",
    // unless it is "A B C B C", where the next occurrence's "A B" step removes it.
    for (size_t i = 0;;) {
      const auto found = std::find(old_word.begin() + std::min(i, old_size), old_word.end(), first);
      if (found == old_word.end()) break;
      i = found - old_word.begin();
      if (i + 1 < old_size && old_word[i + 1] == second) {
        if (i) {
          const PairKey prev = make_pair_key(old_word[i - 1], old_word[i]);
          add_stat(prev, -freq);
          index_entry(w, prev) -= 1;
        }
        if (i + 2 < old_size &&
            (old_word[i + 2] != first || i + 3 >= old_size || old_word[i + 3] != second)) {
          const PairKey next = make_pair_key(old_word[i + 1], old_word[i + 2]);
          add_stat(next, -freq);
          index_entry(w, next) -= 1;
        }
        i += 2;
      } else {
        i += 1;
      }
    }
    // Each occurrence of the new symbol: "A BC D" gains "A BC" and "BC D" ("BC BC" only once).
    const auto& word = words_[w].symbols;
    for (size_t i = 0;;) {
      const auto found = std::find(word.begin() + std::min(i, word.size()), word.end(), merged);
      if (found == word.end()) break;
      i = found - word.begin();
      if (i) {
        const PairKey prev = make_pair_key(word[i - 1], word[i]);
        add_stat(prev, freq);
        index_entry(w, prev) += 1;
      }
      if (i + 1 < word.size() && word[i + 1] != merged) {
        const PairKey next = make_pair_key(word[i], word[i + 1]);
        add_stat(next, freq);
        index_entry(w, next) += 1;
      }
      i += 1;
    }
  }
}

BpeCodes Learner::run(const BpeLearnOptions& options) {
  int64_t num_symbols = options.symbols;
  if (options.total_symbols) {
    std::unordered_set<SymbolId> word_internal, word_final;
    for (const auto& word : words_) {
      word_internal.insert(word.symbols.begin(), word.symbols.end() - 1);
      word_final.insert(word.symbols.back());
    }
    const size_t characters = word_internal.size() + word_final.size();
    log_info("bpe learn: ", word_internal.size(), " word-internal and ", word_final.size(),
             " word-final characters; learning ", characters, " fewer merges (--total-symbols)");
    num_symbols -= static_cast<int64_t>(characters);
  }
  std::vector<BpeMerge> merges;
  if (stats_.empty()) {  // learn_bpe.py fails here: max() of an empty sequence
    log_info("bpe learn: no word has two characters; no merges to learn");
    return BpeCodes(std::move(merges));
  }
  // "threshold is inspired by Zipfian assumption, but should only affect speed"
  double threshold = static_cast<double>(stats_.at(most_frequent())) / 10.0;
  PairKey best = 0;
  for (int64_t i = 0; i < num_symbols; ++i) {
    if (!stats_.empty()) best = most_frequent();
    if (stats_.empty() || (i && static_cast<double>(stats_.at(best)) < threshold)) reload_stats(i, threshold, best);
    const int64_t frequency = stat(best);
    if (frequency < options.min_frequency) {
      log_info("bpe learn: no pair has frequency >= ", options.min_frequency, "; stopping after ", merges.size(),
               " merges");
      break;
    }
    merges.push_back({symbols_.text(left_of(best)), symbols_.text(right_of(best))});
    update_pair_statistics(best, replace_pair(best));
    stat(best) = 0;
    if (i % 100 == 0) prune_stats(threshold);
  }
  return BpeCodes(std::move(merges));
}

}  // namespace

BpeCodes learn_bpe(const WordCounts& words, const BpeLearnOptions& options) {
  return Learner(words).run(options);
}

}  // namespace mixseq
