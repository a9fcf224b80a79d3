#include "mixseq/text/arpa_language_model.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"

namespace mixseq {

namespace {

using WordId = ArpaLanguageModel::WordId;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_blank(s.front()) || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool parse_double(std::string_view text, double& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

bool parse_count(std::string_view text, int64_t& value) {
  text = trim(text);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() && value >= 0;
}

// "\N-grams:" -> N, else 0.
int64_t section_order(std::string_view line) {
  constexpr std::string_view kSuffix = "-grams:";
  if (line.size() < 2 + kSuffix.size() || line.front() != '\\' ||
      line.substr(line.size() - kSuffix.size()) != kSuffix)
    return 0;
  int64_t n = 0;
  if (!parse_count(line.substr(1, line.size() - 1 - kSuffix.size()), n)) return 0;
  return n;
}

uint64_t hash_ids(const WordId* context, size_t length, WordId last) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the ids, then a final mix (splitmix64's)
  for (size_t i = 0; i < length; ++i) h = (h ^ static_cast<uint32_t>(context[i])) * 0x100000001b3ULL;
  h = (h ^ static_cast<uint32_t>(last)) * 0x100000001b3ULL;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

// A line source with its name and line number for errors.
struct Lines {
  std::string name;
  std::function<bool(std::string&)> next;
  int64_t line = 0;
  template <typename... Args>
  [[noreturn]] void fail(const Args&... what) const {
    throw input_error(name, line, what...);
  }
};

}  // namespace

int32_t ArpaLanguageModel::NgramTable::find(const WordId* context, WordId last) const {
  const size_t mask = slots.size() - 1;
  const auto length = static_cast<size_t>(n - 1);
  for (size_t s = hash_ids(context, length, last) & mask;; s = (s + 1) & mask) {
    const int32_t entry = slots[s] - 1;
    if (entry < 0) return -1;
    const WordId* listed = &ids[static_cast<size_t>(entry) * static_cast<size_t>(n)];
    if (listed[length] == last && std::equal(context, context + length, listed)) return entry;
  }
}

void ArpaLanguageModel::NgramTable::insert(const WordId* key, int32_t entry) {
  const size_t mask = slots.size() - 1;
  size_t s = hash_ids(key, static_cast<size_t>(n - 1), key[n - 1]) & mask;
  while (slots[s] != 0) s = (s + 1) & mask;
  slots[s] = entry + 1;
}

// The parser, a friend of ArpaLanguageModel.
struct ArpaLanguageModelBuilder {
  static ArpaLanguageModel parse(Lines& in);
};

ArpaLanguageModel ArpaLanguageModel::load(const std::string& path) {
  LineReader reader(path);
  reader.check_utf8 = false;  // words are bytes to the model
  Lines in{reader.path(), [&reader](std::string& line) { return reader.next(line); }};
  return ArpaLanguageModelBuilder::parse(in);
}

ArpaLanguageModel ArpaLanguageModel::from_text(std::string_view text, const std::string& name) {
  size_t position = 0;
  Lines in{name, [&](std::string& line) {
             if (position >= text.size()) return false;
             const size_t end = std::min(text.find('\n', position), text.size());
             line.assign(text.substr(position, end - position));
             position = end + 1;
             return true;
           }};
  return ArpaLanguageModelBuilder::parse(in);
}

ArpaLanguageModel ArpaLanguageModelBuilder::parse(Lines& in) {
  ArpaLanguageModel model;
  std::string line;
  auto next = [&]() {
    if (!in.next(line)) return false;
    ++in.line;
    return true;
  };
  // Header: skip to "\data\".
  bool found_data = false;
  while (next()) {
    if (trim(line) == "\\data\\") {
      found_data = true;
      break;
    }
  }
  if (!found_data) in.fail("not an ARPA language model: no \\data\\ line");

  // Counts: "ngram N=C" for N = 1, 2, ... up to the first section.
  std::vector<int64_t> counts;
  bool have_line = false;
  while (next()) {
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    if (text.front() == '\\') {
      have_line = true;
      break;
    }
    const size_t equals = text.find('=');
    int64_t n = 0, count = 0;
    if (text.substr(0, 5) != "ngram" || text.size() < 6 || !is_blank(text[5]) || equals == std::string_view::npos ||
        !parse_count(text.substr(6, equals - 6), n) || !parse_count(text.substr(equals + 1), count))
      in.fail("expected a count line \"ngram N=COUNT\" in \\data\\, found \"", text, "\"");
    if (n != static_cast<int64_t>(counts.size()) + 1)
      in.fail("counts out of order: \"ngram ", n, "=\" where \"ngram ", counts.size() + 1, "=\" was expected");
    // No words: every word would be unknown, and the search, finding no word worth a space, glued
    // whole transcripts into one (a hostile-input sweep, 2026-12-07).
    if (n == 1 && count == 0)
      in.fail("\\data\\ declares no 1-grams (\"ngram 1=0\"): a language model with no words");
    counts.push_back(count);
  }
  if (counts.empty()) in.fail("\\data\\ lists no \"ngram N=COUNT\" lines");
  const int64_t order = static_cast<int64_t>(counts.size());

  model.orders_.resize(counts.size());
  for (int64_t n = 1; n <= order; ++n) {
    if (!have_line) in.fail("missing \\", n, "-grams: section (the file ends)");
    if (section_order(trim(line)) != n)
      in.fail("expected \"\\", n, "-grams:\", found \"", trim(line), "\"");
    auto& table = model.orders_[static_cast<size_t>(n - 1)];
    const int64_t declared = counts[static_cast<size_t>(n - 1)];
    table.n = n;
    size_t capacity = 2;
    while (capacity < static_cast<size_t>(declared) * 2) capacity *= 2;
    table.slots.assign(capacity, 0);
    table.ids.reserve(static_cast<size_t>(declared * n));
    table.log10_probs.reserve(static_cast<size_t>(declared));
    table.log10_backoffs.reserve(static_cast<size_t>(declared));
    const size_t fields_without_backoff = static_cast<size_t>(n) + 1;
    have_line = false;
    std::vector<WordId> key(static_cast<size_t>(n));
    while (next()) {
      const std::string_view text = trim(line);
      if (text.empty()) continue;
      if (text.front() == '\\') {
        have_line = true;
        break;
      }
      const auto fields = split_fields(text);
      const bool backoff_allowed = n < order;
      if (fields.size() != fields_without_backoff && !(backoff_allowed && fields.size() == fields_without_backoff + 1))
        in.fail("a ", n, "-gram line has ", fields.size(), " fields; expected ", fields_without_backoff,
                backoff_allowed ? str_cat(" or ", fields_without_backoff + 1) : std::string(),
                " (log10 probability, ", n, n == 1 ? " word" : " words",
                backoff_allowed ? ", optional log10 backoff)" : ")");
      double probability = 0, backoff = 0;
      if (!parse_double(fields[0], probability) || std::isnan(probability))
        in.fail("the log10 probability \"", fields[0], "\" is not a number");
      if (probability > 0) in.fail("the log10 probability ", fields[0], " is above 0");
      if (fields.size() == fields_without_backoff + 1 &&
          (!parse_double(fields.back(), backoff) || !std::isfinite(backoff)))
        in.fail("the log10 backoff weight \"", fields.back(), "\" is not a finite number");
      if (static_cast<int64_t>(table.log10_probs.size()) == declared)
        in.fail("more ", n, "-grams than the ", declared, " that \\data\\ declares");
      for (int64_t i = 0; i < n; ++i) {
        const std::string word(fields[static_cast<size_t>(1 + i)]);
        if (n == 1) {
          const auto id = static_cast<WordId>(model.words_.size());
          if (!model.vocabulary_.emplace(word, id).second) in.fail("repeated 1-gram \"", word, "\"");
          model.words_.push_back(word);
          key[0] = id;
        } else {
          const auto it = model.vocabulary_.find(word);
          if (it == model.vocabulary_.end())
            in.fail("the word \"", word, "\" of this ", n, "-gram is not among the 1-grams");
          key[static_cast<size_t>(i)] = it->second;
        }
      }
      if (n > 1 && table.find(key.data(), key.back()) >= 0)
        in.fail("repeated ", n, "-gram \"", trim(text.substr(fields[0].size())), "\"");
      table.insert(key.data(), static_cast<int32_t>(table.log10_probs.size()));
      table.ids.insert(table.ids.end(), key.begin(), key.end());
      table.log10_probs.push_back(static_cast<float>(probability));
      table.log10_backoffs.push_back(static_cast<float>(backoff));
    }
    if (static_cast<int64_t>(table.log10_probs.size()) != declared)
      in.fail("the \\", n, "-grams: section has ", table.log10_probs.size(), " entries, but \\data\\ declares ",
              declared);
  }
  if (!have_line) in.fail("missing \\end\\ (the file ends after the \\", order, "-grams: section)");
  if (trim(line) != "\\end\\")
    in.fail("expected \\end\\ after the \\", order, "-grams: section (the \\data\\ counts stop at ", order,
            "), found \"", trim(line), "\"");

  auto id_of = [&](const char* word) {
    const auto it = model.vocabulary_.find(word);
    return it == model.vocabulary_.end() ? ArpaLanguageModel::kNoWord : it->second;
  };
  model.unknown_ = id_of("<unk>");
  model.begin_sentence_ = id_of("<s>");
  model.end_sentence_ = id_of("</s>");
  return model;
}

int64_t ArpaLanguageModel::ngram_count(int64_t n) const {
  MIXSEQ_CHECK(n >= 1 && n <= order(), "ngram_count: order ", n, " is outside 1..", order());
  return static_cast<int64_t>(orders_[static_cast<size_t>(n - 1)].log10_probs.size());
}

ArpaLanguageModel::WordId ArpaLanguageModel::word_id(std::string_view word) const {
  const auto it = vocabulary_.find(std::string(word));
  return it == vocabulary_.end() ? unknown_ : it->second;
}

double ArpaLanguageModel::log10_prob(const WordId* history, size_t history_size, WordId word) const {
  if (word == kNoWord) return kArpaMissingUnknownLog10Prob;
  MIXSEQ_CHECK(word >= 0 && word < static_cast<WordId>(words_.size()), "ArpaLanguageModel::log10_prob: word id ", word,
               " is outside 0..", words_.size() - 1);
  const size_t k = std::min(history_size, orders_.size() - 1);  // context words that can count
  const WordId* h = history + history_size - k;                 // the last k, oldest first
  double result = orders_[0].log10_probs[static_cast<size_t>(word)];
  // The longest listed n-gram "h_{k-j+1..k} w"; KenLM and SRILM stop at the first that is not
  // listed (no id is kNoWord, so a history with an unknown word ends the search there).
  size_t matched = 0;
  for (size_t j = 1; j <= k; ++j) {
    const NgramTable& ngrams = orders_[j];
    const int32_t entry = ngrams.find(h + k - j, word);
    if (entry < 0) break;
    result = ngrams.log10_probs[static_cast<size_t>(entry)];
    matched = j;
  }
  // Plus the backoff weights of the longer listed contexts "h_{k-j+1..k}", j > matched.
  for (size_t j = matched + 1; j <= k; ++j) {
    const NgramTable& contexts = orders_[j - 1];
    const int32_t entry = contexts.find(h + k - j, h[k - 1]);
    if (entry < 0) break;
    result += contexts.log10_backoffs[static_cast<size_t>(entry)];
  }
  return result;
}

double ArpaLanguageModel::sentence_log10_prob(const std::vector<std::string>& words, bool end_of_sentence) const {
  std::vector<WordId> history;
  if (begin_sentence_ != kNoWord) history.push_back(begin_sentence_);
  double total = 0;
  for (const auto& w : words) {
    const WordId id = word_id(w);
    total += log10_prob(history, id);
    history.push_back(id);
  }
  if (end_of_sentence) total += log10_prob(history, end_sentence_);
  return total;
}

}  // namespace mixseq
