#include "mixseq/audio/audio_file.h"

#include <sndfile.h>
#include <soxr.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mixseq/util/error.h"
#include "mixseq/util/output_file.h"

namespace mixseq {
namespace {

// libsndfile reads and writes through these callbacks on a std::string, so that files and bytes in
// memory take one path, and write_wav can hand its bytes to OutputFile (atomic replacement).
struct MemoryFile {
  const std::string* input;  // the bytes read (for writing: `output` itself)
  std::string* output;       // nullptr when reading
  sf_count_t position = 0;

  sf_count_t size() const { return static_cast<sf_count_t>(input->size()); }
};

sf_count_t memory_length(void* user) { return static_cast<MemoryFile*>(user)->size(); }

sf_count_t memory_seek(sf_count_t offset, int whence, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  sf_count_t target = offset;
  if (whence == SEEK_CUR) target += file->position;
  if (whence == SEEK_END) target += file->size();
  if (target < 0) return -1;
  file->position = target;
  return target;
}

sf_count_t memory_read(void* out, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t available = std::max<sf_count_t>(0, file->size() - file->position);
  const sf_count_t n = std::min(count, available);
  if (n > 0) std::memcpy(out, file->input->data() + file->position, static_cast<size_t>(n));
  file->position += n;
  return n;
}

sf_count_t memory_write(const void* data, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  if (file->output == nullptr) return 0;
  const auto end = static_cast<size_t>(file->position + count);
  if (file->output->size() < end) file->output->resize(end);
  std::memcpy(file->output->data() + file->position, data, static_cast<size_t>(count));
  file->position += count;
  return count;
}

sf_count_t memory_tell(void* user) { return static_cast<MemoryFile*>(user)->position; }

SF_VIRTUAL_IO memory_io() { return {memory_length, memory_seek, memory_read, memory_write, memory_tell}; }

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

uint32_t little_endian_u32(const std::string& bytes, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// libsndfile shortens a WAV file's data chunk to the bytes present ("data : 32000 (should be 22000)"
// in its log) and reports that many frames, so a truncated WAV reads as a shorter, valid one. The
// RIFF chunks are walked here to compare the size the header announces with the bytes there are.
// Returns a message for a truncated file, "" otherwise (0xFFFFFFFF is a streaming writer's "unknown").
std::string truncated_wav(const std::string& bytes, int64_t block_bytes) {
  if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0) return "";
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const uint32_t size = little_endian_u32(bytes, at + 4);
    if (bytes.compare(at, 4, "data") == 0) {
      const size_t present = bytes.size() - (at + 8);
      if (size == 0xFFFFFFFFu || size <= present) return "";
      return str_cat("truncated: its header announces ", size, " bytes of audio (", size / block_bytes,
                     " frames), the file holds ", present, " (", present / block_bytes, " frames)");
    }
    at += 8 + static_cast<size_t>(size) + (size & 1u);
  }
  return "";
}

int64_t bytes_per_sample(int format) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_U8: case SF_FORMAT_PCM_S8: case SF_FORMAT_ULAW: case SF_FORMAT_ALAW: return 1;
    case SF_FORMAT_PCM_16: return 2;
    case SF_FORMAT_PCM_24: return 3;
    case SF_FORMAT_DOUBLE: return 8;
    default: return 4;  // PCM_32, FLOAT; ADPCM's blocks make the frame counts approximate
  }
}

// libsndfile's messages end in a full stop ("Format not recognised.").
std::string libsndfile_reason(SNDFILE* file) {
  std::string reason = sf_strerror(file);
  while (!reason.empty() && (reason.back() == '.' || reason.back() == ' ')) reason.pop_back();
  return reason;
}

// Why a compressed file's decoder stopped before the frames its header announces, from libsndfile's
// log, when the data were damaged rather than cut short: "" for a file that ended (FLAC's decoder
// then reaches END_OF_STREAM), else the decoder's error ("FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER";
// a lost sync alone is what any cut leaves, so a more specific error is named first).
std::string decoder_damage(SNDFILE* file) {
  std::vector<char> log(1 << 14, '\0');
  sf_command(file, SFC_GET_LOG_INFO, log.data(), static_cast<int>(log.size()) - 1);
  std::istringstream lines(std::string(log.data()));
  std::string line, error, specific;
  bool ended = false, failed = false;
  static constexpr char kError[] = "ERROR : ";
  while (std::getline(lines, line)) {
    if (line.find("END_OF_STREAM") != std::string::npos) ended = true;
    if (line.find("returned false") != std::string::npos) failed = true;
    if (line.compare(0, sizeof kError - 1, kError) != 0) continue;
    error = line.substr(sizeof kError - 1);
    if (error.find("LOST_SYNC") == std::string::npos) specific = error;
  }
  if (ended || (!failed && specific.empty())) return "";
  return str_cat("libsndfile: ", specific.empty() ? (error.empty() ? std::string("the decoder failed") : error)
                                                   : specific);
}

