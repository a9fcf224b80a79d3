// Speech datasets: what `mixseq prepare --task speech` makes of manifests of transcribed audio,
// and their reading for training, validation and transcription.
//
// A manifest is either TSV, `audio<TAB>transcript` per line, or JSON lines as NeMo writes them
// ({"audio_filepath": ..., "text": ..., "duration": ..., "offset": ...}; other keys are ignored);
// audio paths are absolute or relative to the manifest's folder. "offset" and "duration" (seconds)
// name a segment of the file, as NeMo reads them: from offset on, duration of it (audio_file.h's
// AudioReadOptions; a file's own duration written a little long is its whole length). Blank lines may end a manifest, not stand between entries (transcripts are
// written one per manifest line, in order); a TSV line with a transcript has two columns, no more
// (a third would be joined into the transcript). Each utterance is read (audio/audio_file.h:
// resampled to one rate, mono), its transcript normalised and encoded (text/ctc_symbols.h);
// an unreadable, too short or too long file, or a transcript with a character outside the symbols,
// is skipped and counted with its reason, as `prepare` does with text lines. A malformed manifest
// line (no tab, bad JSON, a missing key) is an error naming the file and line.
//
// The folder holds dataset.json ("kind": "speech", the sample rate, each split's counts and
// checksums), vocab.txt (the symbols), and per split <split>.pcm (16-bit samples of all
// utterances, one after another) and <split>.tsv (samples, source path and normalised transcript
// of each utterance). Features are computed from the samples when they are read (on the fly, so
// that training can perturb speed and add dither and SpecAugment).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mixseq/audio/audio_file.h"
#include "mixseq/text/ctc_symbols.h"
#include "mixseq/util/mapped_file.h"

namespace mixseq {

inline constexpr int64_t kSpeechDatasetVersion = 1;
// The highest rate `prepare` resamples to: studio audio's highest common rate, twice over. A larger
// one is a typo (a rate of 1e9 would ask for 62,500 times a 16 kHz dataset's memory).
inline constexpr int64_t kMaxPreparedSampleRate = 384000;

struct SpeechPrepareOptions {
  std::map<std::string, std::string> manifests;  // split name ("train", "valid", "test") -> manifest path
  std::string out_dir;                           // the dataset folder (created; its files replaced)
  int64_t sample_rate = 16000;                   // Hz every utterance is resampled to, 1,000 to 384,000
  double min_seconds = 0.1;                      // shorter utterances are skipped; 0 keeps all
  double max_seconds = 30.0;                     // longer utterances are skipped; 0 keeps all (else >= min)
  std::string symbols = "english";               // english: OpenSeq2Seq's 28 characters; data: the characters
                                                 // of the training transcripts; spm:MODEL: the pieces of a
                                                 // SentencePiece model (`mixseq spm train`; its .vocab beside
                                                 // it), copied into the dataset as symbols.model/.vocab
  int64_t workers = 1;                           // threads reading and resampling audio
};

struct SpeechSplitReport {
  int64_t utterances = 0;                        // kept
  double seconds = 0;                            // of kept audio
  std::map<std::string, int64_t> skipped;        // reason -> utterances skipped for it
};

// Writes the dataset; returns what each split kept and skipped. Throws for a malformed manifest,
// an output that cannot be written, or a split left without utterances.
std::map<std::string, SpeechSplitReport> prepare_speech_data(const SpeechPrepareOptions& options);

// One manifest entry.
struct ManifestEntry {
  std::string audio;       // the audio file's path, resolved against the manifest's folder
  std::string transcript;  // as written (may be empty: transcription ignores it)
  int64_t line = 0;        // 1-based line in the manifest
  double offset = 0.0;     // JSON lines: the segment's start in the file, seconds
  double duration = 0.0;   // JSON lines: the segment's length, seconds; 0: to the end of the file

  // `reading` with this entry's segment (audio_file.h: offset_seconds, duration_seconds).
  AudioReadOptions segment(AudioReadOptions reading) const {
    reading.offset_seconds = offset;
    reading.duration_seconds = duration;
    return reading;
  }
};
// Reads a TSV or JSON-lines manifest (see above); `need_transcripts` makes a missing transcript an
// error naming the line.
std::vector<ManifestEntry> read_speech_manifest(const std::string& path, bool need_transcripts);

// The samples of `entry`'s audio (its segment) read with `reading`. read_audio's errors name the
// file; these put the manifest line that listed it first ("list.tsv:12: "), for an entry read
// from `manifest` (line > 0; an audio file given alone, line 0, is named by itself).
std::vector<float> read_entry_audio(const ManifestEntry& entry, const std::string& manifest,
                                    const AudioReadOptions& reading);

// The utterances of one split of a prepared folder.
class SpeechSplit {
 public:
  SpeechSplit(const std::string& dir, const std::string& name, const CtcSymbols& symbols, int64_t sample_rate);

  int64_t size() const { return static_cast<int64_t>(samples_.size()); }
  int64_t samples(int64_t i) const { return samples_[static_cast<size_t>(i)]; }
  const std::string& transcript(int64_t i) const { return transcripts_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& symbol_ids(int64_t i) const { return ids_[static_cast<size_t>(i)]; }
  const std::string& source(int64_t i) const { return sources_[static_cast<size_t>(i)]; }
  // The utterance's samples in [-1, 1].
  std::vector<float> audio(int64_t i) const;
  double seconds() const;

 private:
  std::unique_ptr<MappedFile> pcm_;
  int64_t sample_rate_ = 0;
  std::vector<int64_t> offsets_, samples_;
  std::vector<std::string> transcripts_, sources_;
  std::vector<std::vector<int64_t>> ids_;
};

class SpeechData {
 public:
  // Opens a folder prepare_speech_data wrote; throws naming the file for anything missing,
  // malformed, of another kind (a text corpus) or whose checksum differs from dataset.json's.
  explicit SpeechData(const std::string& dir);

  const CtcSymbols& symbols() const { return symbols_; }
  const std::string& symbols_text() const { return symbols_text_; }
  int64_t sample_rate() const { return sample_rate_; }
  bool has_split(const std::string& name) const { return splits_.count(name) != 0; }
  const SpeechSplit& split(const std::string& name) const;

 private:
  std::string dir_;
  CtcSymbols symbols_;
  std::string symbols_text_;
  int64_t sample_rate_ = 0;
  std::map<std::string, std::unique_ptr<SpeechSplit>> splits_;
};

// The samples as a prepared dataset holds them (16-bit, read back in [-1, 1)): transcription passes
// audio through it so that a model sees exactly what it saw at validation. An utterance whose peak
// lies beyond +-1 (a float file, often one of integer-scaled samples, +-32,768) is scaled down by
// its peak first rather than clipped: clipping made a square wave of it, and the features, which
// are normalised per utterance, do not depend on the level.
std::vector<float> as_stored_samples(const std::vector<float>& samples);

// True when `dir`'s dataset.json says "kind": "speech".
bool is_speech_dataset(const std::string& dir);

}  // namespace mixseq
