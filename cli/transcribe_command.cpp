// mixseq transcribe: audio files in, transcripts out, with a speech recognizer's checkpoint alone.
//   mixseq transcribe -c runs/asr/checkpoint_best.pt -i test.tsv -o test.hyp
//   mixseq transcribe -c runs/asr/checkpoint_best.pt a.wav b.flac --json
//   mixseq transcribe -c runs/asr/checkpoint_best.pt -i test.tsv --beam-size 16 --lm words.arpa --lm-weight 1 --word-bonus 2
//   mixseq transcribe -c runs/asr/checkpoint_best.pt -i test.tsv --beam-size 16 --rescore-lm runs/lm/checkpoint_best.pt --rescore-weight 0.5
// The manifest is TSV whose first column is an audio path (absolute or relative to the manifest's
// folder; a second column, e.g. a reference transcript, is ignored) or NeMo's JSON lines. The
// output has one line per utterance in input order, written buffer by buffer as they are done.
// An unreadable audio file stops it with an error naming the file. Decoding is greedy unless
// --beam-size > 1 or --lm is given: CTC prefix beam search (decode/ctc_beam_search.h), whose n-best
// a mixseq language model may re-rank (--rescore-lm, decode/nbest_rescoring.h). On the CPU
// a buffer's batches are decoded side by side (--workers, as translate's). --adapt-norms first
// re-estimates the model's batch-norm statistics on a manifest of unlabelled audio of the speaker or
// channel to be transcribed (the input manifest itself will do): decode/speech_transcriber.h.
//   mixseq transcribe -c runs/asr/checkpoint_best.pt -i speaker7.tsv --adapt-norms speaker7.tsv -o speaker7.hyp
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "mixseq/audio/audio_file.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/decode/nbest_rescoring.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/text/arpa_language_model.h"
#include "mixseq/text/score_report.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/utf8.h"
#include "option_checks.h"

