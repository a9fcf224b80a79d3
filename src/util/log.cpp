#include "mixseq/util/log.h"

#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>

namespace mixseq {

void log_line(const std::string& message) {
  static std::mutex mutex;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  std::lock_guard<std::mutex> lock(mutex);
  std::cerr << stamp << ' ' << message << '\n';
}

}  // namespace mixseq
