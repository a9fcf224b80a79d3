#include "mixseq/data/speech_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <utility>

#include "mixseq/audio/audio_file.h"
#include "mixseq/util/checksum.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/utf8.h"

namespace fs = std::filesystem;

namespace mixseq {
namespace {

constexpr const char* kManifestName = "dataset.json";
constexpr const char* kSymbolsName = "vocab.txt";
constexpr const char* kPiecesModelName = "symbols.model";  // with pieces: the SentencePiece model, and
constexpr const char* kPiecesVocabName = "symbols.vocab";  // its pieces as spm_train lists them
constexpr std::string_view kSpmPrefix = "spm:";

std::string resolve(const std::string& audio, const std::string& manifest) {
  const fs::path path(audio);
  if (path.is_absolute()) return audio;
  return (fs::path(manifest).parent_path() / path).lexically_normal().string();
}

// One utterance read for preparation.
struct ReadUtterance {
  std::vector<int16_t> pcm;
  std::string normalized;
  std::string skip_reason;  // empty: kept
};

// 16-bit samples; an utterance that peaks beyond +-1 is scaled by its peak (as_stored_samples in
// speech_data.h says why).
std::vector<int16_t> to_pcm16(const std::vector<float>& samples) {
  float peak = 0.0f;
  for (const float x : samples) peak = std::max(peak, std::abs(x));
  const float scale = peak > 1.0f ? 32767.0f / peak : 32767.0f;
  std::vector<int16_t> pcm(samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    pcm[i] = static_cast<int16_t>(std::clamp(std::lround(samples[i] * scale), -32767L, 32767L));
  return pcm;
}

// Reads the entries [begin, end) of a split.
void read_range(const std::vector<ManifestEntry>& entries, size_t begin, size_t end, const AudioReadOptions& audio,
                const CtcSymbols* symbols, std::vector<ReadUtterance>& out) {
  for (size_t i = begin; i < end; ++i) {
    ReadUtterance& u = out[i];
    u.normalized = CtcSymbols::normalize(entries[i].transcript);
    if (symbols != nullptr) {
      std::string why;
      if (!symbols->encode(u.normalized, &why)) {
        u.skip_reason = why.rfind("character", 0) == 0 ? "a character outside the symbols" : why;
        continue;
      }
    }
    // Each skip counted under its own reason (until 2026-12-06 the length limits were told apart
    // by words their messages lacked, and every skip was counted as unreadable).
    try {
      u.pcm = to_pcm16(read_audio(entries[i].audio, entries[i].segment(audio)).samples);
    } catch (const AudioLengthError& e) {
      u.skip_reason = e.limit() == AudioLengthError::Limit::kMinSeconds ? "shorter than min_seconds"
                                                                        : "longer than max_seconds";
    } catch (const Error& e) {
      u.skip_reason = "unreadable audio";
      log_info("prepare: skipping ", e.what());
    }
  }
}

CtcSymbols symbols_of_data(const std::vector<ManifestEntry>& entries) {
  std::set<std::string> characters;
  for (const auto& entry : entries) {
    // Kept in a variable: the views split_utf8_chars returns point into it (a temporary in the
    // range-for's expression would die before the loop body ran).
    const std::string normalized = CtcSymbols::normalize(entry.transcript);
    for (const auto& c : split_utf8_chars(normalized)) characters.emplace(c);
  }
  std::string text = "<blank>\n";
  for (const auto& c : characters) text += (c == " " ? std::string("<space>") : c) + "\n";
  return CtcSymbols::from_text(text, "the training transcripts' characters");
}

}  // namespace

std::vector<ManifestEntry> read_speech_manifest(const std::string& path, bool need_transcripts) {
  LineReader reader(path);
  std::vector<ManifestEntry> entries;
  std::string line;
  int64_t blank = 0;  // the first blank line since the last entry
  while (reader.next(line)) {
    const int64_t number = reader.line_number();
    if (const auto bad = find_invalid_utf8(line))
      throw Error(str_cat(path, ":", number, ": malformed UTF-8 at byte ", *bad, " of the line"));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (strip_whitespace(line).empty()) {
      if (blank == 0) blank = number;
      continue;
    }
    MIXSEQ_CHECK(blank == 0 || entries.empty(), path, ":", blank,
                 ": a blank line between entries (transcripts are written one per manifest line; remove it)");
    blank = 0;
    ManifestEntry entry;
    entry.line = number;
    if (strip_whitespace(line).front() == '{') {
      nlohmann::json record;
      try {
        record = nlohmann::json::parse(line);
      } catch (const std::exception& e) {
        throw Error(str_cat(path, ":", number, ": not a JSON object: ", e.what()));
      }
      MIXSEQ_CHECK(record.is_object() && record.contains("audio_filepath") && record["audio_filepath"].is_string(),
                   path, ":", number, ": a JSON manifest line needs \"audio_filepath\" (a string)");
      entry.audio = record["audio_filepath"].get<std::string>();
      for (const auto& [key, into] : {std::pair<const char*, double*>{"offset", &entry.offset},
                                      std::pair<const char*, double*>{"duration", &entry.duration}}) {
        if (!record.contains(key) || record[key].is_null()) continue;
        const auto& value = record[key];
        MIXSEQ_CHECK(value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() >= 0.0, path, ":",
                     number, ": \"", key, "\" must be a number of seconds, 0 or more, not ", value.dump());
        *into = value.get<double>();
      }
      if (record.contains("text")) {
        MIXSEQ_CHECK(record["text"].is_string(), path, ":", number, ": \"text\" must be a string");
        entry.transcript = record["text"].get<std::string>();
      } else {
        MIXSEQ_CHECK(!need_transcripts, path, ":", number, ": no \"text\" (the transcript)");
      }
    } else {
      const size_t tab = line.find('\t');
      MIXSEQ_CHECK(tab != std::string::npos || !need_transcripts, path, ":", number,
                   ": expected `audio<TAB>transcript`, found no tab");
      entry.audio = line.substr(0, tab);
      if (tab != std::string::npos) entry.transcript = line.substr(tab + 1);
      MIXSEQ_CHECK(!need_transcripts || entry.transcript.find('\t') == std::string::npos, path, ":", number,
                   ": more than two tab-separated columns; expected `audio<TAB>transcript`");
    }
    MIXSEQ_CHECK(!entry.audio.empty(), path, ":", number, ": the audio path is empty");
    MIXSEQ_CHECK(entry.audio.find('\0') == std::string::npos, path, ":", number,
                 ": the audio path holds a NUL character");
    entry.audio = resolve(entry.audio, path);
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<float> read_entry_audio(const ManifestEntry& entry, const std::string& manifest,
                                    const AudioReadOptions& reading) {
  try {
    return read_audio(entry.audio, entry.segment(reading)).samples;
  } catch (const Error& e) {
    if (entry.line <= 0 || manifest.empty()) throw;
    throw Error(str_cat(manifest, ":", entry.line, ": ", e.what()));
  }
}

std::map<std::string, SpeechSplitReport> prepare_speech_data(const SpeechPrepareOptions& options) {
  MIXSEQ_CHECK(!options.manifests.empty(), "prepare: no manifest given");
  MIXSEQ_CHECK(options.sample_rate >= 1000 && options.sample_rate <= kMaxPreparedSampleRate, "prepare: the sample rate (",
               options.sample_rate, " Hz) is outside 1000 to ", kMaxPreparedSampleRate, " Hz");
  MIXSEQ_CHECK(options.min_seconds >= 0 && options.max_seconds >= 0 &&
                   (options.max_seconds == 0 || options.min_seconds <= options.max_seconds),
               "prepare: --min-seconds (", options.min_seconds, ") must be at most --max-seconds (", options.max_seconds,
               "), and neither negative; 0 turns either off");
  const bool pieces = options.symbols.rfind(kSpmPrefix, 0) == 0;
  MIXSEQ_CHECK(options.symbols == "english" || options.symbols == "data" || pieces, "prepare: symbols '",
               options.symbols, "' is not english, data or spm:MODEL");
  MIXSEQ_CHECK(options.workers >= 1, "prepare: workers (", options.workers, ") must be at least 1");
  std::map<std::string, std::vector<ManifestEntry>> entries;
  for (const auto& [split, manifest] : options.manifests) entries[split] = read_speech_manifest(manifest, true);
  CtcSymbols symbols = CtcSymbols::english_characters();
  if (options.symbols == "data") {
    MIXSEQ_CHECK(entries.count("train"), "prepare: symbols 'data' needs a training manifest");
    symbols = symbols_of_data(entries["train"]);
  }
  const std::string pieces_model = pieces ? options.symbols.substr(kSpmPrefix.size()) : "";
  if (pieces) symbols = CtcSymbols::from_sentencepiece(pieces_model);
  // Nothing written may replace what is read (prepare -o onto the manifests' own folder would
  // replace train.tsv with the prepared one).
  InputFiles inputs;
  for (const auto& [split, manifest] : options.manifests) {
    inputs.add({"the " + split + " manifest", manifest});
    for (const auto& entry : entries[split]) inputs.add({str_cat(manifest, ":", entry.line, "'s audio"), entry.audio});
  }
  // The folder's own model (re-preparing it with the pieces it has) is copied over itself through
  // the staging folder: allowed, as prepare allows the folder's own tokenizer.
  if (pieces && !same_regular_file(pieces_model, (fs::path(options.out_dir) / kPiecesModelName).string()))
    inputs.add({"the SentencePiece model", pieces_model});
  std::vector<std::string> outputs = {kSymbolsName, kManifestName, kPiecesModelName, kPiecesVocabName};
  for (const auto& [split, manifest] : options.manifests) {
    outputs.push_back(split + ".pcm");
    outputs.push_back(split + ".tsv");
  }
  inputs.refuse_in_folder(options.out_dir, outputs);
  // All of it or nothing: a validation manifest that keeps no utterance leaves the folder as it was.
  StagedFolder output(options.out_dir);
  AudioReadOptions audio;
  audio.sample_rate = options.sample_rate;
  audio.min_seconds = options.min_seconds;
  audio.max_seconds = options.max_seconds;

  nlohmann::json manifest = {{"kind", "speech"},
                             {"version", kSpeechDatasetVersion},
                             {"sample_rate", options.sample_rate},
                             {"symbols", kSymbolsName},
                             {"splits", nlohmann::json::object()}};
  std::map<std::string, SpeechSplitReport> reports;
  for (const auto& [split, split_entries] : entries) {
    std::vector<ReadUtterance> read(split_entries.size());
    const size_t workers = std::min<size_t>(static_cast<size_t>(options.workers), std::max<size_t>(1, read.size()));
    std::vector<std::future<void>> jobs;
    for (size_t w = 0; w < workers; ++w) {
      const size_t begin = read.size() * w / workers, end = read.size() * (w + 1) / workers;
      jobs.push_back(std::async(std::launch::async, read_range, std::cref(split_entries), begin, end, std::cref(audio),
                                &symbols, std::ref(read)));
    }
    for (auto& job : jobs) job.get();

    SpeechSplitReport& report = reports[split];
    const std::string pcm_path = output.path(split + ".pcm");
    const std::string tsv_path = output.path(split + ".tsv");
    OutputFile pcm(pcm_path), tsv(tsv_path);
    Checksum64 checksum;
    int64_t total_samples = 0;
    for (size_t i = 0; i < read.size(); ++i) {
      if (!read[i].skip_reason.empty()) {
        ++report.skipped[read[i].skip_reason];
        continue;
      }
      const auto& samples = read[i].pcm;
      pcm.stream().write(reinterpret_cast<const char*>(samples.data()),
                         static_cast<std::streamsize>(samples.size() * sizeof(int16_t)));
      checksum.update(samples.data(), samples.size() * sizeof(int16_t));
      std::string source = split_entries[i].audio;
      std::replace(source.begin(), source.end(), '\t', ' ');
      tsv.stream() << samples.size() << '\t' << source << '\t' << read[i].normalized << '\n';
      ++report.utterances;
      total_samples += static_cast<int64_t>(samples.size());
    }
    if (report.utterances == 0) {
      std::string reasons;  // why each was skipped, so that the error says what to fix
      for (const auto& [reason, count] : report.skipped) reasons += str_cat(reasons.empty() ? "" : ", ", count, " ", reason);
      throw Error(str_cat("prepare: the ", split, " manifest (", options.manifests.at(split), ") kept no utterance (",
                          split_entries.size(), " read", reasons.empty() ? "" : "; skipped: " + reasons, ")"));
    }
    pcm.commit();
    tsv.commit();
    report.seconds = static_cast<double>(total_samples) / static_cast<double>(options.sample_rate);
    manifest["splits"][split] = {{"utterances", report.utterances},
                                 {"samples", total_samples},
                                 {"seconds", report.seconds},
                                 {"pcm_checksum", checksum_hex(checksum.value())},
                                 {"manifest", fs::absolute(options.manifests.at(split)).string()}};
  }
  OutputFile vocab(output.path(kSymbolsName));
  vocab.stream() << symbols.to_text();
  vocab.commit();
  if (pieces) {  // training encodes the transcripts with the model: it travels with the dataset
    const std::pair<fs::path, const char*> copies[] = {{pieces_model, kPiecesModelName},
                                                       {fs::path(pieces_model).replace_extension(".vocab"), kPiecesVocabName}};
    for (const auto& [from, name] : copies) {
      std::ifstream in(from, std::ios::binary);
      MIXSEQ_CHECK(in.good(), from.string(), " cannot be read");
      OutputFile copy(output.path(name));
      copy.stream() << in.rdbuf();
      copy.commit();
    }
    manifest["sentencepiece"] = kPiecesModelName;
  }
  OutputFile json(output.path(kManifestName));
  json.stream() << manifest.dump(2) << '\n';
  json.commit();
  output.commit(kManifestName);
  return reports;
}

SpeechSplit::SpeechSplit(const std::string& dir, const std::string& name, const CtcSymbols& symbols,
                         int64_t sample_rate)
    : sample_rate_(sample_rate) {
  const std::string tsv = (fs::path(dir) / (name + ".tsv")).string();
  LineReader reader(tsv);
  std::string line;
  int64_t offset = 0;
  while (reader.next(line)) {
    const size_t first = line.find('\t'), second = first == std::string::npos ? first : line.find('\t', first + 1);
    MIXSEQ_CHECK(second != std::string::npos, tsv, ":", reader.line_number(),
                 ": expected samples<TAB>source<TAB>transcript");
    int64_t count = 0;
    try {
      size_t used = 0;
      count = std::stoll(line.substr(0, first), &used);
      MIXSEQ_CHECK(used == first && count > 0, "");
    } catch (const std::exception&) {
      throw Error(str_cat(tsv, ":", reader.line_number(), ": '", line.substr(0, first), "' is not a sample count"));
    }
    std::string why;
    const std::string transcript = line.substr(second + 1);
    auto ids = symbols.encode(transcript, &why);
    MIXSEQ_CHECK(ids.has_value(), tsv, ":", reader.line_number(), ": ", why);
    offsets_.push_back(offset);
    samples_.push_back(count);
    sources_.push_back(line.substr(first + 1, second - first - 1));
    transcripts_.push_back(transcript);
    ids_.push_back(std::move(*ids));
    offset += count;
  }
  const std::string pcm = (fs::path(dir) / (name + ".pcm")).string();
  pcm_ = std::make_unique<MappedFile>(pcm);
  MIXSEQ_CHECK(static_cast<int64_t>(pcm_->size()) == offset * 2, pcm, " holds ", pcm_->size(), " bytes, but ", tsv,
               " lists ", offset, " samples (", offset * 2, " bytes): the files do not belong together");
}

std::vector<float> SpeechSplit::audio(int64_t i) const {
  const auto index = static_cast<size_t>(i);
  std::vector<float> out(static_cast<size_t>(samples_[index]));
  const auto* pcm = reinterpret_cast<const unsigned char*>(pcm_->data()) + offsets_[index] * 2;
  for (size_t k = 0; k < out.size(); ++k) {
    int16_t value;
    std::memcpy(&value, pcm + 2 * k, 2);
    out[k] = static_cast<float>(value) / 32768.0f;
  }
  return out;
}

double SpeechSplit::seconds() const {
  int64_t total = 0;
  for (const int64_t n : samples_) total += n;
  return static_cast<double>(total) / static_cast<double>(sample_rate_);
}

std::vector<float> as_stored_samples(const std::vector<float>& samples) {
  std::vector<float> out;
  out.reserve(samples.size());
  for (const int16_t value : to_pcm16(samples)) out.push_back(static_cast<float>(value) / 32768.0f);
  return out;
}

bool is_speech_dataset(const std::string& dir) {
  std::ifstream in(fs::path(dir) / kManifestName);
  if (!in) return false;
  try {
    const auto manifest = nlohmann::json::parse(in);
    return manifest.is_object() && manifest.value("kind", "") == "speech";
  } catch (const std::exception&) {
    return false;
  }
}

SpeechData::SpeechData(const std::string& dir) : dir_(dir) {
  const std::string path = (fs::path(dir) / kManifestName).string();
  std::ifstream in(path);
  MIXSEQ_CHECK(in.good(), "'", path, "' cannot be read: is '", dir, "' a folder `mixseq prepare --task speech` wrote?");
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error(str_cat(path, ": not JSON: ", e.what()));
  }
  MIXSEQ_CHECK(manifest.is_object() && manifest.value("kind", "") == "speech", path,
               " is not a speech dataset (prepare it with `mixseq prepare --task speech`)");
  MIXSEQ_CHECK(manifest.value("version", 0) == kSpeechDatasetVersion, path, " has version ", manifest.value("version", 0),
               ", this mixseq reads version ", kSpeechDatasetVersion);
  sample_rate_ = manifest.value("sample_rate", 0);
  MIXSEQ_CHECK(sample_rate_ >= 1000, path, ": bad sample_rate ", sample_rate_);
  const std::string symbols_path = (fs::path(dir) / kSymbolsName).string();
  const MappedFile symbols_file(symbols_path);
  symbols_text_.assign(reinterpret_cast<const char*>(symbols_file.data()), symbols_file.size());
  symbols_ = CtcSymbols::from_text(symbols_text_, symbols_path);
  if (manifest.contains("sentencepiece")) {  // pieces: the model that segments the transcripts
    MIXSEQ_CHECK(manifest["sentencepiece"].is_string(), path, ": \"sentencepiece\" must name the model file");
    const std::string model = (fs::path(dir) / manifest["sentencepiece"].get<std::string>()).string();
    auto with_model = CtcSymbols::from_sentencepiece(model);
    MIXSEQ_CHECK(with_model.to_text() == symbols_.to_text(), symbols_path, " does not list the pieces of ", model,
                 ": the files do not belong together");
    symbols_ = std::move(with_model);
  }
  MIXSEQ_CHECK(manifest.contains("splits") && manifest["splits"].is_object(), path, ": no \"splits\"");
  for (const auto& [name, info] : manifest["splits"].items()) {
    auto split = std::make_unique<SpeechSplit>(dir, name, symbols_, sample_rate_);
    MIXSEQ_CHECK(split->size() == info.value("utterances", int64_t{-1}), path, ": split ", name, " lists ",
                 info.value("utterances", int64_t{-1}), " utterances, its files hold ", split->size());
    splits_[name] = std::move(split);
  }
  // The checksums: a corrupt or swapped sample file fails here, by name.
  for (const auto& [name, info] : manifest["splits"].items()) {
    const std::string pcm = (fs::path(dir) / (name + ".pcm")).string();
    const MappedFile file(pcm);
    MIXSEQ_CHECK(checksum_hex(checksum64(file.data(), file.size())) == info.value("pcm_checksum", ""), pcm,
                 " does not have the checksum ", path, " recorded: the file changed since `mixseq prepare` wrote it");
  }
}

const SpeechSplit& SpeechData::split(const std::string& name) const {
  const auto it = splits_.find(name);
  MIXSEQ_CHECK(it != splits_.end(), "'", dir_, "' has no ", name, " split");
  return *it->second;
}

}  // namespace mixseq