// Throws for a sample that is NaN, infinite or beyond +-kMaxAudioMagnitude, naming its frame (and
// channel) and time, so that no damaged float file turns into features of NaN and a transcript of
// nothing in particular.
[[noreturn]] void refuse_sample(const std::string& name, float sample, size_t frame, int64_t channel,
                                int64_t channels, int sample_rate) {
  const double seconds = static_cast<double>(frame) / sample_rate;
  const std::string where = str_cat(name, ": damaged audio: frame ", frame, " (", seconds, " s",
                                    channels > 1 ? str_cat(", channel ", channel + 1) : "", ") holds a sample ");
  if (std::isnan(sample)) throw Error(str_cat(where, "that is not a number (NaN)"));
  // A double file's sample beyond float's range (3.4e38) reads as infinite too.
  if (std::isinf(sample)) throw Error(str_cat(where, "that is infinite (or beyond +-3.4e38)"));
  throw Error(
      str_cat(where, "of ", sample, ", beyond +-", kMaxAudioMagnitude, " (audio is expected within about +-1)"));
}

Audio decode(const std::string& bytes, const std::string& name, const AudioReadOptions& options) {
  MIXSEQ_CHECK(options.sample_rate >= 0, name, ": the sample rate to read audio at must be >= 0, not ",
               options.sample_rate);
  MemoryFile memory{&bytes, nullptr};
  SF_VIRTUAL_IO io = memory_io();
  SF_INFO info{};
  SndfilePtr file(sf_open_virtual(&io, SFM_READ, &info, &memory));
  MIXSEQ_CHECK(file != nullptr, name, ": not an audio file libsndfile can read (", libsndfile_reason(nullptr),
               "; ", bytes.size(), " bytes)");
  MIXSEQ_CHECK(info.channels >= 1 && info.samplerate >= kMinAudioFileRate && info.samplerate <= kMaxAudioFileRate, name,
               ": its header says ", info.channels, " channels at ", info.samplerate, " Hz (damaged: audio is read at ",
               kMinAudioFileRate, " to ", kMaxAudioFileRate, " Hz)");
  MIXSEQ_CHECK(info.frames > 0, name, ": empty: no audio frames (", bytes.size(), " bytes)");
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX) {
    const std::string truncated = truncated_wav(bytes, bytes_per_sample(info.format) * info.channels);
    MIXSEQ_CHECK(truncated.empty(), name, ": ", truncated);
  }

  // Frames are read in blocks: a damaged header may announce far more than the file holds.
  const int64_t channels = info.channels;
  constexpr sf_count_t kBlockFrames = 1 << 16;
  std::vector<float> block(static_cast<size_t>(kBlockFrames * channels));
  std::vector<float> mono;
  mono.reserve(static_cast<size_t>(std::min<sf_count_t>(info.frames, kBlockFrames * 64)));
  for (;;) {
    const sf_count_t got = sf_readf_float(file.get(), block.data(), kBlockFrames);
    if (got <= 0) break;
    for (sf_count_t t = 0; t < got; ++t) {
      // Mixed down as the references do (the mean of the channels).
      float sum = 0.0f;
      for (int64_t c = 0; c < channels; ++c) {
        const float sample = block[static_cast<size_t>(t * channels + c)];
        if (!(std::abs(sample) <= static_cast<float>(kMaxAudioMagnitude)))
          refuse_sample(name, sample, mono.size(), c, channels, info.samplerate);
        sum += sample;
      }
      mono.push_back(channels == 1 ? sum : sum / static_cast<float>(channels));
    }
  }
  const int error = sf_error(file.get());
  MIXSEQ_CHECK(error == SF_ERR_NO_ERROR, name, ": cannot decode its audio (", sf_error_number(error), ") after ",
               mono.size(), " frames");
  // (SF_COUNT_MAX: a stream of unknown length, which libsndfile reads to its end)
  if (info.frames != SF_COUNT_MAX && static_cast<sf_count_t>(mono.size()) < info.frames) {
    const std::string damage = decoder_damage(file.get());
    MIXSEQ_CHECK(!damage.empty(), name, ": truncated: its header announces ", info.frames, " frames, the file holds ",
                 mono.size());
    throw Error(str_cat(name, ": damaged: decoding stopped after ", mono.size(), " of the ", info.frames,
                        " frames its header announces (", damage, ")"));
  }
  MIXSEQ_CHECK(!mono.empty(), name, ": empty: no audio frames");

  if (options.offset_seconds > 0.0 || options.duration_seconds > 0.0) {
    const double file_seconds = static_cast<double>(mono.size()) / info.samplerate;
    MIXSEQ_CHECK(std::isfinite(options.offset_seconds) && options.offset_seconds >= 0.0 &&
                     std::isfinite(options.duration_seconds) && options.duration_seconds >= 0.0,
                 name, ": a segment needs a finite offset and duration of 0 or more, not ", options.offset_seconds,
                 " and ", options.duration_seconds, " s");
    const auto begin = static_cast<size_t>(std::llround(options.offset_seconds * info.samplerate));
    MIXSEQ_CHECK(begin < mono.size(), name, ": the segment's offset ", options.offset_seconds,
                 " s is at or past the end of the file (", file_seconds, " s)");
    size_t end = mono.size();
    if (options.duration_seconds > 0.0) {
      MIXSEQ_CHECK(options.offset_seconds + options.duration_seconds <= file_seconds + kSegmentEndSlack, name,
                   ": the segment ", options.offset_seconds, " s + ", options.duration_seconds, " s ends after the file (",
                   file_seconds, " s)");
      end = std::min(end, begin + static_cast<size_t>(std::llround(options.duration_seconds * info.samplerate)));
    }
    mono = std::vector<float>(mono.begin() + static_cast<std::ptrdiff_t>(begin),
                              mono.begin() + static_cast<std::ptrdiff_t>(end));
    MIXSEQ_CHECK(!mono.empty(), name, ": the segment ", options.offset_seconds, " s + ", options.duration_seconds,
                 " s holds no frames");
  }
  Audio audio;
  audio.sample_rate = info.samplerate;
  if (options.sample_rate > 0 && options.sample_rate != info.samplerate) {
    audio.samples = resample_audio(mono, info.samplerate, static_cast<double>(options.sample_rate));
    audio.sample_rate = options.sample_rate;
  } else {
    audio.samples = std::move(mono);
  }
  if (options.min_seconds > 0.0 && audio.seconds() < options.min_seconds)
    throw AudioLengthError(AudioLengthError::Limit::kMinSeconds,
                           str_cat(name, ": too short: ", audio.seconds(), " s of audio, less than the minimum of ",
                                   options.min_seconds, " s (min_seconds)"));
  if (options.max_seconds > 0.0 && audio.seconds() > options.max_seconds)
    throw AudioLengthError(AudioLengthError::Limit::kMaxSeconds,
                           str_cat(name, ": too long: ", audio.seconds(), " s of audio, more than the maximum of ",
                                   options.max_seconds, " s (max_seconds)"));
  const auto samples = static_cast<int64_t>(audio.samples.size());
  MIXSEQ_CHECK(samples >= options.min_samples, name, ": too short for the model's features: ", samples,
               " samples (", 1000.0 * audio.seconds(), " ms at ", audio.sample_rate, " Hz), fewer than the ",
               options.min_samples, " they need");
  return audio;
}

}  // namespace

