// mixseq demo: the main job on the built-in default. It writes the built-in English->German
// number-words task, learns a joint BPE model, prepares the data, trains a small Transformer,
// translates the test split with beam search and scores it with BLEU and chrF: the whole
// toolkit on 2 cores in about a minute, with no data to download. Every demo writes its data
// afresh, so it starts its training over too, replacing <work-dir>/run of an earlier demo
// (but never a --train.run_dir elsewhere).
//
// mixseq demo --task speech: the same for speech recognition. It synthesises spoken digit strings
// with Debian's espeak-ng (training and validation in different voices), prepares them, trains a
// small Wave2Letter+ (configs/speech_tiny.yaml), transcribes the validation split and scores it
// with WER and CER, in a few minutes on 2 cores.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "commands.h"
#include "config_arguments.h"
#include "mixseq/audio/audio_file.h"
#include "mixseq/data/prepare.h"
#include "mixseq/data/speech_data.h"
#include "mixseq/data/synthetic_numbers.h"
#include "mixseq/decode/speech_transcriber.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/bpe_learner.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/error_rate.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/word_counts.h"
#include "mixseq/train/training_tasks.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

// The built-in speech task: spoken digit strings ("three one four") synthesised with espeak-ng in
// several voices (variants), speaking rates and pitches; validation voices are not heard in
// training, so its WER measures generalisation to a new voice. tests/e2e/tools/spoken_numbers.py
// (what tests/e2e/speech_learns.sh trains on) draws the same kinds of utterances.
struct SpokenDigitsOptions {
  uint64_t seed = 1;                // fixes every utterance's digits, voice, rate and pitch
  int64_t train_utterances = 600;   // training utterances
  int64_t valid_utterances = 60;    // validation utterances
  int64_t max_digits = 4;           // each utterance says 1..this many digits
};

struct DemoArguments {
  std::string task = "translation";  // translation, or speech
  std::string work_dir;              // "": runs/demo (translation), runs/demo_speech (speech)
  NumberTaskOptions numbers;
  int64_t bpe_merges = 400;
  SpokenDigitsOptions digits;
  bool list_voices = false;          // --task speech: print the voices of each split and stop
};

// A small Transformer for the built-in task (configs/transformer_tiny.yaml holds the same
// settings): 2+2 layers of 64 (ffn 256, 4 heads), no dropout, Adam (0.9, 0.98) at 3e-3 with 100
// warmup updates and a cosine decay to 0 over 10 epochs of 204 updates, 1024-token batches.
// Measured against the GNMT 4+4 x 128 the demo trained before (issue 29; docs/benchmarks.md, "The
// demo"): 52-59 s for the whole demo against 180 s, test BLEU 99.59-100 over seeds 1-5 (GNMT
// 99.87). With inverse_sqrt instead of the cosine the same model's BLEU still swung by 5 points
// between epochs at the end (test 97.99-99.87); the decay to 0 settles it.
TrainConfig demo_config(const std::string& work_dir) {
  TrainConfig config;
  config.model.arch = "transformer";
  auto& transformer = config.model.transformer;
  transformer.embed_dim = 64;
  transformer.ffn_dim = 256;
  transformer.heads = 4;
  transformer.encoder_layers = 2;
  transformer.decoder_layers = 2;
  transformer.dropout = 0.0;
  config.data.dir = work_dir + "/data";
  config.data.batching.max_tokens = 1024;
  config.data.batching.max_length = 100;
  config.optim.lr = 3e-3;
  config.optim.betas = {0.9, 0.98};
  config.schedule.name = "cosine";
  config.schedule.cosine.warmup_steps = 100;
  config.schedule.cosine.eta_min = 0;
  config.train.run_dir = work_dir + "/run";
  config.train.device = "cpu";
  config.train.max_epochs = 10;
  config.train.log_interval = 100;
  config.validation_search.beam_size = 5;
  config.validation_search.coverage_penalty = 0;  // fairseq's Transformer search: none
  // German pieces are fewer than English ones here; bounding the output keeps the validation
  // of an untrained model from running 200 steps per sentence.
  config.validation_search.max_len_a = 1.5;
  config.validation_search.max_len_b = 10;
  return config;
}

