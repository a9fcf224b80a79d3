// SpeechTranscriber: audio in, text out, with a trained speech recognizer
// (models/trained_model.h, load_trained_speech_recognizer): features as the model was trained
// with them (no dither, no augmentation), the model in evaluation mode, CTC decoding (greedy by
// default; prefix beam search with an optional ARPA word model, decode/ctc_beam_search.h, and its
// n-best optionally rescored with a neural language model, decode/nbest_rescoring.h), word times
// from the CTC alignment. Utterances are batched longest-first within a call; results come
// back in input order.
//
// Threading: on the CPU, the batches of one call are decoded side by side on worker threads, each
// with its share of the CPU threads (TranscribeOptions::workers, util/worker_threads.h, as
// BatchTranslator does), and a call with fewer batches than workers first shares its utterances out
// into smaller batches. The transcripts do not depend on the worker count, since an utterance's
// output does not depend on what it is batched with (features normalised per utterance, the
// padding masked, batch norm in evaluation mode), up to the rounding of differently shaped
// products. transcribe() starts and joins its workers itself; make one call at a time.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mixseq/decode/ctc_beam_search.h"
#include "mixseq/decode/ctc_decoding.h"
#include "mixseq/decode/nbest_rescoring.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

// One of the n best transcripts of a beam search.
struct ScoredTranscript {
  std::string text;           // normalised transcript
  double score = 0;           // the ranking score: search_score, plus the rescoring's terms when a
                              // language model rescored the n-best (decode/nbest_rescoring.h)
  double search_score = 0;    // the search's ranking score (CtcScoredHypothesis::score, natural log)
  double ctc_log_prob = 0;    // ln P(text | audio) over the paths the search kept
  double lm_log10_prob = 0;   // log10 p_lm of its words under the search's n-gram model (0 without one)
  double rescoring_lm_log_prob = 0;  // ln p of text and </s> under the rescoring model (0 without rescoring)
};

struct Transcript {
  std::string text;              // normalised transcript (e.g. lowercase characters and spaces)
  std::vector<TimedWord> words;  // its words with start and end times in seconds
  std::vector<ScoredTranscript> nbest;  // beam search only: the n best by score, best first (nbest[0].text == text)
};

struct TranscribeOptions {
  int64_t max_frames = 48000;  // feature frames per batch (utterances x longest); one utterance may exceed it
  CtcBeamSearchOptions beam;   // beam_size 1 and no language model (the default) = greedy decoding
  // With a language model: the beam search's beam.nbest hypotheses re-ranked by it, the transcript
  // being the new best (needs the beam search; beam.nbest 1 leaves nothing to re-rank).
  NbestRescoringOptions rescoring;
  // Batches decoded side by side, each on its own thread with its share of the CPU threads
  // (util/worker_threads.h); 0 = one per thread when there are that many batches, 1 = one batch
  // at a time on all threads. CPU only: a GPU decodes one batch at a time.
  int workers = 0;
};

class SpeechTranscriber {
 public:
  // `recognizer` must outlive the transcriber.
  SpeechTranscriber(TrainedSpeechRecognizer& recognizer, const torch::Device& device, Precision precision);

  // Mono samples at the recognizer's sample rate (recognizer.input.sample_rate), one vector per utterance.
  std::vector<Transcript> transcribe(const std::vector<std::vector<float>>& audio,
                                     const TranscribeOptions& options = {}) const;

 private:
  TrainedSpeechRecognizer& recognizer_;
  torch::Device device_;
  Precision precision_;
};

// Adapts `recognizer` to the speaker or channel of unlabelled audio before transcribing it:
// models/speech_recognizer.h's adapt_batch_norms over `utterances` utterances, `audio(i)` giving the
// i-th's mono samples at the recognizer's sample rate (as transcribe() takes them; e.g. the very
// files to be transcribed, or other recordings of the same speaker), one utterance at a time, with
// the features transcription computes (no dither, no augmentation). Statistics only: no weight
// changes and no labels. Returns the number of batch norms adapted; a model with none is an error.
int64_t adapt_speech_recognizer(TrainedSpeechRecognizer& recognizer, int64_t utterances,
                                const std::function<std::vector<float>(int64_t)>& audio,
                                const torch::Device& device);

}  // namespace mixseq
