// mixseq plot RUN_DIR... -o curves.svg: the learning curves of one or more runs, overlaid, from
// their metrics.jsonl: training and validation loss, validation BLEU, learning rate, gradient
// norm, loss scale and speed, against updates or wall time.
// mixseq plot -c TTS_CHECKPOINT --text "..." -o alignment.svg: a speech synthesizer's attention
// alignment as it speaks the text (free running, as `mixseq synthesize`), decoder steps against
// text symbols, with the alignment figures the training validation reports.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mixseq/criteria/synthesis_loss.h"
#include "mixseq/decode/text_to_speech.h"
#include "mixseq/text/score_report.h"
#include "mixseq/text/synthesis_symbols.h"
#include "mixseq/util/mixed_precision.h"
#include "mixseq/util/error.h"
#include "mixseq/util/log.h"
#include "mixseq/util/metrics_log.h"
#include "mixseq/util/output_file.h"
#include "mixseq/util/svg_chart.h"

namespace mixseq::cli {
namespace {

struct PlotArguments {
  std::vector<std::string> runs;
  std::string output;
  std::string x = "updates";  // updates | time
  std::string title = "mixseq training runs";
  std::string checkpoint;  // a speech synthesizer: draw its alignment of `text` instead
  std::string text;
  uint64_t seed = 1;
};

// One panel: the field `key` of the records of `kind` ("train" or "valid").
struct PlottedMetric {
  const char* id;
  const char* title;
  const char* kind;
  const char* key;
  bool log2 = false;  // the loss scale moves by factors of two
};

const std::vector<PlottedMetric> kPlottedMetrics = {
    {"train_loss", "training loss (per target token)", "train", "loss"},
    {"valid_loss", "validation loss", "valid", "loss"},
    {"valid_bleu", "validation BLEU", "valid", "bleu"},
    {"lr", "learning rate", "train", "lr"},
    {"gnorm", "gradient norm before clipping", "train", "gnorm"},
    {"loss_scale", "log2 of the fp16 loss scale", "train", "loss_scale", /*log2=*/true},
    {"tgt_tok_per_s", "target tokens per second", "train", "tgt_tok_per_s"},
    {"valid_wer", "validation WER (%)", "valid", "wer"},
    {"valid_cer", "validation CER (%)", "valid", "cer"},
    {"frames_per_s", "feature frames per second (speech)", "train", "frames_per_s"},
    {"valid_mel_loss", "validation frame loss (synthesis)", "valid", "mel_loss"},
    {"valid_gate_loss", "validation stop-token loss (synthesis)", "valid", "gate_loss"},
    {"valid_attention_diagonal", "validation attention on the diagonal (synthesis)", "valid", "attention_diagonal"},
    {"valid_attention_focus", "validation attention focus (synthesis)", "valid", "attention_focus"},
};

std::string metrics_path_of(const std::string& run) {
  return std::filesystem::is_directory(run) ? (std::filesystem::path(run) / "metrics.jsonl").string() : run;
}

// The curve of `metric` in one run's records. A resumed run logs again the updates after its last
// checkpoint: the later record of an update replaces the earlier one.
ChartCurve curve_of(const std::vector<nlohmann::json>& records, const PlottedMetric& metric, bool by_time,
                    const std::string& path, size_t run) {
  std::map<int64_t, std::pair<double, double>> by_step;
  int64_t gaps = 0;  // values logged as null
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& record = records[i];
    // read_metrics_log() keeps every line but an unfinished last one: record i is line i + 1.
    const auto where = str_cat(path, ":", i + 1, ": ");
    const auto kind = record.find("kind");
    MIXSEQ_CHECK(kind == record.end() || kind->is_string(), where, "\"kind\" is ", kind->dump(),
                 ", not a string");
    if (kind == record.end() || *kind != metric.kind || !record.contains(metric.key) || !record.contains("step"))
      continue;
    const auto& value = record[metric.key];
    // MetricsLog writes a NaN or infinite value (a diverged loss) as null: a gap in the curve. Any
    // other value that is not a number is damage, not a panel to drop without a word.
    MIXSEQ_CHECK(value.is_number() || value.is_null(), where, "\"", metric.key, "\" is ", value.dump(), ", not a number");
    MIXSEQ_CHECK(record["step"].is_number_integer(), where, "\"step\" is ", record["step"].dump(), ", not an integer");
    double y = NAN;
    if (value.is_number()) y = value.get<double>();
    else ++gaps;
    if (metric.log2) y = y > 0 ? std::log2(y) : NAN;
    const int64_t step = record["step"].get<int64_t>();
    MIXSEQ_CHECK(!by_time || record.contains("train_s"), "'", path, "' has records without train_s (written by a ",
                 "mixseq before it logged wall time): plot it with --x updates");
    MIXSEQ_CHECK(!by_time || record["train_s"].is_number(), where, "\"train_s\" is ", record["train_s"].dump(),
                 ", not a number");
    by_step[step] = {by_time ? record["train_s"].get<double>() : static_cast<double>(step), y};
  }
  if (gaps > 0)
    log_info("plot: ", path, ": ", gaps, " \"", metric.key, "\" value", gaps > 1 ? "s are" : " is",
             " null (NaN or infinite when logged), drawn as gaps in ", metric.title);
  ChartCurve curve;
  curve.run = run;
  for (const auto& [step, point] : by_step) curve.points.push_back(point);
  return curve;
}

// The attention of a synthesizer speaking arguments.text, as a heatmap.
int plot_alignment(const PlotArguments& arguments) {
  MIXSEQ_CHECK(!arguments.text.empty(), "plot: --checkpoint draws a synthesizer's alignment of --text: give the text");
  refuse_output_over_inputs({"--output", arguments.output}, {{"--checkpoint", arguments.checkpoint}});
  const torch::Device cpu(torch::kCPU);
  auto synthesizer = load_trained_speech_synthesizer(arguments.checkpoint, cpu);
  const TextToSpeech speaker(synthesizer, cpu, Precision::kFp32);
  SynthesizeOptions options;
  options.seed = arguments.seed;
  options.griffin_lim.iterations = 0;  // the audio is not kept
  const SynthesizedSpeech speech = speaker.synthesize({arguments.text}, options, {"--text"}).at(0);
  const auto ids = synthesis_symbol_ids(arguments.text, "--text");
  const auto& symbols = synthesis_symbols();
  SvgHeatmap heatmap;
  const auto frames = speech.alignment.size(0);
  const AlignmentFigures figures =
      alignment_figures(speech.alignment.unsqueeze(0), torch::tensor({static_cast<int64_t>(ids.size())}),
                        torch::tensor({frames}));
  heatmap.title = str_cat(arguments.title == "mixseq training runs" ? arguments.checkpoint : arguments.title, ": \"",
                          arguments.text, "\", ", frames, " frames", speech.stopped ? "" : " (no stop token)",
                          ", diagonal ", format_decimal(figures.diagonal / static_cast<double>(figures.steps), 3),
                          ", focus ", format_decimal(figures.focus / static_cast<double>(figures.steps), 3));
  heatmap.x_label = "decoder step (frame)";
  heatmap.y_label = "text symbol";
  for (const int64_t id : ids) {
    const std::string& symbol = symbols[static_cast<size_t>(id)];
    heatmap.row_labels.push_back(symbol == " " ? "\u2423" : symbol);  // an open box for the space
  }
  heatmap.columns = frames;
  const auto by_symbol = speech.alignment.t().contiguous();  // [S, T]
  heatmap.values.assign(by_symbol.data_ptr<float>(), by_symbol.data_ptr<float>() + by_symbol.numel());
  OutputFile out(arguments.output);
  out.stream() << render_heatmap_svg(heatmap);
  out.commit();
  log_info("plot: the alignment of ", frames, " frames over ", ids.size(), " symbols in ", arguments.output);
  return 0;
}

int run_plot(const PlotArguments& arguments) {
  if (!arguments.checkpoint.empty()) {
    MIXSEQ_CHECK(arguments.runs.empty(), "plot: give run folders or --checkpoint, not both");
    return plot_alignment(arguments);
  }
  MIXSEQ_CHECK(!arguments.runs.empty(), "plot: give run folders (learning curves) or --checkpoint with --text (an alignment)");
  SvgChart chart;
  chart.title = arguments.title;
  const bool by_time = arguments.x == "time";
  std::vector<std::vector<nlohmann::json>> records;
  for (const auto& run : arguments.runs) {
    const std::string path = metrics_path_of(run);
    MIXSEQ_CHECK(std::filesystem::exists(path), "'", path, "' does not exist: give run folders (with a ",
                 "metrics.jsonl) or metrics.jsonl files");
    refuse_output_over_inputs({"--output", arguments.output}, {{"the metrics of " + run, path}});
    records.push_back(read_metrics_log(path));
    chart.runs.push_back(run);
  }
  for (const auto& metric : kPlottedMetrics) {
    ChartPanel panel{metric.id, metric.title, by_time ? "wall time (s)" : "updates", {}};
    for (size_t run = 0; run < records.size(); ++run) {
      auto curve = curve_of(records[run], metric, by_time, metrics_path_of(arguments.runs[run]), run);
      if (!curve.points.empty()) panel.curves.push_back(std::move(curve));
    }
    if (!panel.curves.empty()) chart.panels.push_back(std::move(panel));  // e.g. no loss scale without fp16
  }
  OutputFile out(arguments.output);
  out.stream() << render_svg(chart);
  out.commit();
  log_info("plot: ", chart.panels.size(), " panels of ", chart.runs.size(), " runs in ", arguments.output);
  return 0;
}

}  // namespace

void add_plot_command(CLI::App& app, CommandTable& table) {
  auto* command = app.add_subcommand("plot", "Draw the learning curves of training runs, or a synthesizer's alignment, as one SVG");
  auto arguments = std::make_shared<PlotArguments>();
  command->add_option("runs", arguments->runs, "Run folders (their metrics.jsonl) or metrics.jsonl files");
  command->add_option("-o,--output", arguments->output, "The SVG file to write")->required();
  command->add_option("--x", arguments->x, "What the horizontal axes count: updates or (wall) time")
      ->check(CLI::IsMember({"updates", "time"}))
      ->capture_default_str();
  command->add_option("--title", arguments->title, "The chart's title")->capture_default_str();
  command->add_option("-c,--checkpoint", arguments->checkpoint,
                      "A speech synthesizer's checkpoint: draw its attention alignment of --text instead of curves");
  command->add_option("--text", arguments->text, "The text whose alignment --checkpoint draws");
  command->add_option("--seed", arguments->seed, "With --checkpoint: seeds the prenet's dropout")->capture_default_str();
  table.add(command, [arguments] { return run_plot(*arguments); });
}

}  // namespace mixseq::cli
