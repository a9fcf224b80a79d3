// The speech dataset a training task reads (data/speech_data.h): what the speech-recognition and
// speech-synthesis tasks check alike before they build anything.
#pragma once

#include <cstdint>
#include <string>

#include "mixseq/data/speech_data.h"

namespace mixseq {

// Opens data.dir (`dir`) for a task that trains `trainee` ("a speech recognizer"): throws
// mixseq::Error when it is empty, not a folder `mixseq prepare --task speech` wrote, without a
// training split, or at another rate than `sample_rate`, the setting `rate_key` (e.g.
// "speech.sample_rate") names.
SpeechData open_speech_training_data(const std::string& dir, const std::string& trainee, int64_t sample_rate,
                                     const std::string& rate_key);

}  // namespace mixseq
