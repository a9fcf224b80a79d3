// SvgChart: line charts as one self-contained SVG file, for `mixseq plot`. Panels are laid out in
// a grid, each with its own axes, ticks at round numbers and grid lines; every curve belongs to
// a run, drawn in that run's colour in every panel, named once in the legend. Curves are
// <polyline> elements with data-panel and data-run attributes, so tests and scripts can find them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mixseq {

struct ChartCurve {
  size_t run = 0;                                 // index into SvgChart::runs: the colour
  std::vector<std::pair<double, double>> points;  // (x, y), in x order; non-finite points are left out
};

struct ChartPanel {
  std::string id;       // data-panel attribute, e.g. "train_loss"
  std::string title;    // "training loss"
  std::string x_label;  // "updates"
  std::vector<ChartCurve> curves;
};

struct SvgChart {
  std::string title;
  std::vector<std::string> runs;  // legend entries, one colour each
  std::vector<ChartPanel> panels;
};

// The SVG document. Throws mixseq::Error when there is no panel to draw.
std::string render_svg(const SvgChart& chart);

// A matrix of values in [0, 1] drawn as a heatmap (`mixseq plot --checkpoint`: a synthesizer's
// attention alignment): one <rect class="cell" data-row data-column> per value above 0.005, darker
// for larger values; columns run left to right (decoder steps), rows bottom to top with their labels
// (text symbols) beside them.
struct SvgHeatmap {
  std::string title;
  std::string x_label;                 // "decoder step (frame)"
  std::string y_label;                 // "text symbol"
  std::vector<std::string> row_labels;  // one per row
  int64_t columns = 0;
  std::vector<float> values;           // rows x columns, row-major; values outside [0, 1] are clamped
};
// The SVG document. Throws mixseq::Error when the values are not rows x columns or there are none.
std::string render_heatmap_svg(const SvgHeatmap& heatmap);

// Ticks at round numbers (1, 2 or 5 times a power of ten) covering [low, high], about `count` of them.
std::vector<double> round_ticks(double low, double high, int count);

}  // namespace mixseq
