#include "mixseq/util/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "mixseq/util/error.h"

namespace mixseq {
namespace {

TEST(RoundTicks, AreOneTwoOrFiveTimesAPowerOfTenAndCoverTheRange) {
  EXPECT_EQ(round_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
  EXPECT_EQ(round_ticks(3.1, 7.9, 5), (std::vector<double>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(round_ticks(0, 1900, 5), (std::vector<double>{0, 500, 1000, 1500, 2000}));
  EXPECT_EQ(round_ticks(-0.3, 0.25, 5), (std::vector<double>{-0.4, -0.2, 0, 0.2, 0.4}));  // steps of 0.2 > 0.11
  const auto tiny = round_ticks(1e-4, 2e-3, 4);  // learning rates
  EXPECT_DOUBLE_EQ(tiny.front(), 0);
  EXPECT_DOUBLE_EQ(tiny[1], 5e-4);
  EXPECT_GE(tiny.back(), 2e-3);
  EXPECT_THROW(round_ticks(1, 1, 5), Error);
  EXPECT_THROW(round_ticks(0, NAN, 5), Error);
}

size_t count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(RenderSvg, OneCurvePerRunAndPanelInTheRunsColour) {
  SvgChart chart{"runs <a & b>", {"runs/a", "runs/\"b\""}, {}};
  chart.panels.push_back({"train_loss", "training loss", "updates",
                          {{0, {{1, 9}, {2, 7}, {3, 6}}}, {1, {{1, 8}, {2, NAN}, {3, 5}}}}});
  chart.panels.push_back({"valid_bleu", "validation BLEU", "updates", {{1, {{3, 12.5}}}}});
  const std::string svg = render_svg(chart);
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline class=\"curve\" data-panel=\"train_loss\" data-run=\"0\" [^>]*stroke=\"#4e79a7\""), 1u);
  EXPECT_EQ(count(svg, "<polyline class=\"curve\" data-panel=\"train_loss\" data-run=\"1\" [^>]*stroke=\"#f28e2b\""), 1u);
  EXPECT_EQ(count(svg, "<polyline class=\"curve\" data-panel=\"valid_bleu\" data-run=\"1\""), 1u);
  EXPECT_EQ(count(svg, "<polyline "), 3u);
  EXPECT_EQ(count(svg, "<circle "), 1u);  // the one-point curve gets a dot
  // The NaN point is left out: run 1's line has two points.
  std::smatch points;
  const std::string run1 = "data-panel=\"train_loss\" data-run=\"1\"[^>]*points=\"([^\"]*)\"";
  ASSERT_TRUE(std::regex_search(svg, points, std::regex(run1)));
  EXPECT_EQ(count(points[1].str(), "[0-9.]+,[0-9.]+ "), 2u) << points[1];
  // Names are escaped.
  EXPECT_NE(svg.find("runs &lt;a &amp; b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("runs/&quot;b&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<a & b>"), std::string::npos);

  EXPECT_THROW(render_svg(SvgChart{"empty", {"a"}, {}}), Error);
}

// Points land where the axes say: the lowest and highest x of a panel sit on its outer ticks here.
TEST(RenderSvg, PointsAreScaledOntoThePlotArea) {
  SvgChart chart{"t", {"a"}, {{"p", "p", "x", {{0, {{0, 0}, {10, 1}}}}}}};
  const std::string svg = render_svg(chart);
  std::smatch points;
  ASSERT_TRUE(std::regex_search(svg, points, std::regex("points=\"([0-9.]+),([0-9.]+) ([0-9.]+),([0-9.]+) \"")));
  // Panel 0: plot area x from 64 to 444, y from 30 + 40 (header) = 70 down to 280 - 42 + 40 = 278.
  EXPECT_DOUBLE_EQ(std::stod(points[1]), 64);
  EXPECT_DOUBLE_EQ(std::stod(points[2]), 278);
  EXPECT_DOUBLE_EQ(std::stod(points[3]), 444);
  EXPECT_DOUBLE_EQ(std::stod(points[4]), 70);
}

TEST(RenderHeatmapSvg, DrawsOneCellPerVisibleValueWithItsRowAndColumn) {
  SvgHeatmap heatmap;
  heatmap.title = "a <b>";
  heatmap.x_label = "decoder step";
  heatmap.y_label = "text symbol";
  heatmap.row_labels = {"a", "b", "&"};
  heatmap.columns = 4;
  heatmap.values = {1.0f, 0.5f, 0.0f, 0.0f,     // row 0
                    0.0f, 0.25f, 0.004f, 0.0f,  // row 1: 0.004 is below what is drawn
                    0.0f, 0.0f, 2.0f, 1.0f};    // row 2: 2 is clamped to 1
  const std::string svg = render_heatmap_svg(heatmap);
  EXPECT_EQ(count(svg, "class=\"cell\""), 5u);
  EXPECT_EQ(count(svg, "data-row=\"1\" data-column=\"1\"[^>]*fill-opacity=\"0.5\""), 1u);  // sqrt(0.25)
  EXPECT_EQ(count(svg, "data-row=\"2\" data-column=\"2\"[^>]*fill-opacity=\"1\""), 1u);
  EXPECT_EQ(count(svg, "data-row=\"0\" data-column=\"1\"[^>]*fill-opacity=\"0.707\""), 1u);
  EXPECT_NE(svg.find("a &lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">&amp;</text>"), std::string::npos);
  // Row 0 is drawn at the bottom: its cells lie below row 2's.
  const std::regex y0("data-row=\"0\" data-column=\"0\" x=\"[0-9.]+\" y=\"([0-9.]+)\"");
  const std::regex y2("data-row=\"2\" data-column=\"2\" x=\"[0-9.]+\" y=\"([0-9.]+)\"");
  std::smatch m0, m2;
  ASSERT_TRUE(std::regex_search(svg, m0, y0) && std::regex_search(svg, m2, y2));
  EXPECT_GT(std::stod(m0[1]), std::stod(m2[1]));
  heatmap.columns = 1;  // one frame still draws (no tick range to round)
  heatmap.values = {0.2f, 0.3f, 0.5f};
  EXPECT_EQ(count(render_heatmap_svg(heatmap), "class=\"cell\""), 3u);
  heatmap.values.pop_back();
  EXPECT_THROW(render_heatmap_svg(heatmap), Error);
}

}  // namespace
}  // namespace mixseq
