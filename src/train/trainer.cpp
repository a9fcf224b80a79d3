#include "mixseq/train/trainer.h"

#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "mixseq/data/prepared_data.h"
#include "mixseq/data/token_batching.h"
#include "mixseq/data/translation_batch.h"
#include "mixseq/decode/translator.h"
#include "mixseq/models/registry.h"
#include "mixseq/nn/parameter_count.h"
#include "mixseq/optim/optimizer.h"
#include "mixseq/text/bleu.h"
#include "mixseq/text/score_report.h"
#include "mixseq/train/run_schedule.h"
#include "mixseq/train/training_session.h"
#include "mixseq/train/translation_loss.h"
#include "mixseq/train/update_step.h"
#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "mixseq/util/stop_request.h"

namespace mixseq {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct ValidationResult {
  double loss = 0;        // per target token
  double perplexity = 0;  // exp(nll per target token)
};

// The validation batches, in order; planned once, before training, so a bad
// data.valid_max_tokens fails at start.
EpochBatches plan_validation_batches(const PreparedData& data, const DataConfig& config) {
  BatchingOptions batching;
  batching.max_tokens = config.valid_max_tokens;
  batching.shuffle = false;
  return plan_epoch_batches(model_lengths(data.source("valid")), model_lengths(data.target("valid")), batching, 1);
}

// Over all ranks: each takes every world_size-th batch, then the sums are added up.
ValidationResult validation_loss(Seq2SeqModelImpl& model, const PreparedData& data, const EpochBatches& plan,
                                 const TrainConfig& config, const torch::Device& device, Precision precision,
                                 const DataParallel& parallel) {
  const auto& source = data.source("valid");
  const auto& target = data.target("valid");
  torch::NoGradGuard no_grad;
  model.eval();
  auto loss = torch::zeros({}, torch::device(device)), nll = torch::zeros({}, torch::device(device));
  int64_t tokens = 0;
  for (size_t b = parallel.rank(); b < plan.batches.size(); b += parallel.world_size()) {
    const auto sums = translation_loss(model, make_translation_batch(source, &target, plan.batches[b]),
                                       config.criterion, precision, device);
    loss += sums.loss;
    nll += sums.nll;
    tokens += sums.target_tokens;
  }
  model.train();
  const auto sums = parallel.sum({loss.item<double>(), nll.item<double>(), static_cast<double>(tokens)});
  const double per_token = sums[2] > 0 ? 1.0 / sums[2] : 0.0;
  return {sums[0] * per_token, std::exp(sums[1] * per_token)};
}

// The best hypotheses of all ranks, where rank r translated sentences r, r + world_size, ...:
// each rank writes its rows (length, then ids) into a zero table, and a sum over ranks joins them.
std::vector<std::vector<int64_t>> gather_hypotheses(const std::vector<std::vector<int64_t>>& mine, int64_t sentences,
                                                    const DataParallel& parallel, const torch::Device& device) {
  if (parallel.world_size() == 1) return mine;
  int64_t longest = 0;
  for (const auto& tokens : mine) longest = std::max(longest, static_cast<int64_t>(tokens.size()));
  auto width = torch::full({1}, longest, torch::kLong).to(device);
  parallel.group->all_reduce_max(width);
  auto table = torch::zeros({sentences, width.item<int64_t>() + 1}, torch::kLong);  // [N, 1 + longest]
  auto rows = table.accessor<int64_t, 2>();
  for (size_t k = 0; k < mine.size(); ++k) {
    const int64_t row = parallel.rank() + static_cast<int64_t>(k) * parallel.world_size();
    rows[row][0] = static_cast<int64_t>(mine[k].size());
    for (size_t t = 0; t < mine[k].size(); ++t) rows[row][static_cast<int64_t>(t) + 1] = mine[k][t];
  }
  table = table.to(device);
  parallel.group->all_reduce_sum(table);
  table = table.cpu();
  rows = table.accessor<int64_t, 2>();
  std::vector<std::vector<int64_t>> all(sentences);
  for (int64_t i = 0; i < sentences; ++i)
    for (int64_t t = 0; t < rows[i][0]; ++t) all[i].push_back(rows[i][t + 1]);
  return all;
}

// Over all ranks: each translates every world_size-th sentence; all ranks get the same score.
BleuScore validation_bleu(Seq2SeqModelImpl& model, const PreparedData& data, const Tokenizer& tokenizer,
                          const TrainConfig& config, const torch::Device& device, Precision precision,
                          const DataParallel& parallel) {
  const auto& source = data.source("valid");
  std::vector<std::vector<int64_t>> sources;
  for (int64_t i = parallel.rank(); i < source.size(); i += parallel.world_size())
    sources.push_back(source.sequence(i));
  Translator translator(model, data.vocabulary(), tokenizer, device, precision);
  TranslateOptions options;
  options.search = config.validation_search;
  options.search.nbest = 1;
  options.max_tokens = config.data.valid_max_tokens;
  const auto hypotheses = translator.translate_ids(sources, options);
  std::vector<std::vector<int64_t>> mine;
  for (const auto& best : hypotheses) mine.push_back(best.empty() ? std::vector<int64_t>{} : best.front().tokens);
  std::vector<std::string> texts;
  for (const auto& tokens : gather_hypotheses(mine, source.size(), parallel, device))
    texts.push_back(translator.detokenize(tokens));
  return corpus_bleu(texts, {read_lines(data.references_path("valid"))}, BleuOptions{});
}

void check_options(const TrainConfig& config) {
  const auto& train = config.train;
  MIXSEQ_CHECK(std::isfinite(train.target_bleu) && train.target_bleu >= 0 && train.target_bleu <= 100,
               "train.target_bleu (", train.target_bleu, ") must be between 0 (none) and 100");
  MIXSEQ_CHECK(train.target_bleu == 0 || train.validate_bleu, "train.target_bleu (", train.target_bleu,
               ") needs train.validate_bleu true: it is checked at each BLEU validation");
  MIXSEQ_CHECK(train.best_metric != "bleu" || train.validate_bleu,
               "train.best_metric bleu needs train.validate_bleu true; or pick the best model by loss");
  MIXSEQ_CHECK(config.data.valid_max_tokens >= 1, "data.valid_max_tokens (", config.data.valid_max_tokens,
               ") must be at least 1");
  MIXSEQ_CHECK(!config.data.dir.empty(), "data.dir is empty: give the folder written by `mixseq prepare`");
}

// The validation search runs first at the end of an epoch, maybe hours in: its settings are
// checked against the model's vocabulary and the validation sources before the first update.
void check_validation_search(const TrainConfig& config, const PreparedData& data) {
  try {
    check_beam_search_options(config.validation_search, data.vocabulary().size());
    if (!data.has_split("valid") || data.source("valid").size() == 0) return;
    const auto lengths = model_lengths(data.source("valid"));
    const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
    max_output_length(config.validation_search, *shortest);  // a linear bound: its ends decide
    max_output_length(config.validation_search, *longest);
  } catch (const Error& e) {
    throw Error(str_cat("validation_search: ", e.what()));
  }
  if (!config.train.validate_bleu) return;
  const auto references = data.references_path("valid");
  MIXSEQ_CHECK(!references.empty() && std::filesystem::exists(references),
               "train.validate_bleu needs the raw validation references, but '", config.data.dir, "' lacks them (",
               references.empty() ? "dataset.json lists none" : references + " is missing",
               "); run `mixseq prepare` again or set train.validate_bleu false");
}

}  // namespace

