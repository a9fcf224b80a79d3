#include "mixseq/util/stop_request.h"

#include <gtest/gtest.h>

#include <atomic>
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

std::atomic<int> caller_saw{0};
extern "C" void callers_handler(int signal_number) { caller_saw = signal_number; }

// A library call that trains (mixseq::train) inside a program with handlers of its own (Python's
// KeyboardInterrupt): the call sees the stop; afterwards the program's handler is back and the
// request is forgotten, so that the next call runs.
TEST(StopRequest, ScopeGivesTheCallersHandlersBackAndForgetsTheRequest) {
  std::signal(SIGINT, callers_handler);
  {
    const StopSignalScope scope;
    watch_stop_signals();
    std::raise(SIGINT);
    EXPECT_EQ(stop_signal(), SIGINT);
    EXPECT_EQ(caller_saw, 0);
  }
  EXPECT_FALSE(stop_requested());
  std::raise(SIGINT);  // the default action would end this test
  EXPECT_EQ(caller_saw, SIGINT);
  {
    const StopSignalScope scope;
    watch_stop_signals();
    EXPECT_FALSE(stop_requested());
  }
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace
}  // namespace mixseq
