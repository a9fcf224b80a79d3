// CtcSymbols: the output symbols of a speech recognizer, id 0 being the CTC blank. The default set
// is OpenSeq2Seq's English characters (space, apostrophe, a-z: 28 symbols) plus the blank; a
// dataset may list its own characters (any UTF-8 characters, one per line in vocab.txt, the space
// written as <space>).
//
// Transcripts are normalised before encoding as OpenSeq2Seq's and Jasper's English pipelines do
// for plain text: lowercased (Unicode), runs of whitespace turned into one space, stripped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

inline constexpr int64_t kCtcBlankId = 0;

class CtcSymbols {
 public:
  // OpenSeq2Seq's 28 English symbols plus the blank.
  static CtcSymbols english_characters();
  // The symbols of vocab.txt's text (as to_text() writes it); throws naming `name` and the line for
  // a malformed list (a line that is not one character, a repeated symbol, no blank first).
  static CtcSymbols from_text(std::string_view text, const std::string& name);

  // vocab.txt: "<blank>", then one symbol per line ("<space>" for the space).
  std::string to_text() const;
  int64_t size() const { return static_cast<int64_t>(symbols_.size()); }
  const std::string& symbol(int64_t id) const { return symbols_.at(static_cast<size_t>(id)); }

  // The normalised form of a transcript (see above).
  static std::string normalize(std::string_view transcript);
  // The ids of a normalised transcript; nullopt with `why` set when it holds a character outside the
  // set (named in `why`) or is empty.
  std::optional<std::vector<int64_t>> encode(std::string_view normalized, std::string* why = nullptr) const;
  // The text of ids (blanks skipped; repeats are NOT merged here: that is CTC decoding's job).
  std::string decode(const std::vector<int64_t>& ids) const;

 private:
  std::vector<std::string> symbols_;  // by id; symbols_[0] is the blank's name
};

}  // namespace mixseq