// A small Wave2Letter+ for the spoken digits, exactly configs/speech_tiny.yaml (keep the two the
// same; tests/e2e/demo_speech.sh compares them): the prologue (stride 2) and 3 blocks of 2
// convolutions (128-192 channels, kernels 11-17), the dilated epilogue, clipped ReLU, no
// residuals, 3.3 M parameters; 64 log-mel bins, speed perturbation 0.9-1.1, light SpecAugment;
// Adam at 2e-3 with 30 warmup updates and a cosine decay over 25 epochs.
TrainConfig speech_demo_config(const std::string& work_dir) {
  TrainConfig config;
  config.model.arch = "wave2letter_plus";
  auto& w2l = config.model.wave2letter_plus;
  w2l.in_feats = 64;
  w2l.activation = "clipped_relu";
  w2l.residual = "none";
  w2l.prologue_channels = 128;
  w2l.prologue_kernel = 11;
  w2l.channels = {128, 160, 192};
  w2l.kernels = {11, 13, 17};
  w2l.dropouts = {0.1, 0.1, 0.1};
  w2l.repeat = 2;
  w2l.epilogue_channels = 192;
  w2l.epilogue_kernel = 29;
  w2l.epilogue_dilation = 2;
  w2l.enc_feats = 256;
  w2l.prologue_dropout = 0.1;
  w2l.epilogue_dropout = 0.1;
  auto& speech = config.speech;
  speech.features = "log_mel";
  speech.n_mels = 64;
  speech.speed_perturbation = {0.9, 1.1};
  speech.freq_masks = 2;
  speech.max_freq = 8;
  speech.time_masks = 2;
  speech.max_time = 10;
  speech.max_frames = 6000;
  config.data.dir = work_dir + "/data";
  config.optim.name = "adam";
  config.optim.lr = 2e-3;
  config.schedule.name = "cosine";
  config.schedule.cosine.warmup_steps = 30;
  config.schedule.cosine.eta_min = 0;
  config.clipping.max_norm = 5.0;
  config.train.run_dir = work_dir + "/run";
  config.train.device = "cpu";
  config.train.max_epochs = 25;
  config.train.log_interval = 20;
  return config;
}

// espeak-ng's path on PATH, or an error saying how to install it.
std::string find_espeak() {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path != nullptr ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const auto candidate = (folder.empty() ? std::string(".") : folder) + "/espeak-ng";
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
  }
  throw Error(
      "demo --task speech: espeak-ng, which synthesises its spoken digits, is not on PATH; install it "
      "(Debian: apt-get install espeak-ng; scripts/setup.sh installs it)");
}

struct Utterance {
  std::string audio;  // relative to the manifest's folder
  std::string text;   // what espeak-ng says
  std::string voice;
  int64_t rate = 0;   // words per minute
  int64_t pitch = 0;  // 0-99
};

// Runs espeak-ng for every utterance, as many at once as the machine has cores, each writing its
// WAV file (22.05 kHz, espeak-ng's rate). Throws naming the command of the first that fails.
void synthesise(const std::vector<Utterance>& utterances, const std::string& dir) {
  const std::string espeak = find_espeak();
  const size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  struct Running {
    pid_t pid;
    size_t index;
  };
  std::deque<Running> running;
  const auto command_of = [&](const Utterance& u) {
    return std::vector<std::string>{espeak, "-v", u.voice, "-s", std::to_string(u.rate), "-p", std::to_string(u.pitch),
                                    "-w", dir + "/" + u.audio, u.text};
  };
  const auto wait_oldest = [&] {
    const Running oldest = running.front();
    running.pop_front();
    int status = 0;
    while (::waitpid(oldest.pid, &status, 0) < 0 && errno == EINTR) {}
    const auto& u = utterances[oldest.index];
    std::error_code error;
    const bool written = std::filesystem::file_size(dir + "/" + u.audio, error) > 44 && !error;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !written) {
      for (const auto& other : running)  // the others are let finish; their files are not used
        while (::waitpid(other.pid, nullptr, 0) < 0 && errno == EINTR) {}
      running.clear();
      std::string command;
      for (const auto& word : command_of(u)) command += (command.empty() ? "" : " ") + ("'" + word + "'");
      throw Error(str_cat("demo --task speech: ", command, " failed (",
                          WIFEXITED(status) ? str_cat("exit status ", WEXITSTATUS(status))
                                            : str_cat("signal ", WIFSIGNALED(status) ? WTERMSIG(status) : 0),
                          written ? "" : ", no audio written", "); run it to see espeak-ng's message"));
    }
  };
  posix_spawn_file_actions_t quiet;  // espeak-ng's chatter goes to /dev/null
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  try {
    for (size_t i = 0; i < utterances.size(); ++i) {
      if (running.size() >= parallel) wait_oldest();
      auto words = command_of(utterances[i]);
      std::vector<char*> argv;
      for (auto& word : words) argv.push_back(word.data());
      argv.push_back(nullptr);
      pid_t pid = 0;
      const int error = ::posix_spawn(&pid, espeak.c_str(), &quiet, nullptr, argv.data(), environ);
      MIXSEQ_CHECK(error == 0, "demo --task speech: cannot run ", espeak, ": ", std::strerror(error));
      running.push_back({pid, i});
    }
    while (!running.empty()) wait_oldest();
  } catch (...) {
    posix_spawn_file_actions_destroy(&quiet);
    throw;
  }
  posix_spawn_file_actions_destroy(&quiet);
}

