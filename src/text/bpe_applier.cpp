// BpeApplier, step for step as subword-nmt's apply_bpe.py (rsennrich/subword-nmt, subword_nmt/apply_bpe.py,
// version 0.3.9): BPE.__init__, process_line, segment_tokens, _isolate_glossaries, isolate_glossary,
// encode, check_vocab_and_split and recursive_split. Comments name the reference's functions.
#include "mixseq/text/bpe_applier.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "mixseq/util/utf8.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/output_file.h"
#include "python_regex.h"
#include "subword_nmt_text.h"

namespace mixseq {
namespace {

constexpr size_t kLinesPerWorkerChunk = 4096;  // lines read per worker before the workers run

int resolve_threads(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

uint64_t pair_key(int32_t left, int32_t right) {
  return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
}

// `text` without its last `count` code points (Python's text[:-count]).
std::string_view drop_last_chars(std::string_view text, size_t count) {
  size_t end = text.size();
  for (; count > 0 && end > 0; --count) {
    --end;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  }
  return text.substr(0, end);
}

// Runs fn(i) for every i in [0, n) on `workers` threads (the caller is one of them); blocks of
// lines are handed out in turn, so a slow block does not hold the others up.
template <typename Fn>
void parallel_for(size_t n, int workers, const Fn& fn) {
  constexpr size_t kBlock = 256;
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  const auto work = [&] {
    try {
      for (size_t begin; !failed && (begin = next.fetch_add(kBlock)) < n;)
        for (size_t i = begin; i < std::min(n, begin + kBlock); ++i) fn(i);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int worker = 1; worker < workers && static_cast<size_t>(worker) * kBlock < n; ++worker)
    threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
}

// Reads `path` ("-": stdin) in chunks of "\n"-lines, each with its "\n" unless the file ends without
// one, runs fn(line) on `workers` threads and hands the results to sink in input order. The workers
// check the UTF-8 too (done while reading, it takes two thirds of the reading time); the first
// malformed line throws "<path>:<line>: malformed UTF-8 at byte <n>".
template <typename Fn, typename Sink>
void transform_lines(const std::string& path, int workers, const Fn& fn, const Sink& sink) {
  LineReader reader(path);
  reader.check_utf8 = false;
  reader.keep_carriage_returns = true;  // apply_bpe.py keeps a line's "\r\n" and cuts lines at "\r" (fn does)
  std::vector<std::string> lines, results;
  std::vector<size_t> bad_byte;  // per line: 1-based offset of its first malformed byte; 0 if none
  for (int64_t first_line = 1;; first_line += static_cast<int64_t>(lines.size())) {
    lines.clear();
    for (std::string line; lines.size() < kLinesPerWorkerChunk * workers && reader.next(line);) {
      if (reader.ended_with_newline()) line.push_back('\n');
      lines.push_back(std::move(line));
    }
    if (lines.empty()) return;
    results.assign(lines.size(), std::string());
    bad_byte.assign(lines.size(), 0);
    parallel_for(lines.size(), workers, [&](size_t i) {
      if (const auto bad = find_invalid_utf8(lines[i]))
        bad_byte[i] = *bad + 1;
      else
        results[i] = fn(lines[i]);
    });
    for (size_t i = 0; i < lines.size(); ++i) {
      if (bad_byte[i] != 0)
        throw input_error(reader.path(), first_line + static_cast<int64_t>(i), "malformed UTF-8 at byte ", bad_byte[i]);
      sink(results[i]);
    }
  }
}

// Segmented words shared by all threads: the words are spread over shards, each a map behind its
// own mutex, so threads seldom wait for each other. Entries are never changed or removed, and map
// nodes do not move, so a returned reference stays valid without the lock.
class WordCache {
 public:
  template <typename Segment>
  const std::vector<std::string>& get(std::string_view word, const Segment& segment) {
    Shard& shard = shards_[std::hash<std::string_view>()(word) % kShards];
    std::string key(word);
    {
      std::lock_guard<std::mutex> lock(shard.mutex);
      const auto it = shard.words.find(key);
      if (it != shard.words.end()) return it->second;
    }
    auto pieces = segment(word);  // outside the lock; two threads may both segment a new word
    std::lock_guard<std::mutex> lock(shard.mutex);
    return shard.words.try_emplace(std::move(key), std::move(pieces)).first->second;
  }

 private:
  static constexpr size_t kShards = 64;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<std::string>> words;
  };
  std::array<Shard, kShards> shards_;
};

}  // namespace

class BpeApplier::Impl {
 public:
  Impl(BpeCodes codes, const BpeApplyOptions& options);

