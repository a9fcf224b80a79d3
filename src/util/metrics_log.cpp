#include "mixseq/util/metrics_log.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>

#include "mixseq/util/error.h"
#include "mixseq/util/line_reader.h"
#include "mixseq/util/log.h"

namespace mixseq {

namespace {

// A run that stopped in the middle of writing a record (a crash, a full disk) left a last line
// without its "\n"; a resumed run appending to it would glue its first record onto it, and the
// file would hold a broken line in its middle (`plot` refuses it). That unfinished record is cut.
void drop_unfinished_last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return;
  const std::streamoff size = in.tellg();
  std::streamoff end = size;  // one past the last "\n", once found
  char block[4096];
  while (end > 0) {
    const std::streamoff begin = std::max<std::streamoff>(0, end - static_cast<std::streamoff>(sizeof block));
    in.seekg(begin);
    in.read(block, end - begin);
    if (!in) return;
    const auto newline = std::string_view(block, static_cast<size_t>(end - begin)).rfind('\n');
    if (newline != std::string_view::npos) {
      end = begin + static_cast<std::streamoff>(newline) + 1;
      break;
    }
    end = begin;  // none in this block: look further back (none at all: the file is one unfinished line)
  }
  if (end == size) return;
  in.close();
  std::filesystem::resize_file(path, static_cast<std::uintmax_t>(end));
  log_info("warning: ", path, " ended in an unfinished record (", size - end,
           " bytes, from a run that stopped while writing it); it is dropped before this run appends");
}

}  // namespace

MetricsLog::MetricsLog(const std::string& jsonl_path) : terminal_(::isatty(STDERR_FILENO) != 0) {
  if (jsonl_path.empty()) return;
  drop_unfinished_last_line(jsonl_path);
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
