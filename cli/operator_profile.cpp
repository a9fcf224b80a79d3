#include "operator_profile.h"

#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <iostream>
#include <map>

namespace mixseq::cli {

OperatorProfile::OperatorProfile() : recording_(std::make_unique<torch::autograd::profiler::RecordProfile>(trace_)) {}

OperatorProfile::~OperatorProfile() = default;

std::vector<OperatorTime> OperatorProfile::top(size_t count) {
  recording_.reset();  // writes the trace
  struct Event {
    std::string name;
    double start, end;
    int64_t thread;
  };
  std::vector<Event> events;
  for (const auto& e : nlohmann::json::parse(trace_.str())) {
    if (e.value("ph", "") != "X") continue;
    const double start = e.at("ts").get<double>();
    events.push_back({e.at("name").get<std::string>(), start, start + e.at("dur").get<double>(),
                      e.at("tid").get<int64_t>()});
  }
  // Per thread, by start time (the outer call first when two start together): each event's
  // self time is its duration less that of its direct children.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::map<std::string, OperatorTime> by_name;
  std::vector<size_t> open;  // indices of the enclosing events
  std::vector<double> child_time(events.size(), 0.0);
  const auto close = [&](size_t i) {
    auto& entry = by_name[events[i].name];
    entry.name = events[i].name;
    entry.self_ms += (events[i].end - events[i].start - child_time[i]) / 1e3;
    ++entry.calls;
  };
  for (size_t i = 0; i < events.size(); ++i) {
    while (!open.empty() && (events[open.back()].thread != events[i].thread || events[open.back()].end <= events[i].start)) {
      close(open.back());
      open.pop_back();
    }
    if (!open.empty()) child_time[open.back()] += events[i].end - events[i].start;
    open.push_back(i);
  }
  for (; !open.empty(); open.pop_back()) close(open.back());

  std::vector<OperatorTime> ranked;
  for (auto& [name, time] : by_name) ranked.push_back(time);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.self_ms > b.self_ms; });
  if (ranked.size() > count) ranked.resize(count);
  return ranked;
}

void print_operator_profile(OperatorProfile& profile, int64_t count, double seconds, int64_t repetitions) {
  for (const auto& op : profile.top(static_cast<size_t>(count)))
    std::cout << nlohmann::json{{"bench", "profile"},
                                {"op", op.name},
                                {"self_ms_per_repetition", op.self_ms / static_cast<double>(repetitions)},
                                {"calls_per_repetition", static_cast<double>(op.calls) / static_cast<double>(repetitions)},
                                {"share_of_wall_time", op.self_ms / (seconds * 1e3)}}
                     .dump()
              << '\n';
}

}  // namespace mixseq::cli