TrainSummary train_translation_model(const TrainConfig& config, RunStart start) {
  check_options(config);
  const TrainOptions& options = config.train;
  TrainingSession session(options, config.distributed, start);
  const torch::Device& device = session.device();
  const Precision precision = session.precision();
  const DataParallel& parallel = session.parallel();

  const PreparedData data(config.data.dir);
  MIXSEQ_CHECK(!data.monolingual(), "'", config.data.dir, "' holds a monolingual corpus; translation needs pairs");
  MIXSEQ_CHECK(data.has_split("train"), "'", config.data.dir, "' has no training split");
  const auto tokenizer = load_tokenizer(data.tokenizer());
  const bool can_validate = data.has_split("valid");
  check_validation_search(config, data);
  const EpochBatches validation_plan = can_validate ? plan_validation_batches(data, config.data) : EpochBatches{};

  torch::manual_seed(static_cast<uint64_t>(options.seed));
  auto model = build_seq2seq_model(config.model, data.vocabulary().size());
  model->to(device);
  auto optimizer = build_optimizer(config.optim, model->parameters());
  UpdateStep update_step(*model, *optimizer, config.clipping, config.loss_scaler, precision, device);
  TrainConfig resolved = config;
  const std::string config_yaml = config_to_yaml(resolved.fields());
  session.begin(config_yaml, config.data.dir, data, *model, *optimizer, update_step);
  TrainingProgress& progress = session.progress();
  log_info("train: configuration\n", config_yaml);
  log_info("train: ", config.model.arch, " with ", count_parameters(*model), " parameters, vocabulary ",
           data.vocabulary().size(), ", device ", device.str(), ", precision ", options.precision);

  const auto& train_source = data.source("train");
  const auto& train_target = data.target("train");
  const auto source_lengths = model_lengths(train_source), target_lengths = model_lengths(train_target);
  BatchingOptions batching = config.data.batching;
  batching.seed = static_cast<uint64_t>(options.seed);
  batching.rank = parallel.rank();
  batching.world_size = parallel.world_size();
  const auto first_plan = plan_epoch_batches(source_lengths, target_lengths, batching, 1);
  const int64_t updates_per_epoch = static_cast<int64_t>(first_plan.batches.size()) / options.update_freq;
  MIXSEQ_CHECK(updates_per_epoch > 0, "the training split makes ", first_plan.batches.size(),
               " batches, fewer than train.update_freq (", options.update_freq, ")");
  if (first_plan.skipped_too_long > 0)
    log_info("train: skipping ", first_plan.skipped_too_long, " pairs longer than data.max_length (",
             config.data.batching.max_length, ")");
  RunSchedule schedule(session, config.schedule, config.optim.lr, updates_per_epoch);
  // Everything is checked: only now does the run folder change (--overwrite deletes the old run).
  session.open_run_directory(config_yaml);

  TrainSummary summary;
  bool stopping = false;
  // The best checkpoint has the highest BLEU, or the lowest validation loss (without BLEU by
  // default: fairseq's best_checkpoint_metric and Marian's first valid-metric).
  const bool best_by_bleu = options.best_metric == "bleu" || (options.best_metric == "auto" && options.validate_bleu);
  if (session.patience_exhausted()) {
    log_info("train: train.patience (", options.patience, ") was used up before: nothing to train");
    stopping = true;
  }
  // An interval validation can fall on the update after which train.max_time ends the run, which
  // is validated again (with BLEU): the same model is not validated twice without need, nor
  // counted twice for train.patience.
  int64_t validated_step = -1, counted_step = -1;
  bool validated_with_bleu = false;
  const auto validate = [&](bool with_bleu) {
    if (progress.step == validated_step && (validated_with_bleu || !with_bleu)) return;
    validated_step = progress.step, validated_with_bleu = with_bleu;
    const auto validation_started = Clock::now();
    const auto valid = validation_loss(*model, data, validation_plan, config, device, precision, parallel);
    summary.last_valid_loss = valid.loss;
    nlohmann::json record = {{"kind", "valid"}, {"epoch", progress.epoch}, {"step", progress.step},
                             {"loss", valid.loss}, {"ppl", valid.perplexity}, {"train_s", session.train_seconds()}};
    std::string line = str_cat("valid | epoch ", progress.epoch, " | step ", progress.step, " | loss ", valid.loss,
                               " | ppl ", valid.perplexity);
    bool best = false;
    if (with_bleu) {
      const auto bleu = validation_bleu(*model, data, *tokenizer, config, device, precision, parallel);
      record["bleu"] = bleu.score;
      line += str_cat(" | bleu ", format_decimal(bleu.score, 2));
      const bool highest = bleu.score > progress.best_score;
      if (highest) progress.best_score = bleu.score;
      if (best_by_bleu) best = highest;
      summary.best_bleu = progress.best_score;
      if (options.target_bleu > 0 && bleu.score >= options.target_bleu) {
        summary.reached_target_bleu = true;
        stopping = true;
        line += str_cat(" | reached train.target_bleu ", options.target_bleu);
      }
    }
    if (!best_by_bleu) {
      best = progress.best_loss < 0 || valid.loss < progress.best_loss;
      if (best) progress.best_loss = valid.loss;
    }
    if (best) {
      session.save_best();
      line += " (best)";
    }
    const bool measured_best_metric = with_bleu || !best_by_bleu;
    if (measured_best_metric && progress.step != counted_step) {
      counted_step = progress.step;
      if (session.note_validation(best)) {
        stopping = true;
        summary.out_of_patience = true;
        line += str_cat(" | no better ", best_by_bleu ? "bleu" : "loss", " in ", options.patience,
                        " validations (train.patience): stopping");
      }
    }
    session.set_validation_seconds(seconds_since(validation_started));
    session.metrics().write(record, line);
  };

  model->train();
  bool time_is_up = false;
  while (progress.step < schedule.total_steps() && !stopping) {
    const auto plan = plan_epoch_batches(source_lengths, target_lengths, batching, progress.epoch).batches;
    const auto batches_in_epoch = static_cast<int64_t>(plan.size());
    while (progress.epoch_batches + options.update_freq <= batches_in_epoch &&
           progress.step < schedule.total_steps() && !stopping) {
      std::vector<TranslationBatch> batches;
      int64_t target_tokens = 0;
      for (int64_t micro = 0; micro < options.update_freq; ++micro) {
        batches.push_back(make_translation_batch(train_source, &train_target, plan[progress.epoch_batches + micro]));
        target_tokens += batches.back().target_tokens;
      }
      const auto agreed = session.agree_on_update(target_tokens);
      if (agreed.stop_signal != 0) {
        summary.stop_signal = agreed.stop_signal;
        stopping = true;
        break;
      }
      if (agreed.out_of_time) {
        time_is_up = true;
        break;
      }
      const double lr = schedule.lr_at(progress.step);
      set_learning_rate(*optimizer, lr);
      const auto update = update_step.run(
          options.update_freq,
          [&](int64_t micro) { return translation_loss(*model, batches[micro], config.criterion, precision, device); },
          agreed.update_tokens);
      ++progress.step;
      progress.epoch_batches += options.update_freq;
      session.record_update(update, lr, schedule.total_steps());
      // The update that ends the epoch or the run is validated below, with BLEU.
      const bool last_of_epoch_or_run =
          progress.epoch_batches + options.update_freq > batches_in_epoch || progress.step >= schedule.total_steps();
      if (can_validate && options.validate_interval > 0 && progress.step % options.validate_interval == 0 &&
          !last_of_epoch_or_run)
        validate(/*with_bleu=*/false);
      if (options.save_interval > 0 && progress.step % options.save_interval == 0) session.save_last();
      schedule.after_update(progress.step);
    }
    const bool epoch_complete = progress.epoch_batches + options.update_freq > batches_in_epoch;
    // A run that ends inside an epoch (max_steps, max_time) validates its final model too.
    const bool ending = time_is_up || (progress.step >= schedule.total_steps() && !stopping);
    if ((epoch_complete || ending) && can_validate) validate(options.validate_bleu);
    if (epoch_complete) {
      summary.epochs = progress.epoch;
      ++progress.epoch;
      progress.epoch_batches = 0;
      schedule.fit_to_time_budget();
    }
    if (time_is_up) stopping = true;
    session.save_last();
  }
  if (!can_validate && summary.stop_signal == 0 && stop_signal() == 0 && progress.step > session.first_step() &&
      parallel.leader()) {
    // Nothing to choose a best model by: the final one is it, so that the usual
    // `translate -c <run_dir>/checkpoint_best.pt` works.
    session.save_best();
    log_info("train: no validation split in ", config.data.dir, ": ", best_checkpoint_path(options.run_dir),
             " is the final model, the same as checkpoint_last.pt");
  }
  if (summary.stop_signal == 0) summary.stop_signal = stop_signal();  // one that came after the last update
  summary.steps = progress.step;
  summary.best_bleu = progress.best_score;
  summary.seconds = session.seconds();
  return summary;
}

}  // namespace mixseq
