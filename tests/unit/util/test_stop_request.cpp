#include "mixseq/util/stop_request.h"

#include <gtest/gtest.h>

#include <csignal>

namespace mixseq {
namespace {

// Only one signal: after it, SIGINT and SIGTERM are back to their default (ending the process).
TEST(StopRequest, RemembersWhichSignalAskedToStop) {
  EXPECT_EQ(stop_signal(), 0);
  watch_stop_signals();
  std::raise(SIGTERM);
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(stop_signal(), SIGTERM);
}

}  // namespace
}  // namespace mixseq