  std::vector<std::string> segment_word(std::string_view word) const;
  // segment_word through the cache.
  const std::vector<std::string>& cached_pieces(std::string_view word) const {
    return cache_.get(word, [this](std::string_view w) { return segment_word(w); });
  }

  BpeCodes codes;
  BpeApplyOptions options;

 private:
  struct MergeRule {
    int32_t rank;    // position in the codes file; lower merges first
    int32_t merged;  // symbol id of left + right
  };
  struct Glossary {
    PythonRegex whole;     // re.match('^' + glossary + '$', word)
    PythonRegex anywhere;  // re.search(glossary, word)
    PythonRegex split;     // re.split('(' + glossary + ')', word)
  };

  int32_t symbol_id(std::string_view symbol) const;  // -1 for a symbol no merge mentions
  std::vector<std::string> isolate_glossaries(std::string_view word) const;
  std::vector<std::string> encode(const std::string& word) const;
  std::vector<std::string> check_vocab_and_split(const std::vector<std::string>& pieces) const;
  void recursive_split(const std::string& segment, bool final, std::vector<std::string>& out) const;
  bool in_vocabulary(const std::string& piece) const { return vocabulary_.count(piece) != 0; }

  std::unordered_map<std::string, int32_t> symbol_ids_;
  std::unordered_map<uint64_t, MergeRule> merge_rules_;  // the first merge of each (left, right)
  std::unordered_map<std::string, BpeMerge> producers_;  // bpe_codes_reverse: merged symbol -> merge
  std::unordered_set<std::string> vocabulary_;
  std::vector<Glossary> glossaries_;
  std::optional<PythonRegex> any_glossary_;  // re.compile('^(' + '|'.join(glossaries) + ')$').match
  mutable WordCache cache_;
};

BpeApplier::Impl::Impl(BpeCodes codes_in, const BpeApplyOptions& options_in)
    : codes(std::move(codes_in)), options(options_in) {
  const auto& merges = codes.merges();
  const auto intern = [this](const std::string& symbol) {
    return symbol_ids_.try_emplace(symbol, static_cast<int32_t>(symbol_ids_.size())).first->second;
  };
  // bpe_codes keeps the first rank of a repeated pair. bpe_codes_reverse is built by walking the
  // pairs in order of their last occurrence, from the end, so that among pairs making the same
  // symbol the one whose last occurrence comes first wins.
  std::unordered_map<uint64_t, int32_t> last_occurrence;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const int32_t left = intern(merges[rank].left), right = intern(merges[rank].right);
    const int32_t merged = intern(merges[rank].left + merges[rank].right);
    merge_rules_.try_emplace(pair_key(left, right), MergeRule{static_cast<int32_t>(rank), merged});
    last_occurrence[pair_key(left, right)] = static_cast<int32_t>(rank);
  }
  std::unordered_map<std::string, int32_t> producer_rank;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& merge = merges[rank];
    const int32_t last = last_occurrence.at(pair_key(symbol_ids_.at(merge.left), symbol_ids_.at(merge.right)));
    const std::string merged = merge.left + merge.right;
    const auto [it, inserted] = producer_rank.try_emplace(merged, last);
    if (inserted || last < it->second) {
      it->second = last;
      producers_[merged] = merge;
    }
  }
  if (!options.vocabulary.empty()) {
    // read_vocabulary: each line is checked against the threshold on its own.
    for_each_word_count(options.vocabulary, [this](std::string_view word, int64_t count) {
      if (!options.vocabulary_threshold || count >= *options.vocabulary_threshold) vocabulary_.emplace(word);
    });
  }
  std::string alternatives;
  for (const auto& glossary : options.glossaries) {
    PythonRegex anywhere(glossary);  // first, so that a syntax error names the glossary as given
    glossaries_.push_back({PythonRegex("^" + glossary + "$"), std::move(anywhere), PythonRegex("(" + glossary + ")")});
    alternatives += (alternatives.empty() ? "" : "|") + glossary;
  }
  if (!options.glossaries.empty()) any_glossary_.emplace("^(" + alternatives + ")$");
}

int32_t BpeApplier::Impl::symbol_id(std::string_view symbol) const {
  const auto it = symbol_ids_.find(std::string(symbol));
  return it == symbol_ids_.end() ? -1 : it->second;
}

std::vector<std::string> BpeApplier::Impl::segment_word(std::string_view word) const {
  // segment_tokens: the pieces of every glossary-isolated part, then the separator.
  std::vector<std::string> pieces;
  for (const auto& part : isolate_glossaries(word))
    for (auto& piece : encode(part)) pieces.push_back(std::move(piece));
  for (size_t i = 0; i + 1 < pieces.size(); ++i) pieces[i] += options.separator;
  return pieces;
}

