#include "stft_settings.h"

#include "mixseq/util/error.h"

namespace mixseq {

void check_stft_settings(const std::string& section, int64_t sample_rate, int64_t n_mels, int64_t n_fft,
                         double window_ms, double hop_ms) {
  MIXSEQ_CHECK(sample_rate >= 1000, section, ".sample_rate (", sample_rate, ") must be at least 1000 Hz");
  MIXSEQ_CHECK(n_mels >= 1 && n_fft >= 2, section, ".n_mels (", n_mels, ") and ", section, ".n_fft (", n_fft,
               ") must be positive");
  MIXSEQ_CHECK(window_ms > 0 && hop_ms > 0, section, ".window_ms (", window_ms, ") and ", section, ".hop_ms (",
               hop_ms, ") must be positive");
}

}  // namespace mixseq
