// Word and character error rates (WER, CER) computed exactly as NIST's sclite (SCTK 2.4.10,
// usnistgov/SCTK src/sclite) computes them, so that a speech recognizer's score here is the score
// sclite gives for the same transcripts.
//
// Alignment (sclite's DP alignment, net_dp.c with word.c's wwd_WORD): a minimum-cost alignment of
// the reference and hypothesis token sequences under the costs correct 0, substitution 4,
// insertion 3, deletion 3. A substitution (4) is always cheaper than a deletion plus an insertion
// (6), but equal-cost alignments with different counts do exist: reference "a x y" against
// hypothesis "z w a" costs 12 both as three substitutions and as two insertions, one correct and
// two deletions. sclite breaks such ties cell by cell, and so does this code: a cell takes the
// diagonal (correct or substitution) when it is no costlier than both other moves, else the
// deletion when strictly cheaper than the insertion, else the insertion; the back trace starts at
// the last cell. The three substitutions win in the example.
//
// Counting: C, S, D, I from the alignment; N = C + S + D reference tokens; the error rate is
// 100 * (S + D + I) / N, sclite's "Err" (its "Percent Total Error"), undefined when N is 0
// (sclite prints UNDEF). It can exceed 100 when the hypothesis has many insertions. Corpus rates
// sum the counts over utterances first; they are not means of the utterances' rates.
//
// Tokens: words are the text split on whitespace (Python's str.split(): runs of Unicode
// whitespace, so empty lines have no words). Characters (CER) are the Unicode code points of the
// words, without the spaces between them: the words' characters are aligned as one sequence, as
// `sclite -c -e utf-8` chops words into characters. So "ab c" against "a bc" has CER 0, and a
// missing space is not an error. (jiwer and Hugging Face's `evaluate` count spaces as
// characters; their CER differs from sclite's.) Code points, not grapheme clusters: "é" written
// as e + U+0301 is two characters, as in sclite.
//
// Comparison is exact and case-sensitive, as `sclite -s`. sclite's default folds the case of
// ASCII letters only; ErrorRateOptions::lowercase folds every letter (Python's str.lower()), so it
// matches sclite's default where the non-ASCII letters are already lowercase.
// sclite's transcript conventions (alternatives "{ a / b }", optionally deletable "(word)", the
// null word "@") are not interpreted: every token is literal text.
//
// Inputs are valid UTF-8 (mixseq/text/scoring_input.h reads files and checks them); the functions
// throw mixseq::Error on malformed UTF-8. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

// sclite's DP costs (word.c, wwd_WORD), in the same units.
constexpr int kErrorRateSubstitutionCost = 4;
constexpr int kErrorRateInsertionCost = 3;
constexpr int kErrorRateDeletionCost = 3;

enum class ErrorRateUnit {
  kWord,       // WER: whitespace-separated words
  kCharacter,  // CER: the code points of the words, spaces not counted (sclite -c -e utf-8)
};

struct ErrorRateOptions {
  ErrorRateUnit unit = ErrorRateUnit::kWord;  // what is aligned and counted
  bool lowercase = false;           // Python's str.lower() on both sides first (mixseq/text/lowercase.h);
                                    // off compares case-sensitively, as sclite -s
  bool remove_punctuation = false;  // drop every character of Unicode general category P (punctuation:
                                    // . , ' " - ? ! and the like; not symbols such as $ or +) from both
                                    // sides first; a word left empty disappears. Off keeps the text as is
};

// One step of an alignment. The index into a sequence is -1 where the step has no token there.
enum class EditOp : char {
  kCorrect = 'C',
  kSubstitution = 'S',
  kDeletion = 'D',   // a reference token with no hypothesis token
  kInsertion = 'I',  // a hypothesis token with no reference token
};

struct AlignmentStep {
  EditOp op = EditOp::kCorrect;
  int64_t reference_index = -1;   // into the reference tokens; -1 for an insertion
  int64_t hypothesis_index = -1;  // into the hypothesis tokens; -1 for a deletion
};

struct ErrorCounts {
  int64_t correct = 0;
  int64_t substitutions = 0;
  int64_t deletions = 0;
  int64_t insertions = 0;

