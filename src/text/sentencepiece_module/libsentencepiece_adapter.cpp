// The module side of src/text/sentencepiece_module.h: the only code that calls libsentencepiece.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <sstream>

#include "text/sentencepiece_module.h"

namespace mixseq::sentencepiece_module {
namespace {

class LibraryProcessor : public Processor {
 public:
  std::string encode(std::string_view line, std::vector<std::string>& pieces) const override {
    return message(processor_.Encode(line, &pieces));
  }
  std::string decode(const std::vector<std::string>& pieces, std::string& text) const override {
    return message(processor_.Decode(pieces, &text));
  }
  static std::string message(const sentencepiece::util::Status& status) {
    return status.ok() ? std::string() : status.ToString();
  }

  sentencepiece::SentencePieceProcessor processor_;
};

// Hands SentenceSource's lines to the trainer, which checks status() when done() is true.
class SourceIterator : public sentencepiece::SentenceIterator {
 public:
  explicit SourceIterator(SentenceSource& source) : source_(source) { Next(); }
  bool done() const override { return done_; }
  void Next() override { done_ = !source_.next(sentence_); }
  const std::string& value() const override { return sentence_; }
  sentencepiece::util::Status status() const override {
    const std::string error = source_.error();
    if (error.empty()) return {};
    return sentencepiece::util::Status(sentencepiece::util::StatusCode::kInvalidArgument, error);
  }

 private:
  SentenceSource& source_;
  std::string sentence_;
  bool done_ = false;
};

std::unique_ptr<Processor> load(const std::string& path, std::string& error) {
  auto processor = std::make_unique<LibraryProcessor>();
  error = LibraryProcessor::message(processor->processor_.Load(path));
  if (!error.empty()) return nullptr;
  return processor;
}

// What TrainerInterface::SaveVocab writes: "piece<TAB>score" per piece, the score as ostream prints a float.
std::string vocabulary_text(const sentencepiece::SentencePieceProcessor& processor) {
  std::ostringstream text;
  for (int id = 0; id < processor.GetPieceSize(); ++id)
    text << processor.IdToPiece(id) << '\t' << processor.GetScore(id) << '\n';
  return text.str();
}

// With an output string, SentencePieceTrainer writes no file, and so cannot leave a truncated one:
// its own writer checks no error once the model is written (issue 11).
std::string train(const std::unordered_map<std::string, std::string>& options, uint32_t seed,
                  SentenceSource& sentences, std::string& model, std::string& vocabulary) {
  sentencepiece::SetRandomGeneratorSeed(seed);
  SourceIterator iterator(sentences);
  std::string error = LibraryProcessor::message(sentencepiece::SentencePieceTrainer::Train(options, &iterator, &model));
  if (!error.empty()) return error;
  sentencepiece::SentencePieceProcessor processor;
  error = LibraryProcessor::message(processor.LoadFromSerializedProto(model));
  if (error.empty()) vocabulary = vocabulary_text(processor);
  return error;
}

const Functions kFunctions = {kInterfaceVersion, load, train};

}  // namespace
}  // namespace mixseq::sentencepiece_module

extern "C" __attribute__((visibility("default"))) const mixseq::sentencepiece_module::Functions*
mixseq_sentencepiece_module_functions() {
  return &mixseq::sentencepiece_module::kFunctions;
}