Audio read_audio(const std::string& path, const AudioReadOptions& options) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  // A link loop or an unreadable folder above it is not "no such file".
  MIXSEQ_CHECK(!error || error == std::errc::no_such_file_or_directory, path, ": cannot read audio: ", error.message());
  MIXSEQ_CHECK(std::filesystem::exists(status), path, ": cannot read audio: no such file");
  MIXSEQ_CHECK(!std::filesystem::is_directory(status), path, ": cannot read audio: it is a folder");
  const auto too_large = [&] {
    return str_cat(path, ": cannot read audio: more than ", options.max_file_bytes >> 20,
                   " MiB (cut long recordings into utterances)");
  };
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, error);
    MIXSEQ_CHECK(error || size <= static_cast<uintmax_t>(options.max_file_bytes), too_large());
  }
  std::ifstream in(path, std::ios::binary);
  MIXSEQ_CHECK(in.good(), path, ": cannot read audio: ", std::strerror(errno));
  std::string bytes;  // read in blocks up to the limit: a device or pipe may never end
  std::vector<char> block(1 << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    bytes.append(block.data(), static_cast<size_t>(in.gcount()));
    MIXSEQ_CHECK(static_cast<int64_t>(bytes.size()) <= options.max_file_bytes, too_large());
  }
  MIXSEQ_CHECK(!in.bad(), path, ": cannot read audio: ", std::strerror(errno));
  return decode(bytes, path, options);
}