std::vector<std::string> BpeApplier::Impl::isolate_glossaries(std::string_view word) const {
  std::vector<std::string> parts = {std::string(word)};
  for (const auto& glossary : glossaries_) {
    std::vector<std::string> isolated;
    for (const auto& part : parts) {
      // isolate_glossary: "if word == glossary or glossary not in word", in regex form.
      if (glossary.whole.match(part) || !glossary.anywhere.search(part)) {
        isolated.push_back(part);
        continue;
      }
      const auto pieces = glossary.split.split(part);
      for (size_t i = 0; i + 1 < pieces.size(); ++i)
        if (pieces[i] && !pieces[i]->empty()) isolated.emplace_back(*pieces[i]);
      // The text after the last match. The latest apply_bpe.py (0.3.9) keeps only its first
      // character here (ending[0]), which its own test_glossaries.py rejects; mixseq keeps all of it
      // as version 0.3.8 did.
      const std::string_view ending = *pieces.back();
      if (!ending.empty()) isolated.emplace_back(strip_subword_nmt(ending));
    }
    parts = std::move(isolated);
  }
  return parts;
}

std::vector<std::string> BpeApplier::Impl::encode(const std::string& word) const {
  if (word.empty()) return {};  // apply_bpe.py fails on an empty word; none comes from text
  if (any_glossary_ && any_glossary_->match(word)) return {word};
  if (utf8_length(word) == 1) return {word};  // returned before the vocabulary check, as in encode()

  // Symbols are byte ranges of word + "</w>": merging two neighbours joins their ranges.
  const std::string text = word + std::string(kBpeEndOfWord);
  struct Symbol {
    size_t begin, end;
    int32_t id;
  };
  std::vector<Symbol> symbols;
  for (const std::string_view c : split_utf8_chars(word)) {
    const size_t begin = c.data() - word.data();
    symbols.push_back({begin, begin + c.size(), 0});
  }
  if (codes.version() == BpeCodes::Version::k0_2)
    symbols.back().end = text.size();  // the last character carries "</w>"
  else
    symbols.push_back({word.size(), text.size(), 0});
  for (auto& symbol : symbols)
    symbol.id = symbol_id(std::string_view(text).substr(symbol.begin, symbol.end - symbol.begin));

  std::vector<Symbol> merged_symbols;
  while (symbols.size() > 1) {
    const MergeRule* best = nullptr;
    uint64_t best_pair = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (symbols[i].id < 0 || symbols[i + 1].id < 0) continue;
      const uint64_t pair = pair_key(symbols[i].id, symbols[i + 1].id);
      const auto it = merge_rules_.find(pair);
      if (it != merge_rules_.end() && (!best || it->second.rank < best->rank)) {
        best = &it->second;
        best_pair = pair;
      }
    }
    if (!best) break;
    // Merge every non-overlapping occurrence, left to right ("x x x" -> "xx x").
    merged_symbols.clear();
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i].id >= 0 && symbols[i + 1].id >= 0 &&
          pair_key(symbols[i].id, symbols[i + 1].id) == best_pair) {
        merged_symbols.push_back({symbols[i].begin, symbols[i + 1].end, best->merged});
        ++i;
      } else {
        merged_symbols.push_back(symbols[i]);
      }
    }
    symbols.swap(merged_symbols);
  }

  std::vector<std::string> pieces;
  for (const auto& symbol : symbols) pieces.push_back(text.substr(symbol.begin, symbol.end - symbol.begin));
  // "don't print end-of-word symbols"
  if (pieces.back() == kBpeEndOfWord)
    pieces.pop_back();
  else if (pieces.back().size() >= kBpeEndOfWord.size() &&
           pieces.back().compare(pieces.back().size() - kBpeEndOfWord.size(), kBpeEndOfWord.size(), kBpeEndOfWord) == 0)
    pieces.back().resize(pieces.back().size() - kBpeEndOfWord.size());
  if (!vocabulary_.empty()) return check_vocab_and_split(pieces);  // apply_bpe.py: "if vocab:"
  return pieces;
}

std::vector<std::string> BpeApplier::Impl::check_vocab_and_split(const std::vector<std::string>& pieces) const {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < pieces.size(); ++i) {
    if (in_vocabulary(pieces[i] + options.separator))
      out.push_back(pieces[i]);
    else
      recursive_split(pieces[i], false, out);
  }
  if (in_vocabulary(pieces.back()))
    out.push_back(pieces.back());
  else
    recursive_split(pieces.back(), true, out);
  return out;
}

