#include "mixseq/util/log.h"

#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>

namespace mixseq {

namespace {

std::mutex mutex;
std::string line_prefix;
bool lines_enabled = true;

}  // namespace

void configure_log_lines(const std::string& prefix, bool enabled) {
  std::lock_guard<std::mutex> lock(mutex);
  line_prefix = prefix;
  lines_enabled = enabled;
}

void log_line(const std::string& message) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  std::lock_guard<std::mutex> lock(mutex);
  if (lines_enabled) std::cerr << stamp << ' ' << line_prefix << message << '\n';
}

}  // namespace mixseq
