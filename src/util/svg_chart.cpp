#include "mixseq/util/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

// Tableau 10: colours that stay apart for up to ten runs (then they repeat).
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPanelWidth = 460, kPanelHeight = 280, kColumns = 2;
constexpr int kLeft = 64, kRight = 16, kTop = 30, kBottom = 42;  // plot area margins inside a panel
constexpr int kHeader = 40, kLegendRow = 20;

std::string escape_xml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double value) {  // tick labels: short, no "-0"
  if (std::abs(value) < 1e-12) value = 0;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string coordinate(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double v) { low = std::min(low, v), high = std::max(high, v); }
  bool empty() const { return low > high; }
  // A flat curve still gets an axis: widen a zero range around its value.
  void widen() {
    if (empty()) low = 0, high = 1;
    if (high - low < 1e-12 * std::max(1.0, std::abs(high))) {
      const double pad = std::abs(high) > 0 ? std::abs(high) * 0.05 : 1;
      low -= pad, high += pad;
    }
  }
};

void draw_panel(std::ostringstream& svg, const ChartPanel& panel, double origin_x, double origin_y) {
  Range xs, ys;
  for (const auto& curve : panel.curves)
    for (const auto& [x, y] : curve.points)
      if (std::isfinite(x) && std::isfinite(y)) xs.add(x), ys.add(y);
  xs.widen(), ys.widen();
  const auto x_ticks = round_ticks(xs.low, xs.high, 5), y_ticks = round_ticks(ys.low, ys.high, 5);
  // The axes span the outer ticks, so that every curve lies inside them.
  const double x0 = std::min(xs.low, x_ticks.front()), x1 = std::max(xs.high, x_ticks.back());
  const double y0 = std::min(ys.low, y_ticks.front()), y1 = std::max(ys.high, y_ticks.back());
  const double left = origin_x + kLeft, right = origin_x + kPanelWidth - kRight;
  const double top = origin_y + kTop, bottom = origin_y + kPanelHeight - kBottom;
  const auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (right - left); };
  const auto py = [&](double y) { return bottom - (y - y0) / (y1 - y0) * (bottom - top); };

  svg << "<g class=\"panel\" data-panel=\"" << escape_xml(panel.id) << "\">\n";
  svg << "<text x=\"" << coordinate((left + right) / 2) << "\" y=\"" << coordinate(origin_y + 18)
      << "\" text-anchor=\"middle\" font-weight=\"bold\">" << escape_xml(panel.title) << "</text>\n";
  for (const double tick : x_ticks) {
    svg << "<line x1=\"" << coordinate(px(tick)) << "\" y1=\"" << coordinate(top) << "\" x2=\"" << coordinate(px(tick))
        << "\" y2=\"" << coordinate(bottom) << "\" stroke=\"#e6e6e6\"/>\n";
    svg << "<text x=\"" << coordinate(px(tick)) << "\" y=\"" << coordinate(bottom + 16)
        << "\" text-anchor=\"middle\">" << number(tick) << "</text>\n";
  }
  for (const double tick : y_ticks) {
    svg << "<line x1=\"" << coordinate(left) << "\" y1=\"" << coordinate(py(tick)) << "\" x2=\"" << coordinate(right)
        << "\" y2=\"" << coordinate(py(tick)) << "\" stroke=\"#e6e6e6\"/>\n";
    svg << "<text x=\"" << coordinate(left - 6) << "\" y=\"" << coordinate(py(tick) + 4)
        << "\" text-anchor=\"end\">" << number(tick) << "</text>\n";
  }
  svg << "<rect x=\"" << coordinate(left) << "\" y=\"" << coordinate(top) << "\" width=\"" << coordinate(right - left)
      << "\" height=\"" << coordinate(bottom - top) << "\" fill=\"none\" stroke=\"#888\"/>\n";
  svg << "<text x=\"" << coordinate((left + right) / 2) << "\" y=\"" << coordinate(bottom + 34)
      << "\" text-anchor=\"middle\" fill=\"#555\">" << escape_xml(panel.x_label) << "</text>\n";
  for (const auto& curve : panel.curves) {
    const char* colour = kColours[curve.run % (sizeof kColours / sizeof *kColours)];
    svg << "<polyline class=\"curve\" data-panel=\"" << escape_xml(panel.id) << "\" data-run=\"" << curve.run
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"";
    for (const auto& [x, y] : curve.points)
      if (std::isfinite(x) && std::isfinite(y)) svg << coordinate(px(x)) << ',' << coordinate(py(y)) << ' ';
    svg << "\"/>\n";
    if (curve.points.size() == 1)  // one validation: a dot, since a one-point line is invisible
      svg << "<circle cx=\"" << coordinate(px(curve.points[0].first)) << "\" cy=\""
          << coordinate(py(curve.points[0].second)) << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
  }
  svg << "</g>\n";
}

}  // namespace

std::vector<double> round_ticks(double low, double high, int count) {
  MIXSEQ_CHECK(std::isfinite(low) && std::isfinite(high) && low < high && count >= 1, "round_ticks: bad range [",
               low, ", ", high, "]");
  const double rough = (high - low) / count;
  const int exponent = static_cast<int>(std::floor(std::log10(rough)));
  double factor = 10;
  for (const double candidate : {1.0, 2.0, 5.0})
    if (candidate * std::pow(10.0, exponent) >= rough) {
      factor = candidate;
      break;
    }
  // Tick k is k * factor * 10^exponent; dividing by 10^-exponent rounds once, so 3 x 0.2 is 0.6,
  // not 0.6000000000000001.
  const auto tick = [&](int64_t k) {
    const double units = static_cast<double>(k) * factor;
    return exponent < 0 ? units / std::pow(10.0, -exponent) : units * std::pow(10.0, exponent);
  };
  const double step = tick(1);
  std::vector<double> ticks;
  for (auto k = static_cast<int64_t>(std::floor(low / step)); ticks.empty() || ticks.back() < high; ++k)
    ticks.push_back(tick(k));
  return ticks;
}

