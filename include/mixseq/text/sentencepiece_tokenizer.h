// SentencePieceTokenizer: mixseq's Tokenizer over a SentencePiece model file (Kudo & Richardson
// 2018, https://arxiv.org/abs/1808.06226), through Debian's libsentencepiece, which mixseq
// opens as a separate module (src/text/sentencepiece_module.h says why). encode() gives
// the same pieces as SentencePieceProcessor::EncodeAsPieces and `spm_encode`; pieces mark a
// preceding space with U+2581 "▁", so decode(encode(x)) is x after the model's normalization
// (NFKC, runs of spaces squeezed, no leading or trailing spaces).
//
// Immutable after construction; encode() and decode() may be called from several threads at
// once (libsentencepiece's const methods are thread-safe).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mixseq/text/tokenizer.h"

namespace mixseq::sentencepiece_module {
class Processor;
}  // namespace mixseq::sentencepiece_module

namespace mixseq {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // Loads `model_path` (a ".model" file written by `mixseq spm train` or `spm_train`); a
  // missing, unreadable or corrupt file throws mixseq::Error naming the path.
  explicit SentencePieceTokenizer(const std::string& model_path);
  ~SentencePieceTokenizer() override;

  std::vector<std::string> encode(std::string_view line) const override;
  std::string decode(const std::vector<std::string>& pieces) const override;
  std::string describe() const override;  // "spm:<model path>"

  const std::string& model_path() const { return model_path_; }

 private:
  std::string model_path_;
  std::unique_ptr<sentencepiece_module::Processor> processor_;
};

}  // namespace mixseq
