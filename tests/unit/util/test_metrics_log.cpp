// MetricsLog (util/metrics_log.h): a resumed run appends to metrics.jsonl, and an unfinished last
// record that a stopped run left behind is dropped first, so the file stays one JSON object a line.
#include "mixseq/util/metrics_log.h"

#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

namespace mixseq {
namespace {

TEST(MetricsLog, AResumedRunAppendsWholeLines) {
  test::TempDir dir;
  const std::string path = dir.path("metrics.jsonl");
  {
    MetricsLog log(path);
    log.write({{"update", 1}}, "update 1");
  }
  {
    MetricsLog log(path);
    log.write({{"update", 2}}, "update 2");
  }
  EXPECT_EQ(test::read_file(path), "{\"update\":1}\n{\"update\":2}\n");
  EXPECT_EQ(read_metrics_log(path).size(), 2u);
}

// What a run killed while writing a record leaves: its last line without "\n". Appended to, it
// became `{"epoch":1,"kind":"tra{"update":2}`, a broken line in the middle that `plot` refused.
TEST(MetricsLog, AnUnfinishedLastRecordIsDroppedBeforeAppending) {
  test::TempDir dir;
  const std::string head = "{\"update\":1}\n";
  // Unfinished tails shorter and longer than the 4 KiB blocks the end is searched in.
  for (const size_t tail_length : {size_t{21}, size_t{4096}, size_t{9000}}) {
    std::string tail = "{\"epoch\":1,\"kind\":\"tra";
    tail.resize(tail_length, 'x');
    const std::string path = dir.write("metrics.jsonl", head + tail);
    {
      MetricsLog log(path);
      log.write({{"update", 2}}, "update 2");
    }
    EXPECT_EQ(test::read_file(path), head + "{\"update\":2}\n") << tail_length;
    const auto records = read_metrics_log(path);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1]["update"], 2);
  }
  // A file that is one unfinished line, and one that ends whole (left alone).
  const std::string only = dir.write("only.jsonl", "{\"upd");
  { MetricsLog log(only); }
  EXPECT_EQ(test::read_file(only), "");
  const std::string whole = dir.write("whole.jsonl", std::string(5000, ' ') + "\n" + head);
  { MetricsLog log(whole); }
  EXPECT_EQ(test::read_file(whole), std::string(5000, ' ') + "\n" + head);
}

}  // namespace
}  // namespace mixseq
