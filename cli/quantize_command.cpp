// mixseq quantize: post-training quantization of a translation checkpoint (issue 13).
//   mixseq quantize -c runs/x/checkpoint_best.pt --calib valid.en [--config quant.yaml] -o runs/x/int8.pt
//   mixseq quantize ... --search-src valid.en --search-ref valid.de [--search-budget 0.2]
// Translates the calibration sentences with the float model (beam search, as translate does)
// while recording the input and output range of every quantizable linear layer, then writes the
// weights with the quantization plan (quant/quantization_plan.h) to the output checkpoint,
// which translate and bench translate load like any other. With --search-src/--search-ref it
// first keeps the fewest layers in float that hold validation BLEU within --search-budget of the
// float model (quant/layer_search.h), printing every plan it tried. An int8 plan's layers keep
// their weights in 8 bits in the output (quant/int8_weight_storage.h).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "commands.h"
#include "mixseq/decode/batch_translator.h"
#include "mixseq/models/trained_model.h"
#include "mixseq/nn/quantizable_embedding.h"
#include "mixseq/nn/quantizable_linear.h"
#include "mixseq/nn/quantization_point.h"
#include "mixseq/text/bleu.h"
#include "mixseq/quant/calibration.h"
#include "mixseq/quant/int8_weight_storage.h"
#include "mixseq/quant/layer_search.h"
#include "mixseq/quant/quantization_config.h"
#include "mixseq/quant/quantization_plan.h"
#include "mixseq/quant/quantized_model.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"
#include "option_checks.h"
#include "search_flags.h"