  int64_t reference_length() const { return correct + substitutions + deletions; }   // N
  int64_t hypothesis_length() const { return correct + substitutions + insertions; }
  int64_t errors() const { return substitutions + deletions + insertions; }          // S + D + I
  ErrorCounts& operator+=(const ErrorCounts& other);
};

bool operator==(const ErrorCounts& a, const ErrorCounts& b);

// 100 * (S + D + I) / N, computed as sclite's pct() computes it (double division, then * 100);
// nullopt when N is 0, where sclite prints UNDEF.
std::optional<double> error_rate(const ErrorCounts& counts);

// The tokens of one line under `options`: its words, or its words' characters (see above).
std::vector<std::string> error_rate_tokens(std::string_view text, const ErrorRateOptions& options);

// The most cells (|hypothesis| + 1) * (|reference| + 1) one alignment takes, a byte each: 256 MiB,
// two lines of 16,000 words. A longer pair (two 1 MB files of one line each needed 3.6 GB) is an
// error saying so, rather than a std::bad_alloc naming nothing.
inline constexpr int64_t kMaxAlignmentCells = int64_t{1} << 28;

// sclite's minimum-cost alignment of two token sequences, in order, with sclite's tie-breaking.
// Takes O(|hypothesis| * |reference|) time and bytes; throws mixseq::Error past kMaxAlignmentCells.
std::vector<AlignmentStep> align_tokens(const std::vector<std::string>& hypothesis,
                                        const std::vector<std::string>& reference);

ErrorCounts count_edits(const std::vector<AlignmentStep>& alignment);

// One utterance: its tokens, their alignment and its counts.
struct UtteranceErrors {
  std::vector<std::string> hypothesis_tokens;
  std::vector<std::string> reference_tokens;
  std::vector<AlignmentStep> alignment;
  ErrorCounts counts;
};

UtteranceErrors utterance_errors(std::string_view hypothesis, std::string_view reference,
                                 const ErrorRateOptions& options);

struct CorpusErrors {
  ErrorCounts counts;                     // summed over utterances
  std::optional<double> rate;             // error_rate(counts): WER or CER in percent
  std::vector<ErrorCounts> utterances;    // per utterance, in input order
};

// Error rate of `hypotheses` against `references`, one reference per hypothesis (same order, same
// count; throws mixseq::Error otherwise). An empty reference is allowed: its hypothesis' tokens are
// all insertions.
CorpusErrors corpus_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                               const ErrorRateOptions& options);

// sclite's pralign picture of one alignment, three lines without "\n":
//   REF:  the cat *** sat
//   HYP:  the *** big mat
//   Eval:     D   I   S
// Each column is as wide as its longer token in code points; a missing token shows as that many
// '*' (at least one).
std::vector<std::string> format_alignment(const UtteranceErrors& utterance);

// What the errors were, as sclite's detailed report (`sclite -o dtl`) lists them: its CONFUSION
// PAIRS (each substitution's reference and hypothesis token), INSERTIONS, DELETIONS, SUBSTITUTIONS
// (the reference tokens substituted) and FALSELY RECOGNIZED (the hypothesis tokens put in their
// place), each token or pair with how often, summed over the utterances added. Which token pairs
// with which is the alignment's (align_tokens, sclite's tie-breaking included), so the lists are
// sclite's for the same transcripts. Each list comes most frequent first, ties in the byte order
// of the tokens (the reference's first, for pairs), the order sclite prints them in.
struct TokenCount {
  std::string token;
  int64_t count = 0;
};
struct TokenPairCount {
  std::string reference, hypothesis;
  int64_t count = 0;
};

class ErrorTally {
 public:
  void add(const UtteranceErrors& utterance);

  std::vector<TokenPairCount> confusion_pairs() const;
  std::vector<TokenCount> insertions() const;          // hypothesis tokens
  std::vector<TokenCount> deletions() const;           // reference tokens
  std::vector<TokenCount> substitutions() const;       // reference tokens
  std::vector<TokenCount> falsely_recognized() const;  // hypothesis tokens

 private:
  std::map<std::pair<std::string, std::string>, int64_t> pairs_;
  std::map<std::string, int64_t> insertions_, deletions_, substitutions_, falsely_recognized_;
};

}  // namespace mixseq
