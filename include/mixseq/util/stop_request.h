// Graceful stops: after watch_stop_signals(), SIGINT and SIGTERM only set a flag, so a long job
// can finish its current step, save its state and exit cleanly. A second signal of either kind
// ends the process at once, as usual.
//
// A job that stopped early must not look finished: it should exit with 128 + stop_signal()
// (130 for SIGINT, 143 for SIGTERM), the code a shell reports for a process the signal killed,
// so that scripts and schedulers see the interruption.
#pragma once

#include <signal.h>

namespace mixseq {

void watch_stop_signals();
bool stop_requested();
// The first signal that asked to stop (SIGINT or SIGTERM); 0 when none did.
int stop_signal();

// For a library call that watches the signals (mixseq::train, api/training.h) inside a process
// that has its own handlers (Python's KeyboardInterrupt): the call starts with no stop requested,
// and at its end the handlers in place before it are back and the request is forgotten, so that
// the next call can run.
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

 private:
  void (*previous_interrupt_)(int);
  void (*previous_terminate_)(int);
};

// SIGINT and SIGTERM held back from the calling thread while one lives: they stay pending (or go
// to another thread) and their handler runs once it ends. For calls a handler must not interrupt:
// Debian's oneDNN 2.x sgemm corrupts the heap when a signal handler runs on a thread inside it
// (nn/bf16_matmul.cpp). Two pthread_sigmask calls, under a microsecond.
class StopSignalsHeld {
 public:
  StopSignalsHeld();
  ~StopSignalsHeld();
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

// The calling thread never takes SIGINT or SIGTERM from now on (the OpenMP pool's workers,
// util/threads.cpp).
void hold_stop_signals_for_good();

}  // namespace mixseq
