#include "mixseq/train/speech_training_data.h"

#include "mixseq/util/error.h"

namespace mixseq {

SpeechData open_speech_training_data(const std::string& dir, const std::string& trainee, int64_t sample_rate,
                                     const std::string& rate_key) {
  MIXSEQ_CHECK(!dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare --task speech`");
  MIXSEQ_CHECK(is_speech_dataset(dir), "'", dir, "' is not a speech dataset: ", trainee,
               " trains on a folder written by `mixseq prepare --task speech`");
  SpeechData data(dir);
  MIXSEQ_CHECK(data.has_split("train"), "'", dir, "' has no training split");
  MIXSEQ_CHECK(data.sample_rate() == sample_rate, "'", dir, "' holds audio at ", data.sample_rate(), " Hz, but ",
               rate_key, " is ", sample_rate, ": set it to the data's rate or prepare the data at --sample-rate ",
               sample_rate);
  return data;
}

}  // namespace mixseq