// Undoes the merge that made `segment` (for a word-final segment, the merge that made segment + "</w>")
// and keeps each half that is in the vocabulary, splitting the others further.
void BpeApplier::Impl::recursive_split(const std::string& segment, bool final, std::vector<std::string>& out) const {
  // A final right half shorter than "</w>" leaves "" here (codes that merge "</" and "w>", learnt from
  // text holding "</w>"). apply_bpe.py then looks up the merge making "</w>" and, if there is one,
  // recurses forever; mixseq keeps the "" as apply_bpe.py does when there is none.
  if (final && segment.empty()) {
    out.push_back(segment);
    return;
  }
  const auto it = producers_.find(final ? segment + std::string(kBpeEndOfWord) : segment);
  if (it == producers_.end()) {
    out.push_back(segment);
    return;
  }
  const std::string& left = it->second.left;
  const std::string right(final ? drop_last_chars(it->second.right, kBpeEndOfWord.size()) : it->second.right);
  if (in_vocabulary(left + options.separator))
    out.push_back(left);
  else
    recursive_split(left, false, out);
  if (final ? in_vocabulary(right) : in_vocabulary(right + options.separator))
    out.push_back(right);
  else
    recursive_split(right, final, out);
}

BpeApplier::BpeApplier(BpeCodes codes, const BpeApplyOptions& options)
    : impl_(std::make_unique<const Impl>(std::move(codes), options)) {}
BpeApplier::~BpeApplier() = default;
BpeApplier::BpeApplier(BpeApplier&&) noexcept = default;
BpeApplier& BpeApplier::operator=(BpeApplier&&) noexcept = default;

const BpeCodes& BpeApplier::codes() const { return impl_->codes; }
const BpeApplyOptions& BpeApplier::options() const { return impl_->options; }

std::vector<std::string> BpeApplier::segment_word(std::string_view word) const { return impl_->cached_pieces(word); }

std::vector<std::string> BpeApplier::segment_line(std::string_view line) const {
  std::vector<std::string> pieces;
  for (const std::string_view word : split_on_space(strip_subword_nmt(line))) {
    if (word.empty()) continue;  // "eliminate double spaces"
    const auto& word_pieces = impl_->cached_pieces(word);
    pieces.insert(pieces.end(), word_pieces.begin(), word_pieces.end());
  }
  return pieces;
}

std::string BpeApplier::process_line(std::string_view line) const {
  const size_t leading = leading_strip_chars(line);
  std::string out(line.substr(0, leading));
  bool first = true;
  for (const std::string_view word : split_on_space(strip_subword_nmt(line))) {
    if (word.empty()) continue;
    for (const auto& piece : impl_->cached_pieces(word)) {
      if (!first) out += ' ';
      out += piece;
      first = false;
    }
  }
  const size_t trailing = trailing_strip_chars(line);
  if (trailing != 0 && trailing != line.size()) out += line.substr(line.size() - trailing);
  return out;
}

void BpeApplier::apply_file(const std::string& input, const std::string& output) const {
  OutputFile out(output);
  transform_lines(
      input, resolve_threads(impl_->options.threads),
      [this](const std::string& text) {
        std::string segmented;
        for (const std::string_view line : split_python_lines(text)) segmented += process_line(line);
        return segmented;
      },
      [&](const std::string& segmented) { out.stream() << segmented; });
  out.commit();
}

WordCounts BpeApplier::count_output_words(const std::string& input) const {
  WordCounts counts;
  transform_lines(
      input, resolve_threads(impl_->options.threads),
      [this](const std::string& text) {
        // BPE.process_lines opens the file with open(), whose universal newlines end lines at \n, \r
        // and \r\n and turn each into "\n".
        std::string segmented;
        std::string_view rest = text;
        for (size_t cr; (cr = rest.find('\r')) != std::string_view::npos;) {
          segmented += process_line(std::string(rest.substr(0, cr)) + "\n");
          rest.remove_prefix(cr + 1);
          if (rest == "\n") rest = {};  // "\r\n" is one line end
        }
        if (!rest.empty()) segmented += process_line(rest);
        return segmented;
      },
      // get_vocabulary reads the segmented text back through codecs, which cuts lines as str.splitlines.
      [&](const std::string& segmented) {
        for (const std::string_view line : split_python_lines(segmented)) counts.add_words_of_line(line);
      });
  return counts;
}

}  // namespace mixseq