std::string render_svg(const SvgChart& chart) {
  MIXSEQ_CHECK(!chart.panels.empty(), "nothing to plot: no run has any of the plotted metrics");
  const int rows = (static_cast<int>(chart.panels.size()) + kColumns - 1) / kColumns;
  const int columns = std::min<int>(kColumns, static_cast<int>(chart.panels.size()));
  const int legend_height = kLegendRow * static_cast<int>(chart.runs.size()) + 10;
  const int width = columns * kPanelWidth, height = kHeader + rows * kPanelHeight + legend_height;
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << width / 2 << "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">" << escape_xml(chart.title)
      << "</text>\n";
  for (size_t i = 0; i < chart.panels.size(); ++i)
    draw_panel(svg, chart.panels[i], static_cast<double>(i % kColumns) * kPanelWidth,
               kHeader + static_cast<double>(i / kColumns) * kPanelHeight);
  const int legend_top = kHeader + rows * kPanelHeight;
  for (size_t run = 0; run < chart.runs.size(); ++run) {
    const int y = legend_top + kLegendRow * static_cast<int>(run) + 14;
    svg << "<g class=\"legend\" data-run=\"" << run << "\"><line x1=\"" << kLeft << "\" y1=\"" << y - 4 << "\" x2=\""
        << kLeft + 24 << "\" y2=\"" << y - 4 << "\" stroke=\"" << kColours[run % (sizeof kColours / sizeof *kColours)]
        << "\" stroke-width=\"3\"/><text x=\"" << kLeft + 32 << "\" y=\"" << y << "\">" << escape_xml(chart.runs[run])
        << "</text></g>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string render_heatmap_svg(const SvgHeatmap& heatmap) {
  const auto rows = static_cast<int64_t>(heatmap.row_labels.size());
  MIXSEQ_CHECK(rows > 0 && heatmap.columns > 0 && static_cast<int64_t>(heatmap.values.size()) == rows * heatmap.columns,
               "heatmap: ", heatmap.values.size(), " values for ", rows, " rows x ", heatmap.columns, " columns");
  constexpr double kLabelWidth = 48, kMargin = 16, kAxis = 40, kWidth = 900;
  const double cell_width = std::max(1.0, (kWidth - kLabelWidth - 2 * kMargin) / static_cast<double>(heatmap.columns));
  const double cell_height = std::clamp(360.0 / static_cast<double>(rows), 4.0, 16.0);
  const double plot_width = cell_width * static_cast<double>(heatmap.columns);
  const double plot_height = cell_height * static_cast<double>(rows);
  const double left = kMargin + kLabelWidth, top = kHeader;
  const double width = left + plot_width + kMargin, height = top + plot_height + kAxis;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << coordinate(width) << "\" height=\""
      << coordinate(height) << "\" viewBox=\"0 0 " << coordinate(width) << ' ' << coordinate(height)
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << coordinate(kMargin) << "\" y=\"24\" font-size=\"15\">" << escape_xml(heatmap.title)
      << "</text>\n";
  svg << "<rect x=\"" << coordinate(left) << "\" y=\"" << coordinate(top) << "\" width=\"" << coordinate(plot_width)
      << "\" height=\"" << coordinate(plot_height) << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (int64_t r = 0; r < rows; ++r) {
    const double y = top + plot_height - cell_height * static_cast<double>(r + 1);  // row 0 at the bottom
    if (cell_height >= 8 || r % 5 == 0)
      svg << "<text x=\"" << coordinate(left - 4) << "\" y=\"" << coordinate(y + cell_height * 0.8)
          << "\" text-anchor=\"end\">" << escape_xml(heatmap.row_labels[static_cast<size_t>(r)]) << "</text>\n";
    for (int64_t c = 0; c < heatmap.columns; ++c) {
      const double v = std::clamp(static_cast<double>(heatmap.values[static_cast<size_t>(r * heatmap.columns + c)]), 0.0, 1.0);
      if (!(v > 0.005)) continue;
      svg << "<rect class=\"cell\" data-row=\"" << r << "\" data-column=\"" << c << "\" x=\""
          << coordinate(left + cell_width * static_cast<double>(c)) << "\" y=\"" << coordinate(y) << "\" width=\""
          << coordinate(cell_width) << "\" height=\"" << coordinate(cell_height) << "\" fill=\"#08306b\" fill-opacity=\""
          << number(std::round(std::sqrt(v) * 1000.0) / 1000.0) << "\"/>\n";
    }
  }
  const std::vector<double> ticks =
      heatmap.columns > 1 ? round_ticks(0, static_cast<double>(heatmap.columns - 1), 8) : std::vector<double>{0};
  for (const double tick : ticks) {
    if (tick > static_cast<double>(heatmap.columns - 1)) continue;
    const double x = left + cell_width * (tick + 0.5);
    svg << "<text x=\"" << coordinate(x) << "\" y=\"" << coordinate(top + plot_height + 14)
        << "\" text-anchor=\"middle\">" << number(tick) << "</text>\n";
  }
  svg << "<text x=\"" << coordinate(left + plot_width / 2) << "\" y=\"" << coordinate(top + plot_height + 32)
      << "\" text-anchor=\"middle\">" << escape_xml(heatmap.x_label) << "</text>\n";
  svg << "<text x=\"" << coordinate(kMargin) << "\" y=\"" << coordinate(top - 6) << "\">"
      << escape_xml(heatmap.y_label) << "</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace mixseq
