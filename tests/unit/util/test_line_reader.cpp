#include "mixseq/util/line_reader.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace mixseq {
namespace {

TEST(LineReader, ReportsWhetherTheLastLineEndedWithANewline) {
  for (const bool final_newline : {true, false}) {
    test::TempDir dir;
    LineReader reader(dir.write("in.txt", final_newline ? "a\n\nb\n" : "a\n\nb"));
    std::string line;
    ASSERT_TRUE(reader.next(line));
    EXPECT_TRUE(reader.ended_with_newline());
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "");
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "b");
    EXPECT_EQ(reader.ended_with_newline(), final_newline);
    EXPECT_FALSE(reader.next(line));
  }
}

}  // namespace
}  // namespace mixseq
