// SvgChart: line charts as one self-contained SVG file, for `mixseq plot`. Panels are laid out in
// a grid, each with its own axes, ticks at round numbers and grid lines; every curve belongs to
// a run, drawn in that run's colour in every panel, named once in the legend. Curves are
// <polyline> elements with data-panel and data-run attributes, so tests and scripts can find them.
#pragma once

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

// Ticks at round numbers (1, 2 or 5 times a power of ten) covering [low, high], about `count` of them.
std::vector<double> round_ticks(double low, double high, int count);

}  // namespace mixseq