namespace mixseq::cli {
namespace {

// Adaptation audio quieter than this (-60 dBFS) is warned about.
constexpr double kSilentAdaptationRms = 1e-3;

struct TranscribeArguments {
  std::string checkpoint;
  std::string manifest;
  std::vector<std::string> files;
  std::string output = "-";
  std::string device = "auto";
  std::string precision = "fp32";
  int64_t buffer_size = 64;  // utterances read and transcribed together
  bool json = false;
  std::string lm;  // ARPA word model for shallow fusion; "" = none
  std::string rescore_lm;  // mixseq language-model checkpoint that re-ranks the n-best; "" = none
  std::string adapt_norms;  // manifest of unlabelled audio the batch norms are re-estimated on; "" = none
  TranscribeOptions options;
};

}  // namespace

void add_transcribe_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("transcribe", "Transcribe audio files with a trained speech recognizer");
  auto arguments = std::make_shared<TranscribeArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Checkpoint (.pt) of a speech recognizer")
      ->required();
  command->add_option("-i,--input", arguments->manifest,
                      "Manifest: TSV (audio path, optional ignored column) or JSON lines with audio_filepath");
  command->add_option("files", arguments->files, "Audio files (instead of --input)");
  command->add_option("-o,--output", arguments->output, "Transcripts, one line per utterance (- = stdout)")
      ->capture_default_str();
  command->add_flag("--json", arguments->json,
                    "Write JSON lines: {\"audio\", \"text\", \"words\": [{\"word\", \"start\", \"end\"}]} (seconds)");
  command->add_option("--buffer-size", arguments->buffer_size,
                      "Utterances read and transcribed together; each buffer is written when done")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-frames", arguments->options.max_frames, "Feature frames per batch (utterances x longest)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--workers", arguments->options.workers,
                      "CPU: batches decoded side by side, each on its share of the threads (0: one per thread; "
                      "1: one batch at a time on all threads)")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--device", arguments->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--precision", arguments->precision, "auto (bf16 where native, else fp32), fp32, bf16, fp16 (GPU)")
      ->capture_default_str();
  CtcBeamSearchOptions& beam = arguments->options.beam;
  command->add_option("--beam-size", beam.beam_size,
                      "CTC prefix beam search: prefixes kept per frame; 1 without --lm = greedy decoding")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--lm", arguments->lm, "Word n-gram language model in ARPA format (.gz too) fused into the beam search");
  command->add_option("--lm-weight", beam.alpha, "alpha: the weight of ln p_lm(words) in the beam search's score")
      ->check(finite_number())
      ->capture_default_str();
  command->add_option("--word-bonus", beam.beta, "beta: added to the beam search's score per word")
      ->check(finite_number())
      ->capture_default_str();
  command->add_option("--nbest", beam.nbest, "The n best transcripts of the beam search: written with their scores by --json, "
                      "re-ranked by --rescore-lm (then default: --beam-size)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option(
      "--rescore-lm", arguments->rescore_lm,
      "Checkpoint of a mixseq language model that re-ranks the beam search's n-best: score + W ln p_lm(text) + "
      "bonus x words (needs --beam-size > 1; --nbest defaults to the beam size)");
  command->add_option("--rescore-weight", arguments->options.rescoring.lm_weight,
                      "W: the weight of the rescoring model's ln p(text, </s>)")
      ->check(finite_number())
      ->capture_default_str();
  command->add_option("--rescore-word-bonus", arguments->options.rescoring.word_bonus,
                      "Added per word to the rescored score, against the rescoring model's cost per word")
      ->check(finite_number())
      ->capture_default_str();
  command->add_option("--adapt-norms", arguments->adapt_norms,
                      "Manifest (as --input) of unlabelled audio of the speaker or channel to transcribe (--input "
                      "itself will do): the model's batch-norm statistics are re-estimated on it first (AdaBN)");
  command->add_option("--cutoff-top-n", beam.cutoff_top_n, "Beam search: symbols tried per frame, most likely first; 0 = all")
      ->check(at_least(0))
      ->capture_default_str();
  command->add_option("--cutoff-prob", beam.cutoff_prob,
                      "Beam search: symbols tried per frame until they hold this probability mass; 1 = all")
      ->check(in_range(1e-9, 1))
      ->capture_default_str();
  table.add(command, [=] {
    MIXSEQ_CHECK(arguments->manifest.empty() != arguments->files.empty(),
                 "transcribe: give either --input MANIFEST or audio files, not ",
                 arguments->manifest.empty() ? "neither" : "both");
    MIXSEQ_CHECK(arguments->manifest != "-" || arguments->adapt_norms != "-",
                 "transcribe: --input and --adapt-norms both read standard input; give one of them a file");
    // What to transcribe: the manifest's entries (with their lines and NeMo's segments), or the
    // audio files given alone (line 0: whole files, named by themselves).
    std::vector<ManifestEntry> utterances;
    if (!arguments->manifest.empty()) {
      utterances = read_speech_manifest(arguments->manifest, false);
      MIXSEQ_CHECK(!utterances.empty(), "transcribe: --input ", arguments->manifest, " lists no audio files");
    }
    for (const auto& file : arguments->files) utterances.push_back({file, "", 0});
    if (arguments->json)  // written as JSON strings
      for (const auto& u : utterances)
        if (const auto bad = find_invalid_utf8(u.audio))
          throw Error(str_cat(u.line > 0 ? str_cat(arguments->manifest, ":", u.line, ": ") : "", "the audio path '",
                              u.audio, "' is not UTF-8 (byte ", *bad + 1,
                              "): --json writes paths as JSON strings; rename the file or leave out --json"));
    std::vector<NamedPath> inputs = {{"--checkpoint", arguments->checkpoint}};
    if (!arguments->manifest.empty()) inputs.push_back({"--input", arguments->manifest});
    if (!arguments->lm.empty()) inputs.push_back({"--lm", arguments->lm});
    if (!arguments->rescore_lm.empty()) inputs.push_back({"--rescore-lm", arguments->rescore_lm});
    std::vector<ManifestEntry> adaptation;
    if (!arguments->adapt_norms.empty()) {
      inputs.push_back({"--adapt-norms", arguments->adapt_norms});
      adaptation = read_speech_manifest(arguments->adapt_norms, false);
      MIXSEQ_CHECK(!adaptation.empty(), "transcribe: --adapt-norms ", arguments->adapt_norms, " lists no audio files");
    }
    for (const auto& u : utterances) inputs.push_back({"audio file", u.audio});
    for (const auto& a : adaptation) inputs.push_back({"--adapt-norms audio file", a.audio});
    refuse_output_over_inputs({"--output", arguments->output}, inputs);

    const auto device = resolve_device(arguments->device, "--device");
    const auto precision = resolve_precision(arguments->precision, device);
    configure_precision(precision, device);
    TranscribeOptions options = arguments->options;
    const bool nbest_given = command->get_option("--nbest")->count() > 0;
    if (!arguments->rescore_lm.empty()) {
      MIXSEQ_CHECK(options.beam.beam_size > 1, "transcribe: --rescore-lm re-ranks the beam search's n-best: give "
                   "--beam-size above 1 (e.g. --beam-size 16)");
      if (!nbest_given) options.beam.nbest = options.beam.beam_size;  // rescore the whole beam
      MIXSEQ_CHECK(options.beam.nbest > 1, "transcribe: --rescore-lm with --nbest 1 has nothing to re-rank; give "
                   "--nbest 2 or more (at most --beam-size)");
    }
    MIXSEQ_CHECK(options.beam.nbest <= options.beam.beam_size, "transcribe: --nbest (", options.beam.nbest,
                 ") must be at most --beam-size (", options.beam.beam_size, ")");
    if (!arguments->lm.empty()) {
      options.beam.language_model = std::make_shared<const ArpaLanguageModel>(ArpaLanguageModel::load(arguments->lm));
      const auto& lm = *options.beam.language_model;
      log_info("transcribe: language model ", arguments->lm, ": order ", lm.order(), ", ", lm.vocabulary_size(),
               " words; alpha ", options.beam.alpha, ", beta ", options.beam.beta, ", beam ", options.beam.beam_size);
      if (!lm.contains("<unk>"))  // KenLM says the same; the search then glues unknown words together
        log_info("transcribe: warning: ", arguments->lm, " lists no <unk>: a word outside its ", lm.vocabulary_size(),
                 " words costs 100 orders of magnitude, and the search would rather write one unknown word than ",
                 "several (words run together); build it with <unk> (irstlm and KenLM do by default)");
    }
    if (!arguments->rescore_lm.empty()) {
      auto scorer = SentenceLmScorer::load(arguments->rescore_lm, device, precision);
      const auto& lm = scorer->language_model();
      log_info("transcribe: rescoring the ", options.beam.nbest, " best of each utterance with the language model ",
               arguments->rescore_lm, " (", lm.config.arch, ", ", lm.vocabulary.size(), " tokens, tokenizer ",
               lm.tokenizer->describe(), "): W ", options.rescoring.lm_weight, ", word bonus ",
               options.rescoring.word_bonus);
      options.rescoring.language_model = std::move(scorer);
    }
    auto recognizer = load_trained_speech_recognizer(arguments->checkpoint, device);
    const SpeechTranscriber transcriber(recognizer, device, precision);
    const AudioReadOptions reading = recognizer.input.audio_read_options();
    if (!adaptation.empty()) {
      const auto start = std::chrono::steady_clock::now();
      double adaptation_seconds = 0, energy = 0;
      int64_t adaptation_samples = 0;
      const int64_t norms = adapt_speech_recognizer(
          recognizer, static_cast<int64_t>(adaptation.size()),
          [&](int64_t i) {
            auto samples = as_stored_samples(
                read_entry_audio(adaptation[static_cast<size_t>(i)], arguments->adapt_norms, reading));
            adaptation_seconds += static_cast<double>(samples.size()) / static_cast<double>(reading.sample_rate);
            for (const float x : samples) energy += static_cast<double>(x) * x;
            adaptation_samples += static_cast<int64_t>(samples.size());
            return samples;
          },
          device);
      log_info("transcribe: ", norms, " batch norms adapted on ", adaptation.size(), " utterances (",
               adaptation_seconds, " s of audio) of ", arguments->adapt_norms, " in ",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), " s");
      // Statistics of silence describe no speaker: adapted on 1 s of digital silence, a model wrote
      // made-up words for everything after (a hostile-input sweep, 2026-12-07).
      const double rms = adaptation_samples > 0 ? std::sqrt(energy / static_cast<double>(adaptation_samples)) : 0.0;
      if (rms < kSilentAdaptationRms)
        log_info("transcribe: warning: the --adapt-norms audio is nearly silent (RMS ",
                 rms > 0 ? format_decimal(20.0 * std::log10(rms), 1) + " dBFS" : std::string("0"),
                 "): the statistics describe silence, not a speaker or channel, and the transcripts may suffer");
    }

    OutputFile out(arguments->output);
    double audio_seconds = 0, seconds = 0;
    for (size_t begin = 0; begin < utterances.size(); begin += static_cast<size_t>(arguments->buffer_size)) {
      const size_t end = std::min(utterances.size(), begin + static_cast<size_t>(arguments->buffer_size));
      std::vector<std::vector<float>> audio;
      for (size_t i = begin; i < end; ++i) {
        audio.push_back(as_stored_samples(read_entry_audio(utterances[i], arguments->manifest, reading)));
        audio_seconds += static_cast<double>(audio.back().size()) / static_cast<double>(reading.sample_rate);
      }
      const auto start = std::chrono::steady_clock::now();
      const auto transcripts = transcriber.transcribe(audio, options);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (size_t k = 0; k < transcripts.size(); ++k) {
        if (!arguments->json) {
          out.stream() << transcripts[k].text << '\n';
          continue;
        }
        nlohmann::json words = nlohmann::json::array();
        for (const auto& w : transcripts[k].words)
          words.push_back({{"word", w.word}, {"start", std::round(w.start * 1000) / 1000},
                           {"end", std::round(w.end * 1000) / 1000}});
        nlohmann::json record = {{"audio", utterances[begin + k].audio}, {"text", transcripts[k].text}, {"words", words}};
        if (options.beam.nbest > 1) {
          record["nbest"] = nlohmann::json::array();
          for (const auto& h : transcripts[k].nbest) {
            nlohmann::json entry = {{"text", h.text}, {"score", h.score}, {"ctc_log_prob", h.ctc_log_prob},
                                    {"lm_log10_prob", h.lm_log10_prob}};
            if (options.rescoring.language_model) {
              entry["search_score"] = h.search_score;
              entry["rescore_lm_log_prob"] = h.rescoring_lm_log_prob;
            }
            record["nbest"].push_back(std::move(entry));
          }
        }
        out.stream() << record.dump() << '\n';
      }
      out.flush();
    }
    out.commit();
    log_info("transcribe: ", utterances.size(), " utterances, ", audio_seconds, " s of audio in ", seconds,
             " s: real-time factor ", audio_seconds > 0 ? seconds / audio_seconds : 0.0, " (", arguments->precision,
             ", ", device.str(), ")");
    return 0;
  });
}

}  // namespace mixseq::cli
