#include "mixseq/text/sentencepiece_tokenizer.h"

#include <filesystem>

#include "mixseq/util/error.h"
#include "text/sentencepiece_module.h"

namespace mixseq {

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path) : model_path_(model_path) {
  // libsentencepiece's own message for a missing file is "Not found: ... Error #2"; say it plainly.
  MIXSEQ_CHECK(!std::filesystem::is_directory(model_path), "SentencePiece model '", model_path,
               "' is a directory; name the <prefix>.model file that `mixseq spm train` wrote");
  MIXSEQ_CHECK(std::filesystem::is_regular_file(model_path), "SentencePiece model '", model_path,
               "' does not exist; train one with `mixseq spm train --model-prefix <prefix> ...`, "
               "which writes <prefix>.model");
  std::string error;
  processor_ = sentencepiece_module::functions().load(model_path, error);
  MIXSEQ_CHECK(processor_ != nullptr, "cannot load SentencePiece model '", model_path,
               "': not a valid model file (libsentencepiece: ", error,
               "); pass the .model file written by `mixseq spm train` or spm_train, not the .vocab file");
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<std::string> SentencePieceTokenizer::encode(std::string_view line) const {
  std::vector<std::string> pieces;
  const std::string error = processor_->encode(line, pieces);
  MIXSEQ_CHECK(error.empty(), "SentencePiece (", model_path_, ") cannot encode '", line, "': ", error);
  return pieces;
}

std::string SentencePieceTokenizer::decode(const std::vector<std::string>& pieces) const {
  std::string text;
  const std::string error = processor_->decode(pieces, text);
  MIXSEQ_CHECK(error.empty(), "SentencePiece (", model_path_, ") cannot decode ", pieces.size(), " pieces: ", error);
  return text;
}

std::string SentencePieceTokenizer::describe() const { return "spm:" + model_path_; }

}  // namespace mixseq
