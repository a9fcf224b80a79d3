// SpeechTranscriber: audio in, text out, with a trained speech recognizer
// (models/trained_model.h, load_trained_speech_recognizer): features as the model was trained
// with them (no dither, no augmentation), the model in evaluation mode, greedy CTC decoding, word
// times from the CTC alignment. Utterances are batched longest-first within a call; results come
// back in input order.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

#include "mixseq/decode/ctc_decoding.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/util/mixed_precision.h"

namespace mixseq {

struct Transcript {
  std::string text;              // normalised transcript (e.g. lowercase characters and spaces)
  std::vector<TimedWord> words;  // its words with start and end times in seconds
};

struct TranscribeOptions {
  int64_t max_frames = 48000;  // feature frames per batch (utterances x longest); one utterance may exceed it
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

}  // namespace mixseq