namespace mixseq::cli {

namespace {

struct QuantizeArguments {
  std::string checkpoint;
  std::string calib;
  std::string config;         // "" = the defaults of quant/quantization_config.h
  std::string output;
  int64_t calib_lines = 1000;  // calibration sentences read from the top of --calib
  std::string search_src;      // validation sources for the per-layer search; "" = no search
  std::string search_ref;      // their references
  double search_budget = 0.2;  // BLEU the search may lose against the float model
  SearchFlags search;          // the checkpoint's validation_search, as translate resolves it
  TranslateOptions options;    // its search is resolved from `search` and the checkpoint
};

// Megabytes of the parameters at the bits of their layers: the quantized layers' own weights and
// the quantized embeddings at their bits (what an int8 checkpoint stores for its linear layers,
// quant/int8_weight_storage.h), everything else (biases, float layers, a tied output
// projection's embedding) in fp32. Quantization points hold no weights.
double weight_megabytes(torch::nn::Module& model, const QuantizationPlan* plan) {
  double bytes = 0;
  for (const auto& parameter : model.parameters()) bytes += 4.0 * static_cast<double>(parameter.numel());
  if (plan) {
    const auto modules = model.named_modules();
    for (const auto& layer : plan->layers) {
      torch::Tensor weight;
      if (const auto* linear = dynamic_cast<const QuantizableLinearImpl*>(modules[layer.name].get()))
        if (int8_storable_parameter(model, layer.name)) weight = linear->weight;
      if (const auto* embedding = dynamic_cast<const QuantizableEmbeddingImpl*>(modules[layer.name].get()))
        weight = embedding->weight;
      if (weight.defined()) bytes -= static_cast<double>(weight.numel()) * (32 - layer.settings.bits) / 8;
    }
  }
  return bytes / 1e6;
}

std::string describe(const LayerQuantizationPlan& layer) {
  const auto& s = layer.settings;
  std::ostringstream out;
  out << std::setprecision(4) << layer.name << ": " << s.bits << " bits, weight "
      << (s.weight_symmetric ? "symmetric" : "asymmetric") << (s.weight_per_channel ? " per-channel" : " per-tensor")
      << ", activations " << (s.activation_symmetric ? "symmetric" : "asymmetric") << " clip " << s.clip
      << ", input [" << layer.input_min << ", " << layer.input_max << "], output [" << layer.output_min << ", "
      << layer.output_max << "]";
  return out.str();
}

// The per-layer search, scoring each plan by corpus BLEU of --search-src against --search-ref.
// --search-src and --search-ref, read and checked before the calibration's work.
std::pair<std::vector<std::string>, std::vector<std::string>> read_search_set(const QuantizeArguments& arguments) {
  auto sources = read_lines(arguments.search_src), references = read_lines(arguments.search_ref);
  MIXSEQ_CHECK(!sources.empty(), "--search-src '", arguments.search_src,
               "' has no lines: the search needs validation sentences to score each plan by BLEU");
  MIXSEQ_CHECK(sources.size() == references.size(), "--search-src '", arguments.search_src, "' has ", sources.size(),
               " lines but --search-ref '", arguments.search_ref, "' has ", references.size(),
               "; give one reference per source line");
  return {std::move(sources), std::move(references)};
}

QuantizationPlan search(const QuantizeArguments& arguments, TrainedModel& trained, const QuantizationPlan& full,
                        const std::vector<std::string>& sources, const std::vector<std::string>& references) {
  BatchTranslator translator(*trained.model, trained.vocabulary, *trained.tokenizer, torch::kCPU, Precision::kFp32);
  // The speed of each scoring, in the order of the search's trials (one scoring each): the
  // translation of the validation set, tokenization included, as translate measures it.
  std::vector<double> sentences_per_second;
  const auto bleu = [&](const QuantizationPlan& plan) {
    apply_quantization_plan(*trained.model, plan);
    std::vector<std::string> hypotheses;
    const auto start = std::chrono::steady_clock::now();
    for (const auto& nbest : translator.translate(sources, arguments.options)) hypotheses.push_back(nbest.front().text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sentences_per_second.push_back(static_cast<double>(sources.size()) / std::max(seconds, 1e-9));
    return corpus_bleu(hypotheses, {references}, BleuOptions{}).score;
  };
  const double float_bleu = bleu(QuantizationPlan{full.mode, {}});
  const auto result = search_float_layers(full, float_bleu, bleu, LayerSearchOptions{arguments.search_budget});
  log_info("quantize: search: float BLEU ", float_bleu, ", budget ", arguments.search_budget, "; tried:");
  log_info("quantize: search: | tried | layers in float | BLEU | weights MB | sentences/s |");
  log_info("quantize: search: | float | all | ", float_bleu, " | ", weight_megabytes(*trained.model, nullptr), " | ",
           sentences_per_second.front(), " |");
  for (size_t i = 0; i < result.trials.size(); ++i) {
    const auto& trial = result.trials[i];
    log_info("quantize: search: | ", trial.tried, " | ", trial.float_layers.size(), " | ", trial.score, " | ",
             weight_megabytes(*trained.model, &trial.plan), " | ", sentences_per_second.at(i + 1), " |");
  }
  std::string kept;
  for (const auto& name : result.float_layers) kept += (kept.empty() ? "" : ", ") + name;
  log_info("quantize: search: chose BLEU ", result.score, " with ", result.float_layers.size(), " of ",
           full.layers.size(), " layers in float", kept.empty() ? "" : ": " + kept);
  apply_quantization_plan(*trained.model, QuantizationPlan{full.mode, {}});  // back to float
  return result.plan;
}

}  // namespace

void add_quantize_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("quantize", "Quantize a translation checkpoint after training (int8)");
  auto arguments = std::make_shared<QuantizeArguments>();
  command->add_option("-c,--checkpoint", arguments->checkpoint, "Float checkpoint (.pt) written by mixseq train")
      ->required();
  command->add_option("--calib", arguments->calib, "Calibration source text, one sentence per line")->required();
  command->add_option("--calib-lines", arguments->calib_lines, "Calibration sentences taken from the top of --calib")
      ->check(at_least(1))
      ->capture_default_str();
  command->add_option("--config", arguments->config, "Quantization settings (YAML); default: int8, 8 bits, "
                      "symmetric per-channel weights, asymmetric activations with avg clipping");
  command->add_option("-o,--output", arguments->output, "The quantized checkpoint (.pt)")->required();
  auto* search_src = command->add_option(
      "--search-src", arguments->search_src, "Validation sources: search for the fewest layers to keep in float");
  auto* search_ref = command->add_option("--search-ref", arguments->search_ref, "References of --search-src");
  search_src->needs(search_ref);
  search_ref->needs(search_src);
  command->add_option("--search-budget", arguments->search_budget, "BLEU the search may lose against float")
      ->check(at_least(0))
      ->capture_default_str();
  arguments->search.add_to(*command);  // the calibration's and the search's beam search, as translate's
  table.add(command, [=] {
    const auto config = arguments->config.empty() ? parse_quantization_config("", "the default settings")
                                                  : read_quantization_config(arguments->config);
    const torch::Device cpu(torch::kCPU);
    auto trained = load_trained_model(arguments->checkpoint, cpu);
    arguments->options.search = arguments->search.resolve(trained.config_yaml, arguments->checkpoint);
    check_beam_search_options(arguments->options.search, trained.model->vocab_size());
    const auto& settings = arguments->options.search;
    log_info("quantize: calibration and search translate with beam ", settings.beam_size, ", length penalty ",
             settings.length_penalty, ", coverage penalty ", settings.coverage_penalty,
             " (the checkpoint's validation_search, as translate; its search flags override it)");
    const auto layer_names = quantizable_layer_names(*trained.model);
    // A model built without quantizable layers would give an "int8" checkpoint identical to the float one.
    MIXSEQ_CHECK(!layer_names.empty(), "quantize: '", arguments->checkpoint, "' is a model.arch '",
                 trained.config.arch, "' model, which has no quantizable layers; nothing to quantize ",
                 "(translate runs the float checkpoint)");
    check_patterns_match(config, layer_names);
    auto sources = read_lines(arguments->calib);
    if (static_cast<int64_t>(sources.size()) > arguments->calib_lines) sources.resize(arguments->calib_lines);
    // An empty file, or one of empty lines only: no layer would run, and the error would name a layer.
    MIXSEQ_CHECK(std::any_of(sources.begin(), sources.end(), [](const std::string& line) { return !line.empty(); }),
                 "--calib '", arguments->calib, "': the calibration file has no sentences",
                 sources.empty() ? "" : str_cat(" (its first ", sources.size(), " lines are empty)"),
                 "; give source text, one sentence per line");
    std::vector<std::string> search_sources, search_references;
    if (!arguments->search_src.empty()) std::tie(search_sources, search_references) = read_search_set(*arguments);

    QuantizationPlan plan;
    {
      const Calibration calibration(*trained.model, config);
      BatchTranslator translator(*trained.model, trained.vocabulary, *trained.tokenizer, cpu, Precision::kFp32);
      translator.translate(sources, arguments->options);
      plan = make_quantization_plan(config, calibration);
    }
    if (!arguments->search_src.empty()) plan = search(*arguments, trained, plan, search_sources, search_references);
    std::set<std::string> quantized;
    for (const auto& layer : plan.layers) {
      log_info("quantize: ", describe(layer));
      quantized.insert(layer.name);
    }
    // Counted per kind: "linear layers" (int8 or simulated), embeddings and points (simulated only).
    const auto modules = trained.model->named_modules();
    const auto kind_of = [&](const std::string& name) -> std::string {
      if (dynamic_cast<QuantizableLinearImpl*>(modules[name].get())) return "linear layers";
      if (dynamic_cast<QuantizableEmbeddingImpl*>(modules[name].get())) return "embeddings";
      return "points";
    };
    std::map<std::string, std::pair<int64_t, int64_t>> counts;  // kind -> (quantized, all)
    for (const auto& name : quantizable_layer_names(*trained.model)) {
      const auto kind = kind_of(name);
      ++counts[kind].second;
      if (quantized.count(name)) {
        ++counts[kind].first;
      } else if (plan.mode == "simulated" || kind == "linear layers") {
        log_info("quantize: ", name, ": kept in float");
      }
    }
    std::string summary;
    for (const auto* kind : {"linear layers", "embeddings", "points"})
      summary += str_cat(summary.empty() ? "" : ", ", counts[kind].first, " of ", counts[kind].second, " ", kind);
    const double float_mb = weight_megabytes(*trained.model, nullptr);
    apply_quantization_plan(*trained.model, plan);  // fails here, not at translate time, where int8 cannot run
    save_quantized_checkpoint(arguments->output, arguments->checkpoint, *trained.model, plan);
    log_info("quantize: ", summary, " quantized (", plan.mode, "; int8 runs embeddings and points in fp32) from ",
             sources.size(), " calibration sentences; weights ", float_mb, " MB in fp32, ",
             weight_megabytes(*trained.model, &plan), " MB with the quantized layers; wrote ", arguments->output);
    return 0;
  });
}

}  // namespace mixseq::cli