Audio decode_audio(const std::string& bytes, const std::string& name, const AudioReadOptions& options) {
  return decode(bytes, name, options);
}

std::vector<float> resample_audio(const std::vector<float>& samples, double from_rate, double to_rate) {
  MIXSEQ_CHECK(from_rate > 0 && to_rate > 0 && std::isfinite(from_rate) && std::isfinite(to_rate),
               "resample_audio: sample rates must be positive, not ", from_rate, " -> ", to_rate, " Hz");
  if (from_rate == to_rate || samples.empty()) return samples;
  // soxr_oneshot flushes its filter: the output is the whole input resampled, length * ratio samples.
  const double expected = static_cast<double>(samples.size()) * to_rate / from_rate;
  std::vector<float> out(static_cast<size_t>(std::ceil(expected)) + 16);
  size_t done = 0;
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  const soxr_error_t error = soxr_oneshot(from_rate, to_rate, 1, samples.data(), samples.size(), nullptr,
                                          out.data(), out.size(), &done, &io, &quality, nullptr);
  MIXSEQ_CHECK(error == nullptr, "resample_audio: libsoxr failed resampling ", samples.size(), " samples from ",
               from_rate, " to ", to_rate, " Hz: ", error);
  out.resize(done);
  return out;
}

AudioFileFormat audio_format_for_path(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".wav") return AudioFileFormat::kWav;
  if (extension == ".flac") return AudioFileFormat::kFlac;
  throw Error(str_cat(path, ": cannot tell which audio format to write from the extension '", extension,
                      "'; known: .wav, .flac"));
}

std::string encode_audio(const std::vector<float>& samples, int64_t sample_rate, AudioFileFormat format,
                         const std::string& name) {
  const char* format_name = format == AudioFileFormat::kFlac ? "FLAC" : "WAV";
  MIXSEQ_CHECK(sample_rate > 0 && sample_rate <= std::numeric_limits<int>::max(), name, ": cannot write a ",
               format_name, " file at ", sample_rate, " Hz");
  // FLAC's stream header holds the rate in 20 bits.
  MIXSEQ_CHECK(format != AudioFileFormat::kFlac || sample_rate <= 655350, name, ": FLAC cannot hold ", sample_rate,
               " Hz");
  // Converted here rather than by libsndfile (which scales by 32767 on writing and 1/32768 on
  // reading): round(x * 32768), clipped, reads back within half a step of x.
  std::vector<short> pcm(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const float x = std::isfinite(samples[i]) ? samples[i] : 0.0f;
    pcm[i] = static_cast<short>(std::clamp(std::lround(static_cast<double>(x) * 32768.0), -32768L, 32767L));
  }
  std::string bytes;
  MemoryFile memory{&bytes, &bytes};
  SF_VIRTUAL_IO io = memory_io();
  SF_INFO info{};
  info.samplerate = static_cast<int>(sample_rate);
  info.channels = 1;
  info.format = (format == AudioFileFormat::kFlac ? SF_FORMAT_FLAC : SF_FORMAT_WAV) | SF_FORMAT_PCM_16;
  {
    SndfilePtr file(sf_open_virtual(&io, SFM_WRITE, &info, &memory));
    MIXSEQ_CHECK(file != nullptr, name, ": cannot encode a ", format_name, " file (", libsndfile_reason(nullptr), ")");
    const auto written = sf_writef_short(file.get(), pcm.data(), static_cast<sf_count_t>(pcm.size()));
    MIXSEQ_CHECK(written == static_cast<sf_count_t>(pcm.size()), name, ": cannot encode a ", format_name, " file (",
                 libsndfile_reason(file.get()), ")");
  }  // sf_close writes the header's sizes (FLAC: flushes the last block)
  return bytes;
}

namespace {

void write_encoded(const std::string& path, const std::vector<float>& samples, int64_t sample_rate,
                   AudioFileFormat format) {
  const std::string bytes = encode_audio(samples, sample_rate, format, path);
  try {
    OutputFile out(path);
    out.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.commit();
  } catch (const std::filesystem::filesystem_error& e) {  // its folder could not be made
    throw Error(str_cat(path, ": cannot write the audio file: ", e.code().message()));
  }
}

}  // namespace

void write_audio(const std::string& path, const std::vector<float>& samples, int64_t sample_rate) {
  write_encoded(path, samples, sample_rate, audio_format_for_path(path));
}

void write_wav(const std::string& path, const std::vector<float>& samples, int64_t sample_rate) {
  write_encoded(path, samples, sample_rate, AudioFileFormat::kWav);
}

}  // namespace mixseq
