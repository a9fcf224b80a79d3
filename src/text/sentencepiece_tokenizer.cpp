#include "mixseq/text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "mixseq/util/error.h"

namespace mixseq {

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path)
    : model_path_(model_path), processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  // libsentencepiece's own message for a missing file is "Not found: ... Error #2"; say it plainly.
  MIXSEQ_CHECK(std::filesystem::is_regular_file(model_path), "SentencePiece model '", model_path,
               "' does not exist; train one with `mixseq spm train --model-prefix <prefix> ...`, "
               "which writes <prefix>.model");
  const auto status = processor_->Load(model_path);
  MIXSEQ_CHECK(status.ok(), "cannot load SentencePiece model '", model_path,
               "': not a valid model file (libsentencepiece: ", status.ToString(),
               "); pass the .model file written by `mixseq spm train` or spm_train, not the .vocab file");
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<std::string> SentencePieceTokenizer::encode(std::string_view line) const {
  std::vector<std::string> pieces;
  const auto status = processor_->Encode(line, &pieces);
  MIXSEQ_CHECK(status.ok(), "SentencePiece (", model_path_, ") cannot encode '", line, "': ", status.ToString());
  return pieces;
}

std::string SentencePieceTokenizer::decode(const std::vector<std::string>& pieces) const {
  std::string text;
  const auto status = processor_->Decode(pieces, &text);
  MIXSEQ_CHECK(status.ok(), "SentencePiece (", model_path_, ") cannot decode ", pieces.size(),
               " pieces: ", status.ToString());
  return text;
}

std::string SentencePieceTokenizer::describe() const { return "spm:" + model_path_; }

}  // namespace mixseq
