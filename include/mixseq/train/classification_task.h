// The classification task (train/training_tasks.h): labelled sentences of a folder `mixseq prepare
// --task classify` wrote (data/classification_data.h), batched by tokens, the cross-entropy of a
// sentence classifier (models/sentence_classifier.h), and validation by loss, accuracy (the
// metric: higher is better), macro F1 and the confusion matrix (in the metrics log).
//
// Transfer learning (the `classify` section): with classify.pretrained, the encoder starts from a
// language model's checkpoint (ULMFiT's fine-tuning, Howard & Ruder 2018): its shape is taken from
// that model (the encoder's section, model.lstm_lm or model.transformer_xl, is replaced by the
// checkpoint's, but for the dropouts, which stay this config's), its weights loaded, and its vocabulary must be the data's. classify.unfreeze_every
// unfreezes the layers gradually from the top. Without it the same network trains from scratch.
#pragma once

#include <memory>

#include "mixseq/train/train_config.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/training_task.h"

namespace mixseq {

// Opens and checks the classification dataset of data.dir and the pretrained checkpoint, then builds
// the model (seeded with train.seed) on the session's device. Throws mixseq::Error naming the
// setting or file.
std::unique_ptr<TrainingTask> make_classification_task(const TrainConfig& config, const TrainingSession& session);

}  // namespace mixseq
