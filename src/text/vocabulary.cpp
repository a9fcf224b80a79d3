#include "mixseq/text/vocabulary.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/output_file.h"

namespace mixseq {
namespace {

// By id: kPadId, kUnkId, kBosId, kEosId.
constexpr std::array<std::string_view, kSpecialSymbolCount> kSpecialSymbols = {kPadSymbol, kUnkSymbol, kBosSymbol,
                                                                               kEosSymbol};

// Calls visit(piece) for each piece of a tokenized line: fields between spaces, empty ones skipped.
template <typename Visit>
void for_each_piece(std::string_view line, Visit&& visit) {
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) visit(line.substr(start, end - start));
    start = end + 1;
  }
}

// Parses one "<token> <count>" line of a vocabulary file; complains through reader.fail().
std::pair<std::string, int64_t> parse_entry(const LineReader& reader, const std::string& line) {
  if (line.empty()) reader.fail("empty line; expected '<token> <count>'");
  const size_t space = line.find(' ');
  if (space == std::string::npos) reader.fail("no count after token '", line, "'; expected '<token> <count>'");
  if (space == 0) reader.fail("empty token (the line starts with a space); expected '<token> <count>'");
  const std::string_view count_text = std::string_view(line).substr(space + 1);
  int64_t count = -1;
  const auto [end, error] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (error != std::errc() || end != count_text.data() + count_text.size() || count < 0)
    reader.fail("malformed count '", count_text, "' for token '", line.substr(0, space),
                "'; expected a non-negative integer (tokens hold no spaces)");
  return {line.substr(0, space), count};
}

}  // namespace

TokenCounts count_tokens(const std::vector<std::string>& paths) {
  TokenCounts counts;
  for (const auto& path : paths) {
    LineReader reader(path);
    for (std::string line; reader.next(line);)
      for_each_piece(line, [&](std::string_view piece) { ++counts[std::string(piece)]; });
  }
  return counts;
}

Vocabulary::Vocabulary(std::vector<std::string> tokens, std::vector<int64_t> counts)
    : tokens_(std::move(tokens)), counts_(std::move(counts)) {
  index_tokens();
}

Vocabulary::Vocabulary(const Vocabulary& other) : tokens_(other.tokens_), counts_(other.counts_) { index_tokens(); }

Vocabulary& Vocabulary::operator=(const Vocabulary& other) {
  if (this != &other) {
    tokens_ = other.tokens_;
    counts_ = other.counts_;
    index_tokens();
  }
  return *this;
}

void Vocabulary::index_tokens() {
  ids_.clear();
  ids_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id) ids_.emplace(tokens_[id], static_cast<int64_t>(id));
}

Vocabulary Vocabulary::build(const TokenCounts& counts, const VocabularyOptions& options) {
  MIXSEQ_CHECK(options.max_size == 0 || options.max_size >= kSpecialSymbolCount, "vocabulary max_size ",
               options.max_size, " leaves no room for the ", kSpecialSymbolCount,
               " special symbols; use 0 (no limit) or at least ", kSpecialSymbolCount);
  MIXSEQ_CHECK(options.min_count >= 0, "vocabulary min_count must be >= 0, got ", options.min_count);
  // Products pad to 8 or 64; 2,000,000,000 filled memory with filler entries until std::bad_alloc.
  MIXSEQ_CHECK(options.pad_to_multiple >= 1 && options.pad_to_multiple <= (1 << 20),
               "vocabulary pad_to_multiple must be in 1..1048576 (1 = no padding; 8 or 64 suit the products), got ",
               options.pad_to_multiple);

  std::vector<std::string> tokens(kSpecialSymbols.begin(), kSpecialSymbols.end());
  std::vector<int64_t> token_counts(kSpecialSymbolCount, 0);
  std::vector<std::pair<std::string_view, int64_t>> kept;
  for (const auto& [token, count] : counts) {
    const auto special = std::find(kSpecialSymbols.begin(), kSpecialSymbols.end(), token);
    if (special != kSpecialSymbols.end())  // text that spells a special symbol maps to it
      token_counts[special - kSpecialSymbols.begin()] += count;
    else if (count >= options.min_count)
      kept.emplace_back(token, count);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;  // string_view compares bytes as unsigned
  });
  if (options.max_size > 0)
    kept.resize(std::min<size_t>(kept.size(), static_cast<size_t>(options.max_size - kSpecialSymbolCount)));
  for (const auto& [token, count] : kept) {
    tokens.emplace_back(token);
    token_counts.push_back(count);
  }
  for (int64_t filler = 0; static_cast<int64_t>(tokens.size()) % options.pad_to_multiple != 0; ++filler) {
    std::string name = "<filler" + std::to_string(filler) + ">";
    if (counts.count(name) != 0) continue;  // the text uses this spelling: leave it to <unk>
    tokens.push_back(std::move(name));
    token_counts.push_back(0);
  }
  return Vocabulary(std::move(tokens), std::move(token_counts));
}

