// What the speech-recognition and speech-synthesis input settings (data/speech_batch.h,
// data/synthesis_batch.h) check alike: their short-time Fourier transform. Internal to src/data.
#pragma once

#include <cstdint>
#include <string>

namespace mixseq {

// Throws mixseq::Error naming "<section>.<key>" for a rate under 1000 Hz, a bin count or FFT size
// below 1 / 2, or a window or hop that is not positive.
void check_stft_settings(const std::string& section, int64_t sample_rate, int64_t n_mels, int64_t n_fft,
                         double window_ms, double hop_ms);

}  // namespace mixseq
