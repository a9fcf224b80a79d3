// Reading audio files for speech tasks: any format Debian's libsndfile reads (WAV, FLAC, OGG/Vorbis,
// ...), mixed down to mono (the mean of the channels, as the reference loaders do) and resampled
// with libsoxr (its "high quality" setting, SOXR_HQ) to the rate the model was trained at. Every
// failure throws mixseq::Error starting "<file>: ": missing or unreadable, not audio, truncated
// (fewer frames than its header announces; for WAV, a data chunk shorter than its header says,
// which libsndfile itself reads as a shorter file), empty (no frames), a sample that is not a finite
// number or lies beyond +-kMaxAudioMagnitude (a damaged float file: naming its frame), shorter or
// longer than the limits. Calls may run on several threads at once (only libsndfile's reason for a
// failed open is a global of its own: two opens failing at the same moment may swap their reasons).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {

// The largest audio file read_audio reads by default (1 GiB: 9 hours of 16 kHz 16-bit stereo); a
// larger file, or a device or pipe that goes on past it (/dev/zero), is an error naming it rather
// than a read that fills the memory. A recognizer transcribes an utterance whole: cut long recordings into utterances.
inline constexpr int64_t kMaxAudioFileBytes = int64_t{1} << 30;

// The sample rates a file's header may give: below 1 kHz or above 768 kHz it is damaged (a WAV
// header saying 1 Hz made 100 samples into 100 s of made-up words).
inline constexpr int64_t kMinAudioFileRate = 1000;
inline constexpr int64_t kMaxAudioFileRate = 768000;

struct AudioReadOptions {
  int64_t sample_rate = 16000;     // Hz the samples are resampled to; 0 keeps the file's own rate
  double min_seconds = 0.0;        // shorter files are an error (after resampling); 0 disables
  double max_seconds = 0.0;        // longer files are an error; 0 disables
  int64_t min_samples = 0;         // fewer samples (after resampling) are an error: what a recognizer's
                                   // features need (SpeechFeatureOptions::min_samples()); 0 disables
  int64_t max_file_bytes = kMaxAudioFileBytes;  // read_audio: a larger file (or device) is an error
  // A segment of the file, as NeMo's manifests give one ("offset", "duration"): its frames from
  // offset_seconds on, duration_seconds of them (0: to the end), cut at the file's own rate before
  // resampling; the length limits apply to the segment. An offset at or past the end, or a segment
  // that would end more than kSegmentEndSlack after the file, is an error naming the file.
  double offset_seconds = 0.0;
  double duration_seconds = 0.0;
};

// How far a segment may run past the end of its file: manifests round durations (NeMo's to
// milliseconds or less), so a file's own duration may be written a little long.
inline constexpr double kSegmentEndSlack = 0.1;

// What read_audio and decode_audio throw for a file outside min_seconds or max_seconds: an Error
// that says which limit, so that a caller (prepare) counts such a file apart from a damaged one.
class AudioLengthError : public Error {
 public:
  enum class Limit { kMinSeconds, kMaxSeconds };
  AudioLengthError(Limit limit, const std::string& message) : Error(message), limit_(limit) {}
  Limit limit() const { return limit_; }

 private:
  Limit limit_;
};

// Float files may hold any value; integer ones read within [-1, 1]. A float sample beyond this
// magnitude is refused as damaged: speech features square and sum the samples in float, which
// overflows near 1e17 (3.4e38, float's largest, over a 20 ms window's sums), and no recording, even
// one that stores integer-scaled samples as floats (+-32,768 or +-2^31), comes near it.
inline constexpr double kMaxAudioMagnitude = 1e12;

struct Audio {
  std::vector<float> samples;      // mono, in [-1, 1] (integer formats; float files and resampling
                                   // may overshoot slightly)
  int64_t sample_rate = 0;         // Hz
  double seconds() const { return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0; }
};

// Reads `path` (throws mixseq::Error naming it on any problem above).
Audio read_audio(const std::string& path, const AudioReadOptions& options = {});
// The same from the bytes of an audio file held in memory (e.g. an HTTP request's body); `name`
// stands for the file in messages.
Audio decode_audio(const std::string& bytes, const std::string& name, const AudioReadOptions& options = {});

// Resamples mono samples from `from_rate` to `to_rate` Hz with libsoxr (high quality): about
// samples.size() * to_rate / from_rate samples.
std::vector<float> resample_audio(const std::vector<float>& samples, double from_rate, double to_rate);

// Audio file formats write_audio can produce.
enum class AudioFileFormat {
  kWav,   // RIFF WAV, 16-bit PCM
  kFlac,  // FLAC, 16 bits (lossless: reads back as the WAV would)
};

// The format a file name asks for: ".wav" or ".flac" (any case); throws mixseq::Error naming the
// file and the known extensions otherwise.
AudioFileFormat audio_format_for_path(const std::string& path);

// The bytes of a mono 16-bit audio file in `format` (for a file, an HTTP response's body): round(x *
// 32768) clipped to 16 bits, so read_audio / decode_audio give each sample back within half a step
// (1 / 65536); non-finite samples are written as 0. `name` stands for the file in messages.
std::string encode_audio(const std::vector<float>& samples, int64_t sample_rate, AudioFileFormat format,
                         const std::string& name = "audio");

// Writes mono samples to `path` in the format its extension names (.wav, .flac), as encode_audio
// encodes them. Written to "<path>.tmp" and renamed into place (util/output_file.h), so a reader
// never sees half a file; throws mixseq::Error naming the file when it cannot be written.
void write_audio(const std::string& path, const std::vector<float>& samples, int64_t sample_rate);

// Writes mono samples as a 16-bit PCM WAV file whatever the extension (tests, synthesized speech),
// as write_audio does.
void write_wav(const std::string& path, const std::vector<float>& samples, int64_t sample_rate);

}  // namespace mixseq
