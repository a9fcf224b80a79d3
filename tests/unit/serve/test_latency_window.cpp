#include "mixseq/serve/latency_window.h"

#include <gtest/gtest.h>

namespace mixseq {
namespace {

TEST(LatencyWindow, NearestRankPercentiles) {
  LatencyWindow window;
  EXPECT_EQ(window.percentile(50), 0.0);  // empty
  for (int i = 100; i >= 1; --i) window.add(i);  // 1..100 ms, in any order
  EXPECT_EQ(window.percentile(50), 50.0);
  EXPECT_EQ(window.percentile(90), 90.0);
  EXPECT_EQ(window.percentile(99), 99.0);
  EXPECT_EQ(window.percentile(100), 100.0);
  EXPECT_EQ(window.percentile(0), 1.0);
}

TEST(LatencyWindow, KeepsOnlyTheLastCapacitySamples) {
  LatencyWindow window(3);
  for (const double ms : {1000.0, 1000.0, 1000.0, 1.0, 2.0, 3.0}) window.add(ms);
  EXPECT_EQ(window.percentile(100), 3.0);
  EXPECT_EQ(window.percentile(0), 1.0);
}

}  // namespace
}  // namespace mixseq