// The espeak-ng voices of the spoken-digits task, as tests/e2e/tools/spoken_numbers.py's default
// (e2e_synthetic_voices compares the two through `demo --task speech --list-voices`): English
// voices with variants (+m3, +f2, ...; British English's as "en+f2": espeak-ng 1.51 reads
// "en-gb+f2" as plain "en-gb"). The validation voices are heard in no training utterance.
const std::vector<std::string>& spoken_digits_train_voices() {
  static const std::vector<std::string> voices = {"en-us",    "en-gb",      "en-us+m3", "en+f2",
                                                  "en-us+f3", "en-gb-x-rp", "en-us+m7", "en-gb-scotland+f4"};
  return voices;
}
const std::vector<std::string>& spoken_digits_valid_voices() {
  static const std::vector<std::string> voices = {"en-us+f1", "en+m2", "en-gb-x-gbclan"};
  return voices;
}

// Draws the spoken-digits task (SpokenDigitsOptions above) and writes `dir`/audio/*.wav and the
// manifests `dir`/train.tsv and `dir`/valid.tsv (audio<TAB>transcript, paths relative to `dir`).
void write_spoken_digits(const SpokenDigitsOptions& options, const std::string& dir) {
  static const std::vector<std::string> kWords = {"zero", "one", "two",   "three", "four",
                                                  "five", "six", "seven", "eight", "nine"};
  std::mt19937_64 rng(options.seed);  // its outputs are the same on every platform, unlike the distributions'
  const auto draw = [&](int64_t low, int64_t high) {  // uniform in [low, high]
    return low + static_cast<int64_t>(rng() % static_cast<uint64_t>(high - low + 1));
  };
  create_folder(dir + "/audio");
  std::vector<Utterance> all;
  for (const auto& [split, count, voices] :
       {std::tuple{std::string("train"), options.train_utterances, &spoken_digits_train_voices()},
        std::tuple{std::string("valid"), options.valid_utterances, &spoken_digits_valid_voices()}}) {
    OutputFile manifest(dir + "/" + split + ".tsv");
    for (int64_t i = 0; i < count; ++i) {
      Utterance u;
      const int64_t digits = draw(1, options.max_digits);
      for (int64_t d = 0; d < digits; ++d) u.text += (d > 0 ? " " : "") + kWords[static_cast<size_t>(draw(0, 9))];
      char name[32];
      std::snprintf(name, sizeof name, "%05lld", static_cast<long long>(i));
      u.audio = "audio/" + split + name + ".wav";
      u.voice = (*voices)[static_cast<size_t>(draw(0, static_cast<int64_t>(voices->size()) - 1))];
      u.rate = draw(130, 210);
      u.pitch = draw(25, 75);
      manifest.stream() << u.audio << '\t' << u.text << '\n';
      all.push_back(std::move(u));
    }
    manifest.commit();
  }
  synthesise(all, dir);
}

