// mixseq::Recognizer: a trained speech recognizer's checkpoint (Wave2Letter+, Jasper or DeepSpeech2
// with CTC, `mixseq train` on a speech dataset: docs/speech.md), ready to transcribe audio.
//
//   #include <mixseq/mixseq.h>
//   mixseq::Recognizer asr("runs/asr/checkpoint_best.pt");
//   for (const auto& t : asr.transcribe_files({"a.wav", "b.flac"}))
//     std::cout << t.text << '\n';
//
// Contract. A Recognizer owns what transcription needs: the weights on its device, the output
// symbols and the feature settings stored in the checkpoint, and the word n-gram model and the
// rescoring language model named in its options. transcribe_files() reads each file as `mixseq
// transcribe` does (any format libsndfile reads, resampled to sample_rate(), quantized to 16 bits
// as training audio is stored) and gives the command's transcripts; transcribe_batch() takes the
// samples themselves, quantized to 16 bits the same way, so that it gives what transcribe_files()
// gives for the files those samples came from. Decoding is greedy unless beam_size > 1 or a word
// model is given: then CTC prefix beam search (the command's --beam-size, --lm, --lm-weight,
// --word-bonus, --nbest), whose n-best a rescoring model may re-rank (--rescore-lm).
//
// Threads. One Recognizer may be shared: calls from several threads are served one at a time (each
// already decodes its batches on all the CPU threads). For calls that really run side by side,
// create one per thread.
//
// Errors. Every failure (an unreadable or corrupt checkpoint, a checkpoint of another task, an
// unreadable or truncated audio file, a bad option) throws std::runtime_error (mixseq::Error) whose
// message names the file and says what is wrong. A Recognizer that threw stays usable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/api/model_options.h"

namespace mixseq {

// Set once, when the checkpoint is opened: device, precision and threads (api/model_options.h), and
// what `mixseq transcribe` loads or sets once.
struct RecognizerOptions : ModelOptions {
  std::string lm;          // word n-gram model in ARPA format (.gz too) fused into the beam search (--lm); "" = none
  std::string rescore_lm;  // a mixseq language model's checkpoint that re-ranks the n-best (--rescore-lm); "" = none
  int64_t max_frames = 48000;  // feature frames per batch (utterances x longest; --max-frames)
  int workers = 0;  // CPU: batches decoded side by side, each on its share of the threads (--workers); 0 = one
                    // per thread when there are that many batches, 1 = one batch at a time on all threads
};

// Set per call: `mixseq transcribe`'s search flags and defaults.
struct TranscriptionOptions {
  int64_t beam_size = 1;         // prefixes kept per frame; 1 without a word model = greedy decoding
  int64_t nbest = 0;             // transcripts returned per utterance, best first; 0 = 1, or beam_size when a
                                 // rescoring model re-ranks them
  double lm_weight = 0;          // alpha: the weight of ln p_lm(words) in the beam search's score
  double word_bonus = 0;         // beta: added to the beam search's score per word
  double rescore_weight = 0;     // W: the weight of the rescoring model's ln p(text, </s>)
  double rescore_word_bonus = 0;  // added per word to the rescored score
  int64_t cutoff_top_n = 0;      // symbols tried per frame, most likely first; 0 = all
  double cutoff_prob = 1.0;      // symbols tried per frame until they hold this probability mass; 1 = all
};

struct TranscribedWord {
  std::string word;
  double start = 0;  // seconds from the start of the audio
  double end = 0;
};

// One of the n best transcripts of a beam search (the fields of `mixseq transcribe --json`'s nbest).
struct TranscriptionHypothesis {
  std::string text;
  double score = 0;               // the ranking score (after rescoring, when a rescoring model is given)
  double search_score = 0;        // the beam search's score
  double ctc_log_prob = 0;        // ln P(text | audio) over the paths the search kept
  double lm_log10_prob = 0;       // log10 p of its words under the word model (0 without one)
  double rescore_lm_log_prob = 0;  // ln p(text, </s>) under the rescoring model (0 without one)
};

struct Transcription {
  std::string text;                           // the transcript, as `mixseq transcribe` writes it
  std::vector<TranscribedWord> words;         // its words with their times (the CTC alignment)
  std::vector<TranscriptionHypothesis> nbest;  // beam search: the n best, best first (nbest[0].text == text)
  double seconds = 0;                         // the audio's duration
};

class Recognizer {
 public:
  // Opens a speech recognizer's checkpoint written by `mixseq train`.
  explicit Recognizer(const std::string& checkpoint_path, const RecognizerOptions& options = {});
  ~Recognizer();
  Recognizer(Recognizer&&) noexcept;
  Recognizer& operator=(Recognizer&&) noexcept;

  // Audio files -> one transcription per file, in order (an unreadable file throws, naming it,
  // before anything is decoded).
  std::vector<Transcription> transcribe_files(const std::vector<std::string>& paths,
                                              const TranscriptionOptions& options = {}) const;
  // Mono samples in [-1, 1] at sample_rate(), one vector per utterance -> one transcription each.
  std::vector<Transcription> transcribe_batch(const std::vector<std::vector<float>>& audio,
                                              const TranscriptionOptions& options = {}) const;

  // Unsupervised adaptation to a speaker or recording channel (`mixseq transcribe --adapt-norms`,
  // docs/speech.md): the model's batch-norm statistics re-estimated on unlabelled recordings of
  // it, which every later call then decodes with. Audio files (all read first: an unreadable one
  // throws, naming it, before anything changes) or samples as transcribe_batch() takes them.
  // Returns the number of batch norms adapted. Each call replaces the statistics whole (its result
  // does not depend on an earlier adaptation; open the checkpoint again for the trained ones), and
  // a call that throws leaves the model as it was.
  int64_t adapt_files(const std::vector<std::string>& paths);
  int64_t adapt_batch(const std::vector<std::vector<float>>& audio);

  int64_t sample_rate() const;  // Hz the model was trained at

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixseq
