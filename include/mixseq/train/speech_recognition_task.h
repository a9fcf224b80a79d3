// The speech-recognition task (train/training_tasks.h): transcribed utterances of a folder
// `mixseq prepare --task speech` wrote (data/speech_data.h), batched by feature frames, features
// computed on the fly (with speed perturbation, dither and SpecAugment in training: the `speech`
// section, data/speech_batch.h), the CTC loss of a speech recognizer (criteria/ctc_loss.h), and
// validation by loss, greedy word error rate (the metric: lower is better) and character error rate.
#pragma once

#include <memory>

#include "mixseq/train/train_config.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"

namespace mixseq {

// Opens and checks the speech dataset of data.dir and the speech settings, then builds the model
// (seeded with train.seed) on the session's device. Throws mixseq::Error naming the setting or file.
std::unique_ptr<TrainingTask> make_speech_recognition_task(const TrainConfig& config, const TrainingSession& session);

}  // namespace mixseq