// "WER 12.20 % (S 10 D 2 I 3 / N 123 words)", as `mixseq wer` prints it.
std::string error_rate_line(const CorpusErrors& errors, bool cer) {
  const auto& counts = errors.counts;
  return str_cat(cer ? "CER " : "WER ", errors.rate ? format_decimal(*errors.rate, 2) + " %" : "undefined", " (S ",
                 counts.substitutions, " D ", counts.deletions, " I ", counts.insertions, " / N ",
                 counts.reference_length(), cer ? " characters)" : " words)");
}

int run_translation_demo(const DemoArguments& arguments, const CommandTable& table);
int run_speech_demo(const DemoArguments& arguments, const CommandTable& table);

// The best model also at <work-dir>/checkpoint_best.pt, a link (relative inside the demo's own
// folder), where docs/python.md and docs/library.md open it.
void link_best_checkpoint(const std::string& dir, const std::string& run_dir, bool own_run_dir) {
  namespace fs = std::filesystem;
  const fs::path link = fs::path(dir) / "checkpoint_best.pt";
  const fs::path target = own_run_dir ? fs::path("run") / "checkpoint_best.pt" : fs::absolute(best_checkpoint_path(run_dir));
  std::error_code error;
  fs::remove(link, error);
  fs::create_symlink(target, link, error);
  if (error) log_info("demo: could not link ", link.string(), " to ", target.string(), ": ", error.message());
}

}  // namespace

void add_demo_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand(
      "demo", "The main job on a built-in task: synth -> bpe -> prepare -> train a Transformer -> translate -> BLEU "
              "(--task speech: espeak-ng digits -> prepare -> train Wave2Letter+ -> transcribe -> WER)");
  auto arguments = std::make_shared<DemoArguments>();
  command->add_option("--task", arguments->task,
                      "translation (English->German number words) or speech (digits spoken by espeak-ng)")
      ->check(CLI::IsMember({"translation", "speech"}))
      ->capture_default_str();
  command->add_option("--work-dir", arguments->work_dir,
                      "Folder for everything the demo writes (default runs/demo; --task speech: runs/demo_speech); "
                      "an earlier demo's files there are replaced");
  command->add_option("--train-size", arguments->numbers.train_size, "Training pairs of the built-in task")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-numbers", arguments->numbers.max_numbers_per_sentence, "Numbers per sentence, at most")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-value", arguments->numbers.max_value, "Largest number in the task")
      ->check(in_range(1, kMaxNumberValue))
      ->capture_default_str();
  command->add_option("--bpe-merges", arguments->bpe_merges, "Joint BPE merges")->check(at_least(0))->capture_default_str();
  command->add_option("--train-utterances", arguments->digits.train_utterances,
                      "--task speech: training utterances to synthesise")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--valid-utterances", arguments->digits.valid_utterances,
                      "--task speech: validation utterances (voices not heard in training)")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-digits", arguments->digits.max_digits, "--task speech: digits per utterance, at most")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_flag("--list-voices", arguments->list_voices,
                    "--task speech: print the espeak-ng voices of each split (split<TAB>voice a line) and stop");
  table.add_with_overrides(command, [=, &table] {
    const bool speech = arguments->task == "speech";
    MIXSEQ_CHECK(speech || !arguments->list_voices,
                 "demo: --list-voices is an option of the speech demo (--task speech)");
    if (arguments->list_voices) {
      for (const auto& voice : spoken_digits_train_voices()) std::cout << "train\t" << voice << '\n';
      for (const auto& voice : spoken_digits_valid_voices()) std::cout << "valid\t" << voice << '\n';
      return 0;
    }
    for (const char* option : speech ? std::vector<const char*>{"--train-size", "--max-numbers", "--max-value",
                                                                 "--bpe-merges"}
                                     : std::vector<const char*>{"--train-utterances", "--valid-utterances",
                                                                 "--max-digits"})
      MIXSEQ_CHECK(command->count(option) == 0, "demo: ", option, " is an option of ",
                   speech ? "the translation demo (--task translation)" : "the speech demo (--task speech)");
    DemoArguments resolved = *arguments;
    if (resolved.work_dir.empty()) resolved.work_dir = speech ? "runs/demo_speech" : "runs/demo";
    return speech ? run_speech_demo(resolved, table) : run_translation_demo(resolved, table);
  });
}

