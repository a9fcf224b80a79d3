// CtcSymbols: the output symbols of a speech recognizer, id 0 being the CTC blank. The default set
// is OpenSeq2Seq's English characters (space, apostrophe, a-z: 28 symbols) plus the blank; a
// dataset may list its own characters (any UTF-8 characters, one per line in vocab.txt, the space
// written as <space>), or use the pieces of a SentencePiece model as units (as NeMo's
// Citrinet/Conformer-CTC do): fewer, longer symbols, so fewer output frames are needed per word.
//
// Pieces: each symbol is a piece of the model (its <unk> and control symbols left out), a piece
// that begins a word (U+2581 "▁" in SentencePiece's spelling) reads as a leading space in
// symbol(), so that the decoders have one rule for words in both kinds: a symbol whose text begins
// with a space ends the word before it (the space symbol itself is one with nothing after it).
// vocab.txt then starts with "<blank>\tpieces" and lists the pieces as spm writes them. Encoding
// pieces needs the model (from_sentencepiece()); a set read back from text (a checkpoint's) decodes
// only.
//
// Transcripts are normalised before encoding as OpenSeq2Seq's and Jasper's English pipelines do
// for plain text: lowercased (Unicode), runs of whitespace turned into one space, stripped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mixseq {

class SentencePieceTokenizer;

inline constexpr int64_t kCtcBlankId = 0;

class CtcSymbols {
 public:
  // OpenSeq2Seq's 28 English symbols plus the blank.
  static CtcSymbols english_characters();
  // The symbols of vocab.txt's text (as to_text() writes it); throws naming `name` and the line for
  // a malformed list (a line that is not one character, a repeated symbol, no blank first).
  static CtcSymbols from_text(std::string_view text, const std::string& name);
  // The pieces of the SentencePiece model at `model_path` (written by `mixseq spm train`), listed
  // in the <stem>.vocab file beside it; throws naming the file that is missing or malformed.
  static CtcSymbols from_sentencepiece(const std::string& model_path);

  // vocab.txt: "<blank>", then one symbol per line ("<space>" for the space).
  std::string to_text() const;
  int64_t size() const { return static_cast<int64_t>(symbols_.size()); }
  // The symbol's text: a character (" " for the space), or a piece ("▁the" reads " the").
  const std::string& symbol(int64_t id) const { return symbols_.at(static_cast<size_t>(id)); }
  bool pieces() const { return pieces_; }  // SentencePiece pieces rather than characters

  // The normalised form of a transcript (see above).
  static std::string normalize(std::string_view transcript);
  // The ids of a normalised transcript; nullopt with `why` set when it holds a character outside the
  // set (named in `why`; for pieces: one the model has no piece for) or is empty. Throws for pieces
  // read back from text, which have no model to segment with.
  std::optional<std::vector<int64_t>> encode(std::string_view normalized, std::string* why = nullptr) const;
  // The text of ids (blanks skipped; repeats are NOT merged here: that is CTC decoding's job), with
  // one space between words and none at the ends, as transcripts are normalised.
  std::string decode(const std::vector<int64_t>& ids) const;

 private:
  std::vector<std::string> symbols_;  // by id; symbols_[0] is the blank's name
  bool pieces_ = false;
  std::shared_ptr<const SentencePieceTokenizer> segmenter_;  // pieces from from_sentencepiece() only
  std::unordered_map<std::string, int64_t> piece_ids_;        // pieces: spm's spelling -> id
};

}  // namespace mixseq
