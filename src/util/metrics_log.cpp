#include "mixseq/util/metrics_log.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"

namespace mixseq {

MetricsLog::MetricsLog(const std::string& jsonl_path) : terminal_(::isatty(STDERR_FILENO) != 0) {
  if (jsonl_path.empty()) return;
  jsonl_.open(jsonl_path, std::ios::app);  // a resumed run continues the same file
  MIXSEQ_CHECK(jsonl_.is_open(), "cannot open '", jsonl_path, "' for writing");
}

void MetricsLog::write(const nlohmann::json& record, const std::string& console) {
  if (jsonl_.is_open()) {
    jsonl_ << record.dump() << '\n';
    jsonl_.flush();
  }
  if (progress_shown_) std::cerr << "\r\033[K";  // erase the progress line before logging
  progress_shown_ = false;
  log_line(console);
}

void MetricsLog::progress(const std::string& line) {
  if (!terminal_) return;
  std::cerr << "\r\033[K" << line << std::flush;
  progress_shown_ = true;
}

std::vector<nlohmann::json> read_metrics_log(const std::string& path) {
  LineReader reader(path);
  std::vector<nlohmann::json> records;
  for (std::string line; reader.next(line);) {
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object()) {
      records.push_back(std::move(record));
    } else if (!reader.ended_with_newline()) {
      log_info("warning: ", path, ":", reader.line_number(), ": skipping an unfinished last line");
    } else {
      reader.fail("not a JSON object (a line of metrics.jsonl as mixseq writes it)");
    }
  }
  return records;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm%02llds", total / 3600, total / 60 % 60, total % 60);
  else if (total >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%llds", total);
  return text;
}

}  // namespace mixseq
