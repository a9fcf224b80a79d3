// mixseq demo: the main job on the built-in default. It writes the built-in English->German
// number-words task, learns a joint BPE model, prepares the data, trains a small GNMT,
// translates the test split with beam search and scores it with BLEU and chrF: the whole
// toolkit on 2 cores in a few minutes, with no data to download. Every demo writes its data
// afresh, so it starts its training over too, replacing <work-dir>/run of an earlier demo
// (but never a --train.run_dir elsewhere).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "config_arguments.h"
#include "mixseq/data/prepare.h"
#include "mixseq/data/synthetic_numbers.h"
#include "mixseq/decode/translator.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/bpe_learner.h"
#include "mixseq/text/chrf.h"
#include "mixseq/text/word_counts.h"
#include "mixseq/train/training_tasks.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/output_file.h"
#include "option_checks.h"

namespace mixseq::cli {

namespace {

struct DemoArguments {
  std::string work_dir = "runs/demo";
  NumberTaskOptions task;
  int64_t bpe_merges = 400;
};

// A small GNMT for the built-in task (configs/gnmt_tiny.yaml holds the same settings): 4+4
// layers of 128, as deep as the reference. With 2+2 layers the normalized Bahdanau attention
// took 1,800 updates to find the alignment with one seed and none in 4,080 with two others;
// with 4+4 three seeds reached validation BLEU 99 by update 1,428 (docs/benchmarks.md). 10
// epochs of 204 updates leave room after the latest of them.
TrainConfig demo_config(const std::string& work_dir) {
  TrainConfig config;
  config.model.gnmt.hidden_size = 128;
  config.model.gnmt.num_layers = 4;
  config.model.gnmt.dropout = 0.0;
  config.data.dir = work_dir + "/data";
  config.data.batching.max_tokens = 1024;
  config.data.batching.max_length = 100;
  config.optim.lr = 5e-3;
  config.schedule.name = "gnmt_step";
  config.schedule.gnmt_step.warmup_steps = 50;
  config.train.run_dir = work_dir + "/run";
  config.train.device = "cpu";
  config.train.max_epochs = 10;
  config.train.log_interval = 100;
  config.validation_search.beam_size = 5;
  // German pieces are fewer than English ones here; bounding the output keeps the validation
  // of an untrained model from running 200 steps per sentence.
  config.validation_search.max_len_a = 1.5;
  config.validation_search.max_len_b = 10;
  return config;
}

}  // namespace

void add_demo_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand(
      "demo", "The main job on the built-in task: synth -> bpe -> prepare -> train GNMT -> translate -> BLEU");
  auto arguments = std::make_shared<DemoArguments>();
  command->add_option("--work-dir", arguments->work_dir,
                      "Folder for everything the demo writes; an earlier demo's files there are replaced")
      ->capture_default_str();
  command->add_option("--train-size", arguments->task.train_size, "Training pairs of the built-in task")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-numbers", arguments->task.max_numbers_per_sentence, "Numbers per sentence, at most")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--max-value", arguments->task.max_value, "Largest number in the task")
      ->check(in_range(1, kMaxNumberValue))
      ->capture_default_str();
  command->add_option("--bpe-merges", arguments->bpe_merges, "Joint BPE merges")->check(at_least(0))->capture_default_str();
  table.add_with_overrides(command, [=, &table] {
    const auto started = std::chrono::steady_clock::now();
    const std::string& dir = arguments->work_dir;
    const std::string raw = dir + "/raw";

    write_number_task(make_number_task(arguments->task), raw);
    log_info("demo: 1/5 wrote the number-words task to ", raw);

    BpeLearnOptions bpe;
    bpe.symbols = arguments->bpe_merges;
    learn_bpe(count_words({raw + "/train.en", raw + "/train.de"}), bpe).save(raw + "/codes.bpe");
    log_info("demo: 2/5 learnt ", arguments->bpe_merges, " joint BPE merges");

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

    const auto device = resolve_device(config.train.device, "--train.device");
    auto trained = load_trained_model(best_checkpoint_path(config.train.run_dir), device);
    Translator translator(*trained.model, trained.vocabulary, *trained.tokenizer, device,
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
  });
}

}  // namespace mixseq::cli
