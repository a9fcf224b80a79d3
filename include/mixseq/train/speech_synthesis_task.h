// The speech-synthesis task (train/training_tasks.h): a speech synthesizer (models/speech_synthesizer.h,
// Tacotron 2) trained teacher-forced on the transcribed utterances of a folder `mixseq prepare --task
// speech` wrote (data/speech_data.h): transcripts as synthesis symbols, audio as log-mel magnitude
// frames (the `synthesis` section, data/synthesis_batch.h), batched by frames. The loss is the
// reference's (frame MSE before and after the postnet, stop-token BCE) plus, when
// synthesis.guided_attention_weight > 0, the guided-attention term (criteria/synthesis_loss.h).
// Validation, teacher-forced, reports those losses and how diagonal and how sharp the attention is
// (alignment_figures); the best model is the one of lowest validation loss.
#pragma once

#include <memory>

#include "mixseq/train/train_config.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"

namespace mixseq {

// Opens and checks the speech dataset of data.dir and the synthesis settings, computes the frames of
// its training and validation splits, then builds the model (seeded with train.seed) on the
// session's device. Throws mixseq::Error naming the setting or file.
std::unique_ptr<TrainingTask> make_speech_synthesis_task(const TrainConfig& config, const TrainingSession& session);

}  // namespace mixseq