Vocabulary Vocabulary::load(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> tokens;
  std::vector<int64_t> counts;
  std::unordered_map<std::string, int64_t> first_line;
  for (std::string line; reader.next(line);) {
    auto [token, count] = parse_entry(reader, line);
    const int64_t id = static_cast<int64_t>(tokens.size());
    if (id < kSpecialSymbolCount && token != kSpecialSymbols[id])
      reader.fail("expected the special symbol '", kSpecialSymbols[id], "' (id ", id, "), found '", token,
                  "'; a vocabulary starts with <pad> <unk> <s> </s>, one per line");
    const auto [previous, inserted] = first_line.emplace(token, reader.line_number());
    if (!inserted) reader.fail("duplicate token '", token, "' (first on line ", previous->second, ")");
    tokens.push_back(std::move(token));
    counts.push_back(count);
  }
  if (tokens.size() < kSpecialSymbolCount)
    throw input_error(reader.path(), reader.line_number() + 1, "expected the special symbol '",
                      kSpecialSymbols[tokens.size()], "' (id ", tokens.size(),
                      "), found the end of the file; a vocabulary starts with <pad> <unk> <s> </s>, one per line");
  return Vocabulary(std::move(tokens), std::move(counts));
}

void Vocabulary::save(const std::string& path) const {
  OutputFile file(path);
  for (size_t id = 0; id < tokens_.size(); ++id) file.stream() << tokens_[id] << ' ' << counts_[id] << '\n';
  file.commit();
}

int64_t Vocabulary::id(std::string_view token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? kUnkId : it->second;
}

bool Vocabulary::contains(std::string_view token) const { return ids_.count(token) != 0; }

const std::string& Vocabulary::token(int64_t id) const {
  MIXSEQ_CHECK(id >= 0 && id < size(), "token id ", id, " is out of range for a vocabulary of size ", size());
  return tokens_[static_cast<size_t>(id)];
}

int64_t Vocabulary::count(int64_t id) const {
  MIXSEQ_CHECK(id >= 0 && id < size(), "token id ", id, " is out of range for a vocabulary of size ", size());
  return counts_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocabulary::encode(const std::vector<std::string>& pieces,
                                        const VocabularyEncodeOptions& options) const {
  std::vector<int64_t> ids;
  ids.reserve(pieces.size() + 2);
  if (options.add_bos) ids.push_back(kBosId);
  for (const auto& piece : pieces) ids.push_back(id(piece));
  if (options.add_eos) ids.push_back(kEosId);
  return ids;
}

std::vector<int64_t> Vocabulary::encode_line(std::string_view line, const VocabularyEncodeOptions& options) const {
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(std::count(line.begin(), line.end(), ' ')) + 3);
  if (options.add_bos) ids.push_back(kBosId);
  for_each_piece(line, [&](std::string_view piece) { ids.push_back(id(piece)); });
  if (options.add_eos) ids.push_back(kEosId);
  return ids;
}

std::vector<std::string> Vocabulary::decode(const std::vector<int64_t>& ids) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const int64_t id : ids) {
    if (id == kEosId) break;
    if (id == kPadId || id == kBosId) continue;
    pieces.push_back(token(id));
  }
  return pieces;
}

bool Vocabulary::operator==(const Vocabulary& other) const {
  return tokens_ == other.tokens_ && counts_ == other.counts_;
}

double VocabularyCoverage::coverage() const {
  return token_count == 0 ? 1.0 : static_cast<double>(covered_token_count) / static_cast<double>(token_count);
}

VocabularyCoverage measure_coverage(const Vocabulary& vocabulary, const TokenCounts& counts) {
  VocabularyCoverage coverage;
  for (const auto& [token, count] : counts) {
    const bool covered = vocabulary.contains(token);
    coverage.token_count += count;
    coverage.covered_token_count += covered ? count : 0;
    coverage.type_count += 1;
    coverage.dropped_type_count += covered ? 0 : 1;
  }
  return coverage;
}

}  // namespace mixseq
