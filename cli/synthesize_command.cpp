// mixseq synthesize: text lines in, audio files out, with a speech synthesizer's checkpoint alone.
//   mixseq synthesize -c runs/tts/checkpoint_best.pt -i sentences.txt -o audio --manifest audio/manifest.tsv
//   mixseq synthesize -c runs/tts/checkpoint_best.pt -o audio "a dog runs on the beach" "two men talk"
// Text i (1-based, in input order) becomes <output-dir>/<i, six digits>.wav (or .flac). Texts are
// read --buffer-size at a time and each buffer's audio is written when it is done, so a long input
// streams. The manifest, TSV `audio<TAB>text` with paths relative to its own folder, is what
// `mixseq transcribe -i` and `mixseq prepare --task speech` read. An empty text or a character
// outside the synthesis symbols stops it with an error naming the file, line and column: texts
// from a file or the command line are all checked before any audio is written, so a bad line late
// in a long file leaves nothing behind; from stdin (-i -) they stream, and the error says which
// files earlier texts were already written to.
//
// --copy-synthesis MANIFEST (instead of texts): each of the manifest's recordings turned into the
// frames the checkpoint's model was trained on, and straight back into audio with the same
// Griffin-Lim, no model in between: the vocoder's ceiling, what the synthesizer would sound like
// if it predicted every frame exactly (as TTS papers report "copy synthesis" or "analysis-
// synthesis"). Output files and manifest as for texts; the manifest keeps the recordings' texts.
//   mixseq synthesize -c runs/tts/checkpoint_best.pt --copy-synthesis speech/valid.tsv -o vocoded
//     --manifest vocoded/manifest.tsv
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <sstream>

#include "commands.h"
#include "mixseq/audio/audio_file.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/data/synthesis_batch.h"
#include "mixseq/decode/text_to_speech.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct SynthesizeArguments {
  std::string checkpoint;
  std::string input;
  std::vector<std::string> texts;
  std::string output_dir;
  std::string format = "wav";
  std::string manifest;
  std::string copy_synthesis;  // a speech manifest whose recordings go through the vocoder alone
  std::string device = "auto";
  std::string precision = "fp32";
  int64_t buffer_size = 32;
  SynthesizeOptions options;
};

// "000012.wav" for text 12.
std::string audio_name(int64_t number, const std::string& format) {
  std::ostringstream name;
  name << std::setw(6) << std::setfill('0') << number << '.' << format;
  return name.str();
}

// The path a manifest line names for `path` (relative to the manifest's folder when there is one).
std::string manifest_path(const std::filesystem::path& path, const std::filesystem::path& manifest_folder) {
  return std::filesystem::absolute(path).lexically_relative(manifest_folder).string();
}

// Refuses, before anything is written, an output among `inputs`: the files 000001 to `count` of
// the -o folder (count -1: as many as are written, each checked as it is written), and --manifest.
void refuse_outputs_in_folder(const InputFiles& inputs, const SynthesizeArguments& arguments, int64_t count) {
  if (!arguments.manifest.empty()) inputs.refuse({"--manifest", arguments.manifest});
  const std::filesystem::path folder(arguments.output_dir);
  for (int64_t number = 1; number <= count; ++number)
    inputs.refuse({"-o", (folder / audio_name(number, arguments.format)).string()});
}