namespace {

int run_translation_demo(const DemoArguments& arguments, const CommandTable& table) {
  const auto started = std::chrono::steady_clock::now();
  const std::string& dir = arguments.work_dir;
  const std::string raw = dir + "/raw";
  create_folder(dir);  // a file in the way is an error naming it, before anything runs

  write_number_task(make_number_task(arguments.numbers), raw);
  log_info("demo: 1/5 wrote the number-words task to ", raw);

  BpeLearnOptions bpe;
  bpe.symbols = arguments.bpe_merges;
  learn_bpe(count_words({raw + "/train.en", raw + "/train.de"}), bpe).save(raw + "/codes.bpe");
  log_info("demo: 2/5 learnt ", arguments.bpe_merges, " joint BPE merges");

  PrepareOptions prepare;
  prepare.train_prefix = raw + "/train";
  prepare.valid_prefix = raw + "/valid";
  prepare.test_prefix = raw + "/test";
  prepare.tokenizer = "bpe:" + raw + "/codes.bpe";
  prepare.output_dir = dir + "/data";
  std::cerr << format_prepare_report(prepare_corpus(prepare));
  log_info("demo: 3/5 prepared ", prepare.output_dir);

  TrainConfig config = demo_config(dir);
  apply_config_overrides(parse_config_overrides(table.extra_arguments()), config.fields());
  // Starting over is the demo's to do in its own folder only: a --train.run_dir pointing
  // elsewhere is protected like any other run folder.
  const bool own_run_dir = config.train.run_dir == demo_config(dir).train.run_dir;
  const auto summary = train_model(config, own_run_dir ? RunStart::kOverwrite : RunStart::kNew);
  if (summary.stop_signal != 0) {  // a half-trained model is not worth translating with
    log_info("demo: stopped by signal ", summary.stop_signal, " during training, after ", summary.steps,
             " updates");
    return 128 + summary.stop_signal;
  }
  log_info("demo: 4/5 trained ", summary.steps, " updates in ", summary.seconds, " s, best validation BLEU ",
           summary.best_score);
  link_best_checkpoint(dir, config.train.run_dir, own_run_dir);

  const auto device = resolve_device(config.train.device, "--train.device");
  auto trained = load_trained_model(best_checkpoint_path(config.train.run_dir), device);
  BatchTranslator translator(*trained.model, trained.vocabulary, *trained.tokenizer, device,
                        resolve_precision(config.train.precision, device));
  TranslateOptions translate;
  translate.search = config.validation_search;
  const auto sources = read_lines(raw + "/test.en");
  const auto translate_start = std::chrono::steady_clock::now();
  const auto translations = translator.translate(sources, translate);
  const double translate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - translate_start).count();
  std::vector<std::string> hypotheses;
  OutputFile output(dir + "/test.hyp.de");
  for (const auto& translation : translations) {
    hypotheses.push_back(translation.front().text);
    output.stream() << hypotheses.back() << '\n';
  }
  output.commit();
  const std::vector<std::vector<std::string>> references = {read_lines(raw + "/test.de")};
  const BleuOptions bleu_options;
  const ChrfOptions chrf_options;
  const auto bleu = corpus_bleu(hypotheses, references, bleu_options);
  const auto chrf = corpus_chrf(hypotheses, references, chrf_options);
  log_info("demo: 5/5 translated ", sources.size(), " test sentences in ", translate_seconds, " s (",
           sources.size() / translate_seconds, " sentences/s) to ", dir, "/test.hyp.de");
  std::cout << format_score_line(bleu_report(bleu, bleu_options), 2, false) << '\n'
            << format_score_line(chrf_report(chrf, chrf_options), 2, false) << '\n';
  for (size_t i = 0; i < 3 && i < sources.size(); ++i)
    std::cout << "  " << sources[i] << "\n    -> " << hypotheses[i] << "\n       (reference: " << references[0][i]
              << ")\n";
  log_info("demo: done in ", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
           " s");
  return 0;
}

