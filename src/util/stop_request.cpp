#include "mixseq/util/stop_request.h"

#include <pthread.h>

#include <atomic>
#include <csignal>

namespace mixseq {
namespace {

std::atomic<int> first_signal{0};

extern "C" void on_stop_signal(int signal_number) {
  int none = 0;
  first_signal.compare_exchange_strong(none, signal_number);
  std::signal(SIGINT, SIG_DFL);  // the next one, of either kind, stops the process
  std::signal(SIGTERM, SIG_DFL);
}

sigset_t stop_signal_set() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  return stop;
}

}  // namespace

StopSignalsHeld::StopSignalsHeld() {
  const sigset_t stop = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &stop, &previous_);
}

StopSignalsHeld::~StopSignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void hold_stop_signals_for_good() {
  const sigset_t stop = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
}

void watch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

bool stop_requested() { return first_signal != 0; }

int stop_signal() { return first_signal; }

StopSignalScope::StopSignalScope()
    : previous_interrupt_(std::signal(SIGINT, SIG_DFL)), previous_terminate_(std::signal(SIGTERM, SIG_DFL)) {
  std::signal(SIGINT, previous_interrupt_);
  std::signal(SIGTERM, previous_terminate_);
  first_signal = 0;
}

StopSignalScope::~StopSignalScope() {
  std::signal(SIGINT, previous_interrupt_);
  std::signal(SIGTERM, previous_terminate_);
  first_signal = 0;
}

}  // namespace mixseq
