// Tokenizer: the one interface behind which BPE (subword-nmt style) and SentencePiece
// segment text into subword pieces. Implementations are immutable after loading and their
// const methods are safe to call from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mixseq {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // One line of text (no newline) -> subword pieces, without special symbols.
  virtual std::vector<std::string> encode(std::string_view line) const = 0;

  // Pieces -> text; decode(encode(x)) gives x back up to whitespace normalization.
  virtual std::string decode(const std::vector<std::string>& pieces) const = 0;

  // Short description for logs and checkpoints, e.g. "bpe:codes.txt" or "spm:model.model".
  virtual std::string describe() const = 0;
};

// Opens a tokenizer from a "<kind>:<path>" spec: "bpe:<codes file>" or "spm:<model file>".
// Unknown kinds throw mixseq::Error listing the known ones.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec);

}  // namespace mixseq
