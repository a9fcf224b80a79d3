#include "mixseq/text/sentencepiece_train.h"

#include <algorithm>
#include <array>
#include <memory>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <utility>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/output_file.h"
#include "text/sentencepiece_module.h"

namespace mixseq {
namespace {

constexpr std::array<const char*, 4> kModelTypes = {"unigram", "bpe", "char", "word"};
// SentencePiece's default max_sentence_length: the trainer skips longer lines (with a warning).
constexpr size_t kMaxSentenceBytes = 4192;

// The lines of several files, in order, for the trainer. A read error (unreadable file,
// malformed UTF-8) ends the input and is kept, to be reported as "<path>:<line>: ...".
class FileSentences : public sentencepiece_module::SentenceSource {
 public:
  explicit FileSentences(const std::vector<std::string>& paths) : paths_(paths) {}

  bool next(std::string& sentence) override {
    if (!error_.empty()) return false;
    try {
      while (!reader_ || !reader_->next(sentence)) {
        if (next_path_ == paths_.size()) {
          finished_ = true;
          return false;
        }
        reader_ = std::make_unique<LineReader>(paths_[next_path_++]);
      }
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
    ++lines_read_;
    if (sentence.size() > kMaxSentenceBytes) ++long_lines_;
    return true;
  }
  std::string error() const override { return error_; }
  int64_t lines_read() const { return lines_read_; }
  // True when every line was read and each is longer than SentencePiece takes.
  bool all_too_long() const { return finished_ && lines_read_ > 0 && long_lines_ == lines_read_; }

 private:
  const std::vector<std::string>& paths_;
  size_t next_path_ = 0;
  std::unique_ptr<LineReader> reader_;
  std::string error_;
  int64_t lines_read_ = 0;
  int64_t long_lines_ = 0;
  bool finished_ = false;
};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : separator) + part;
  return joined;
}

// std::to_string keeps six decimals; a coverage of 0.9999995 must reach the trainer intact.
std::string exact_decimal(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

void check_options(const SentencePieceTrainOptions& o) {
  MIXSEQ_CHECK(!o.input_paths.empty(), "spm train needs at least one input file (--input)");
  MIXSEQ_CHECK(!o.model_prefix.empty(), "spm train needs a model prefix (--model-prefix), e.g. 'spm/ende'");
  MIXSEQ_CHECK(o.vocab_size > 0, "vocab_size must be positive, got ", o.vocab_size);
  MIXSEQ_CHECK(std::find(kModelTypes.begin(), kModelTypes.end(), o.model_type) != kModelTypes.end(),
               "unknown SentencePiece model_type '", o.model_type, "'; known: unigram, bpe, char, word");
  MIXSEQ_CHECK(o.character_coverage > 0.0 && o.character_coverage <= 1.0,
               "character_coverage must be in (0, 1], got ", o.character_coverage, "; try 1.0 or 0.9995");
  MIXSEQ_CHECK(o.input_sentence_size == 0 || o.input_sentence_size > 100,
               "input_sentence_size must be 0 (all) or more than 100 (SentencePiece samples no fewer), got ",
               o.input_sentence_size);
  // <unk>, <s> and </s> and the user-defined symbols are pieces of the vocabulary too.
  const int64_t reserved = 3 + static_cast<int64_t>(o.user_defined_symbols.size());
  MIXSEQ_CHECK(o.vocab_size > reserved, "vocab_size ", o.vocab_size, " leaves no room for pieces: <unk>, <s>, </s>",
               o.user_defined_symbols.empty() ? "" : str_cat(" and the ", o.user_defined_symbols.size(), " user-defined symbols"),
               " take ", reserved, "; give more");
  MIXSEQ_CHECK(o.num_threads >= 0, "num_threads must be >= 0 (0 = one per core), got ", o.num_threads);
  // sentencepiece_processor.h: the seed 0xFFFFFFFF means "seed from std::random_device".
  MIXSEQ_CHECK(o.seed != UINT32_MAX, "seed ", o.seed, " is reserved by SentencePiece; pick another");
  for (const auto& symbol : o.user_defined_symbols) {
    MIXSEQ_CHECK(!symbol.empty(), "user-defined symbols must not be empty");
    // SentencePiece splits the value of a repeated option on commas, even from a map.
    MIXSEQ_CHECK(symbol.find(',') == std::string::npos, "user-defined symbol '", symbol,
                 "' contains a comma, which SentencePiece would split it on; choose a symbol without one");
  }
}

}  // namespace

int64_t train_sentencepiece(const SentencePieceTrainOptions& options) {
  check_options(options);
  const int threads = options.num_threads > 0 ? options.num_threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unordered_map<std::string, std::string> trainer_options = {
      {"vocab_size", std::to_string(options.vocab_size)},
      {"model_type", options.model_type},
      {"character_coverage", exact_decimal(options.character_coverage)},
      {"input_sentence_size", std::to_string(options.input_sentence_size)},
      {"shuffle_input_sentence", options.shuffle_input_sentence ? "true" : "false"},
      {"num_threads", std::to_string(threads)},
      {"minloglevel", options.log_progress ? "0" : "1"},  // 1: warnings and errors only
  };
  // Only when there are some: SentencePiece would read "" as one empty symbol.
  if (!options.user_defined_symbols.empty())
    trainer_options["user_defined_symbols"] = join(options.user_defined_symbols, ",");
  const auto& train = sentencepiece_module::functions().train;  // open the module before reading input
  // The model and its vocabulary must not replace a file read (a corpus called <prefix>.vocab).
  InputFiles inputs;
  for (const auto& path : options.input_paths) inputs.add({"--input", path});
  for (const char* suffix : {".model", ".vocab"}) inputs.refuse({"--model-prefix", options.model_prefix + suffix});
  FileSentences sentences(options.input_paths);
  std::string model, vocabulary;
  const std::string error = train(trainer_options, options.seed, sentences, model, vocabulary);
  if (!sentences.error().empty()) throw Error(sentences.error());
  // SentencePiece's own words for it: "Internal: trainer_interface.cc(428) [!sentences_.empty()]".
  MIXSEQ_CHECK(error.find("!sentences_.empty()") == std::string::npos || sentences.all_too_long(),
               "spm train: no sentence to learn from in ", join(options.input_paths, ", "), " (",
               sentences.lines_read(), " lines read", sentences.lines_read() > 0 ? ", each of them empty" : "", ")");
  MIXSEQ_CHECK(error.empty(), "SentencePiece training of '", options.model_prefix, ".model' failed: ", error,
               sentences.all_too_long() ? str_cat("; each of the ", sentences.lines_read(), " input lines is longer than ",
                                                  kMaxSentenceBytes, " bytes, which SentencePiece skips")
                                        : "");
  // Written here rather than by libsentencepiece, whose writer ignores errors: a full disk left a
  // truncated model behind a success message. The model's trainer_spec has no model_prefix (the
  // trainer wants none when it writes no file); nothing reads it.
  for (const auto& [suffix, bytes] : {std::pair{".model", &model}, std::pair{".vocab", &vocabulary}}) {
    OutputFile file(options.model_prefix + suffix);
    file.stream() << *bytes;
    file.commit();
  }
  return sentences.lines_read();
}

}  // namespace mixseq
