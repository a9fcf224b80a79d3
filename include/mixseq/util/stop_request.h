// Graceful stops: after watch_stop_signals(), SIGINT and SIGTERM only set a flag, so a long job
// can finish its current step, save its state and exit cleanly. A second signal of either kind
// ends the process at once, as usual.
#pragma once

namespace mixseq {

void watch_stop_signals();
bool stop_requested();

}  // namespace mixseq