// After a run that wrote files 1 to `count` into `folder`: a warning naming the numbered audio files
// there that it did not write (an earlier, longer run's 000013.wav ...), which would read as its own.
// They are left: removing files this run did not write could lose someone's work.
void warn_of_older_numbered_files(const std::filesystem::path& folder, int64_t count, const std::string& format) {
  std::vector<std::string> older;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const auto dot = name.find('.');
    if (dot != 6 || !std::all_of(name.begin(), name.begin() + 6, [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    const std::string extension = name.substr(7);
    if (extension != "wav" && extension != "flac") continue;
    const int64_t number = std::stoll(name.substr(0, 6));
    if (number > count || extension != format) older.push_back(name);
  }
  if (older.empty()) return;
  std::sort(older.begin(), older.end());
  log_info("synthesize: warning: ", folder.string(), " also holds ", older.size(), " numbered audio file",
           older.size() == 1 ? "" : "s", " this run did not write (", older.front(),
           older.size() > 1 ? str_cat(" to ", older.back()) : std::string(),
           "), from an earlier run; they are not this run's: remove them, or write into an empty folder");
}

// --copy-synthesis: recordings -> training frames -> Griffin-Lim -> files (see the top of the file).
int copy_synthesis(const SynthesizeArguments& arguments) {
  const auto entries = read_speech_manifest(arguments.copy_synthesis, false);
  MIXSEQ_CHECK(!entries.empty(), arguments.copy_synthesis, ": no recordings");
  // The recordings may lie in the output folder under the names the copies take (000001.wav).
  InputFiles inputs({{"--checkpoint", arguments.checkpoint}, {"--copy-synthesis", arguments.copy_synthesis}});
  for (const ManifestEntry& entry : entries)
    inputs.add({str_cat(arguments.copy_synthesis, ":", entry.line, "'s recording"), entry.audio});
  refuse_outputs_in_folder(inputs, arguments, static_cast<int64_t>(entries.size()));
  // The model is loaded for its synthesis settings only (a checkpoint of another kind is named).
  const auto synthesizer = load_trained_speech_synthesizer(arguments.checkpoint, torch::kCPU);
  const SynthesisInputConfig& input = synthesizer.input;
  const std::filesystem::path folder(arguments.output_dir);
  create_folder(folder.string());
  std::unique_ptr<OutputFile> manifest;
  std::filesystem::path manifest_folder;
  if (!arguments.manifest.empty()) {
    manifest = std::make_unique<OutputFile>(arguments.manifest);
    manifest_folder = std::filesystem::absolute(arguments.manifest).parent_path();
  }
  log_info("synthesize: copy synthesis of ", arguments.copy_synthesis, " (", entries.size(), " recordings) through ",
           input.describe_frames(), " at ", input.sample_rate, " Hz and Griffin-Lim ",
           arguments.options.griffin_lim.iterations, " iterations, momentum ", arguments.options.griffin_lim.momentum);
  at::Generator phase = at::make_generator<at::CPUGeneratorImpl>(arguments.options.seed);
  AudioReadOptions read;
  read.sample_rate = input.sample_rate;
  double audio_seconds = 0;
  const auto start = std::chrono::steady_clock::now();
  int64_t number = 0;
  for (const ManifestEntry& entry : entries) {
    // As training saw it: the prepared dataset keeps 16-bit samples. Errors name the manifest line.
    const auto samples = as_stored_samples(read_entry_audio(entry, arguments.copy_synthesis, read));
    torch::Tensor frames;
    try {
      frames = synthesis_frames(samples, input);
    } catch (const Error& e) {
      throw Error(str_cat(arguments.copy_synthesis, ":", entry.line, ": ", entry.audio, ": ", e.what()));
    }
    auto out = synthesis_frames_to_audio(frames, input, arguments.options.griffin_lim, phase);
    for (float& x : out) x = std::clamp(x, -1.0f, 1.0f);
    const auto path = folder / audio_name(++number, arguments.format);
    write_audio(path.string(), out, input.sample_rate);
    audio_seconds += static_cast<double>(out.size()) / static_cast<double>(input.sample_rate);
    if (manifest) manifest->stream() << manifest_path(path, manifest_folder) << '\t' << entry.transcript << '\n';
    if (number % 100 == 0) log_info("synthesize: ", number, " of ", entries.size(), " recordings");
  }
  if (manifest) manifest->commit();
  warn_of_older_numbered_files(folder, number, arguments.format);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_info("synthesize: ", number, " recordings copied into ", arguments.output_dir, ", ", audio_seconds,
           " s of audio in ", seconds, " s");
  return 0;
}

}  // namespace

void add_synthesize_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("synthesize", "Speak text lines with a trained speech synthesizer (Tacotron 2 + Griffin-Lim)");
  auto arguments = std::make_shared<SynthesizeArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Checkpoint (.pt) of a speech synthesizer")->required();
  command->add_option("-i,--input", arguments->input, "Text file, one text per line (- = stdin)");
  command->add_option("texts", arguments->texts, "Texts to speak (instead of --input)");
  command->add_option("--copy-synthesis", arguments->copy_synthesis,
                      "Instead of texts: a speech manifest (TSV or JSON lines) whose recordings are turned into "
                      "the model's training frames and back into audio with Griffin-Lim alone (the vocoder's ceiling)");
  command->add_option("-o,--output-dir", arguments->output_dir, "Folder of the audio files (created)")->required();
  command->add_option("--format", arguments->format, "Audio file format: wav or flac (16-bit)")
      ->check(CLI::IsMember({"wav", "flac"}))
      ->capture_default_str();
  command->add_option("--manifest", arguments->manifest,
                      "Also write this TSV manifest: audio path (relative to its folder) <TAB> text, per text");
  command->add_option("--buffer-size", arguments->buffer_size, "Texts read and synthesized together; each buffer's "
                      "files are written when done")
      ->check(at_least(1))
      ->capture_default_str();
  SynthesizeOptions& options = arguments->options;
  command->add_option("--batch-size", options.max_utterances, "Texts run through the model together")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-steps", options.max_steps, "Frames per text at most; 0 = the model's max_decoder_steps")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--gate-threshold", options.gate_threshold,
                      "A text ends at the first frame whose stop-token probability is above this; 0 = the model's")
      ->check(in_range(0, 0.999999))
      ->capture_default_str();
  command->add_option("--griffin-lim-iters", options.griffin_lim.iterations, "Griffin-Lim phase iterations")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--griffin-lim-momentum", options.griffin_lim.momentum,
                      "Fast Griffin-Lim momentum in [0, 1); 0 = the original algorithm")
      ->check(in_range(0, 0.999999))
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Seeds the prenet's dropout and Griffin-Lim's initial phase")
      ->capture_default_str();
  command->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--precision", arguments->precision, "auto (bf16 where native, else fp32), fp32, bf16, fp16 (GPU)")
      ->capture_default_str();
  table.add(command, [=] {
    // The parsed flags (a copy captured with the lambda would hold the defaults).
    const SynthesizeOptions& options = arguments->options;
    if (!arguments->copy_synthesis.empty()) {
      MIXSEQ_CHECK(arguments->input.empty() && arguments->texts.empty(),
                   "synthesize: --copy-synthesis reads its manifest's recordings; give no --input or texts with it");
      if (!arguments->manifest.empty())
        refuse_output_over_inputs({"--manifest", arguments->manifest},
                                  {{"--checkpoint", arguments->checkpoint}, {"--copy-synthesis", arguments->copy_synthesis}});
      return copy_synthesis(*arguments);
    }
    MIXSEQ_CHECK(arguments->input.empty() != arguments->texts.empty(),
                 "synthesize: give either --input FILE or texts, not ", arguments->input.empty() ? "neither" : "both");
    InputFiles inputs({{"--checkpoint", arguments->checkpoint}});
    if (!arguments->input.empty() && arguments->input != "-") inputs.add({"--input", arguments->input});
    // Every text of a file or the command line checked before anything is loaded or written.
    int64_t count = -1;  // texts to speak, where known before reading standard input
    if (arguments->input.empty()) {
      for (size_t i = 0; i < arguments->texts.size(); ++i)
        synthesis_symbol_ids(arguments->texts[i], str_cat("text ", i + 1));
      count = static_cast<int64_t>(arguments->texts.size());
    } else if (arguments->input != "-") {
      LineReader checker(arguments->input);
      std::string text;
      while (checker.next(text)) synthesis_symbol_ids(text, str_cat(checker.path(), ":", checker.line_number()));
      count = checker.line_number();
    }
    refuse_outputs_in_folder(inputs, *arguments, count);

    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    auto synthesizer = load_trained_speech_synthesizer(arguments->checkpoint, device);
    const TextToSpeech speaker(synthesizer, device, precision);
    const std::filesystem::path folder(arguments->output_dir);
    create_folder(folder.string());
    std::unique_ptr<OutputFile> manifest;
    std::filesystem::path manifest_folder;
    if (!arguments->manifest.empty()) {
      manifest = std::make_unique<OutputFile>(arguments->manifest);
      manifest_folder = std::filesystem::absolute(arguments->manifest).parent_path();
    }
    log_info("synthesize: ", arguments->checkpoint, " (", synthesizer.config.arch, ", ",
             synthesizer.input.describe_frames(), " at ", synthesizer.input.sample_rate, " Hz); Griffin-Lim ",
             options.griffin_lim.iterations, " iterations, momentum ", options.griffin_lim.momentum, "; ",
             arguments->precision, " on ", device.str());

    std::unique_ptr<LineReader> reader;
    if (!arguments->input.empty()) reader = std::make_unique<LineReader>(arguments->input);
    size_t next_text = 0;  // of arguments->texts
    int64_t number = 0, unstopped = 0;
    double audio_seconds = 0, seconds = 0;
    std::vector<std::string> texts, names;
    std::string line;
    bool more = true;
    while (more) {
      texts.clear();
      names.clear();
      while (static_cast<int64_t>(texts.size()) < arguments->buffer_size) {
        if (reader) {
          if (!reader->next(line)) break;
          texts.push_back(line);
          names.push_back(str_cat(reader->path(), ":", reader->line_number()));
        } else {
          if (next_text == arguments->texts.size()) break;
          texts.push_back(arguments->texts[next_text]);
          names.push_back(str_cat("text ", ++next_text));
        }
      }
      more = static_cast<int64_t>(texts.size()) == arguments->buffer_size;
      if (texts.empty()) break;
      const auto start = std::chrono::steady_clock::now();
      std::vector<SynthesizedSpeech> speech;
      try {
        speech = speaker.synthesize(texts, options, names);
      } catch (const Error& e) {
        if (number == 0) throw;
        throw Error(str_cat(e.what(), " (texts 1-", number, " were already written to ", arguments->output_dir,
                            arguments->manifest.empty() ? "" : "; the manifest was not", ")"));
      }
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (size_t k = 0; k < speech.size(); ++k) {
        const std::string name = audio_name(++number, arguments->format);
        const auto path = folder / name;
        if (count < 0) inputs.refuse({"-o", path.string()});  // standard input: each as it comes
        write_audio(path.string(), speech[k].samples, speaker.sample_rate());
        audio_seconds += static_cast<double>(speech[k].samples.size()) / static_cast<double>(speaker.sample_rate());
        if (!speech[k].stopped) {
          ++unstopped;
          log_info("synthesize: warning: ", names[k], ": no stop token in ", speech[k].frames,
                      " frames (--max-steps); its audio is cut there");
        }
        if (manifest)
          manifest->stream() << manifest_path(path, manifest_folder) << '\t' << texts[k] << '\n';
      }
      log_info("synthesize: ", number, " texts, ", format_decimal(audio_seconds, 1), " s of audio");
    }
    if (manifest) manifest->commit();
    warn_of_older_numbered_files(folder, number, arguments->format);
    log_info("synthesize: ", number, " texts into ", arguments->output_dir, ", ", audio_seconds, " s of audio in ",
             seconds, " s: real-time factor ", audio_seconds > 0 ? seconds / audio_seconds : 0.0,
             unstopped > 0 ? str_cat("; ", unstopped, " without a stop token") : std::string());
    return 0;
  });
}

}  // namespace mixseq::cli
