// Vocabulary: the map between subword pieces and the integer ids a model embeds. It is built
// from tokenized text (pieces separated by spaces, as BPE segmentation and `mixseq spm
// encode` write it), from one file or several: GNMT shares one vocabulary between source and
// target (Wu et al. 2016, §4.1), so `build` counts pieces over all the files it is given.
//
// Ids 0-3 are always the special symbols <pad> <unk> <s> </s> (kPadId ... kEosId). Then come
// the pieces by count, most frequent first, ties in byte order, so the same text always gives
// the same ids. The size can be padded up to a multiple of 8 with filler symbols "<filler0>",
// "<filler1>", ...: fp16 matrix products with an output dimension that is a multiple of 8 run
// on tensor cores (NVIDIA, "Deep Learning Performance Guide", Tensor Core requirements;
// fairseq's Dictionary.finalize(padding_factor=8) does the same).
//
// File format (UTF-8 text, the id of an entry is its line number - 1):
//   <pad> 0
//   <unk> 0
//   <s> 0
//   </s> 0
//   ▁the 51203
//   ...
// one "<token> <count>" per line, a single space between; tokens hold no spaces. The count
// is how often the token occurred in the text the vocabulary was built from (for the special
// symbols: how often their spelling did, usually 0). A user may edit the file; `load` checks it.
//
// A Vocabulary is immutable after it is built or loaded; its const methods may be called from
// several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mixseq {

constexpr int64_t kPadId = 0;
constexpr int64_t kUnkId = 1;
constexpr int64_t kBosId = 2;
constexpr int64_t kEosId = 3;
constexpr int64_t kSpecialSymbolCount = 4;
constexpr std::string_view kPadSymbol = "<pad>";
constexpr std::string_view kUnkSymbol = "<unk>";
constexpr std::string_view kBosSymbol = "<s>";
constexpr std::string_view kEosSymbol = "</s>";

struct VocabularyOptions {
  int64_t max_size = 0;         // most entries, the 4 special symbols included, before padding; 0 = no limit
  int64_t min_count = 1;        // pieces seen fewer times are left out (they map to <unk>); 1 keeps all
  int64_t pad_to_multiple = 8;  // filler symbols round the size up to a multiple of this; 1 = no padding
};

struct VocabularyEncodeOptions {
  bool add_bos = false;  // prepend <s> (decoder inputs)
  bool add_eos = false;  // append </s> (decoder targets, and source sentences in GNMT)
};

// Occurrences of each piece in tokenized text.
using TokenCounts = std::unordered_map<std::string, int64_t>;

// Counts the pieces of tokenized UTF-8 files, splitting lines on spaces (runs of spaces count
// as one; leading and trailing spaces are ignored). Malformed UTF-8 throws "<path>:<line>: ...".
TokenCounts count_tokens(const std::vector<std::string>& paths);

class Vocabulary {
 public:
  // The special symbols, the pieces of `counts` kept by `options`, then the filler symbols.
  static Vocabulary build(const TokenCounts& counts, const VocabularyOptions& options = {});
  // Reads a vocabulary file; a malformed line (no count, bad count, empty token, duplicate
  // token, special symbols missing or out of place, malformed UTF-8) throws "<path>:<line>: ...".
  static Vocabulary load(const std::string& path);
  // Writes the file format above, atomically ("-" = stdout).
  void save(const std::string& path) const;

  Vocabulary(const Vocabulary& other);
  Vocabulary& operator=(const Vocabulary& other);
  Vocabulary(Vocabulary&&) = default;
  Vocabulary& operator=(Vocabulary&&) = default;

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t id(std::string_view token) const;      // kUnkId for a token not in the vocabulary
  bool contains(std::string_view token) const;
  const std::string& token(int64_t id) const;    // throws mixseq::Error for an id out of range
  int64_t count(int64_t id) const;               // occurrences in the text it was built from

  // Pieces -> ids, unknown pieces as kUnkId. Allocates only the result.
  std::vector<int64_t> encode(const std::vector<std::string>& pieces, const VocabularyEncodeOptions& options = {}) const;
  // A tokenized line (pieces separated by spaces, as count_tokens splits it) -> ids.
  std::vector<int64_t> encode_line(std::string_view line, const VocabularyEncodeOptions& options = {}) const;
  // Ids -> pieces, up to the first </s>; <pad> and <s> are skipped, other ids (<unk>
  // included) give their token. An id out of range throws mixseq::Error.
  std::vector<std::string> decode(const std::vector<int64_t>& ids) const;

  // Same tokens with the same counts in the same order.
  bool operator==(const Vocabulary& other) const;
  bool operator!=(const Vocabulary& other) const { return !(*this == other); }

 private:
  Vocabulary(std::vector<std::string> tokens, std::vector<int64_t> counts);
  void index_tokens();

  std::vector<std::string> tokens_;  // by id
  std::vector<int64_t> counts_;      // by id
  // Views into tokens_, so that a lookup by string_view needs no std::string. Rebuilt on
  // copy; a move keeps the strings where they are.
  std::unordered_map<std::string_view, int64_t> ids_;
};

// How well a vocabulary covers tokenized text, for `mixseq vocab build` to report.
struct VocabularyCoverage {
  int64_t token_count = 0;          // running pieces in the text
  int64_t covered_token_count = 0;  // of which are in the vocabulary
  int64_t type_count = 0;           // distinct pieces in the text
  int64_t dropped_type_count = 0;   // distinct pieces not in the vocabulary (they map to <unk>)
  double coverage() const;          // covered_token_count / token_count; 1 for empty text
};

VocabularyCoverage measure_coverage(const Vocabulary& vocabulary, const TokenCounts& counts);

}  // namespace mixseq
