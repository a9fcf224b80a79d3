#include "mixseq/text/error_rate.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <cstdint>

#include "mixseq/text/lowercase.h"
#include "mixseq/util/error.h"
#include "mixseq/util/utf8.h"

namespace mixseq {
namespace {

// Moves of the DP, kept per cell for the back trace.
enum Move : uint8_t { kDiagonal, kDown, kRight };  // diagonal: correct/substitution; down: deletion; right: insertion

bool is_unicode_punctuation(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0; }

std::string without_punctuation(std::string_view text) {
  std::string out;
  for (char32_t c : decode_utf8(text))
    if (!is_unicode_punctuation(c)) append_utf8(c, out);
  return out;
}

void check_utf8(std::string_view text) {
  const auto bad = find_invalid_utf8(text);
  MIXSEQ_CHECK(!bad, "error rate: malformed UTF-8 at byte ", *bad, " of a ", text.size(), "-byte line");
}

}  // namespace

ErrorCounts& ErrorCounts::operator+=(const ErrorCounts& other) {
  correct += other.correct;
  substitutions += other.substitutions;
  deletions += other.deletions;
  insertions += other.insertions;
  return *this;
}

bool operator==(const ErrorCounts& a, const ErrorCounts& b) {
  return a.correct == b.correct && a.substitutions == b.substitutions && a.deletions == b.deletions &&
         a.insertions == b.insertions;
}

// sctk.h: #define pct(num,dem) (((dem)==0) ? 0 : (double)(num)/(double)(dem) * 100.0); sc_dtl.c
// prints UNDEF instead when the reference has no words.
std::optional<double> error_rate(const ErrorCounts& counts) {
  const int64_t n = counts.reference_length();
  if (n == 0) return std::nullopt;
  return static_cast<double>(counts.errors()) / static_cast<double>(n) * 100.0;
}

std::vector<std::string> error_rate_tokens(std::string_view text, const ErrorRateOptions& options) {
  check_utf8(text);
  std::string prepared(text);
  if (options.lowercase) prepared = lowercase(prepared);
  if (options.remove_punctuation) prepared = without_punctuation(prepared);
  std::vector<std::string> tokens;
  for (std::string_view word : split_whitespace(prepared)) {
    if (options.unit == ErrorRateUnit::kWord) {
      tokens.emplace_back(word);
    } else {  // align.c expand_words_to_chars: each word becomes its characters, the spaces go
      for (std::string_view c : split_utf8_chars(word)) tokens.emplace_back(c);
    }
  }
  return tokens;
}

// sclite's net_dp.c on two linear networks: the reference is net A (rows), the hypothesis net B
// (columns). calculate_margin_cells fills row 0 with insertions and column 0 with deletions;
// calculate_internal_cells takes, per cell, the diagonal when it costs no more than both the
// deletion and the insertion, else the deletion when it costs strictly less than the insertion,
// else the insertion. extract_NET_ALIGN_result traces back from the last cell. Costs are small
// integers, exact in sclite's floats as in these ints.
std::vector<AlignmentStep> align_tokens(const std::vector<std::string>& hypothesis,
                                        const std::vector<std::string>& reference) {
  const size_t rows = reference.size() + 1, cols = hypothesis.size() + 1;
  MIXSEQ_CHECK(static_cast<double>(rows) * static_cast<double>(cols) <= static_cast<double>(kMaxAlignmentCells),
               "error rate: ", hypothesis.size(), " hypothesis tokens against ", reference.size(),
               " reference tokens: their alignment would take ", rows * cols / 1048576, " MiB, more than the limit of ",
               kMaxAlignmentCells / 1048576, " MiB; split the line into utterances");
  std::vector<uint8_t> moves(rows * cols);       // moves[r * cols + h]: the move into cell (r, h)
  std::vector<int64_t> previous(cols), current(cols);  // cost rows r - 1 and r
  for (size_t h = 1; h < cols; ++h) {
    previous[h] = previous[h - 1] + kErrorRateInsertionCost;
    moves[h] = kRight;
  }
  for (size_t r = 1; r < rows; ++r) {
    current[0] = previous[0] + kErrorRateDeletionCost;
    moves[r * cols] = kDown;
    for (size_t h = 1; h < cols; ++h) {
      const int64_t diagonal =
          previous[h - 1] + (reference[r - 1] == hypothesis[h - 1] ? 0 : kErrorRateSubstitutionCost);
      const int64_t down = previous[h] + kErrorRateDeletionCost;
      const int64_t right = current[h - 1] + kErrorRateInsertionCost;
      uint8_t& move = moves[r * cols + h];
      if (diagonal <= down && diagonal <= right) {
        current[h] = diagonal;
        move = kDiagonal;
      } else if (down < right) {
        current[h] = down;
        move = kDown;
      } else {
        current[h] = right;
        move = kRight;
      }
    }
    std::swap(previous, current);
  }

  std::vector<AlignmentStep> steps;
  for (size_t r = rows - 1, h = cols - 1; r > 0 || h > 0;) {
    const uint8_t move = moves[r * cols + h];
    if (move == kDiagonal) {
      --r, --h;
      const bool same = reference[r] == hypothesis[h];
      steps.push_back({same ? EditOp::kCorrect : EditOp::kSubstitution, static_cast<int64_t>(r),
                       static_cast<int64_t>(h)});
    } else if (move == kDown) {
      --r;
      steps.push_back({EditOp::kDeletion, static_cast<int64_t>(r), -1});
    } else {
      --h;
      steps.push_back({EditOp::kInsertion, -1, static_cast<int64_t>(h)});
    }
  }
  std::reverse(steps.begin(), steps.end());
  return steps;
}

ErrorCounts count_edits(const std::vector<AlignmentStep>& alignment) {
  ErrorCounts counts;
  for (const AlignmentStep& step : alignment) {
    switch (step.op) {
      case EditOp::kCorrect: ++counts.correct; break;
      case EditOp::kSubstitution: ++counts.substitutions; break;
      case EditOp::kDeletion: ++counts.deletions; break;
      case EditOp::kInsertion: ++counts.insertions; break;
    }
  }
  return counts;
}

UtteranceErrors utterance_errors(std::string_view hypothesis, std::string_view reference,
                                 const ErrorRateOptions& options) {
  UtteranceErrors result;
  result.hypothesis_tokens = error_rate_tokens(hypothesis, options);
  result.reference_tokens = error_rate_tokens(reference, options);
  result.alignment = align_tokens(result.hypothesis_tokens, result.reference_tokens);
  result.counts = count_edits(result.alignment);
  return result;
}

CorpusErrors corpus_error_rate(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                               const ErrorRateOptions& options) {
  MIXSEQ_CHECK(hypotheses.size() == references.size(), "error rate: ", hypotheses.size(), " hypotheses but ",
               references.size(), " references; every hypothesis needs one reference");
  CorpusErrors result;
  result.utterances.reserve(hypotheses.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    result.utterances.push_back(utterance_errors(hypotheses[i], references[i], options).counts);
    result.counts += result.utterances.back();
  }
  result.rate = error_rate(result.counts);
  return result;
}

std::vector<std::string> format_alignment(const UtteranceErrors& utterance) {
  std::string ref = "REF: ", hyp = "HYP: ", eval = "Eval:";
  for (const AlignmentStep& step : utterance.alignment) {
    const std::string* r = step.reference_index >= 0 ? &utterance.reference_tokens[step.reference_index] : nullptr;
    const std::string* h = step.hypothesis_index >= 0 ? &utterance.hypothesis_tokens[step.hypothesis_index] : nullptr;
    const size_t width = std::max<size_t>({1, r ? utf8_length(*r) : 0, h ? utf8_length(*h) : 0});
    const auto cell = [width](const std::string* token) {
      if (token == nullptr) return " " + std::string(width, '*');
      return " " + *token + std::string(width - utf8_length(*token), ' ');
    };
    ref += cell(r);
    hyp += cell(h);
    eval += " ";
    eval += step.op == EditOp::kCorrect ? ' ' : static_cast<char>(step.op);
    eval += std::string(width - 1, ' ');
  }
  for (std::string* line : {&ref, &hyp, &eval}) line->erase(line->find_last_not_of(' ') + 1);
  return {ref, hyp, eval};
}

namespace {

// Most frequent first, ties in byte order: std::map's order is the byte order of std::string, and
// stable_sort keeps it among equal counts.
std::vector<TokenCount> ranked(const std::map<std::string, int64_t>& counts) {
  std::vector<TokenCount> list;
  list.reserve(counts.size());
  for (const auto& [token, count] : counts) list.push_back({token, count});
  std::stable_sort(list.begin(), list.end(), [](const TokenCount& a, const TokenCount& b) { return a.count > b.count; });
  return list;
}

}  // namespace

void ErrorTally::add(const UtteranceErrors& utterance) {
  for (const AlignmentStep& step : utterance.alignment) {
    const auto reference = [&] { return utterance.reference_tokens.at(static_cast<size_t>(step.reference_index)); };
    const auto hypothesis = [&] { return utterance.hypothesis_tokens.at(static_cast<size_t>(step.hypothesis_index)); };
    switch (step.op) {
      case EditOp::kCorrect: break;
      case EditOp::kSubstitution:
        ++pairs_[{reference(), hypothesis()}];
        ++substitutions_[reference()];
        ++falsely_recognized_[hypothesis()];
        break;
      case EditOp::kDeletion: ++deletions_[reference()]; break;
      case EditOp::kInsertion: ++insertions_[hypothesis()]; break;
    }
  }
}

std::vector<TokenPairCount> ErrorTally::confusion_pairs() const {
  std::vector<TokenPairCount> list;
  list.reserve(pairs_.size());
  for (const auto& [pair, count] : pairs_) list.push_back({pair.first, pair.second, count});
  std::stable_sort(list.begin(), list.end(),
                   [](const TokenPairCount& a, const TokenPairCount& b) { return a.count > b.count; });
  return list;
}

std::vector<TokenCount> ErrorTally::insertions() const { return ranked(insertions_); }
std::vector<TokenCount> ErrorTally::deletions() const { return ranked(deletions_); }
std::vector<TokenCount> ErrorTally::substitutions() const { return ranked(substitutions_); }
std::vector<TokenCount> ErrorTally::falsely_recognized() const { return ranked(falsely_recognized_); }

}  // namespace mixseq
