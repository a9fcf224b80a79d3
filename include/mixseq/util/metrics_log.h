// MetricsLog: what a long job reports, as a console line for people and as a JSON line in
// <run_dir>/metrics.jsonl for plots, e.g.
//   {"kind":"train","epoch":1,"step":50,"lr":0.002,"loss":4.31,"tok_per_s":5120.4,...}
// On a terminal a progress line (step, tok/s, loss, ETA) is redrawn in place between the
// logged lines; in a log file only the logged lines appear.
#pragma once

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace mixseq {

class MetricsLog {
 public:
  // `jsonl_path` empty: no JSON lines (e.g. non-zero ranks of a distributed run).
  explicit MetricsLog(const std::string& jsonl_path);

  // Writes `record` as one JSON line and logs `console` (a human-readable line) to stderr.
  void write(const nlohmann::json& record, const std::string& console);

  // Redraws the progress line on a terminal: "<what> step 120/3000 (4%) | 5120 tok/s | loss 4.31 | ETA 12m05s".
  void progress(const std::string& line);

 private:
  std::ofstream jsonl_;
  bool terminal_;
  bool progress_shown_ = false;
};

// The records of a metrics.jsonl, in order (`mixseq plot`). A line that is not a JSON object is an
// error naming the file and line, except a last line without its newline: what a run killed
// mid-write leaves, skipped with a warning.
std::vector<nlohmann::json> read_metrics_log(const std::string& path);

// "1h02m03s", "12m05s", "7s": for ETAs and durations.
std::string format_duration(double seconds);

}  // namespace mixseq