int run_speech_demo(const DemoArguments& arguments, const CommandTable& table) {
  const auto started = std::chrono::steady_clock::now();
  const std::string& dir = arguments.work_dir;
  const std::string raw = dir + "/raw";
  find_espeak();  // before anything is written
  create_folder(dir);  // a file in the way is an error naming it, before anything runs

  std::filesystem::remove_all(raw + "/audio");  // an earlier demo's files, perhaps more of them
  write_spoken_digits(arguments.digits, raw);
  log_info("demo: 1/4 synthesised ", arguments.digits.train_utterances, " training and ",
           arguments.digits.valid_utterances, " validation utterances of spoken digits with espeak-ng in ", raw);

  SpeechPrepareOptions prepare;
  prepare.manifests = {{"train", raw + "/train.tsv"}, {"valid", raw + "/valid.tsv"}};
  prepare.out_dir = dir + "/data";
  prepare.workers = std::max(1u, std::thread::hardware_concurrency());
  for (const auto& [split, counts] : prepare_speech_data(prepare)) {
    std::cerr << split << ": " << counts.utterances << " utterances, " << counts.seconds << " s";
    for (const auto& [reason, count] : counts.skipped) std::cerr << "; skipped " << count << " (" << reason << ")";
    std::cerr << '\n';
  }
  log_info("demo: 2/4 prepared ", prepare.out_dir);

  TrainConfig config = speech_demo_config(dir);
  apply_config_overrides(parse_config_overrides(table.extra_arguments()), config.fields());
  const bool own_run_dir = config.train.run_dir == speech_demo_config(dir).train.run_dir;
  const auto summary = train_model(config, own_run_dir ? RunStart::kOverwrite : RunStart::kNew);
  if (summary.stop_signal != 0) {
    log_info("demo: stopped by signal ", summary.stop_signal, " during training, after ", summary.steps, " updates");
    return 128 + summary.stop_signal;
  }
  log_info("demo: 3/4 trained ", summary.steps, " updates in ", summary.seconds, " s, best validation WER ",
           summary.best_score);

  // Transcribed as `mixseq transcribe` does it: the files read again, resampled and stored in 16 bits.
  const auto device = resolve_device(config.train.device, "--train.device");
  auto recognizer = load_trained_speech_recognizer(best_checkpoint_path(config.train.run_dir), device);
  const SpeechTranscriber transcriber(recognizer, device, resolve_precision(config.train.precision, device));
  const AudioReadOptions reading = recognizer.input.audio_read_options();
  std::vector<std::vector<float>> audio;
  std::vector<std::string> references;
  double audio_seconds = 0;
  for (const auto& entry : read_speech_manifest(raw + "/valid.tsv", true)) {
    audio.push_back(as_stored_samples(read_audio(entry.audio, entry.segment(reading)).samples));
    audio_seconds += static_cast<double>(audio.back().size()) / static_cast<double>(reading.sample_rate);
    references.push_back(entry.transcript);
  }
  const auto transcribe_start = std::chrono::steady_clock::now();
  const auto transcripts = transcriber.transcribe(audio);
  const double transcribe_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - transcribe_start).count();
  std::vector<std::string> hypotheses;
  OutputFile output(dir + "/valid.hyp");
  for (const auto& transcript : transcripts) {
    hypotheses.push_back(transcript.text);
    output.stream() << transcript.text << '\n';
  }
  output.commit();
  ErrorRateOptions words, characters;
  characters.unit = ErrorRateUnit::kCharacter;
  log_info("demo: 4/4 transcribed ", audio.size(), " validation utterances (", audio_seconds, " s of audio) in ",
           transcribe_seconds, " s (real-time factor ", audio_seconds > 0 ? transcribe_seconds / audio_seconds : 0.0,
           ") to ", dir, "/valid.hyp");
  std::cout << error_rate_line(corpus_error_rate(hypotheses, references, words), false) << '\n'
            << error_rate_line(corpus_error_rate(hypotheses, references, characters), true) << '\n';
  for (size_t i = 0; i < 3 && i < hypotheses.size(); ++i)
    std::cout << "  " << references[i] << "\n    -> " << hypotheses[i] << '\n';
  log_info("demo: done in ", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), " s");
  return 0;
}

}  // namespace

}  // namespace mixseq::cli
