#include "mixseq/util/stop_request.h"

#include <atomic>
#include <csignal>

namespace mixseq {
namespace {

std::atomic<bool> requested{false};

extern "C" void on_stop_signal(int signal_number) {
  requested = true;
  std::signal(signal_number, SIG_DFL);  // the next one stops the process
}

}  // namespace

void watch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

bool stop_requested() { return requested; }

}  // namespace mixseq
